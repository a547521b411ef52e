"""``/memory`` commands that inspect or erase, with the confirm step (``confirmations.py``: each
removal runs only on the same user's own yes in a later message, judged from its text):

* ``/memory user|group show <编号>``: one memory with where it came from and its corrections;
* ``/memory user|group delete <编号>``: forget one memory, after a yes;
* ``/memory user clear``: everything of the speaker in every chat of this bot, after a yes;
* ``/memory group clear``: everything of this group (its admins), after a yes;
* ``/memory bot clear``: everything this bot account keeps (bot admins, private chat), after a yes.

A personal memory's text is never printed into a group.
"""

from __future__ import annotations

from datetime import tzinfo

from ..api import (
    ChatContext,
    CognitionEngine,
    ErasureTarget,
    Inspected,
    MemoryRecord,
    check_erase,
    describe_source,
    visibility_for,
)
from ..errors import NotFound
from .commands_labels import day_label, when_label, zone_of
from .confirmations import CONFIRMATIONS, Confirmations

PREVIEW_CHARS = 60
STATUS_NAMES = {"active": "有效", "superseded": "已被更正取代", "expired": "已过期"}
PROVENANCE_NAMES = {"user_stated": "对话中说的", "inferred": "推断", "consolidated": "整理合并", "imported": "导入"}
COUNT_NAMES = {
    "memories": "记忆",
    "notes": "笔记",
    "turns": "对话记录",
    "jobs": "待整理任务",
    "memos": "备忘录",
    "pins": "提醒",
    "profiles": "画像",
    "knowledge": "知识库条目和建议",
}


def _preview(record: MemoryRecord) -> str:
    text = record.text.replace("\n", " ")
    return text if len(text) <= PREVIEW_CHARS else f"{text[: PREVIEW_CHARS - 1]}…"


def _ask(context: ChatContext, message_id: str, what: str, question: str, run) -> str:  # type: ignore[no-untyped-def]
    key = Confirmations.key(context.bot_id, context.scope.key, context.user_id)
    CONFIRMATIONS.park(key, what, run, message_id, asked_by="command")
    return f"{question}\n请在 {round(CONFIRMATIONS.seconds)} 秒内回复“确认”执行，回复“取消”作罢。"


async def ask_forget(
    engine: CognitionEngine, context: ChatContext, message_id: str, target: str, memory_id: int
) -> str:
    """Check now that the speaker may forget it, show it, and wait for 确认."""
    record = await engine.governance.forgettable(context, memory_id)
    shown = f"「{_preview(record)}」" if not (context.scope.is_group and target == "user") else ""

    async def run() -> str:
        await engine.governance.forget(context, memory_id)
        return f"已删除记忆 #{memory_id}，之后不会再被记起"

    return _ask(context, message_id, f"forget:{memory_id}", f"将删除记忆 #{memory_id}{shown}，删除后不可恢复。", run)


def _erasure_target(context: ChatContext, target: str) -> tuple[ErasureTarget, str]:
    """The target and its description; refused now, before the question, by the permission the
    engine asks again when it runs (``check_erase``)."""
    if target == "user":
        erase, described = (
            ErasureTarget.user(context.bot_id, context.user_id),
            "你在所有会话中的全部记忆、笔记和对话记录",
        )
    elif target == "group":
        erase, described = (
            ErasureTarget.chat(context.bot_id, context.scope),
            "本群的全部记忆、备忘录、提醒、笔记和对话记录",
        )
    else:
        erase, described = ErasureTarget.bot(context.bot_id), "机器人在所有会话中的全部记忆"
    check_erase(context, erase)
    return erase, described


async def ask_clear(engine: CognitionEngine, context: ChatContext, message_id: str, target: str) -> str:
    """Delete-all of the speaker, this group or the bot account, after 确认 (who may: permissions)."""
    erase, described = _erasure_target(context, target)

    async def run() -> str:
        report = await engine.governance.delete_all(erase, actor=context)
        counts = "，".join(f"{COUNT_NAMES[key]} {value}" for key, value in report.counts.items() if value)
        lines = [f"已删除{described}（{counts or '本来就没有内容'}），已留下审计记录（只记谁、何时、多少条）。"]
        if target == "user":
            lines.append(
                "别人的对话记录、笔记、待整理任务、备忘录、提醒和画像里提到你的内容"
                "（各种写法的 QQ 号、你用过的昵称）也一并删去了。"
            )
        lines += [f"按设计保留：{line}" for line in report.kept()]
        if report.amrita_history():
            lines.append(report.amrita_history())
        return "\n".join(lines)

    question = f"将不可恢复地删除{described}。"
    if target == "user":  # the answer lists the same; the question must not promise less than is done
        question += "别人的记录、备忘录、提醒和画像里提到你（各种写法的 QQ 号、你用过的昵称）的内容也会一并删去。"
    return _ask(context, message_id, f"clear:{erase.label}", question, run)


def _lineage(item: Inspected) -> str:
    parts = []
    if item.supersedes:
        parts.append("更正自 " + "、".join(f"#{older}" for older in item.supersedes))
    if item.superseded_by:
        parts.append("已被 " + " → ".join(f"#{newer}" for newer in item.superseded_by) + " 取代")
    return "；".join(parts)


def _source(record: MemoryRecord) -> str:
    """Where a fact came from: how it is held (its provenance), then ``sources.describe``."""
    how = PROVENANCE_NAMES.get(record.provenance, record.provenance)
    return "，".join(part for part in (how, describe_source(record.source)) if part)


def describe(item: Inspected, zone: tzinfo) -> str:
    record = item.record
    lines = [
        f"记忆 #{record.id}（{STATUS_NAMES.get(record.status.value, record.status.value)}）：{record.text}",
        f"来源：{_source(record)}",
        f"记录于 {day_label(record.recorded_at, zone)}"
        + (f"，发生于 {when_label(record, zone)}" if record.happened_at else ""),
    ]
    lineage = _lineage(item)
    if lineage:
        lines.append(f"更正记录：{lineage}")
    return "\n".join(lines)


async def show(engine: CognitionEngine, context: ChatContext, target: str, memory_id: int) -> str:
    """One memory this chat may see, whatever its status, with its provenance and lineage."""
    item = await engine.governance.inspect_one(context.bot_id, memory_id)
    record = item.record
    if not visibility_for(context, engine.config.scope_policy).allows(record):
        raise NotFound(f"没有找到编号为 {memory_id} 的记忆")
    if context.scope.is_group and target == "user" and not record.scope.is_group:
        raise NotFound(f"没有找到编号为 {memory_id} 的记忆")
    return describe(item, zone_of(engine.config.timezone))
