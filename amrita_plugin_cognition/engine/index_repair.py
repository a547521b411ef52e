"""Checking the derived vector index against the authority store, by id, and repairing it.

``missing_and_extra`` compares what SQL holds active (facts, card parts, knowledge entries) with
what a generation stores; ``repair`` deletes the extra vectors and re-queues the missing rows
through the outbox, or (``direct``, a reindex before it switches) embeds them at once, and
re-writes card keyword rows that went missing, and brings the facts' copy in SQL in step (marking
it complete once it is). Run at startup (``IndexSync.repair_soon``) and by
command (``ambot cognition repair``); the drain itself is ``engine/indexing.py``'s.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from ..domain.clock import UTC
from ..domain.events import IndexWorkQueued
from ..domain.records import Scope
from ..index.collections import CARDS_SCOPE
from ..logs import log_event
from ..store import outbox, profile_index, repository, vector_copy
from ..store import profiles as profile_store
from ..store.models import MemoryRow
from . import knowledge_vectors

if TYPE_CHECKING:
    from .indexing import IndexSync
    from .service import CognitionEngine

_Key = tuple[str, Scope]
#: Vectors read back from the index per call when the copy in SQL is refilled.
COPY_PAGE = 1000


def cards_label(bot_id: str) -> str:
    """How a bot account's card collection is named in a ``RepairReport``."""
    return f"{bot_id}|{CARDS_SCOPE}"


@dataclass(slots=True)
class RepairReport:
    generation: int
    #: (bot, scope key) -> ids active in SQL but not stored in the index.
    missing: dict[str, list[int]] = field(default_factory=dict)
    #: (bot, scope key) -> ids stored in the index that are not active in SQL.
    extra: dict[str, list[int]] = field(default_factory=dict)
    #: Collections of no known chat (name -> vectors); left alone, reported.
    unmapped: dict[str, int] = field(default_factory=dict)
    requeued: int = 0
    deleted: int = 0
    #: Card keyword rows written again (a card without one) or removed (one without a card).
    card_keywords: int = 0
    #: The copy in SQL (``store/vector_copy.py``), (bot, chat) -> ids active in SQL that it lacks,
    #: and ids it holds that are not active.
    copy_missing: dict[tuple[str, Scope], list[int]] = field(default_factory=dict)
    copy_extra: dict[tuple[str, Scope], list[int]] = field(default_factory=dict)
    #: Copy rows written from the index's vectors, and removed.
    copied: int = 0
    uncopied: int = 0

    @property
    def missing_count(self) -> int:
        return sum(len(ids) for ids in self.missing.values())

    @property
    def extra_count(self) -> int:
        return sum(len(ids) for ids in self.extra.values())


async def missing_and_extra(
    engine: CognitionEngine, sync: IndexSync, generation: int | None = None, copy: bool = False
) -> RepairReport:
    """Compare, by id, the active facts in SQL with what ``generation`` stores; with ``copy``, with
    what the copy in SQL holds too (``copy_missing`` / ``copy_extra``: what ``repair`` mends; a
    report such as ``status``'s does not read the copy)."""
    generation = generation or await sync.current_generation(force=True)
    report = RepairReport(generation)
    expected: dict[_Key, set[int]] = {}
    last_id = 0
    while True:
        async with engine.unit_of_work() as uow:
            page = await repository.active_page(uow.session, last_id, 5000)
        if not page:
            break
        last_id = page[-1].id
        for row in page:
            expected.setdefault((row.bot_id, Scope(row.scope_kind, row.scope_id)), set()).add(row.id)  # type: ignore[arg-type]
    expected_cards: dict[str, set[int]] = {}
    last_id = 0
    while True:
        async with engine.unit_of_work() as uow:
            cards = await profile_store.rows_after(uow.session, profile_store.ProfileFilter(), last_id, 5000)
        if not cards:
            break
        last_id = cards[-1].id
        for card in cards:
            expected_cards.setdefault(card.bot_id, set()).add(card.id)
    listing = await asyncio.to_thread(engine.vectors.stored_ids, generation, list(expected))
    stored = listing.by_scope
    for name, ids in listing.unmapped.items():  # a collection of no chat SQL knows
        report.unmapped[name] = len(ids)
    compared: list[tuple[str, set[int], set[int]]] = [
        (f"{key[0]}|{key[1].key}", expected.get(key, set()), stored.get(key, set()))
        for key in expected.keys() | stored.keys()
    ]
    compared += [
        (cards_label(bot_id), expected_cards.get(bot_id, set()), listing.cards.get(bot_id, set()))
        for bot_id in expected_cards.keys() | listing.cards.keys()
    ]
    compared += await knowledge_vectors.compare_knowledge(engine, listing)
    if copy:
        await _compare_copy(engine, expected, report)
    for label, wanted, found in compared:
        missing = sorted(wanted - found)
        extra = sorted(found - wanted)
        if missing:
            report.missing[label] = missing
        if extra:
            report.extra[label] = extra
    return report


async def _compare_copy(engine: CognitionEngine, expected: dict[_Key, set[int]], report: RepairReport) -> None:
    """The copy in SQL against the active facts, by id, into ``report``."""
    async with engine.unit_of_work() as uow:
        copied = await vector_copy.stored_ids(uow.session, report.generation)
    for key in expected.keys() | copied.keys():
        if lacking := sorted(expected.get(key, set()) - copied.get(key, set())):
            report.copy_missing[key] = lacking
        if surplus := sorted(copied.get(key, set()) - expected.get(key, set())):
            report.copy_extra[key] = surplus


async def repair(
    engine: CognitionEngine, sync: IndexSync, generation: int | None = None, direct: bool = False
) -> RepairReport:
    """Re-queue the missing facts and delete the extra vectors of ``generation``. ``direct``
    (a reindex, before it switches): index the missing ones now instead of queueing them."""
    report = await missing_and_extra(engine, sync, generation, copy=True)
    for label, ids in report.extra.items():
        bot_id, _, scope_key = label.partition("|")
        if scope_key == CARDS_SCOPE:
            await asyncio.to_thread(engine.vectors.delete_cards, report.generation, bot_id, ids)
        elif knowledge_vectors.is_knowledge_label(label):
            await knowledge_vectors.delete_extra(engine, report.generation, label, ids)
        else:
            scope = Scope.parse(scope_key)
            await asyncio.to_thread(engine.vectors.delete, report.generation, bot_id, scope, ids)
        report.deleted += len(ids)
    await _repair_cards(engine, sync, report, direct)
    report.requeued += await knowledge_vectors.repair_missing(engine, report.missing, report.generation, direct)
    report.card_keywords = await _repair_card_keywords(engine)
    missing_ids = [
        memory_id
        for label, ids in report.missing.items()
        if not label.endswith(f"|{CARDS_SCOPE}") and not knowledge_vectors.is_knowledge_label(label)
        for memory_id in ids
    ]
    for start in range(0, len(missing_ids), 1000):
        chunk = missing_ids[start : start + 1000]
        async with engine.unit_of_work() as uow:
            rows = await repository.rows_by_ids(uow.session, chunk)
            if direct:
                groups: dict[_Key, list[MemoryRow]] = {}
                for row in rows:
                    groups.setdefault((row.bot_id, Scope(row.scope_kind, row.scope_id)), []).append(row)  # type: ignore[arg-type]
            else:
                await repository.enqueue_upserts(uow.session, rows, datetime.now(UTC))
                uow.record(IndexWorkQueued())
                await uow.commit()
        if direct:
            await sync.upsert_rows(groups, report.generation)
        report.requeued += len(rows)
    await _repair_copy(engine, report)
    if report.missing or report.extra or report.copied or report.uncopied:
        log_event(
            "repair",
            level=logging.WARNING,
            generation=report.generation,
            missing=report.missing_count,
            extra=report.extra_count,
            copied=report.copied,
            uncopied=report.uncopied,
        )
    return report


async def _repair_copy(engine: CognitionEngine, report: RepairReport) -> None:
    """Bring the copy in SQL in step with the active facts, then mark it complete: its extra rows
    go, the vectors it lacks are read from the index (nothing embedded again: an API embedder is
    not paid twice; a bank made before the copy existed is copied here once). Facts the index
    lacks too were re-queued (or written) above, and their drain writes both."""
    generation = report.generation
    for ids in report.copy_extra.values():
        async with engine.unit_of_work() as uow:
            await vector_copy.remove(uow.session, generation, ids)
            await uow.commit()
        report.uncopied += len(ids)
    for (bot_id, scope), ids in report.copy_missing.items():
        requeued = set(report.missing.get(f"{bot_id}|{scope.key}", ()))
        wanted = [memory_id for memory_id in ids if memory_id not in requeued]
        for start in range(0, len(wanted), COPY_PAGE):
            found, vectors = await asyncio.to_thread(
                engine.vectors.vectors_by_ids, generation, bot_id, scope, wanted[start : start + COPY_PAGE]
            )
            async with engine.unit_of_work() as uow:
                await vector_copy.put(uow.session, generation, bot_id, scope, found, vectors)
                await uow.commit()
            report.copied += len(found)
    async with engine.unit_of_work() as uow:
        await vector_copy.mark_complete(uow.session, generation)
        await uow.commit()


async def _repair_cards(engine: CognitionEngine, sync: IndexSync, report: RepairReport, direct: bool) -> None:
    """The card parts ``report`` found missing: embedded now (``direct``) or queued."""
    missing = [
        profile_id for label, ids in report.missing.items() if label.endswith(f"|{CARDS_SCOPE}") for profile_id in ids
    ]
    for start in range(0, len(missing), 1000):
        async with engine.unit_of_work() as uow:
            rows = await profile_store.rows_by_ids(uow.session, missing[start : start + 1000])
            if not direct:
                now = datetime.now(UTC)
                for row in rows:
                    outbox.enqueue_card(uow.session, row.id, row.bot_id, now)
                uow.record(IndexWorkQueued())
                await uow.commit()
        if direct:
            await sync.upsert_cards(rows, report.generation)
        report.requeued += len(rows)


async def _repair_card_keywords(engine: CognitionEngine) -> int:
    """Cards without a keyword row (written before cards were searchable) get one; rows of
    no card go. Returns how many were fixed."""
    async with engine.unit_of_work() as uow:
        indexed = await profile_index.indexed_ids(uow.session)
        cards = await profile_store.all_ids(uow.session)
        missing, extra = sorted(cards - indexed), sorted(indexed - cards)
        if not missing and not extra:
            return 0
        await profile_index.remove_keywords(uow.session, extra)
        await profile_index.index_rows(uow.session, await profile_store.rows_by_ids(uow.session, missing))
        await uow.commit()
    log_event("repair", level=logging.WARNING, card_keywords_missing=len(missing), card_keywords_extra=len(extra))
    return len(missing) + len(extra)
