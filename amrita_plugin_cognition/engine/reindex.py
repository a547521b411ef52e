"""Rebuilding the vector index from SQL into a new generation, and the embedding fingerprint.

A rebuild reads active facts in id pages (new rows get higher ids, so the scan reaches them)
and writes generation N+1 beside N. Each page is read and written under the index lock, so a
forget committed after the page was read is applied to the new generation after the page (its
outbox row is drained behind the lock). Before the switch, the new generation is checked by id
against SQL and repaired (nothing forgotten or corrected stays, nothing active is missing); the
switch is one SQL write, and the old collections are dropped off the event loop.

Profile cards are rebuilt the same way, after the facts: their keyword rows again from the card
rows (one transaction), then every card part in id pages into the new generation's card
collections, checked by id with the facts before the switch.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..domain.records import Scope
from ..errors import EngineUnavailable
from ..index.embedders import Fingerprint
from ..logs import log_event
from ..store import meta, profile_index, repository, vector_copy
from ..store import profiles as profile_store
from ..store.models import MemoryRow
from .knowledge_vectors import rebuild_knowledge

if TYPE_CHECKING:
    from .service import CognitionEngine

#: Asked before rebuilding when the policy is ``ask``; answers whether to go on.
Confirm = Callable[[str], Awaitable[bool]]


@dataclass(slots=True)
class ReindexReport:
    generation_before: int
    generation_after: int
    sql_active: int
    vectors_before: int
    vectors_after: int
    reapplied: int
    seconds: float
    #: Ids the check before the switch found missing or stale in the new generation (repaired).
    repaired: int = 0
    #: Profile card parts in SQL, and their vectors in the new generation.
    cards: int = 0
    card_vectors: int = 0


async def reindex(
    engine: CognitionEngine, progress: Callable[[int, int], None] | None = None, page_size: int = 1000
) -> ReindexReport:
    started = time.perf_counter()
    index = engine.index_sync
    vectors = engine.vectors
    old_generation = await index.current_generation(force=True)
    new_generation = old_generation + 1
    vectors_before = await asyncio.to_thread(vectors.total_count, old_generation)
    await asyncio.to_thread(vectors.drop_generations, old_generation)  # leftovers of an interrupted rebuild
    await _drop_other_copies(engine, old_generation)
    async with engine.unit_of_work() as uow:
        total = await repository.count_all_active(uow.session)
    done = 0
    last_id = 0
    index.building_generation = new_generation
    try:
        while True:
            async with index.lock:
                async with engine.unit_of_work() as uow:
                    page = await repository.active_page(uow.session, last_id, page_size)
                if not page:
                    break
                last_id = page[-1].id
                groups: dict[tuple[str, Scope], list[MemoryRow]] = {}
                for row in page:
                    groups.setdefault((row.bot_id, Scope(row.scope_kind, row.scope_id)), []).append(row)  # type: ignore[arg-type]
                await index.upsert_rows(groups, new_generation)
            done += len(page)
            if progress:
                progress(done, int(total))
        await _rebuild_cards(engine, new_generation, page_size)
        await rebuild_knowledge(engine, new_generation)
        reapplied = await index.drain()
        async with index.lock:
            check = await index.repair(new_generation, direct=True)
            fingerprint = json.dumps(engine.embedder.fingerprint.as_dict())
            await index.switch_generation(new_generation, fingerprint)
    finally:
        index.building_generation = None
    await asyncio.to_thread(vectors.drop_generations, new_generation)
    await _drop_other_copies(engine, new_generation)
    async with engine.unit_of_work() as uow:
        sql_active = await repository.count_all_active(uow.session)
        cards = len(await profile_store.all_ids(uow.session))
    vectors_after = await asyncio.to_thread(vectors.total_count, new_generation)
    card_vectors = await asyncio.to_thread(vectors.card_count, new_generation)
    report = ReindexReport(
        generation_before=old_generation,
        generation_after=new_generation,
        sql_active=int(sql_active),
        vectors_before=vectors_before,
        vectors_after=vectors_after,
        reapplied=reapplied,
        seconds=time.perf_counter() - started,
        repaired=check.missing_count + check.extra_count,
        cards=cards,
        card_vectors=card_vectors,
    )
    log_event("reindex", started, generation=new_generation, rows=sql_active, vectors=vectors_after, cards=card_vectors)
    return report


async def _drop_other_copies(engine: CognitionEngine, keep: int) -> None:
    """The copy in SQL of every generation but ``keep`` goes, as their collections did."""
    async with engine.unit_of_work() as uow:
        await vector_copy.drop_other_generations(uow.session, keep)
        await uow.commit()


async def _rebuild_cards(engine: CognitionEngine, generation: int, page_size: int) -> None:
    """The cards' keyword rows from the card rows, and their vectors into ``generation``: each
    page read and written under the index lock, like the facts' pages."""
    async with engine.unit_of_work() as uow:
        await profile_index.rebuild(uow.session)
        await uow.commit()
    last_id = 0
    while True:
        async with engine.index_sync.lock:
            async with engine.unit_of_work() as uow:
                page = await profile_store.rows_after(uow.session, profile_store.ProfileFilter(), last_id, page_size)
            if not page:
                return
            last_id = page[-1].id
            await engine.index_sync.upsert_cards(page, generation)


async def stored_fingerprint(engine: CognitionEngine) -> Fingerprint | None:
    async with engine.unit_of_work() as uow:
        raw = await meta.get(uow.session, meta.FINGERPRINT)
    return None if raw is None else Fingerprint.from_dict(json.loads(raw))


async def check_fingerprint(engine: CognitionEngine, confirm: Confirm | None = None) -> str:
    """Compare the stored embedding fingerprint with the configured embedder.

    Returns "new", "match", "rebuilt", or "ignored"; raises ``EngineUnavailable`` when the policy
    is ``ask`` and nobody confirmed (the index must not be used with the wrong model)."""
    stored = await stored_fingerprint(engine)
    current = engine.embedder.fingerprint
    if stored is None:
        generation = await engine.index_sync.current_generation(force=True)
        async with engine.unit_of_work() as uow:
            await meta.put(uow.session, meta.FINGERPRINT, json.dumps(current.as_dict()))
            if not await repository.count_all_active(uow.session):  # a new bank: its copy is whole
                await vector_copy.mark_complete(uow.session, generation)
            await uow.commit()
        return "new"
    same_model = (stored.protocol, stored.model, stored.url) == (current.protocol, current.model, current.url)
    same_dimension = not stored.dimension or not current.dimension or stored.dimension == current.dimension
    if same_model and same_dimension:
        return "match"
    message = f"embedding fingerprint changed: stored {stored.as_dict()} configured {current.as_dict()}"
    policy = engine.config.embedder.on_mismatch
    if policy == "never":
        log_event("fingerprint", level=logging.WARNING, action="ignored", detail=message)
        return "ignored"
    if policy == "ask" and (confirm is None or not await confirm(message)):
        raise EngineUnavailable(
            f"向量模型与建索引时不同（{stored.model or stored.protocol} → {current.model or current.protocol}），"
            "请运行 ambot cognition reindex 重建向量索引"
        )
    log_event("fingerprint", level=logging.WARNING, action="rebuild", detail=message)
    await reindex(engine)
    return "rebuilt"
