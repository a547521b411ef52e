"""The one module that touches amrita_core's internals, checked against the versions it was
written for.

Two things the plugin needs are no public API of amrita_core:

* the raw arguments of a tool call. Amrita validates a call's arguments against the tool's schema
  with lax pydantic before a ``custom_run`` tool runs (``_StrategyBase.call_tool`` in
  ``amrita_core/agent/strategy.py``, ``validate_arguments`` in ``amrita_core/tools/schema.py``):
  ``true``, ``1.0`` and ``"1"`` all reach the tool as the integer 1. The tool reads the arguments
  the model actually wrote: the ``ToolCall`` that ``call_tool`` is executing, its ``tool_call``
  local, found on the await chain of the tool's coroutine (``call_tool`` awaits the tool
  directly), and the strategy running it (its ``self``);
* ending an agent strategy's tool loop after the ``end`` tool: the private ``_suggested_stop``
  flag, ``agent_last_step`` and ``reasoning_pc`` (``amrita_core/builtins/agent/react_base.py``),
  set as its own ``agent_stop`` sets them. That flag ends the native step loop, but Amrita's
  default (legacy) loop only turns the tool choice back to "auto" and asks the model once more,
  so a turn that calls ``end`` would cost one model round more than a turn without it (the
  answer itself always comes from the completion after the loop). The strategy's own tool list,
  which ``single_execute`` checks first ("no tools: the loop is done", ``react_comm.py``), is
  therefore rebound to an empty one: the loop ends without that round, and the completion
  follows with the tool results in its context.

Both depend on how a release happens to be written, so they are used only with an installed
amrita_core in the range the plugin supports (``llm/core_version.py``, read through ``api``;
checked once at import, when the plugin loads). Outside it one warning says so and both are off:
no raw arguments (a tool that takes a database id then refuses to run while Amrita's validation
is on, ``tools/registry.py``), no stop hint (the ``end`` tool still records the turn; the loop
ends as Amrita decides). The bot never fails for it.
"""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass
from types import FrameType
from typing import Any

from amrita_core.types import ToolCall

from ..api import amrita_core_range as _range_text
from ..api import amrita_core_supported as supported
from ..api import amrita_core_version as installed_version

logger = logging.getLogger("cognition")

#: How far up the await chain the executing tool call is looked for.
CALLER_DEPTH = 8


@dataclass(frozen=True, slots=True)
class Internals:
    """Whether amrita_core's internals are used in this process, and why."""

    version: str | None
    enabled: bool


def check() -> Internals:
    """Check the installed amrita_core against the supported range: the internals are used only
    inside it; outside, one warning (Chinese and English) and the safe fallbacks (module docstring)."""
    global INTERNALS
    version = installed_version()
    INTERNALS = Internals(version, supported(version))
    if not INTERNALS.enabled:
        logger.warning(
            "[cognition] stage=amrita_core version=%s supported=%s internals=off; "
            "已安装的 amrita-core 版本 %s 不在本插件适配的范围 %s 内：不读取工具调用的原始参数"
            "（带编号的记忆工具将拒绝执行），end 工具不再提示结束工具循环，其余功能照常。"
            "The installed amrita-core %s is outside the range %s this plugin was written for: raw tool "
            "arguments are not read (tools that take an id refuse to run) and the end tool does not stop "
            "the agent loop; everything else works as usual.",
            version,
            _range_text(),
            version or "(未知)",
            _range_text(),
            version or "(unknown)",
            _range_text(),
        )
    return INTERNALS


INTERNALS: Internals = Internals(None, False)
check()


def executing_tool_call(name: str) -> tuple[ToolCall, Any] | None:
    """The ``ToolCall`` Amrita is running for tool ``name`` and the strategy running it: the
    ``tool_call`` and ``self`` locals of a frame on the caller's await chain (``call_tool``).
    None when it is not found, or the internals are off."""
    if not INTERNALS.enabled:
        return None
    frame: FrameType | None = sys._getframe(1)
    for _ in range(CALLER_DEPTH):
        if frame is None:
            return None
        candidate = frame.f_locals.get("tool_call")
        if isinstance(candidate, ToolCall) and candidate.function.name == name:
            return candidate, frame.f_locals.get("self")
        frame = frame.f_back
    return None


def validates_arguments(tool_context: Any) -> bool:
    """Whether Amrita validated (and so may have coerced) the arguments it hands the tool."""
    config = getattr(getattr(tool_context, "ctx", None), "config", None)
    function_config = getattr(config, "function_config", None)
    return bool(getattr(function_config, "validate_tool_arguments", True))


def stop_agent_loop(strategy: Any) -> bool:
    """End an agent strategy's tool loop after the current round: no further tool round, the
    completion answers next (module docstring). False when no agent strategy runs the call, or
    the internals are off."""
    if not INTERNALS.enabled or strategy is None or not hasattr(strategy, "_suggested_stop"):
        return False
    strategy._suggested_stop = True
    if isinstance(getattr(strategy, "tools", None), list):
        # rebound, not cleared: the round running now holds its own copy of the list
        strategy.tools = []
    if hasattr(strategy, "agent_last_step"):
        strategy.agent_last_step = "Stopped"
    if hasattr(strategy, "reasoning_pc"):
        strategy.reasoning_pc = 0
    return True
