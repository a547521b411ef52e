"""Knowledge entries and their kept versions in SQL (``domain/knowledge.py`` for what an entry
may say). Every function works in the caller's transaction; every write of an entry row keeps its
search indices in step (``store/knowledge_index.py``).

Sources: an entry's ``source_ids`` are the memories it was derived from. When one of them is
removed (a forget, a delete-all), ``sources_removed`` takes it out: an entry left without sources
is deleted with its revisions (everything it said came from removed facts); one that keeps some is
marked ``stale`` (hidden from chat and out of both indices until the cycle writes it again, since
its text may still say the removed fact), and every kept version citing a removed fact is deleted.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.clock import as_utc
from ..domain.knowledge import ACTIVE, STALE, KnowledgeDraft, KnowledgeEntry
from ..domain.records import MemoryStatus
from . import knowledge_index
from .models import KnowledgeRevisionRow, KnowledgeRow, MemoryRow
from .profile_sources import rows_citing, source_list, sources_without
from .revisions import keep_newest

PAGE = 500


def _entry(
    row: KnowledgeRow | KnowledgeRevisionRow, state: str, updated_at: datetime, updated_by: str
) -> KnowledgeEntry:
    entry_id = row.entry_id if isinstance(row, KnowledgeRevisionRow) else row.id
    return KnowledgeEntry(
        id=entry_id,
        bot_id=row.bot_id,
        title=row.title,
        summary=row.summary,
        body=row.body,
        source_ids=tuple(source_list(row.source_ids)),
        state=state,
        version=row.version,
        updated_at=as_utc(updated_at) or updated_at,
        updated_by=updated_by,
    )


def to_entry(row: KnowledgeRow) -> KnowledgeEntry:
    return _entry(row, row.state, row.updated_at, row.updated_by)


def revision_entry(row: KnowledgeRevisionRow) -> KnowledgeEntry:
    return _entry(row, "revision", row.written_at, row.written_by)


async def get_row(session: AsyncSession, bot_id: str, entry_id: int) -> KnowledgeRow | None:
    row = await session.get(KnowledgeRow, entry_id, populate_existing=True)
    return row if row is not None and row.bot_id == bot_id else None


async def rows_by_ids(session: AsyncSession, entry_ids: Sequence[int]) -> list[KnowledgeRow]:
    found: list[KnowledgeRow] = []
    ordered = sorted(set(entry_ids))
    for start in range(0, len(ordered), PAGE):
        query = select(KnowledgeRow).where(KnowledgeRow.id.in_(ordered[start : start + PAGE]))
        found += list((await session.execute(query)).scalars())
    return found


async def list_rows(
    session: AsyncSession, bot_id: str | None, state: str | None = None, limit: int = 1000
) -> list[KnowledgeRow]:
    """Entries, newest change first (every bot account's when ``bot_id`` is None)."""
    query = select(KnowledgeRow)
    if bot_id is not None:
        query = query.where(KnowledgeRow.bot_id == bot_id)
    if state is not None:
        query = query.where(KnowledgeRow.state == state)
    query = query.order_by(KnowledgeRow.updated_at.desc(), KnowledgeRow.id.desc()).limit(limit)
    return list((await session.execute(query)).scalars())


async def rows_after(session: AsyncSession, last_id: int, limit: int) -> list[KnowledgeRow]:
    """Every bot account's entries with an id above ``last_id``, in id order (reindex, repair)."""
    query = select(KnowledgeRow).where(KnowledgeRow.id > last_id).order_by(KnowledgeRow.id).limit(limit)
    return list((await session.execute(query)).scalars())


async def source_scope_kinds(session: AsyncSession, bot_id: str, memory_ids: Sequence[int]) -> dict[int, str]:
    """The scope kind of each of ``memory_ids`` that is an active fact of the bot account."""
    found: dict[int, str] = {}
    ordered = sorted(set(memory_ids))
    for start in range(0, len(ordered), PAGE):
        query = select(MemoryRow.id, MemoryRow.scope_kind).where(
            MemoryRow.bot_id == bot_id,
            MemoryRow.status == MemoryStatus.ACTIVE.value,
            MemoryRow.id.in_(ordered[start : start + PAGE]),
        )
        found.update((int(row[0]), str(row[1])) for row in await session.execute(query))
    return found


def _content(draft: KnowledgeDraft) -> dict[str, Any]:
    return {
        "title": draft.title,
        "summary": draft.summary,
        "body": draft.body,
        "source_ids": json.dumps(list(draft.source_ids)),
    }


async def create(session: AsyncSession, bot_id: str, draft: KnowledgeDraft, by: str, now: datetime) -> KnowledgeRow:
    row = KnowledgeRow(
        bot_id=bot_id, state=ACTIVE, version=1, created_at=now, updated_at=now, updated_by=by, **_content(draft)
    )
    session.add(row)
    await session.flush()
    await knowledge_index.changed(session, [row], now)
    return row


async def update(
    session: AsyncSession, row: KnowledgeRow, draft: KnowledgeDraft, by: str, now: datetime, keep: int
) -> int | None:
    """Make ``draft`` the entry's next version (shown again if it was stale). The replaced version
    is kept as a revision unless it was stale (it may say a forgotten fact), then only the newest
    ``keep``; returns that revision's id (None: none kept)."""
    revision_id: int | None = None
    if keep > 0 and row.state == ACTIVE:
        revision = KnowledgeRevisionRow(
            bot_id=row.bot_id,
            entry_id=row.id,
            version=row.version,
            title=row.title,
            summary=row.summary,
            body=row.body,
            source_ids=row.source_ids,
            written_at=row.updated_at,
            written_by=row.updated_by,
            replaced_at=now,
            replaced_by=by,
        )
        session.add(revision)
        await session.flush()
        revision_id = revision.id
    owner = and_(KnowledgeRevisionRow.bot_id == row.bot_id, KnowledgeRevisionRow.entry_id == row.id)
    await keep_newest(session, KnowledgeRevisionRow, owner, keep)
    for column, value in _content(draft).items():
        setattr(row, column, value)
    row.state, row.version, row.updated_at, row.updated_by = ACTIVE, row.version + 1, now, by
    await session.flush()
    await knowledge_index.changed(session, [row], now)
    return revision_id


async def delete_entries(session: AsyncSession, clause: ColumnElement[bool], now: datetime) -> int:
    """Delete the entries ``clause`` selects with their revisions, keyword rows and vectors."""
    doomed = [
        (int(row[0]), str(row[1]))
        for row in await session.execute(select(KnowledgeRow.id, KnowledgeRow.bot_id).where(clause))
    ]
    for start in range(0, len(doomed), PAGE):
        ids = [entry_id for entry_id, _ in doomed[start : start + PAGE]]
        await session.execute(delete(KnowledgeRevisionRow).where(KnowledgeRevisionRow.entry_id.in_(ids)))
        await session.execute(delete(KnowledgeRow).where(KnowledgeRow.id.in_(ids)))
    await knowledge_index.removed(session, doomed, now)
    return len(doomed)


async def revisions(session: AsyncSession, bot_id: str, entry_id: int) -> list[KnowledgeRevisionRow]:
    query = (
        select(KnowledgeRevisionRow)
        .where(KnowledgeRevisionRow.bot_id == bot_id, KnowledgeRevisionRow.entry_id == entry_id)
        .order_by(KnowledgeRevisionRow.id.desc())
    )
    return list((await session.execute(query)).scalars())


async def revision_counts(session: AsyncSession, entry_ids: Sequence[int]) -> dict[int, int]:
    if not entry_ids:
        return {}
    query = (
        select(KnowledgeRevisionRow.entry_id, func.count())
        .where(KnowledgeRevisionRow.entry_id.in_(list(entry_ids)))
        .group_by(KnowledgeRevisionRow.entry_id)
    )
    return {int(row[0]): int(row[1]) for row in await session.execute(query)}


@dataclass(slots=True)
class SourcesRemoved:
    #: Entries that keep other sources: hidden until re-derived.
    stale: list[int]
    #: Entries left without any source: deleted.
    deleted: list[int]
    #: Kept versions deleted because they cite a removed fact.
    revisions: int


async def sources_removed(
    session: AsyncSession, bot_id: str, memory_ids: Sequence[int], now: datetime
) -> SourcesRemoved:
    """The facts ``memory_ids`` were removed: what each entry built from them becomes (module doc)."""
    result = SourcesRemoved([], [], 0)
    if not memory_ids:
        return result
    changed: dict[KnowledgeRow, list[int]] = {}
    for row in await rows_citing(session, KnowledgeRow, bot_id, memory_ids):
        left = sources_without(row.source_ids, memory_ids)
        if not left:
            result.deleted.append(row.id)
            continue
        changed[row] = left
        result.stale.append(row.id)
    await _mark_stale(session, changed, now)
    if result.deleted:
        await delete_entries(session, KnowledgeRow.id.in_(result.deleted), now)
    cited = await rows_citing(session, KnowledgeRevisionRow, bot_id, memory_ids)
    for start in range(0, len(cited), PAGE):
        chunk = [row.id for row in cited[start : start + PAGE]]
        await session.execute(delete(KnowledgeRevisionRow).where(KnowledgeRevisionRow.id.in_(chunk)))
    result.revisions = len(cited)
    return result


async def sources_purged(session: AsyncSession, bot_id: str, memory_ids: Sequence[int]) -> list[int]:
    """Expired facts ``memory_ids`` were purged (a purge is no forget: nothing they said is
    withdrawn): they leave the ``source_ids`` of every entry citing them, which stays shown as it
    is, so that an entry is judged by the sources it still has (an entry left with none is its
    writer's). Kept versions stay: history. Returns the entries changed."""
    if not memory_ids:
        return []
    rows = await rows_citing(session, KnowledgeRow, bot_id, memory_ids)
    for row in rows:
        row.source_ids = json.dumps(sources_without(row.source_ids, memory_ids))
    await session.flush()
    return [row.id for row in rows]


async def _mark_stale(session: AsyncSession, rows: dict[KnowledgeRow, list[int]], now: datetime) -> None:
    """Hide ``rows`` until re-derived, with their new sources: out of both indices (keyword row
    now, vector through the outbox)."""
    for row, sources in rows.items():
        row.source_ids, row.state = json.dumps(sorted(set(sources))), STALE
    await session.flush()
    await knowledge_index.changed(session, list(rows), now)


async def source_superseded(session: AsyncSession, bot_id: str, old_id: int, new_id: int, now: datetime) -> list[int]:
    """The fact ``old_id`` was corrected by ``new_id``: every entry citing it now cites the
    correction and is hidden until re-derived (its text may say what the correction changed).
    Kept versions stay: they are history, and the old fact is superseded, not forgotten. Returns
    the entries hidden."""
    changed = {
        row: [new_id if item == old_id else item for item in source_list(row.source_ids)]
        for row in await rows_citing(session, KnowledgeRow, bot_id, [old_id])
    }
    await _mark_stale(session, changed, now)
    return [row.id for row in changed]


async def sources_merged(session: AsyncSession, bot_id: str, source_ids: Sequence[int], merged_id: int) -> list[int]:
    """Exact duplicates ``source_ids`` were merged into ``merged_id`` (the same fact, the same
    words): every entry citing one of them cites the merge instead and stays shown (nothing it
    says changed, unlike a correction). Kept versions stay as they were: history. Returns the
    entries changed."""
    merged = set(source_ids)
    rows = await rows_citing(session, KnowledgeRow, bot_id, list(merged))
    for row in rows:
        cited = [merged_id if item in merged else item for item in source_list(row.source_ids)]
        row.source_ids = json.dumps(sorted(set(cited)))
    await session.flush()
    return [row.id for row in rows]
