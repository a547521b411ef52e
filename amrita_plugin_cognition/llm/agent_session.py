"""One agent run's amrita_core side, imported by :mod:`.agent` when a run starts: the run's own
tools (its tools manager, the argument check, the stop tool), its conversation and usage ledger
(the strategy context), and one ReAct round at a time.

Nothing of a run is global. The tools are registered on a ``MultiToolsManager`` of the run (tool
names are global in Amrita's ``ToolsManager``, which never sees them); amrita_core's own
``agent_stop`` is taken out of each round's tool list, not out of amrita_core; the configuration
is a fresh ``AmritaConfig`` handed to every call, never the bot's global one (which is neither
read nor replaced); the step events the ReAct tool loop fires for matchers (``agent.tool_call``,
``agent.tool_return``) are not fired, so no other plugin's matcher sees or rewrites the run's calls.

A round is ReAct's own tool loop (``_execute_tool_loop``: the calls of one response run
concurrently, a call repeated ``loop_reasoning_trigger`` times in one response is cancelled, every
result is paired with its call in the conversation) after one request made here. The inherited
``single_execute`` makes that request through ``tools_caller`` without the strategy's
configuration, so the bot's global one would apply: a failed round would run again on the Amrita
chat's backup presets (its preset-fallback matcher), up to the bot's ``max_fallbacks``. Here the
request carries the run's configuration (``max_fallbacks = 1``: the fallback event still fires
once when a round fails, as for every gateway call, and whatever a matcher picks is not used) and
is cut off after ``timeout_seconds``; the tools it asks for are not.

The tool calls of one response run concurrently, so every handler runs under the run's lock, one
at a time, in the order of the calls.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import uuid
from collections import Counter
from collections.abc import Sequence
from typing import Any

from amrita_core import (
    AmritaConfig,
    ModelPreset,
    SuspendObjectStream,
    ToolContext,
    ToolFunctionSchema,
    on_tools,
    tools_caller,
)
from amrita_core.agent.context import StrategyContext, build_strategy_context
from amrita_core.builtins.agent import ReActAgentStrategy
from amrita_core.builtins.tools import STOP_TOOL as CORE_STOP_TOOL
from amrita_core.tools.manager import MultiToolsManager
from amrita_core.types import Message, SendMessageWrap, ToolCall, ToolResult
from amrita_core.usage import SessionUsageProxy
from pydantic import BaseModel, Field, ValidationError

from ..errors import CognitionError
from ..logs import log_event
from .agent_types import ANSWER_KEPT_CHARS, REFUSED, STOP_TOOL, AgentTool, ToolCallRecord
from .failures import quote_for_log, validation_lines
from .gateway import LLMGateway
from .lean_schema import lean

#: What the model is told when its arguments do not validate (the handler is not called).
INVALID_ARGUMENTS = "参数不符合要求，没有执行："
#: What the model is told when a handler raised.
TOOL_FAILED = "工具出错："
#: The stop tool's answer (the run ends after the round).
STOPPED = "已结束。"
#: Told once, in the round that winds down (only the stop tool is offered from then on).
WIND_DOWN = f"预算即将用完：这一轮只能调用 {STOP_TOOL}，请写下总结并结束。"
MAX_ERRORS_SHOWN = 8
MAX_FAILURE_CHARS = 200
SUMMARY_MAX_CHARS = 500


class StopArguments(BaseModel):
    summary: str = Field(
        max_length=SUMMARY_MAX_CHARS,
        description=f"这次整理做了什么、还有什么没做（不超过 {SUMMARY_MAX_CHARS} 字）",
    )


STOP_DESCRIPTION = "结束这次整理：写下总结。调用后不再有下一轮。"


def run_config(timeout_seconds: float, max_iterations: int) -> AmritaConfig:
    """amrita_core's defaults, with the run's settings: the driver validates arguments itself,
    tools are required every round, one attempt on one preset, thoughts as plain chat."""
    base = AmritaConfig()
    return base.model_copy(
        update={
            "function_config": base.function_config.model_copy(
                update={"validate_tool_arguments": False, "agent_tool_call_limit": max(1, max_iterations)}
            ),
            "builtin": base.builtin.model_copy(update={"tool_calling_mode": "agent", "agent_thought_mode": "chat"}),
            "llm": base.llm.model_copy(
                update={
                    "require_tools": True,
                    "llm_timeout": max(1, math.ceil(timeout_seconds)),
                    "max_retries": 0,
                    "max_fallbacks": 1,
                }
            ),
        }
    )


class _CycleRound(ReActAgentStrategy):
    """One round: one request with the run's configuration, then ReAct's tool loop; amrita_core's
    ``agent_stop`` is not offered, the run's tools are sent without filler (``lean``)."""

    def __init__(self, context: StrategyContext, timeout_seconds: float, lean: dict[str, ToolFunctionSchema]) -> None:
        super().__init__(context)
        offered: list[ToolFunctionSchema] = self.tools  # type: ignore[has-type]  # (mypy loses amrita's annotation)
        self.tools = [lean.get(_name(tool), tool) for tool in offered if _name(tool) != CORE_STOP_TOOL.function.name]
        self.round_timeout = timeout_seconds
        #: The tool calls of the round's response.
        self.requested: list[ToolCall] = []

    async def single_execute(self) -> bool:
        response = await asyncio.wait_for(
            tools_caller(
                self.ctx.message.unwrap(),
                list(self.tools),
                preset=self.preset,
                tool_choice=self._resolve_tool_choice("required"),
                config=self.config,
                usage=self.usage,
            ),
            timeout=self.round_timeout,
        )
        self.requested = list(response.tool_calls or [])
        return await self._execute_tool_loop(response)

    async def _trigger_step_event(self, event: Any, *, exception_ignored: tuple[type[BaseException], ...] = ()) -> None:
        """The run's tool calls are not announced to the step-event matchers of the bot."""
        return None


async def _discard(_item: object) -> None:
    """What the strategy streams (call notices, errors) has no reader: the outcome says it all."""
    return None


class AgentSession:
    """One run's tools, conversation and ledger; :meth:`round` runs the next round."""

    def __init__(
        self,
        purpose: str,
        system: str,
        kickoff: str,
        tools: Sequence[AgentTool],
        preset: ModelPreset,
        *,
        timeout_seconds: float,
        max_iterations: int,
    ) -> None:
        self.purpose = purpose
        self.rounds = 0
        self.calls: list[ToolCallRecord] = []
        self.summary = ""
        self.stopped = False
        self.winding_down = False
        self._timeout = timeout_seconds
        self._lock = asyncio.Lock()
        self._round_records = 0
        self.tools_manager = MultiToolsManager()
        #: The run's tool schemas as sent (``llm/lean_schema.py``), by name.
        self.lean_schemas: dict[str, ToolFunctionSchema] = {}
        for tool in [*tools, AgentTool(STOP_TOOL, STOP_DESCRIPTION, StopArguments, self._stop)]:
            self._register(tool)
        self.usage = SessionUsageProxy(session_id=f"cognition:{purpose}", stream_id=uuid.uuid4().hex)
        self.context = build_strategy_context(
            user_input=kickoff,
            original_context=SendMessageWrap(
                Message(role="system", content=system), [], Message(role="user", content=kickoff)
            ),
            preset=preset,
            config=run_config(timeout_seconds, max_iterations),
            tools_manager=self.tools_manager,
            io_stream=SuspendObjectStream(callback=_discard),
            train_content=system,
            stream_id=self.usage.stream_id,
            usage=self.usage,
        )

    # ------------------------------------------------------------------ the ledger

    @property
    def prompt_tokens(self) -> int:
        return sum(record.prompt_tokens for record in self.usage.records)

    @property
    def completion_tokens(self) -> int:
        return sum(record.completion_tokens for record in self.usage.records)

    @property
    def last_round_tokens(self) -> int:
        """Prompt + completion tokens the provider reported for the last round."""
        records = self.usage.records[self._round_records :]
        return sum(record.prompt_tokens + record.completion_tokens for record in records)

    # ------------------------------------------------------------------ rounds

    def wind_down(self) -> None:
        """From this round on only the stop tool is offered, and the model is told so once."""
        for name in list(self.tools_manager.tools_meta()):
            if name != STOP_TOOL:
                self.tools_manager.disable_tool(name)
        self.context.message.append(Message(role="user", content=WIND_DOWN))
        self.winding_down = True

    async def round(self) -> bool:
        """Run the next round; whether the model called any tool. Raises what the request raised
        (a timeout: ``TimeoutError``)."""
        self.rounds += 1
        self._round_records = len(self.usage.records)
        ran = len(self.calls)
        strategy = _CycleRound(self.context, self._timeout, self.lean_schemas)
        await strategy.single_execute()
        self._record_unrun(strategy.requested, self.calls[ran:])
        return bool(strategy.requested)

    def _record_unrun(self, requested: list[ToolCall], ran: list[ToolCallRecord]) -> None:
        """The calls of the round that no handler ran (a tool not offered in this round, arguments
        that are no JSON, a repeat the stall detector cancelled), as not ok, with the answer
        amrita_core gave them."""
        left = Counter(record.name for record in ran)
        answers = {
            message.tool_call_id: message.content
            for message in self.context.message.end_messages
            if isinstance(message, ToolResult)
        }
        for call in requested:
            if left[call.function.name] > 0:
                left[call.function.name] -= 1
            else:
                answer = str(answers.get(call.id, ""))
                self.calls.append(
                    ToolCallRecord(
                        self.rounds,
                        call.function.name,
                        False,
                        len(answer),
                        str(call.function.arguments or ""),
                        answer[:ANSWER_KEPT_CHARS],
                    )
                )

    # ------------------------------------------------------------------ tools

    def _register(self, tool: AgentTool) -> None:
        schema = LLMGateway.tool_schema(tool.arguments, tool.name, tool.description)
        definition = schema.function
        self.lean_schemas[tool.name] = lean(schema)

        async def run(context: ToolContext) -> str:
            return await self._run_tool(tool, context.data)

        on_tools(definition, custom_run=True, bound_to=self.tools_manager)(run)

    async def _run_tool(self, tool: AgentTool, raw: Any) -> str:
        async with self._lock:
            ok = False
            try:
                arguments = tool.arguments.model_validate(raw)
            except ValidationError as error:
                answer = INVALID_ARGUMENTS + "\n" + "\n".join(validation_lines(error, MAX_ERRORS_SHOWN))
            else:
                try:
                    answer = await tool.handler(arguments)
                except Exception as error:  # the model is told, the run goes on
                    answer = TOOL_FAILED + _described(error)
                    log_event(
                        "agent_tool",
                        level=logging.ERROR,
                        purpose=self.purpose,
                        round=self.rounds,
                        tool=tool.name,
                        error=quote_for_log(repr(error)),
                    )
                else:
                    ok = not answer.startswith(REFUSED)
            record = ToolCallRecord(self.rounds, tool.name, ok, len(answer), _json(raw), answer[:ANSWER_KEPT_CHARS])
            self.calls.append(record)
            return answer

    async def _stop(self, arguments: BaseModel) -> str:
        assert isinstance(arguments, StopArguments)
        self.summary = arguments.summary.strip()
        self.stopped = True
        return STOPPED


def _name(tool: Any) -> str:
    """A tool schema's function name (amrita_core keeps a few as plain dicts)."""
    if isinstance(tool, dict):
        return str(tool.get("function", {}).get("name", ""))
    return str(tool.function.name)


def _json(raw: Any) -> str:
    """The arguments as the model sent them, as JSON text (as they came when they are no JSON)."""
    if isinstance(raw, str):
        return raw
    try:
        return json.dumps(raw, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(raw)


def _described(error: Exception) -> str:
    text = error.zh if isinstance(error, CognitionError) else f"{type(error).__name__}: {error}"
    return " ".join(text.split())[:MAX_FAILURE_CHARS]
