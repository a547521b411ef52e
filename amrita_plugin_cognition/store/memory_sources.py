"""The lineage of consolidation merges (``cognition_memory_source``): which memory was built from
which, queryable both ways through the table's two indexes (never by reading ``source`` JSON).

A merge writes one row per source in its transaction, beside the ``superseded_by`` mark each
source gets. A removal takes the whole lineage (``closure``): what a memory was built from, what
was built from it, every version either replaced and every newer version of what was built, so a
forget of a merged memory removes its sources and a forget of a source removes the merge; the
rows of this table go with the memories they name (``drop``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from sqlalchemy import delete, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.records import MemoryStatus
from .models import MemoryRow, MemorySourceRow

#: Ids per ``IN`` list (SQLite's bound-parameter limit is far above; PostgreSQL's too).
_CHUNK = 500


def _chunks(ids: Collection[int]) -> list[list[int]]:
    ordered = sorted(ids)
    return [ordered[start : start + _CHUNK] for start in range(0, len(ordered), _CHUNK)]


def add(session: AsyncSession, bot_id: str, memory_id: int, source_ids: Sequence[int]) -> None:
    """Record that ``memory_id`` was built from ``source_ids`` (the caller's transaction)."""
    session.add_all(
        MemorySourceRow(memory_id=memory_id, source_id=source_id, bot_id=bot_id)
        for source_id in dict.fromkeys(source_ids)
    )


async def sources_of(session: AsyncSession, memory_ids: Collection[int]) -> dict[int, list[int]]:
    """memory id → the ids it was built from (only merged memories appear)."""
    found: dict[int, list[int]] = {}
    for chunk in _chunks(memory_ids):
        rows = await session.execute(
            select(MemorySourceRow.memory_id, MemorySourceRow.source_id)
            .where(MemorySourceRow.memory_id.in_(chunk))
            .order_by(MemorySourceRow.memory_id, MemorySourceRow.source_id)
        )
        for memory_id, source_id in rows.all():
            found.setdefault(int(memory_id), []).append(int(source_id))
    return found


async def built_from(session: AsyncSession, source_ids: Collection[int]) -> dict[int, int]:
    """source id → the merged memory built from it."""
    found: dict[int, int] = {}
    for chunk in _chunks(source_ids):
        rows = await session.execute(
            select(MemorySourceRow.source_id, MemorySourceRow.memory_id).where(MemorySourceRow.source_id.in_(chunk))
        )
        found.update((int(source_id), int(memory_id)) for source_id, memory_id in rows.all())
    return found


async def _replaced_by(session: AsyncSession, ids: Collection[int]) -> set[int]:
    """The ids of the versions these memories replaced (``superseded_by`` one of them)."""
    found: set[int] = set()
    for chunk in _chunks(ids):
        found.update((await session.execute(select(MemoryRow.id).where(MemoryRow.superseded_by.in_(chunk)))).scalars())
    return found


async def _newer(session: AsyncSession, ids: Collection[int]) -> set[int]:
    """The ids of the versions that replaced these memories."""
    found: set[int] = set()
    for chunk in _chunks(ids):
        rows = await session.execute(
            select(MemoryRow.superseded_by).where(MemoryRow.id.in_(chunk), MemoryRow.superseded_by.is_not(None))
        )
        found.update(int(value) for value in rows.scalars() if value is not None)
    return found


async def closure(session: AsyncSession, memory_ids: Collection[int]) -> set[int]:
    """``memory_ids`` with their whole lineage: the versions they replaced (corrections and
    merges), what they were built from, the merges built from them and every newer version of
    such a merge, to the fixed point. Without merges this is a fact and its older versions, as a
    forget always removed."""
    found = set(memory_ids)
    frontier = set(found)
    rising: set[int] = set()  # reached as a merge (or a newer version of one): its newer versions go too
    while frontier or rising:
        reached = await _replaced_by(session, frontier)
        sources = await sources_of(session, frontier)
        reached.update(source for ids in sources.values() for source in ids)
        built = set((await built_from(session, frontier)).values())
        newer = await _newer(session, rising)
        up = (built | newer) - found
        reached -= found
        reached -= up
        found |= reached | up
        frontier = reached | up
        rising = up
    return found


async def head_of(session: AsyncSession, memory_id: int) -> MemoryRow | None:
    """The current version (active or expired) a merge source leads to through its merge and
    that merge's newer versions; None when ``memory_id`` is no merge source or leads nowhere."""
    merged = (await built_from(session, [memory_id])).get(memory_id)
    seen: set[int] = set()
    current = merged
    while current is not None and current not in seen:
        seen.add(current)
        row = (await session.execute(select(MemoryRow).where(MemoryRow.id == current))).scalar_one_or_none()
        if row is None:
            return None
        if row.status in (MemoryStatus.ACTIVE.value, MemoryStatus.EXPIRED.value):
            return row
        current = row.superseded_by
    return None


async def drop(session: AsyncSession, memory_ids: Collection[int]) -> None:
    """The lineage rows naming any of ``memory_ids`` (removed memories), either way."""
    for chunk in _chunks(memory_ids):
        await session.execute(
            delete(MemorySourceRow)
            .where(or_(MemorySourceRow.memory_id.in_(chunk), MemorySourceRow.source_id.in_(chunk)))
            .execution_options(synchronize_session=False)
        )
