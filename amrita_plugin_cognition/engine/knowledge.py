"""The knowledge base's writes and reads (``domain/knowledge.py`` for the policy,
``store/knowledge.py`` for the SQL).

Entries are written by the consolidation cycle (and by an operator through the CLI or the Python
API), never by a chat user. Every write runs in one unit of work under the bot account's
knowledge lock (``cognition:knowledge:<bot>``, any process), checks the policy against the
sources as stored then (each must be an active fact of the bot, none from a private chat) and the
bot's known people, and keeps the entry's indices in step (keyword row now, vector through the
outbox). An update writes a new version and keeps the one it replaces as a revision; with
``expected_version`` it is refused (``ConcurrentChange``) when another writer got there first, so
nothing is overwritten silently.

A forget or a delete-all that removes a source calls ``sources_removed`` in its own transaction:
the entry is hidden until re-derived (``stale``), or deleted when no source is left
(``store/knowledge.py``); a correction calls ``source_superseded``: hidden, citing the correction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from ..domain.clock import aware_or_now
from ..domain.events import IndexWorkQueued
from ..domain.knowledge import KnowledgeDraft, KnowledgeEntry, SourceFacts, judge_entry
from ..domain.people import PersonMatcher
from ..errors import ConcurrentChange, NotFound
from ..logs import log_event
from ..store import knowledge as store
from ..store import people
from ..store.models import KnowledgeRow
from ..store.unit_of_work import UnitOfWork, take_write_lock

if TYPE_CHECKING:
    from .service import CognitionEngine

LIST_MAX = 1000


@dataclass(frozen=True, slots=True)
class SavedEntry:
    entry: KnowledgeEntry
    #: The revision that keeps the replaced version (None: a new entry, a stale one replaced, or
    #: none kept).
    revision_id: int | None = None


@dataclass(frozen=True, slots=True)
class ListedEntry:
    entry: KnowledgeEntry
    #: Replaced versions kept.
    revisions: int


@dataclass(frozen=True, slots=True)
class KnowledgeRemoval:
    """What removing sources did to the knowledge base."""

    stale: tuple[int, ...] = ()
    deleted: tuple[int, ...] = ()


async def _lock(uow: UnitOfWork, bot_id: str) -> None:
    await take_write_lock(uow.session, f"cognition:knowledge:{bot_id}")


async def _checked(
    engine: CognitionEngine, uow: UnitOfWork, bot_id: str, title: str, summary: str, body: str, sources: Sequence[int]
) -> KnowledgeDraft:
    """The draft cleaned and checked by the policy, against what SQL holds now."""
    kinds = await store.source_scope_kinds(uow.session, bot_id, sources)
    # every user of the bot the delete-all matcher knows (writes are the cycle's: rare, not on a turn)
    known = PersonMatcher(await people.nicknames(uow.session, bot_id))
    verdict = judge_entry(
        title, summary, body, sources, SourceFacts(kinds), engine.config.consolidation.knowledge_max_chars, known
    )
    if not verdict.allowed:
        log_event("knowledge_refused", bot=bot_id, reason=verdict.reason, detail=verdict.detail)
    return verdict.check()


async def create(
    engine: CognitionEngine,
    bot_id: str,
    title: str,
    summary: str,
    body: str,
    source_ids: Sequence[int] = (),
    by: str = "consolidation",
    now: datetime | None = None,
) -> KnowledgeEntry:
    """A new entry (policy-checked; ``InvalidInput`` with the Chinese reason when refused)."""
    moment = aware_or_now(now)
    async with engine.unit_of_work() as uow:
        await _lock(uow, bot_id)
        draft = await _checked(engine, uow, bot_id, title, summary, body, source_ids)
        row = await store.create(uow.session, bot_id, draft, by, moment)
        entry = store.to_entry(row)
        uow.record(IndexWorkQueued())
        await uow.commit()
    log_event("knowledge_create", bot=bot_id, entry=entry.id, sources=len(entry.source_ids), by=by)
    return entry


async def update(
    engine: CognitionEngine,
    bot_id: str,
    entry_id: int,
    title: str,
    summary: str,
    body: str,
    source_ids: Sequence[int] = (),
    by: str = "consolidation",
    now: datetime | None = None,
    expected_version: int | None = None,
) -> SavedEntry:
    """The entry's next version (a stale entry is shown again: this is its re-derivation)."""
    moment = aware_or_now(now)
    async with engine.unit_of_work() as uow:
        await _lock(uow, bot_id)
        row = await _row(uow, bot_id, entry_id)
        if expected_version is not None and row.version != expected_version:
            raise ConcurrentChange(
                f"知识条目 #{entry_id} 已被改为第 {row.version} 版，请重新查看",
                en=f"knowledge entry {entry_id} is at version {row.version}, not {expected_version}",
            )
        draft = await _checked(engine, uow, bot_id, title, summary, body, source_ids)
        keep = engine.config.consolidation.knowledge_revisions_keep
        revision_id = await store.update(uow.session, row, draft, by, moment, keep)
        entry = store.to_entry(row)
        uow.record(IndexWorkQueued())
        await uow.commit()
    log_event("knowledge_update", bot=bot_id, entry=entry_id, version=entry.version, by=by)
    return SavedEntry(entry, revision_id)


async def _row(uow: UnitOfWork, bot_id: str, entry_id: int) -> KnowledgeRow:
    row = await store.get_row(uow.session, bot_id, entry_id)
    if row is None:
        raise NotFound(f"没有知识条目 #{entry_id}", en=f"no knowledge entry {entry_id} of bot {bot_id}")
    return row


async def delete(
    engine: CognitionEngine, bot_id: str, entry_id: int, by: str = "cli", now: datetime | None = None
) -> None:
    """Delete an entry with its revisions, keyword row and (outbox) vector."""
    async with engine.unit_of_work() as uow:
        await _lock(uow, bot_id)
        await _row(uow, bot_id, entry_id)
        await store.delete_entries(uow.session, KnowledgeRow.id == entry_id, aware_or_now(now))
        uow.record(IndexWorkQueued())
        await uow.commit()
    log_event("knowledge_delete", bot=bot_id, entry=entry_id, by=by)


async def get(engine: CognitionEngine, bot_id: str, entry_id: int) -> KnowledgeEntry:
    """One entry as stored, shown or stale (``NotFound`` when there is none)."""
    async with engine.unit_of_work() as uow:
        return store.to_entry(await _row(uow, bot_id, entry_id))


async def list_entries(
    engine: CognitionEngine, bot_id: str | None, state: str | None = None, limit: int = LIST_MAX
) -> list[ListedEntry]:
    """Entries, newest change first (every bot account's when ``bot_id`` is None)."""
    async with engine.unit_of_work() as uow:
        rows = await store.list_rows(uow.session, bot_id, state, min(limit, LIST_MAX))
        counts = await store.revision_counts(uow.session, [row.id for row in rows])
    return [ListedEntry(store.to_entry(row), counts.get(row.id, 0)) for row in rows]


async def revisions(engine: CognitionEngine, bot_id: str, entry_id: int) -> list[KnowledgeEntry]:
    """The kept versions of an entry, newest first."""
    async with engine.unit_of_work() as uow:
        return [store.revision_entry(row) for row in await store.revisions(uow.session, bot_id, entry_id)]


async def sources_removed(uow: UnitOfWork, bot_id: str, removed: Sequence[int], now: datetime) -> KnowledgeRemoval:
    """In the caller's transaction (which removes the facts ``removed``): hide or delete what the
    knowledge base built from them (module doc)."""
    if not removed:
        return KnowledgeRemoval()
    await _lock(uow, bot_id)
    result = await store.sources_removed(uow.session, bot_id, removed, now)
    if result.stale or result.deleted:
        uow.record(IndexWorkQueued())
        log_event(
            "knowledge_sources_removed",
            bot=bot_id,
            stale=len(result.stale),
            deleted=len(result.deleted),
            revisions=result.revisions,
        )
    return KnowledgeRemoval(tuple(result.stale), tuple(result.deleted))


async def source_superseded(uow: UnitOfWork, bot_id: str, old_id: int, new_id: int, now: datetime) -> None:
    """In the caller's transaction (a correction of ``old_id`` by ``new_id``): the entries built
    from the old fact cite the correction and are hidden until the cycle re-derives them."""
    await _lock(uow, bot_id)
    hidden = await store.source_superseded(uow.session, bot_id, old_id, new_id, now)
    if hidden:
        uow.record(IndexWorkQueued())
        log_event("knowledge_source_superseded", bot=bot_id, old=old_id, new=new_id, stale=len(hidden))
