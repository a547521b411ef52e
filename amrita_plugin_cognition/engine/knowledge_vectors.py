"""The knowledge entries' vector side: one collection per bot account and generation
(``index/collections.knowledge_collection_name``), derived from SQL like the cards' collection.

* **Drain** (``apply_knowledge``, called by ``IndexSync`` for outbox rows of scope kind
  ``knowledge``): the entry is read when the row is applied; active and still that bot's, its
  current text is embedded; stale, deleted or another bot's, its vector is deleted. So the vector
  side can lag, never show a hidden entry for longer than the drain takes.
* **Reindex** (``rebuild_knowledge``): the keyword rows again from the entry rows, then every
  active entry in id pages into the new generation, under the index lock.
* **Repair** (``compare_knowledge``, ``repair_knowledge``): active entries against the stored ids
  by id, reported as ``<bot>|knowledge``; the missing are queued (or embedded at once), the extra
  deleted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from ..domain.clock import UTC
from ..domain.events import IndexWorkQueued
from ..domain.knowledge import ACTIVE
from ..index.collections import KNOWLEDGE_SCOPE, StoredIds
from ..store import knowledge as knowledge_store
from ..store import knowledge_index, outbox
from ..store.models import KnowledgeRow, OutboxRow

if TYPE_CHECKING:
    from .service import CognitionEngine

PAGE = 1000


def knowledge_label(bot_id: str) -> str:
    """How a bot account's knowledge collection is named in a ``RepairReport``."""
    return f"{bot_id}|{KNOWLEDGE_SCOPE}"


async def apply_knowledge(
    engine: CognitionEngine,
    bot_id: str,
    entries: Sequence[OutboxRow],
    rows: dict[int, KnowledgeRow],
    generation: int,
) -> None:
    upserts: list[KnowledgeRow] = []
    deletes: list[int] = []
    for entry in entries:
        row = rows.get(entry.memory_id)
        if row is not None and row.bot_id == bot_id and row.state == ACTIVE:
            upserts.append(row)
        else:
            deletes.append(entry.memory_id)
    if upserts:
        await upsert_entries(engine, upserts, generation)
    if deletes:
        await asyncio.to_thread(engine.vectors.delete_knowledge, generation, bot_id, sorted(set(deletes)))


async def upsert_entries(engine: CognitionEngine, rows: Sequence[KnowledgeRow], generation: int) -> None:
    """Embed entries (title, summary, body) into their bots' knowledge collections."""
    by_bot: dict[str, dict[int, KnowledgeRow]] = {}
    for row in rows:
        by_bot.setdefault(row.bot_id, {})[row.id] = row
    for bot_id, unique in by_bot.items():
        entries = list(unique.values())
        vectors = await engine.embedder.embed([knowledge_index.entry_text(row) for row in entries])
        metadatas: list[dict[str, str | int | float | bool]] = [{"version": row.version} for row in entries]
        await asyncio.to_thread(
            engine.vectors.upsert_knowledge, generation, bot_id, [row.id for row in entries], vectors, metadatas
        )


async def _active_pages(engine: CognitionEngine):  # type: ignore[no-untyped-def]
    last_id = 0
    while True:
        async with engine.unit_of_work() as uow:
            page = await knowledge_store.rows_after(uow.session, last_id, PAGE)
        if not page:
            return
        last_id = page[-1].id
        yield [row for row in page if row.state == ACTIVE]


async def rebuild_knowledge(engine: CognitionEngine, generation: int) -> int:
    """Keyword rows again, and every active entry's vector into ``generation``. Returns how many."""
    async with engine.unit_of_work() as uow:
        await knowledge_index.rebuild(uow.session)
        await uow.commit()
    count = 0
    async for page in _active_pages(engine):
        async with engine.index_sync.lock:
            await upsert_entries(engine, page, generation)
        count += len(page)
    return count


async def compare_knowledge(engine: CognitionEngine, listing: StoredIds) -> list[tuple[str, set[int], set[int]]]:
    """(label, active entry ids, stored ids) per bot account, for ``missing_and_extra``."""
    expected: dict[str, set[int]] = {}
    async for page in _active_pages(engine):
        for row in page:
            expected.setdefault(row.bot_id, set()).add(row.id)
    return [
        (knowledge_label(bot_id), expected.get(bot_id, set()), listing.knowledge.get(bot_id, set()))
        for bot_id in expected.keys() | listing.knowledge.keys()
    ]


def is_knowledge_label(label: str) -> bool:
    return label.endswith(f"|{KNOWLEDGE_SCOPE}")


async def delete_extra(engine: CognitionEngine, generation: int, label: str, ids: list[int]) -> None:
    bot_id = label.partition("|")[0]
    await asyncio.to_thread(engine.vectors.delete_knowledge, generation, bot_id, ids)


async def repair_missing(engine: CognitionEngine, missing: dict[str, list[int]], generation: int, direct: bool) -> int:
    """Queue (or with ``direct`` embed now) the entries found missing. Returns how many."""
    wanted = [entry_id for label, ids in missing.items() if is_knowledge_label(label) for entry_id in ids]
    count = 0
    for start in range(0, len(wanted), PAGE):
        async with engine.unit_of_work() as uow:
            rows = await knowledge_store.rows_by_ids(uow.session, wanted[start : start + PAGE])
            if not direct:
                now = datetime.now(UTC)
                for row in rows:
                    outbox.enqueue_knowledge(uow.session, row.id, row.bot_id, now)
                uow.record(IndexWorkQueued())
                await uow.commit()
        if direct:
            await upsert_entries(engine, rows, generation)
        count += len(rows)
    return count
