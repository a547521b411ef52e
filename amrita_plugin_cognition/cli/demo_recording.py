"""Observing a demo turn and judging it: what the model was given and which tools it ran, as
Amrita's own hook events report them (no code is patched), and the script's checks evaluated
on that."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from amrita_core import PreCompletionEvent, on_event, on_precompletion
from amrita_core.builtins.agent.events import StepToolCallEvent, StepToolReturnEvent

from .demo_script import Check, ScriptError
from .replay_model import MEMORY_BLOCK

#: The tool that ends a turn and hands its observations to the historian.
END_TOOL = "end"
#: A recalled memory's line in the block (pins, notes and the memo are not memories).
MEMORY_LINE_PREFIX = "- [记忆#"


@dataclass(slots=True)
class ToolTrace:
    call_id: str
    name: str
    arguments: str
    result: str | None = None

    def parsed_result(self) -> dict[str, Any]:
        try:
            value = json.loads(self.result or "")
        except json.JSONDecodeError:
            value = None
        return value if isinstance(value, dict) else {"ok": False, "error": self.result}


@dataclass(slots=True)
class TurnTrace:
    #: The system prompt the model got (None: the chat flow never reached the model).
    system_prompt: str | None = None
    tools: list[ToolTrace] = field(default_factory=list)

    @property
    def block(self) -> str:
        if self.system_prompt is None:
            return ""
        found = MEMORY_BLOCK.search(self.system_prompt)
        return found.group(0) if found else ""

    def memory_lines(self) -> list[str]:
        """The recalled memories of the block, one line each."""
        return [line for line in self.block.splitlines() if line.startswith(MEMORY_LINE_PREFIX)]

    def results(self) -> list[dict[str, Any]]:
        return [tool.parsed_result() for tool in self.tools]


class Recorder:
    """Watches the chat flow through Amrita's own hook events (no code is patched)."""

    def __init__(self) -> None:
        self.trace = TurnTrace()

    def begin(self) -> TurnTrace:
        self.trace = TurnTrace()
        return self.trace

    def install(self) -> None:
        # Handler annotations are resolved by Amrita's dependency injection against this
        # module's globals: the event classes are imported at module level for that.
        recorder = self

        # After every other pre-completion handler (the memory hook runs at 20): this is the
        # system prompt as it goes to the model.
        @on_precompletion(priority=10_000, block=False).handle()
        async def capture_prompt(event: PreCompletionEvent) -> None:
            if recorder.trace.system_prompt is None:
                content = event.message.train.content
                if isinstance(content, str):
                    recorder.trace.system_prompt = content
                else:
                    recorder.trace.system_prompt = "\n".join(
                        str(getattr(part, "text", "") or "") for part in content or []
                    )

        @on_event("agent.tool_call", priority=10_000, block=False).handle()
        async def capture_call(event: StepToolCallEvent) -> None:
            recorder.trace.tools.append(ToolTrace(event.tool_id, event.tool_name, event.arguments))

        @on_event("agent.tool_return", priority=10_000, block=False).handle()
        async def capture_return(event: StepToolReturnEvent) -> None:
            pending = [
                tool
                for tool in recorder.trace.tools
                if tool.result is None and (tool.call_id, tool.name) == (event.tool_id, event.tool_name)
            ]
            if pending:
                pending[-1].result = event.result
            else:
                recorder.trace.tools.append(ToolTrace(event.tool_id, event.tool_name, "{}", event.result))


@dataclass(slots=True)
class Outcome:
    passed: int = 0
    failed: int = 0
    unanswered: int = 0
    startup_seconds: float = 0.0
    conversation_seconds: float = 0.0
    night_seconds: float = 0.0

    def count(self, ok: bool) -> None:
        self.passed += ok
        self.failed += not ok


def evaluate(check: Check, trace: TurnTrace) -> bool:
    """Whether the turn shows what ``check`` asks for (its text already rendered for the turn)."""
    block = trace.block
    results = trace.results()
    if check.kind == "context_has":
        return trace.system_prompt is not None and check.text in block
    if check.kind == "context_lacks":
        return trace.system_prompt is not None and check.text not in block
    if check.kind == "memory_has":
        return any(check.text in line for line in trace.memory_lines())
    if check.kind == "results_lack":
        return bool(results) and all(check.text not in json.dumps(r, ensure_ascii=False) for r in results)
    if check.kind == "tools_ok":
        return bool(results) and all(result.get("ok") is True for result in results)
    if check.kind == "tool_refused":
        return any(result.get("ok") is False for result in results)
    if check.kind == "ended":
        return any(
            tool.name == END_TOOL and int(tool.parsed_result().get("observations") or 0) > 0 for tool in trace.tools
        )
    raise ScriptError(f"未知的检查 {check.kind}")


def describe(check: Check) -> str:
    detail = {
        "context_has": f"记忆上下文包含「{check.text}」",
        "context_lacks": f"记忆上下文不含「{check.text}」",
        "memory_has": f"召回的记忆包含「{check.text}」",
        "results_lack": f"工具结果不含「{check.text}」",
        "tools_ok": "工具调用全部成功",
        "tool_refused": "写入被拒绝",
        "ended": "调用 end，观察交给了史官",
    }[check.kind]
    return f"{check.note}（{detail}）" if check.note else detail
