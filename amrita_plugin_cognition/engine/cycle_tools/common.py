"""What every tool of the cycle shares: how a tool is made (the chat's switch asked first, a
refusal answered in Chinese, never raised), how a memory, a time and a page are written in an
answer (one compact line each: the model pays for every token), and how a change is counted and
logged."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar
from zoneinfo import ZoneInfo

from pydantic import BaseModel

from ...domain.cycle_rules import IMPORTANCE_LABELS, stored_text_refusal
from ...domain.governance import CHAT_OFF_MESSAGE, OTHER_OPTED_OUT_MESSAGE, SwitchState
from ...domain.inert import inert_line
from ...domain.permissions import Operator
from ...domain.records import MemoryRecord, MemoryStatus
from ...errors import CognitionError
from ...llm.agent_types import REFUSED, AgentTool
from ...logs import log_event
from ..switches import switch_state
from .desk import CycleDesk

if TYPE_CHECKING:
    from ..service import CognitionEngine

#: Who the cycle's changes name (barriers, revisions, sources, logs).
CYCLE_ACTOR = Operator("consolidation")
#: A memory's text in a list line at most (``cycle_memory_read`` gives the whole).
LINE_CHARS = 120
#: Members of a cluster, clusters of a page, suggestions and entries shown where a list is capped.
FEW = 5

Args = TypeVar("Args", bound=BaseModel)


async def admission_refusal(text: str) -> str:
    """Why admission does not take ``text`` whole ("" when it does), judged off the event loop."""
    return await asyncio.to_thread(stored_text_refusal, text)


def refusal(reason: str) -> str:
    return f"{REFUSED}{reason}"


def not_found(ids: Iterable[int]) -> str:
    return refusal("找不到 " + "、".join(f"#{memory_id}" for memory_id in ids))


def tool(
    engine: CognitionEngine,
    desk: CycleDesk,
    name: str,
    description: str,
    arguments: type[Args],
    handler: Callable[[Args], Awaitable[str]],
) -> AgentTool:
    """A tool of the run: refused while the chat's memory is off (asked at every call: a switch
    turned off mid-run, in this process or another, stops the next call), a ``CognitionError``
    answered as a refusal."""

    async def run(args: BaseModel) -> str:
        if not isinstance(args, arguments):
            return refusal("参数无效")
        await engine.changes.refresh(engine)  # at most every 2 s: another process's switch or opt-out is seen
        if not await engine.governance.memory_on(desk.bot_id, desk.scope):
            return refusal(CHAT_OFF_MESSAGE)
        try:
            return await handler(args)
        except CognitionError as error:
            log_event("cycle_tool_refused", scope=desk.scope.key, tool=name, reason=type(error).__name__)
            return refusal(error.zh)

    return AgentTool(name, description, arguments, run)


def changed(desk: CycleDesk, kind: str, **fields: Any) -> None:
    """Count one change of the run and log it (the cycle's record beside the use case's own)."""
    desk.changes[kind] += 1
    log_event("cycle_change", bot=desk.bot_id, scope=desk.scope.key, kind=kind, **fields)


async def chat_facts(
    engine: CognitionEngine, desk: CycleDesk, ids: Sequence[int], *, active: bool = True
) -> tuple[dict[int, MemoryRecord], str]:
    """This chat's facts of ``ids`` to change, or none and the refusal: an id of no fact of this
    chat ("找不到"), with ``active`` one no longer active (a single one's newer version named), one
    by, about or naming an opted-out user."""
    wanted = list(dict.fromkeys(ids))
    found = await engine.memories.in_chat(desk.bot_id, desk.scope, wanted)
    missing = [memory_id for memory_id in wanted if memory_id not in found]
    if missing:
        return {}, not_found(missing)
    inactive = [memory_id for memory_id in wanted if found[memory_id].status != MemoryStatus.ACTIVE]
    if active and inactive:
        newer = found[inactive[0]].superseded_by if len(inactive) == 1 else None
        return {}, refusal(f"{ids_text(inactive)} 已不是有效记忆{f'，新版本是 #{newer}' if newer else ''}，请重新查看")
    switches = await switch_state(engine, desk.bot_id)
    if any(opted_out(switches, record) for record in found.values()):
        return {}, refusal(OTHER_OPTED_OUT_MESSAGE)
    return found, ""


def zone(engine: CognitionEngine) -> ZoneInfo:
    return ZoneInfo(engine.config.timezone)


def day(moment: datetime, where: ZoneInfo) -> str:
    return moment.astimezone(where).strftime("%Y-%m-%d")


def minute(moment: datetime, where: ZoneInfo) -> str:
    return moment.astimezone(where).strftime("%Y-%m-%d %H:%M")


def span(seconds: float) -> str:
    """A duration as 天/小时/分钟 (the largest two units)."""
    minutes = int(seconds // 60)
    days, minutes = divmod(minutes, 1440)
    hours, minutes = divmod(minutes, 60)
    if days:
        return f"{days} 天 {hours} 小时"
    return f"{hours} 小时 {minutes} 分钟" if hours else f"{minutes} 分钟"


def opted_out(switches: SwitchState, record: MemoryRecord) -> bool:
    """Whether a fact is by, about or names an opted-out user (shown without its text, never changed)."""
    return switches.touches_opted_out(
        (record.speaker_id, record.subject_id), (record.text,), (record.speaker_name, record.subject_name)
    )


def memory_line(record: MemoryRecord, where: ZoneInfo, switches: SwitchState, limit: int | None = LINE_CHARS) -> str:
    """``#12 [高] 小明喜欢爬山 (标签: 爱好; 2026-11-02)``: the text inert and clipped."""
    label = IMPORTANCE_LABELS.get(record.importance, str(record.importance))
    if opted_out(switches, record):
        return f"#{record.id} [{label}] （涉及已选择不被记忆的用户：内容不显示，不能修改）"
    tags = f"标签: {'、'.join(inert_line(tag, 20) for tag in record.tags)}; " if record.tags else ""
    status = "" if record.status == MemoryStatus.ACTIVE else f"; {STATUS_LABELS.get(record.status, record.status)}"
    return f"#{record.id} [{label}] {inert_line(record.text, limit)} ({tags}{day(record.when, where)}{status})"


#: How an answer names a fact that is no longer active.
STATUS_LABELS = {
    MemoryStatus.SUPERSEDED: "已被取代",
    MemoryStatus.EXPIRED: "已过期（衰减淘汰，可恢复）",
    MemoryStatus.FORGOTTEN: "已遗忘",
}


def page_footer(offset: int, shown: int, total: int, unit: str = "条") -> str:
    """Where the page is in the whole, and the next offset when there is more."""
    if not total:
        return "（无）"
    if not shown:
        return f"（共 {total} {unit}，本页无）"
    more = f"；下一页 offset={offset + shown}" if offset + shown < total else ""
    return f"（共 {total} {unit}，本页第 {offset + 1}-{offset + shown} {unit}{more}）"


def ids_text(ids: Sequence[int]) -> str:
    return "、".join(f"#{memory_id}" for memory_id in ids)
