"""The chat's pinned memo from the cycle: ``cycle_memo_read`` (its text, length, limit and version)
and ``cycle_memo_update`` (the whole memo replaced if it is still the version read, the old one
kept as a revision: ``engine.notes.replace_memo_in_chat``). A memo near its limit is what the
cycle shortens: details move into memories (``cycle_memory_write``), a pointer stays."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...domain.inert import inert_lines
from ...llm.agent_types import AgentTool
from .arguments import MemoUpdateArguments, NoArguments
from .common import CYCLE_ACTOR, admission_refusal, changed, refusal, tool
from .desk import CycleDesk

if TYPE_CHECKING:
    from ..service import CognitionEngine

#: A memo this full (share of ``memo_max_chars``) is "near its limit" in ``cycle_context``.
NEAR_LIMIT = 0.8


def memo_state(engine: CognitionEngine, content: str) -> str:
    """``820/1000 字（接近上限）``."""
    limit = engine.config.memo_max_chars
    near = "（接近上限：可把细节移入记忆，只留指引）" if len(content) >= NEAR_LIMIT * limit else ""
    return f"{len(content)}/{limit} 字{near}"


def memo_tools(engine: CognitionEngine, desk: CycleDesk) -> list[AgentTool]:
    async def read(args: NoArguments) -> str:
        content = await engine.notes.memo_of(desk.bot_id, desk.scope)
        head = f"备忘录 {memo_state(engine, content)}，版本 {engine.notes.memo_version(content)}"
        return f"{head}\n{inert_lines(content, None)}" if content else f"{head}\n（空）"

    async def update(args: MemoUpdateArguments) -> str:
        if args.content.strip():
            why = await admission_refusal(args.content)
            if why:
                return refusal(why)
            if await engine.governance.barred_in(desk.bot_id, desk.scope, args.content.splitlines()):
                return refusal("备忘录包含此前被要求遗忘的内容，不能写入")
        value = await engine.notes.replace_memo_in_chat(
            CYCLE_ACTOR, desk.bot_id, desk.scope, args.content, args.expected_version, now=desk.now
        )
        changed(desk, "memo", chars=len(value))
        return f"已更新备忘录：{memo_state(engine, value)}，新版本 {engine.notes.memo_version(value)}"

    return [
        tool(
            engine,
            desk,
            "cycle_memo_read",
            "读取置顶备忘录（全文、字数/上限、版本）。",
            NoArguments,
            read,
        ),
        tool(
            engine,
            desk,
            "cycle_memo_update",
            "整体替换置顶备忘录（旧版本会保留）。将满时把细节写成记忆，只留简短指引。",
            MemoUpdateArguments,
            update,
        ),
    ]
