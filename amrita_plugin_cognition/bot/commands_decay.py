"""``/memory`` commands of the decay sweep (``engine.decay``):

* ``/memory expired [页码]``: this chat's expired memories, each with the day until which it can be
  restored (the chat's admins, owner or a bot admin; in a private chat its user);
* ``/memory restore <编号>``: bring one back (the same people);
* ``/memory keep <编号>`` / ``/memory unkeep <编号>``: a memory that never expires, or no longer
  (whoever may delete it: its speaker or subject, an admin, the owner or a bot admin).

Who may is the engine's to decide (``permissions.check_manage_expired`` / ``check_keep_memory``).
"""

from __future__ import annotations

from nonebot.adapters.onebot.v11 import Bot

from ..api import ChatContext, CognitionEngine, expired_purge_date
from .commands_labels import day_label, record_lines, zone_of

PAGE_SIZE = 10


async def expired(engine: CognitionEngine, bot: Bot | None, context: ChatContext, page: int) -> str:
    records, total = await engine.decay.expired(context, (page - 1) * PAGE_SIZE, PAGE_SIZE)
    place = "本群" if context.scope.is_group else "本会话"
    if total == 0:
        return f"{place}没有过期的记忆"
    pages = (total + PAGE_SIZE - 1) // PAGE_SIZE
    if not records:
        return f"只有 {pages} 页"
    zone = zone_of(engine.config.timezone)
    keep_days = engine.config.consolidation.expired_keep_days
    lines = await record_lines(records, zone=zone, bot=bot, with_chat=False)
    shown = [
        f"{line}（{day_label(expired_purge_date(record.invalid_at or record.updated_at, keep_days), zone)} 前可恢复）"
        for line, record in zip(lines, records, strict=True)
    ]
    header = f"{place}已过期的记忆（第 {page}/{pages} 页，共 {total} 条；用 /memory restore <编号> 恢复）"
    return "\n".join([header, *shown])


async def restore(engine: CognitionEngine, context: ChatContext, memory_id: int) -> str:
    await engine.decay.restore(context, context.bot_id, memory_id)
    return (
        f"已恢复记忆 #{memory_id}，它会重新被记起；"
        f"{engine.config.consolidation.short_term_days:g} 天内没有被更新时会再次过期，"
        f"要一直保留请用 /memory keep {memory_id}"
    )


async def keep(engine: CognitionEngine, context: ChatContext, memory_id: int, keep: bool) -> str:
    record = await engine.decay.keep(context, memory_id, keep)
    if not keep:
        return f"记忆 #{memory_id} 不再特别保留，会像其他记忆一样随时间过期"
    note = "（它已过期：恢复后才会重新被记起）" if record.status.value == "expired" else ""
    return f"已设为保留：记忆 #{memory_id} 不会因时间过期{note}"
