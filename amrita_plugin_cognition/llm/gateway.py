"""The LLM gateway: every LLM call of the plugin goes through one :class:`LLMGateway`.

A call renders a Jinja2 template from ``prompt/`` (:mod:`.prompts`), runs on an explicit
amrita_core model preset (:mod:`.presets`), gives each attempt ``timeout_seconds``, retries
failed attempts with exponential backoff and jitter (tenacity), and counts calls, failures,
retries, tokens and latency per purpose: in this process (``snapshot()``), and, through
``usage_sink``, where every process's calls add up (the engine keeps them in SQL for ``status``).
When every attempt failed it raises :class:`~amrita_plugin_cognition.errors.LLMUnavailable`.

Three entry points: :meth:`LLMGateway.complete_text` (plain text),
:meth:`LLMGateway.run_agent` (a budgeted ReAct agent over tools, driven by :mod:`.agent`) and
:meth:`LLMGateway.complete_structured`, where the model must call one function whose parameter
schema is projected from a pydantic model (amrita_core's own projection, so every protocol
adapter can send it) and whose arguments are validated by that model. A missing or invalid call
is a failed attempt; the next attempt carries what was wrong (``prompt/structured_retry.jinja``).

Calls go through amrita_core's public call functions (``call_completion``, ``tools_caller``) with
``preset=`` always given and a copy of Amrita's configuration in which the gateway owns retries:
the OpenAI SDK's own retries are off and amrita_core's preset fallback gets a single round, so
every attempt runs on the configured preset. amrita_core is imported lazily: this module can be
imported (and the gateway built) outside the bot.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
    wait_random,
)

from ..errors import TIMEOUTS, LLMUnavailable
from ..logs import log_event
from .agent import run_agent as _run_agent
from .answers import Call, StructuredT, answer_structured, answer_text
from .counters import PurposeCounters, UsageSink
from .failures import FAILURE_ZH, AttemptFailed, failure_from, quote_for_log
from .presets import PresetResolver, resolve_amrita_preset
from .settings import LLMSettings

if TYPE_CHECKING:
    from amrita_core import AmritaConfig, ModelPreset, ToolFunctionSchema

    from .agent_types import AgentRunner
    from .prompts import PromptTemplates, RenderedPrompt

__all__ = ["LLMGateway", "PurposeCounters", "StructuredT"]

logger = logging.getLogger("cognition")

ResultT = TypeVar("ResultT")


class LLMGateway:
    """Every LLM call of the plugin: explicit preset, template prompt, timeout, retries, counters.

    ``resolve_preset`` replaces the default preset lookup (:func:`.presets.resolve_amrita_preset`);
    ``templates`` replaces the plugin's own ``prompt/`` folder.
    """

    def __init__(
        self,
        settings: LLMSettings,
        *,
        resolve_preset: PresetResolver | None = None,
        templates: PromptTemplates | None = None,
        usage_sink: UsageSink | None = None,
    ) -> None:
        self.settings = settings
        self._resolve_preset = resolve_preset or resolve_amrita_preset
        #: None until the first render: the default templates (and Jinja2) load then.
        self._templates = templates
        self._counters: dict[str, PurposeCounters] = {}
        #: Told every finished call's counters (the engine sums them in SQL over every process).
        self.usage_sink = usage_sink

    # ------------------------------------------------------------------ public surface

    def render(self, template: str, context: Mapping[str, Any] | None = None) -> RenderedPrompt:
        """The messages ``template`` produces with ``context`` (what a call would send)."""
        if self._templates is None:
            from .prompts import default_templates

            self._templates = default_templates()
        return self._templates.render(template, context)

    async def complete_text(
        self, purpose: str, template: str, context: Mapping[str, Any] | None = None, *, preset: str = ""
    ) -> str:
        """The model's text answer to the rendered ``template``; :class:`LLMUnavailable` when every
        attempt failed (error, timeout, empty answer). ``preset`` overrides ``settings.preset``."""
        prompt = self.render(template, context)
        return await self._call(purpose, prompt, answer_text, preset)

    async def complete_structured(
        self,
        purpose: str,
        template: str,
        context: Mapping[str, Any] | None,
        *,
        output: type[StructuredT],
        tool_name: str,
        tool_description: str | None = None,
        preset: str = "",
    ) -> StructuredT:
        """Ask the model to call ``tool_name`` with arguments described and validated by ``output``.

        The template sees ``tool_name`` too (unless the context sets it). The function's
        description is ``tool_description`` or the model's docstring; field descriptions come from
        ``Field(description=...)``. A missing call, invalid JSON or arguments that fail validation
        are a failed attempt, retried with the problem fed back; :class:`LLMUnavailable` when every
        attempt failed. ``preset`` overrides ``settings.preset`` (empty: the configured one).
        """
        tool = self.tool_schema(output, tool_name, tool_description)
        prompt = self.render(template, {"tool_name": tool_name, **(context or {})})

        async def answer(call: Call) -> StructuredT:
            return await answer_structured(call, tool, output, self.render)

        return await self._call(purpose, prompt, answer, preset)

    #: Run one budgeted ReAct agent over tools on the configured preset: :func:`.agent.run_agent`
    #: with this gateway (so ``gateway.run_agent`` is an :class:`.agent_types.AgentRunner`).
    run_agent = _run_agent

    async def preset(self, name: str = "") -> ModelPreset:
        """The amrita_core preset called ``name`` (empty: ``settings.preset``, empty: the default);
        :class:`LLMUnavailable` when there is none."""
        return await self._resolve_preset(name or self.settings.preset)

    async def add_usage(self, purpose: str, usage: PurposeCounters) -> None:
        """Count a finished run made outside :meth:`_call` (an agent run) under ``purpose``, in this
        process and through ``usage_sink``."""
        self._counters.setdefault(purpose, PurposeCounters()).add(usage)
        await self._report(purpose, usage)

    @staticmethod
    def tool_schema(output: type[BaseModel], tool_name: str, tool_description: str | None = None) -> ToolFunctionSchema:
        """The amrita_core function schema of ``output`` (what the model is offered)."""
        from amrita_core import FunctionDefinitionSchema, ToolFunctionSchema, function_definition_from_pydantic

        projected = function_definition_from_pydantic(output, name=tool_name)
        definition = FunctionDefinitionSchema(
            name=tool_name,
            description=tool_description or projected.description,
            parameters=projected.parameters,
        )
        return ToolFunctionSchema(type="function", function=definition, strict=False)

    def snapshot(self) -> dict[str, Any]:
        """Plain counters for ``status`` output: settings, one entry per purpose, and the totals."""
        total = PurposeCounters()
        for counters in self._counters.values():
            total.add(counters)
        totals = total.as_dict()
        del totals["last_error"]
        return {
            "preset": self.settings.preset,
            "timeout_seconds": self.settings.timeout_seconds,
            "max_retries": self.settings.max_retries,
            "purposes": {purpose: counters.as_dict() for purpose, counters in sorted(self._counters.items())},
            "total": totals,
        }

    # ------------------------------------------------------------------ one call, its attempts

    async def _call(
        self, purpose: str, prompt: RenderedPrompt, answer: Callable[[Call], Awaitable[ResultT]], preset_name: str = ""
    ) -> ResultT:
        counters = self._counters.setdefault(purpose, PurposeCounters())
        counters.calls += 1
        started = time.perf_counter()
        try:
            preset = await self._resolve_preset(preset_name or self.settings.preset)
        except LLMUnavailable as error:
            elapsed = time.perf_counter() - started
            counters.failures += 1
            counters.last_error = str(error)
            counters.latency_seconds += elapsed
            log_event(
                "llm_call", started, logging.ERROR, purpose=purpose, outcome="preset", error=quote_for_log(str(error))
            )
            await self._report(purpose, PurposeCounters(1, 1, latency_seconds=elapsed, last_error=str(error)))
            raise
        call = Call(purpose, prompt, preset, self._core_config(), counters, PurposeCounters(calls=1))
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.settings.max_retries + 1),
            wait=self._backoff(),
            retry=retry_if_exception(lambda error: isinstance(error, AttemptFailed) and error.retryable),
            before_sleep=lambda state: self._before_sleep(call, state),
            reraise=True,
        )
        attempts = 0
        try:
            async for attempt in retrying:
                with attempt:
                    attempts = attempt.retry_state.attempt_number
                    if attempts > 1:
                        counters.retries += 1
                        call.own.retries += 1
                    result = await self._attempt(call, answer)
                    log_event(
                        "llm_call",
                        started,
                        purpose=purpose,
                        template=prompt.template,
                        preset=preset.name,
                        model=preset.model,
                        outcome="ok",
                        attempts=attempts,
                        prompt_tokens=call.prompt_tokens,
                        completion_tokens=call.completion_tokens,
                    )
                    return result
        except AttemptFailed as failure:
            counters.failures += 1
            counters.last_error = call.own.last_error = f"{failure.kind}: {failure.en}"
            call.own.failures = 1
            log_event(
                "llm_call",
                started,
                logging.ERROR,
                purpose=purpose,
                template=prompt.template,
                preset=preset.name,
                model=preset.model,
                outcome=failure.kind,
                attempts=attempts,
                error=quote_for_log(failure.en),
            )
            raise LLMUnavailable(
                f"语言模型暂不可用（{FAILURE_ZH.get(failure.kind, '请求失败')}，已尝试 {attempts} 次）",
                en=f"llm unavailable: {purpose} failed after {attempts} attempt(s) on preset "
                f"{preset.name!r}: {failure.kind}: {failure.en}",
            ) from failure
        finally:
            elapsed = time.perf_counter() - started
            counters.latency_seconds += elapsed
            call.own.latency_seconds = elapsed
            await self._report(purpose, call.own)
        raise AssertionError("tenacity stopped without a result or an error")  # pragma: no cover

    async def _report(self, purpose: str, usage: PurposeCounters) -> None:
        """Hand one call's counters to ``usage_sink``; a failure to record never fails the call."""
        if self.usage_sink is None:
            return
        try:
            await self.usage_sink(purpose, usage)
        except Exception as error:  # the counters are lost for this call, the call's result is not
            log_event("llm_usage", level=logging.WARNING, recorded=0, purpose=purpose, error=quote_for_log(repr(error)))

    async def _attempt(self, call: Call, answer: Callable[[Call], Awaitable[ResultT]]) -> ResultT:
        """One attempt within ``timeout_seconds``; every failure becomes an ``AttemptFailed``."""
        try:
            return await asyncio.wait_for(answer(call), timeout=self.settings.timeout_seconds)
        except AttemptFailed as invalid:
            self._note_failure(call, invalid)
            raise
        except TIMEOUTS as error:
            timed_out = AttemptFailed("timeout", f"no answer within {self.settings.timeout_seconds:g}s")
            self._note_failure(call, timed_out)
            raise timed_out from error
        except Exception as error:
            failed = failure_from(error)
            self._note_failure(call, failed)
            raise failed from error

    @staticmethod
    def _note_failure(call: Call, failure: AttemptFailed) -> None:
        call.last_failure = failure
        for counters in (call.counters, call.own):
            if failure.kind == "timeout":
                counters.timeouts += 1
            elif failure.kind == "invalid_output":
                counters.invalid_outputs += 1

    def _backoff(self) -> Any:
        """Exponential backoff (``initial·2ⁿ`` capped at ``max``) plus up to ``initial`` of jitter."""
        initial = self.settings.backoff_initial_seconds
        ceiling = max(self.settings.backoff_max_seconds, initial)
        return wait_exponential(multiplier=initial, max=ceiling) + wait_random(0, initial)

    def _before_sleep(self, call: Call, state: RetryCallState) -> None:
        failure = call.last_failure
        log_event(
            "llm_attempt",
            level=logging.WARNING,
            purpose=call.purpose,
            preset=call.preset.name,
            attempt=state.attempt_number,
            outcome=failure.kind if failure else "error",
            retry_in_ms=f"{(state.next_action.sleep if state.next_action else 0.0) * 1000:.0f}",
            error=quote_for_log(failure.en if failure else ""),
        )

    def _core_config(self) -> AmritaConfig:
        """Amrita's configuration for one call: the bot's (or the defaults), with retries left to us."""
        from amrita_core import AmritaConfig, get_config

        try:
            base = get_config()
        except RuntimeError:  # amrita_core not initialised (outside the bot): its defaults
            base = AmritaConfig()
        llm = base.llm.model_copy(
            update={
                "llm_timeout": max(1, math.ceil(self.settings.timeout_seconds)),
                "max_retries": 0,
                "max_fallbacks": 1,
            }
        )
        return base.model_copy(update={"llm": llm})


if TYPE_CHECKING:  # mypy holds the method to the interface the cycle is written against

    def _agent_runner(gateway: LLMGateway) -> AgentRunner:
        return gateway.run_agent
