"""The decay sweep in SQL: its cursor and progress (one meta row), a page of memories read by id,
demotions, retirements, purges, and bringing an expired memory back.

Each batch of the sweep is one transaction that also moves the cursor, so a sweep stopped at any
point (a restart, a crash) resumes after the last committed batch and reads no row twice within a
pass. ``take_write_lock`` on the sweep's key serialises the batches of sweeps in two processes (the
bot's and the CLI's). Every change is conditional on what the policy read (still active, still that
tier, not kept; still expired and old enough), so a correction, forget, keep or restore committed
meanwhile wins and the sweep leaves that memory alone.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Select, delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.clock import as_utc
from ..domain.decay import Candidate
from ..domain.records import Importance, MemoryStatus, Scope
from . import knowledge, memory_sources, meta, profile_sources, repository
from .erasure import chunks, with_older_versions
from .models import MemoryRow
from .turns import scope_clause
from .unit_of_work import take_write_lock

#: The meta row holding the sweep's cursor and progress (JSON).
SWEEP_KEY = "decay_sweep"
_SWEPT = (MemoryStatus.ACTIVE.value, MemoryStatus.EXPIRED.value)


@dataclass(slots=True)
class PassCounts:
    scanned: int = 0
    demoted: int = 0
    expired: int = 0
    purged: int = 0

    def add(self, other: PassCounts) -> None:
        self.scanned += other.scanned
        self.demoted += other.demoted
        self.expired += other.expired
        self.purged += other.purged


@dataclass(slots=True)
class SweepState:
    """Where the sweep stands: the last id of the pass under way (0: none under way), when that
    pass began and what it did so far; when the last whole pass finished and what it did."""

    cursor: int = 0
    pass_started_at: str | None = None
    current: PassCounts = field(default_factory=PassCounts)
    last_finished_at: str | None = None
    last_pass: PassCounts = field(default_factory=PassCounts)

    @property
    def finished_at(self) -> datetime | None:
        return as_utc(datetime.fromisoformat(self.last_finished_at)) if self.last_finished_at else None


async def lock_and_read(session: AsyncSession) -> SweepState:
    """The sweep's state, read under the sweep's write lock (held to the commit)."""
    await take_write_lock(session, f"cognition:{SWEEP_KEY}")
    return await read_state(session)


async def read_state(session: AsyncSession) -> SweepState:
    stored = await meta.get(session, SWEEP_KEY)
    if not stored:
        return SweepState()
    data = json.loads(stored)
    return SweepState(
        cursor=int(data.get("cursor", 0)),
        pass_started_at=data.get("pass_started_at"),
        current=PassCounts(**data.get("current", {})),
        last_finished_at=data.get("last_finished_at"),
        last_pass=PassCounts(**data.get("last_pass", {})),
    )


async def write_state(session: AsyncSession, state: SweepState) -> None:
    await meta.put(session, SWEEP_KEY, json.dumps(asdict(state)))


async def page(session: AsyncSession, after_id: int, size: int) -> list[Candidate]:
    """The active and expired memories with ids above ``after_id``, in id order, at most
    ``size``: only the columns the policy reads (a batch's memory is bounded by ``size``)."""
    result = await session.execute(
        select(
            MemoryRow.id,
            MemoryRow.status,
            MemoryRow.importance,
            MemoryRow.updated_at,
            MemoryRow.happened_at,
            MemoryRow.keep,
            MemoryRow.invalid_at,
        )
        .where(MemoryRow.id > after_id, MemoryRow.status.in_(_SWEPT))
        .order_by(MemoryRow.id)
        .limit(size)
    )
    return [
        Candidate(
            id=memory_id,
            expired=status == MemoryStatus.EXPIRED.value,
            importance=Importance(importance),
            updated_at=as_utc(updated_at),  # type: ignore[arg-type]
            happened_at=as_utc(happened_at),
            keep=bool(keep),
            expired_at=as_utc(invalid_at),
        )
        for memory_id, status, importance, updated_at, happened_at, keep, invalid_at in result.all()
    ]


def _decaying(ids: Sequence[int], tier: Importance) -> ColumnElement[bool]:
    """Still as the policy read it: active, in that tier, not kept."""
    return (
        MemoryRow.id.in_(list(ids))
        & (MemoryRow.status == MemoryStatus.ACTIVE.value)
        & (MemoryRow.importance == tier.value)
        & MemoryRow.keep.is_(False)
    )


async def demote(session: AsyncSession, ids: Sequence[int], tier: Importance, lower: Importance, now: datetime) -> int:
    """One tier down, the clock restarted. Their vectors stay: the importance in a vector's
    metadata is never queried (ranking and filters read SQL), so nothing is re-embedded."""
    if not ids:
        return 0
    result = await session.execute(
        update(MemoryRow)
        .where(_decaying(ids, tier))
        .values(importance=lower.value, updated_at=now)
        .execution_options(synchronize_session=False)
    )
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


async def retire(session: AsyncSession, ids: Sequence[int], now: datetime) -> list[MemoryRow]:
    """Low memories past their lifetime become ``expired`` (``invalid_at`` = when) and leave both
    indices. Returns the rows retired."""
    if not ids:
        return []
    result = await session.execute(
        update(MemoryRow)
        .where(_decaying(ids, Importance.LOW))
        .values(status=MemoryStatus.EXPIRED.value, invalid_at=now, updated_at=now)
        .returning(MemoryRow)
        .execution_options(synchronize_session=False, populate_existing=True)
    )
    rows = list(result.scalars())
    await repository.leave_indices(session, rows, now)
    return rows


async def purge(session: AsyncSession, ids: Sequence[int], expired_before: datetime) -> list[MemoryRow]:
    """Expired memories waited out: deleted for good with the versions they replaced (no barrier:
    a purge is no forget, the fact may be learned again). They left both indices when they
    expired, so there is nothing else to remove; the cards and knowledge entries built from them
    keep their text and lose only the ids. Returns the rows deleted."""
    if not ids:
        return []
    result = await session.execute(
        select(MemoryRow).where(
            MemoryRow.id.in_(list(ids)),
            MemoryRow.status == MemoryStatus.EXPIRED.value,
            MemoryRow.invalid_at <= expired_before,
        )
    )
    rows = await with_older_versions(session, list(result.scalars()))
    for chunk in chunks([row.id for row in rows]):
        await session.execute(
            delete(MemoryRow).where(MemoryRow.id.in_(chunk)).execution_options(synchronize_session=False)
        )
    await memory_sources.drop(session, [row.id for row in rows])  # a purged merge's lineage rows
    by_bot: dict[str, list[int]] = {}
    for row in rows:
        by_bot.setdefault(row.bot_id, []).append(row.id)
    for bot_id, purged in sorted(by_bot.items()):  # cards and entries keep only sources that exist
        await profile_sources.sources_purged(session, bot_id, purged)
        await knowledge.sources_purged(session, bot_id, purged)
    return rows


def expired_query(bot_id: str, scope: Scope) -> Select[Any]:
    """A chat's expired memories (for ``repository.list_visible``, which orders them newest first)."""
    return select(MemoryRow).where(scope_clause(bot_id, scope), MemoryRow.status == MemoryStatus.EXPIRED.value)


async def restore(session: AsyncSession, row: MemoryRow, now: datetime) -> bool:
    """An expired memory active again, its clock restarted (tier as it was: low), back in both
    indices. False, changing nothing, when it was no longer expired (purged, forgotten, restored)."""
    result = await session.execute(
        update(MemoryRow)
        .where(MemoryRow.id == row.id, MemoryRow.status == MemoryStatus.EXPIRED.value)
        .values(status=MemoryStatus.ACTIVE.value, invalid_at=None, updated_at=now)
        .execution_options(synchronize_session="fetch")
    )
    if result.rowcount != 1:  # type: ignore[attr-defined]
        return False
    await repository.enter_indices(session, [row], now)
    return True


async def renew(session: AsyncSession, ids: Sequence[int], now: datetime) -> int:
    """Active memories said again (a write found them as duplicates): their clock restarts at
    ``now`` (never backwards: a replayed old message leaves it). Returns how many."""
    if not ids:
        return 0
    result = await session.execute(
        update(MemoryRow)
        .where(MemoryRow.id.in_(list(ids)), MemoryRow.status == MemoryStatus.ACTIVE.value, MemoryRow.updated_at < now)
        .values(updated_at=now)
        .execution_options(synchronize_session=False)
    )
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


async def set_keep(session: AsyncSession, row: MemoryRow, keep: bool) -> bool:
    """Mark an active or expired memory kept (or not). False when it is neither any more."""
    result = await session.execute(
        update(MemoryRow)
        .where(MemoryRow.id == row.id, MemoryRow.status.in_(_SWEPT))
        .values(keep=keep)
        .execution_options(synchronize_session="fetch")
    )
    return result.rowcount == 1  # type: ignore[attr-defined]
