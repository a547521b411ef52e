"""One chat's memories as the consolidation cycle reads and changes them, beside the paths every
writer takes (``writes``, ``corrections``, ``consolidation.merge``).

* **Reads** are bounded to the chat: its facts by id (any status: the cycle is told what became of
  an id), a filtered page, the counts and the figures (``store/chat_memories.py``).
* **Labels in place** (``relabel``): a fact's importance and tags change without a new version
  (neither is in its keyword row or its vector), in one unit of work under the chat's lock,
  refused when the chat's memory is off or the fact is by, about or names an opted-out user.
* **A fact the cycle writes** (``write_consolidated``) goes through ``writes.remember`` (the
  chat's switch, opt-outs, admission, the barrier, dedupe and the per-chat limit) with provenance
  ``consolidated``; its text must pass admission whole and no piece of it may hash like a
  forgotten fact (``barred_in``, ``domain/cycle_rules.barrier_pieces``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from ..domain.clock import aware_or_now
from ..domain.cycle_rules import barrier_pieces, stored_text_refusal
from ..domain.events import MemoriesChanged
from ..domain.governance import CHAT_OFF_MESSAGE, OTHER_OPTED_OUT_MESSAGE
from ..domain.permissions import Operator
from ..domain.records import (
    Importance,
    MemoryDraft,
    MemoryKind,
    MemoryRecord,
    MemoryStatus,
    Provenance,
    Scope,
    content_hash,
    is_qq_number,
)
from ..errors import ConcurrentChange, InvalidInput, NotFound
from ..logs import log_event
from ..store import chat_memories as store
from ..store import memory_sources, repository
from .switches import chat_switches
from .writes import REFUSAL_MESSAGES, checked_text, remember

if TYPE_CHECKING:
    from .service import CognitionEngine


async def in_chat(engine: CognitionEngine, bot_id: str, scope: Scope, ids: Sequence[int]) -> dict[int, MemoryRecord]:
    """The facts of ``ids`` that belong to this chat, whatever their status (others are left out)."""
    async with engine.session() as session:
        rows = await repository.get_rows(session, bot_id, list(dict.fromkeys(ids)))
    return {
        memory_id: record
        for memory_id, record in ((memory_id, repository.to_record(row)) for memory_id, row in rows.items())
        if record.scope == scope
    }


async def merged_from(engine: CognitionEngine, ids: Sequence[int]) -> dict[int, list[int]]:
    """memory id → the ids a merge built it from (only merged memories appear)."""
    async with engine.session() as session:
        return await memory_sources.sources_of(session, ids)


async def page(
    engine: CognitionEngine,
    bot_id: str,
    scope: Scope,
    *,
    importance: Importance | None = None,
    tag: str = "",
    since: datetime | None = None,
    offset: int = 0,
    limit: int = 20,
) -> tuple[list[MemoryRecord], int]:
    """One page of the chat's active facts (newest first) and how many match."""
    if not 1 <= limit <= 50 or offset < 0:
        raise InvalidInput("limit 必须在 1 到 50 之间，offset 不能为负数")
    async with engine.session() as session:
        rows, total = await store.page(
            session, bot_id, scope, importance=importance, tag=tag.strip(), since=since, offset=offset, limit=limit
        )
    return [repository.to_record(row) for row in rows], total


async def counts(engine: CognitionEngine, bot_id: str, scope: Scope, since: datetime | None) -> store.ChatCounts:
    async with engine.session() as session:
        return await store.counts(session, bot_id, scope, since)


async def figures(engine: CognitionEngine, bot_id: str, scope: Scope) -> store.ChatFigures:
    async with engine.session() as session:
        return await store.figures(session, bot_id, scope)


async def barred_in(engine: CognitionEngine, bot_id: str, scope: Scope, texts: Sequence[str]) -> bool:
    """Whether a piece of any of ``texts`` hashes like a fact forgotten in this chat (``barrier_pieces``)."""
    hashes = [content_hash(bot_id, scope, piece) for text in texts for piece in barrier_pieces(text)]
    async with engine.session() as session:
        return bool(await repository.barred_hashes(session, hashes))


async def relabel(
    engine: CognitionEngine,
    actor: Operator,
    bot_id: str,
    scope: Scope,
    memory_id: int,
    importance: Importance | None,
    tags: Sequence[str] | None,
) -> MemoryRecord:
    """Set an active fact's importance and/or tags in place (see the module doc)."""
    cleaned = None if tags is None else [tag.strip() for tag in tags if tag.strip()]
    if importance is None and cleaned is None:
        raise InvalidInput("没有要修改的内容（重要性或标签）")
    async with engine.unit_of_work() as uow:
        await uow.lock_scope(bot_id, scope)
        switches = await chat_switches(engine, bot_id, scope)
        if switches is None:
            raise InvalidInput(CHAT_OFF_MESSAGE, en=f"memory is off in {scope.key}")
        row = (await repository.get_rows(uow.session, bot_id, [memory_id])).get(memory_id)
        if row is None or (row.scope_kind, row.scope_id) != (scope.kind, scope.id):
            raise NotFound(f"找不到 #{memory_id}", en=f"no memory {memory_id} in {scope.key}")
        if row.status != MemoryStatus.ACTIVE.value:
            raise ConcurrentChange(f"#{memory_id} 已不是有效记忆", en=f"memory {memory_id} is {row.status}")
        if switches.touches_opted_out(
            (row.speaker_id, row.subject_id), (row.text,), (row.speaker_name, row.subject_name)
        ):
            raise InvalidInput(OTHER_OPTED_OUT_MESSAGE, en="the memory is about a user who opted out")
        if not await store.relabel(uow.session, row, importance, cleaned):
            raise ConcurrentChange(f"#{memory_id} 已不是有效记忆", en=f"memory {memory_id} changed meanwhile")
        record = repository.to_record(row)
        uow.record(MemoriesChanged(bot_id))
        await uow.commit()
    log_event(
        "relabel", scope=scope.key, memory_id=memory_id, importance=importance, tags=cleaned is not None, by=actor.name
    )
    return record


async def write_consolidated(
    engine: CognitionEngine,
    actor: Operator,
    bot_id: str,
    scope: Scope,
    text: str,
    importance: Importance = Importance.MEDIUM,
    tags: Sequence[str] = (),
    about: str = "",
    kind: MemoryKind = MemoryKind.FACT,
    now: datetime | None = None,
) -> MemoryRecord:
    """A new fact of the chat written by the cycle (see the module doc); ``about``: the QQ number
    of whom it is about (in a private chat, its user when not given). ``InvalidInput`` with the
    reason in Chinese when it is refused."""
    value = checked_text(engine, text)
    refusal = await asyncio.to_thread(stored_text_refusal, value)
    if refusal:
        raise InvalidInput(refusal, en="a consolidated fact refused by admission")
    about = about.strip() or ("" if scope.is_group else scope.id)
    if about and not is_qq_number(about):
        raise InvalidInput("about_user_id 应为 QQ 号（纯数字）")
    if await barred_in(engine, bot_id, scope, [value]):
        raise InvalidInput(REFUSAL_MESSAGES["forgotten"], en="a consolidated fact names a forgotten one")
    moment = aware_or_now(now)
    draft = MemoryDraft(
        text=value,
        scope=scope,
        speaker_id=about,
        subject_id=about,
        kind=kind,
        tags=[tag.strip() for tag in tags if tag.strip()],
        importance=importance,
        provenance=Provenance.CONSOLIDATED,
        source={"via": "consolidation", "written_by": actor.name, "written_at": moment.isoformat()},
    )
    result = await remember(engine, bot_id, [draft], now=moment)
    if result.written:
        return result.written[0]
    reason = result.refused[0][2] if result.refused else "unknown"
    if reason == "duplicate" and 0 in result.record_ids:
        raise InvalidInput(f"已有一条相同的有效记忆 #{result.record_ids[0]}", en="a consolidated fact repeats one")
    raise InvalidInput(REFUSAL_MESSAGES.get(reason, f"未能记录：{reason}"), en=f"a consolidated fact refused: {reason}")
