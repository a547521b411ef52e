"""Reading the chat's memories: ``cycle_memory_list`` (a filtered page, one line each) and
``cycle_memory_read`` (the whole of a few). Only this chat's ids: another chat's id is "找不到".
A fact by, about or naming an opted-out user is listed without its text."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...domain.cycle_rules import IMPORTANCE_LABELS
from ...domain.inert import inert_line, inert_name
from ...domain.records import Importance, MemoryRecord, MemoryStatus
from ...llm.agent_types import AgentTool
from ..switches import switch_state
from .arguments import MemoryListArguments, MemoryReadArguments
from .common import STATUS_LABELS, memory_line, minute, opted_out, page_footer, tool, zone
from .desk import CycleDesk

if TYPE_CHECKING:
    from zoneinfo import ZoneInfo

    from ...domain.governance import SwitchState
    from ..service import CognitionEngine


def _person(name: str, user_id: str) -> str:
    if not user_id:
        return "—"
    return f"{inert_name(name)}({user_id})" if name and name != user_id else user_id


def _details(record: MemoryRecord, sources: list[int], where: ZoneInfo, switches: SwitchState) -> str:
    """One memory in full: a head line of its labels, then its text."""
    label = IMPORTANCE_LABELS.get(record.importance, str(record.importance))
    if opted_out(switches, record):
        return memory_line(record, where, switches)
    parts = [f"#{record.id} [{label}] 类型 {record.kind}"]
    if record.status != MemoryStatus.ACTIVE:
        newer = f" → #{record.superseded_by}" if record.superseded_by else ""
        parts.append(f"{STATUS_LABELS.get(record.status, str(record.status))}{newer}")
    parts.append(f"说话人 {_person(record.speaker_name, record.speaker_id)}")
    if record.subject_id and record.subject_id != record.speaker_id:
        parts.append(f"关于 {_person(record.subject_name, record.subject_id)}")
    if record.happened_at is not None:
        parts.append(f"发生 {minute(record.happened_at, where)}")
    parts.append(f"记录 {minute(record.recorded_at, where)}")
    via = record.source.get("via", "")
    origin = f"{record.provenance}" + (f"/{via}" if via else "")
    if sources:
        origin += " 合并自 " + "、".join(f"#{source}" for source in sources)
    parts.append(f"来源 {origin}")
    if record.keep:
        parts.append("用户要求保留")
    tags = "、".join(inert_line(tag, 20) for tag in record.tags) or "无"
    return f"{'；'.join(parts)}；标签 {tags}\n  {inert_line(record.text, None)}"


def memory_read_tools(engine: CognitionEngine, desk: CycleDesk) -> list[AgentTool]:
    async def memory_list(args: MemoryListArguments) -> str:
        since = desk.last_cycle_at if args.new_only else None
        records, total = await engine.memories.chat_page(
            desk.bot_id,
            desk.scope,
            importance=Importance(args.importance) if args.importance else None,
            tag=args.tag or "",
            since=since,
            offset=args.offset,
            limit=args.limit,
        )
        switches = await switch_state(engine, desk.bot_id)
        where = zone(engine)
        lines = [memory_line(record, where, switches) for record in records]
        return "\n".join([*lines, page_footer(args.offset, len(records), total)])

    async def memory_read(args: MemoryReadArguments) -> str:
        wanted = list(dict.fromkeys(args.ids))
        found = await engine.memories.in_chat(desk.bot_id, desk.scope, wanted)
        sources = await engine.memories.merged_from(list(found))
        switches = await switch_state(engine, desk.bot_id)
        where = zone(engine)
        blocks = [
            _details(found[memory_id], sources.get(memory_id, []), where, switches)
            if memory_id in found
            else f"#{memory_id} 找不到"
            for memory_id in wanted
        ]
        return "\n".join(blocks)

    return [
        tool(
            engine,
            desk,
            "cycle_memory_list",
            "分页列出本会话的有效记忆（每条一行：编号、重要性、内容、标签、日期）。",
            MemoryListArguments,
            memory_list,
        ),
        tool(
            engine,
            desk,
            "cycle_memory_read",
            "读取记忆的全文和详情（说话人、时间、来源、合并来源）。",
            MemoryReadArguments,
            memory_read,
        ),
    ]
