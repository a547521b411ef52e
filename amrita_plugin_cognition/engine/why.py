""" "Why does the bot remember this?": one fact's chain from what the store still keeps, for the
owner's page. In order: the messages it was drawn from (transcript turns), the turn's ``end``
note, the observation (only while its historian job is queued: a finished job is deleted with its
payload, so the chain says so; it is not kept past the job on purpose: the historian may have
refused a part of it, a secret, what the person asked not to be remembered or something about
someone else, and the observation's text would keep that part), how it was written (the
historian's rewrite, a tool, a correction, a merge, an import), the gate's verdict, the
corrections before and after it, the merges it came from or went into, and its status now.
Every text is returned as plain text; nothing here is markup.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from ..domain.clock import as_utc
from ..domain.happened import label as happened_label
from ..domain.happened import precision_of
from ..domain.records import MemoryRecord, MemoryStatus
from ..domain.sources import JOB_KIND_NAMES, describe, source_messages
from ..store import jobs, memory_sources, provenance, repository
from .inspection import Inspected, inspect_one

if TYPE_CHECKING:
    from .service import CognitionEngine

PROVENANCE_NAMES = {
    "user_stated": "本人说的",
    "inferred": "史官从对话推断",
    "consolidated": "整理（合并、改写）得出",
    "imported": "从其他插件导入",
}
STATUS_NAMES = {"active": "有效", "superseded": "已被新版本取代", "expired": "已过期（可恢复）", "forgotten": "已遗忘"}


@dataclass(frozen=True, slots=True)
class WhyStep:
    """One link of the chain: its stage, a Chinese title and label/text pairs (plain text)."""

    stage: str
    title: str
    items: list[tuple[str, str]] = field(default_factory=list)
    #: Other memories this step names (older versions, merge sources), by id.
    memory_ids: list[int] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class WhyChain:
    memory: Inspected
    steps: list[WhyStep]


def _time(moment: datetime | None, zone: ZoneInfo) -> str:
    value = as_utc(moment)
    return f"{value.astimezone(zone):%Y-%m-%d %H:%M}" if value is not None else "—"


def _person(person_id: str, name: str) -> str:
    if not person_id:
        return name or "未知"
    return f"{name}（QQ号{person_id}）" if name else f"QQ号{person_id}"


def _version_line(record: MemoryRecord, zone: ZoneInfo) -> tuple[str, str]:
    how = describe(record.source, message_ids=True) or PROVENANCE_NAMES.get(record.provenance, record.provenance)
    return (f"#{record.id} · {_time(record.recorded_at, zone)} · {how}", record.text)


async def why(engine: CognitionEngine, bot_id: str, memory_id: int) -> WhyChain:
    """The chain of one fact of this bot account (``NotFound`` when there is none)."""
    item = await inspect_one(engine, bot_id, memory_id)
    record = item.record
    zone = ZoneInfo(engine.config.timezone)
    source = record.source
    messages = source_messages(source)
    job_id = source.get("job")
    async with engine.unit_of_work() as uow:
        session = uow.session
        turns = await provenance.turns_of_messages(session, bot_id, record.scope, messages)
        notes = await provenance.notes_of_messages(session, bot_id, record.scope, messages)
        job = await provenance.queued_job(session, bot_id, job_id) if isinstance(job_id, int) else None
        related_ids = [*item.supersedes, *item.superseded_by]
        built_from = (await memory_sources.sources_of(session, [record.id])).get(record.id, [])
        merged_into = (await memory_sources.built_from(session, [record.id])).get(record.id)
        wanted = [*related_ids, *built_from, *([merged_into] if merged_into else [])]
        related = {
            row.id: repository.to_record(row)
            for row in await repository.rows_by_ids(session, wanted)
            if row.bot_id == bot_id
        }
    steps = [
        _message_step(messages, turns, zone),
        _note_step(notes, zone),
        _observation_step(source, job, job_id),
        _rewrite_step(record, zone),
        _gate_step(source),
        _correction_step(item, related, zone),
        _merge_step(built_from, merged_into, related, zone),
        _status_step(record, zone),
    ]
    return WhyChain(item, steps)


def _message_step(messages: set[str], turns: list, zone: ZoneInfo) -> WhyStep:  # type: ignore[type-arg]
    step = WhyStep("message", "消息：它是从哪句话来的")
    for turn in turns:
        step.items.append((f"{_person(turn.user_id, turn.user_name)} · {_time(turn.said_at, zone)}", turn.input_text))
    found = {turn.message_id for turn in turns}
    missing = sorted(messages - found)
    if missing:
        step.items.append(("消息编号", "、".join(missing) + "（原话已不在短期聊天记录里：只保留最近的若干轮）"))
    if not messages:
        step.items.append(("来源", "这条记忆不是从聊天消息整理来的（记忆工具、更正、整理、导入或命令写入）"))
    return step


def _note_step(notes: list, zone: ZoneInfo) -> WhyStep:  # type: ignore[type-arg]
    step = WhyStep("note", "本轮笔记：机器人当时记下的要点")
    for note in notes:
        step.items.append((f"{_person(note.user_id, note.user_name)} · {_time(note.created_at, zone)}", note.content))
    if not notes:
        step.items.append(("笔记", "没有保存的本轮笔记（已滚出短期记录，或这条记忆不来自一轮对话）"))
    return step


def _observation_step(source: dict[str, object], job: object, job_id: object) -> WhyStep:
    step = WhyStep("observation", "观察：交给史官的原始观察")
    kind = str(source.get("job_kind", ""))
    if job is not None:
        payload = jobs.readable_payload(job.payload) or {}  # type: ignore[attr-defined]
        listed = source.get("sources")
        numbers = [number for number in listed if isinstance(number, int)] if isinstance(listed, list) else []
        observations = payload.get("observations") or [turn.get("input", "") for turn in payload.get("turns", [])]
        for number in numbers or range(1, len(observations) + 1):
            if 1 <= number <= len(observations):
                step.items.append((f"观察 {number}（任务 #{job_id} 仍在队列中）", str(observations[number - 1])))
    elif isinstance(job_id, int):
        if kind == "transcript":
            step.items.append(("观察", "史官直接读的聊天记录（见上方消息），没有单独的观察"))
        else:
            step.items.append(
                (
                    "观察",
                    f"观察原文只在任务排队时保存；任务 #{job_id} 完成时已随任务删除"
                    "（史官可能拒绝了其中的一部分：秘密、本人不想被记住的、关于别人的，留下原文就等于留下了它们）",
                )
            )
    else:
        step.items.append(("观察", "这条记忆不经史官整理，没有观察"))
    return step


def _rewrite_step(record: MemoryRecord, zone: ZoneInfo) -> WhyStep:
    source = record.source
    step = WhyStep("rewrite", "改写：写进记忆库的事实")
    how = describe(source, message_ids=True)
    kind = JOB_KIND_NAMES.get(str(source.get("job_kind", "")), "")
    step.items.append(("写入方式", how or "未记录（导入、恢复或命令写入）"))
    step.items.append(("来源类别", PROVENANCE_NAMES.get(record.provenance, record.provenance)))
    if kind:
        step.items.append(("史官读的是", kind))
    step.items.append(("事实", record.text))
    if record.happened_at is not None:
        step.items.append(("发生时间", happened_label(record.happened_at, precision_of(source), zone)))
    step.items.append(("记录时间", _time(record.recorded_at, zone)))
    return step


def _gate_step(source: dict[str, object]) -> WhyStep:
    step = WhyStep("gate", "闸门：是否已写成绝对表述")
    absolute = source.get("absolute")
    if absolute is True:
        step.items.append(("判定", "通过：时间、人称和地点已写成绝对表述"))
    elif absolute is False:
        step.items.append(("判定", "未通过：重试后仍有相对说法，按原样保存并标为非绝对"))
    else:
        step.items.append(("判定", "没有闸门记录（这条记忆不经闸门写入）"))
    if source.get("warning"):
        step.items.append(("闸门的话", str(source["warning"])))
    return step


def _correction_step(item: Inspected, related: dict[int, MemoryRecord], zone: ZoneInfo) -> WhyStep:
    step = WhyStep("corrections", "更正：之前和之后的版本", memory_ids=[*item.supersedes, *item.superseded_by])
    for older in item.supersedes:
        if older in related:
            label, text = _version_line(related[older], zone)
            step.items.append(("旧版本 " + label, text))
    for newer in item.superseded_by:
        if newer in related:
            label, text = _version_line(related[newer], zone)
            step.items.append(("新版本 " + label, text))
    if not step.items:
        step.items.append(("更正", "没有被更正过"))
    return step


def _merge_step(
    built_from: list[int], merged_into: int | None, related: dict[int, MemoryRecord], zone: ZoneInfo
) -> WhyStep:
    named = [*built_from, *([merged_into] if merged_into else [])]
    step = WhyStep("merges", "合并：整理时合并的记忆", memory_ids=named)
    for source_id in built_from:
        if source_id in related:
            label, text = _version_line(related[source_id], zone)
            step.items.append(("合并自 " + label, text))
        else:
            step.items.append(("合并自", f"#{source_id}（已不在记忆库中）"))
    if merged_into is not None and merged_into in related:
        label, text = _version_line(related[merged_into], zone)
        step.items.append(("已合并进 " + label, text))
    if not step.items:
        step.items.append(("合并", "没有参与合并"))
    return step


def _status_step(record: MemoryRecord, zone: ZoneInfo) -> WhyStep:
    step = WhyStep("status", "现在：它的状态")
    step.items.append(("状态", STATUS_NAMES.get(record.status.value, record.status.value)))
    if record.status is MemoryStatus.EXPIRED:
        step.items.append(("过期于", _time(record.invalid_at, zone)))
    if record.keep:
        step.items.append(("保留", "已标记为长期保留，不会过期"))
    return step
