"""What the decay sweep does not touch and what it retired: the ``keep`` marker, and the expired
memories of a chat, listed and restored.

``keep`` (``/memory keep``, ``ambot cognition keep``) is set by whoever may forget the memory
(``permissions.check_keep_memory``); a kept memory is never demoted or retired. A restore
(``/memory restore``, ``ambot cognition expired restore``) brings an expired memory back as
active with its clock restarted, into both indices through the outbox; it is refused when a
forget barrier covers the memory (by id or content hash: nothing forgotten comes back) or when the
same fact is active again (learned anew since), and is for whoever may switch its chat
(``permissions.check_manage_expired``). Expired memories are otherwise invisible: recall, lists,
searches, cards and the tools read active rows only.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from ..domain import permissions
from ..domain.clock import aware_or_now
from ..domain.events import IndexWorkQueued, MemoriesChanged
from ..domain.permissions import Actor
from ..domain.records import ChatContext, MemoryRecord, MemoryStatus
from ..errors import ConcurrentChange, InvalidInput, NotFound
from ..logs import log_event
from ..store import decay as decay_store
from ..store import repository
from .editors import load_visible, lock_for

if TYPE_CHECKING:
    from .service import CognitionEngine


async def set_keep(engine: CognitionEngine, context: ChatContext, memory_id: int, keep: bool = True) -> MemoryRecord:
    """Mark a memory this chat may see (active or expired) kept, or no longer kept."""
    async with engine.unit_of_work() as uow:
        await lock_for(uow, context, memory_id)
        row = await load_visible(uow, context, memory_id, engine.config.scope_policy, expired_ok=True)
        record = repository.to_record(row)
        permissions.check_keep_memory(context, record)
        if not await decay_store.set_keep(uow.session, row, keep):
            raise ConcurrentChange(f"记忆 #{memory_id} 已被修改或删除，请重新查看")
        await uow.commit()
    log_event("keep", memory_id=memory_id, keep=keep, scope=record.scope.key)
    return record


async def list_expired(
    engine: CognitionEngine, context: ChatContext, offset: int = 0, limit: int = 10
) -> tuple[list[MemoryRecord], int]:
    """One page of this chat's expired memories (newest first) and their total."""
    permissions.check_manage_expired(context, context.bot_id, context.scope)
    async with engine.unit_of_work() as uow:
        return await repository.list_visible(
            uow.session, decay_store.expired_query(context.bot_id, context.scope), offset, limit
        )


async def restore_expired(
    engine: CognitionEngine, actor: Actor, bot_id: str | None, memory_id: int, now: datetime | None = None
) -> MemoryRecord:
    """Bring an expired memory back (who may: ``check_manage_expired``); else why not, in Chinese.
    ``bot_id`` None: the memory's own bot account (the operator, who names only the id)."""
    moment = aware_or_now(now)
    async with engine.unit_of_work() as uow:
        found = await repository.rows_by_ids(uow.session, [memory_id])
        row = found[0] if found and bot_id in (None, found[0].bot_id) else None
        if row is None:
            raise NotFound(f"没有找到编号为 {memory_id} 的记忆（可能已过了保留期被永久删除）")
        bot_id = row.bot_id
        scope = repository.to_record(row).scope
        permissions.check_manage_expired(actor, bot_id, scope)
        await uow.session.rollback()  # nothing read before the lock may be trusted
        await uow.lock_scope(bot_id, scope)
        row = (await repository.get_rows(uow.session, bot_id, [memory_id])).get(memory_id)
        if row is None or row.status != MemoryStatus.EXPIRED.value:
            raise InvalidInput(f"记忆 #{memory_id} 没有过期，无需恢复")
        if await repository.barrier_for(uow.session, memory_id) or await repository.barred_hashes(
            uow.session, [row.content_hash]
        ):
            raise InvalidInput(f"记忆 #{memory_id} 的内容已被要求遗忘，不能恢复")
        duplicate = (await repository.find_active_duplicate(uow.session, bot_id, [row.content_hash])).get(
            row.content_hash
        )
        if duplicate is not None:
            raise InvalidInput(f"已有相同内容的有效记忆 #{duplicate}，无需恢复")
        if not await decay_store.restore(uow.session, row, moment):
            raise ConcurrentChange(f"记忆 #{memory_id} 已被修改或删除，请重新查看")
        uow.record(IndexWorkQueued(), MemoriesChanged(bot_id))
        await uow.commit()
    log_event("restore_expired", memory_id=memory_id, scope=scope.key)
    return repository.to_record(row)
