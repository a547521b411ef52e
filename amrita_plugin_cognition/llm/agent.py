"""The consolidation cycle's agent driver: one budgeted ReAct run over the tools the engine built
(:mod:`.agent_types`), round by round in this loop, on the gateway's preset.

Before each round the loop checks the budget from the run's usage ledger (one record per request,
the tokens the provider reported): ``max_iterations`` rounds used ends the run ``iterations``,
prompt + completion tokens at ``max_tokens`` end it ``tokens``, and from the second round on
``should_stop()`` saying yes ends it ``yielded``. It winds down first: when the next round is the
last one allowed, or the last round's tokens would overrun what is left of the token budget, that
round offers only the stop tool and tells the model so in one line. After a round, a call of the
stop tool ends the run ``stopped`` with its summary (the model's free text is not kept), and a
response without a tool call ends it ``no_tool_call``. A round that raises (the provider's error,
no answer within ``timeout_seconds``) ends it ``failed``; rounds are not retried (the cycle's job
is). The run's counters go to the gateway once, at the end (calls = rounds).

What is sent first is the caller's system prompt and kickoff, nothing variable added before them:
two runs with the same ones send the same first request, so a provider's prefix cache hits. The
run's amrita_core side is :mod:`.agent_session`; it runs only on the amrita_core releases the
plugin supports (:mod:`.core_version`), else :class:`LLMUnavailable` before any request.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from ..errors import TIMEOUTS, LLMUnavailable
from ..logs import log_event
from . import core_version
from .agent_types import AgentBudget, AgentOutcome, AgentTool, Ended
from .counters import PurposeCounters
from .failures import MAX_ERROR_CHARS, failure_from, quote_for_log

if TYPE_CHECKING:
    from .agent_session import AgentSession
    from .gateway import LLMGateway

__all__ = ["run_agent"]


async def run_agent(
    gateway: LLMGateway,
    purpose: str,
    system: str,
    kickoff: str,
    tools: Sequence[AgentTool],
    budget: AgentBudget,
    should_stop: Callable[[], Awaitable[bool]] | None = None,
) -> AgentOutcome:
    """Run one agent on ``gateway``'s preset until it stops, yields, fails or spends ``budget``.

    :class:`LLMUnavailable` (before any request) when the installed amrita_core is outside the
    supported range or the preset is missing; ``ValueError`` when two tools share a name (or one
    is named :data:`.agent_types.STOP_TOOL`); what ``should_stop`` raises. Every other ending is
    an :class:`AgentOutcome`.
    """
    started = time.perf_counter()
    try:
        _check_core()
        preset = await gateway.preset()
    except LLMUnavailable as error:
        log_event(
            "agent_run", started, logging.ERROR, purpose=purpose, ended="unavailable", error=quote_for_log(error.en)
        )
        own = PurposeCounters(failures=1, latency_seconds=time.perf_counter() - started, last_error=error.en)
        await gateway.add_usage(purpose, own)
        raise
    from .agent_session import AgentSession

    session = AgentSession(
        purpose,
        system,
        kickoff,
        tools,
        preset,
        timeout_seconds=gateway.settings.timeout_seconds,
        max_iterations=budget.max_iterations,
    )
    try:
        outcome, timed_out = await _drive(session, budget, should_stop)
    except BaseException as error:  # should_stop raised, or the run was cancelled: count what it used
        interrupted = f"interrupted after round {session.rounds}: {type(error).__name__}"
        await gateway.add_usage(purpose, _counters(session, started, interrupted, failed=True, timed_out=False))
        log_event("agent_run", started, logging.WARNING, purpose=purpose, ended="interrupted", error=interrupted)
        raise
    failed = outcome.ended == "failed"
    await gateway.add_usage(purpose, _counters(session, started, outcome.error, failed=failed, timed_out=timed_out))
    log_event(
        "agent_run",
        started,
        logging.WARNING if failed else logging.INFO,
        purpose=purpose,
        preset=preset.name,
        model=preset.model,
        ended=outcome.ended,
        rounds=outcome.rounds,
        tool_calls=len(outcome.calls),
        refused=sum(not call.ok for call in outcome.calls),
        prompt_tokens=outcome.prompt_tokens,
        completion_tokens=outcome.completion_tokens,
        error=quote_for_log(outcome.error),
    )
    return outcome


def _counters(session: AgentSession, started: float, error: str, *, failed: bool, timed_out: bool) -> PurposeCounters:
    """The run's own counters, as the gateway counts a call: calls = rounds."""
    return PurposeCounters(
        calls=session.rounds,
        failures=int(failed),
        timeouts=int(timed_out),
        prompt_tokens=session.prompt_tokens,
        completion_tokens=session.completion_tokens,
        latency_seconds=time.perf_counter() - started,
        last_error=error,
    )


def _check_core() -> None:
    version = core_version.installed_version()
    if core_version.supported(version):
        return
    wanted = core_version.range_text()
    raise LLMUnavailable(
        f"已安装的 amrita-core 版本 {version or '（未知）'} 不在本插件适配的范围 {wanted} 内，"
        "整理周期不运行模型判断这一步（不需要模型的预处理照常）",
        en=f"llm unavailable: the installed amrita-core {version or '(unknown)'} is outside the range {wanted} "
        "the cycle's agent driver was written for; the judgement step does not run",
    )


async def _drive(
    session: AgentSession, budget: AgentBudget, should_stop: Callable[[], Awaitable[bool]] | None
) -> tuple[AgentOutcome, bool]:
    """The rounds, until the run ends; the outcome and whether a round timed out."""
    ended: Ended
    error = ""
    timed_out = False
    while True:
        used = session.prompt_tokens + session.completion_tokens
        if session.rounds >= budget.max_iterations:
            ended = "iterations"
            break
        if used >= budget.max_tokens:
            ended = "tokens"
            break
        if session.rounds and should_stop is not None and await should_stop():
            ended = "yielded"
            break
        last_allowed = session.rounds + 1 >= budget.max_iterations
        short = session.rounds > 0 and session.last_round_tokens >= budget.max_tokens - used
        if (last_allowed or short) and not session.winding_down:
            session.wind_down()
        try:
            called = await session.round()
        except Exception as raised:  # a failed round ends the run; the job is retried, not the round
            failure = failure_from(raised)
            timed_out = failure.kind == "timeout"
            what = "no answer within the round's timeout" if isinstance(raised, TIMEOUTS) else failure.en
            error = " ".join(f"round {session.rounds}: {what}".split())[:MAX_ERROR_CHARS]
            ended = "failed"
            break
        if session.stopped:
            ended = "stopped"
            break
        if not called:
            ended = "no_tool_call"
            break
    outcome = AgentOutcome(
        ended=ended,
        summary=session.summary,
        rounds=session.rounds,
        prompt_tokens=session.prompt_tokens,
        completion_tokens=session.completion_tokens,
        calls=list(session.calls),
        error=error,
    )
    return outcome, timed_out
