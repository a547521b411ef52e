"""The outbox of vector-index work.

An outbox row is written in the same transaction as the fact (or profile card part) it concerns. Each row is tried on
its own schedule: a failure counts an attempt and sets the next one with exponential backoff
(``domain/backoff.py``); after ``max_attempts`` it is "dead": kept with its error, counted by
``status``, revived by ``retry_dead``. A failing row never holds back the others.

A drain leases the rows it takes, as the job queue's workers do (``claim``): for
``outbox_lease_seconds`` their next attempt is the lease's end, so a drain in another process
passes them by; a drain that dies leaves them due again when the lease ends, no attempt counted.
A drain that cannot finish its rows gives them back (``release``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import and_, delete, func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.backoff import after_failure
from ..domain.clock import as_utc
from .models import MemoryRow, OutboxRow

PENDING = "pending"
DEAD = "dead"
#: ``scope_kind`` of a profile card's row (``memory_id`` then holds the card's profile row id):
#: the vector side of a card part, applied to its bot account's card collection.
CARD = "profile"
#: ``scope_id`` of a card's row (its bot account is ``bot_id``).
CARD_SCOPE_ID = "cards"
#: ``scope_kind`` (and ``scope_id``) of a knowledge entry's row (``memory_id``: the entry's id):
#: the vector side of an entry, applied to its bot account's knowledge collection.
KNOWLEDGE = "knowledge"


def _values(row: MemoryRow, operation: str, now: datetime) -> dict[str, object]:
    return {
        "memory_id": row.id,
        "operation": operation,
        "bot_id": row.bot_id,
        "scope_kind": row.scope_kind,
        "scope_id": row.scope_id,
        "attempts": 0,
        "last_error": "",
        "state": PENDING,
        "next_attempt_at": None,
        "created_at": now,
    }


def enqueue(session: AsyncSession, row: MemoryRow, operation: str, now: datetime) -> None:
    session.add(OutboxRow(**_values(row, operation, now)))


async def enqueue_many(session: AsyncSession, rows: Sequence[MemoryRow], operation: str, now: datetime) -> None:
    """Index work for many facts in one statement (a sweep batch's retirements: an ORM flush of
    one object per row cost half the batch's time)."""
    if rows:
        await session.execute(insert(OutboxRow), [_values(row, operation, now) for row in rows])


def enqueue_card(session: AsyncSession, profile_id: int, bot_id: str, now: datetime) -> None:
    """Index work for one card part (written or deleted: the drain reads which it is then)."""
    _enqueue_derived(session, profile_id, bot_id, "card", CARD, CARD_SCOPE_ID, now)


def enqueue_knowledge(session: AsyncSession, entry_id: int, bot_id: str, now: datetime) -> None:
    """Index work for one knowledge entry (written, hidden or deleted: the drain reads which)."""
    _enqueue_derived(session, entry_id, bot_id, "entry", KNOWLEDGE, KNOWLEDGE, now)


def _enqueue_derived(
    session: AsyncSession, row_id: int, bot_id: str, operation: str, kind: str, scope_id: str, now: datetime
) -> None:
    session.add(
        OutboxRow(
            memory_id=row_id,
            operation=operation,
            bot_id=bot_id,
            scope_kind=kind,
            scope_id=scope_id,
            attempts=0,
            last_error="",
            state=PENDING,
            next_attempt_at=None,
            created_at=now,
        )
    )


def is_card(row: OutboxRow) -> bool:
    return row.scope_kind == CARD


def is_knowledge(row: OutboxRow) -> bool:
    return row.scope_kind == KNOWLEDGE


def is_chat(row: OutboxRow) -> bool:
    """A fact's row (its scope is a chat), not a card's or a knowledge entry's."""
    return not is_card(row) and not is_knowledge(row)


def _due(now: datetime):  # type: ignore[no-untyped-def]
    return and_(OutboxRow.state == PENDING, or_(OutboxRow.next_attempt_at.is_(None), OutboxRow.next_attempt_at <= now))


async def claim(session: AsyncSession, now: datetime, limit: int, lease_seconds: float) -> list[OutboxRow]:
    """Lease the oldest due rows (at most ``limit``) until ``now + lease_seconds``; the caller
    commits. The update checks again that each row is still due, so of two drains racing for a
    row one gets it: PostgreSQL evaluates the condition again on a row another claim changed and
    committed, SQLite runs one writer at a time."""
    oldest = select(OutboxRow.id).where(_due(now)).order_by(OutboxRow.id).limit(limit)
    taken = await session.execute(
        update(OutboxRow)
        .where(OutboxRow.id.in_(oldest.scalar_subquery()), _due(now))
        .values(next_attempt_at=now + timedelta(seconds=lease_seconds))
        .returning(OutboxRow)
        .execution_options(synchronize_session=False, populate_existing=True)
    )
    return sorted(taken.scalars(), key=lambda row: row.id)


async def release(session: AsyncSession, claimed: Sequence[OutboxRow]) -> None:
    """Give back rows this drain claimed and did not finish: due at once, no attempt counted
    (a row whose lease ended meanwhile, and maybe another drain's now, is left alone)."""
    for row in claimed:
        await session.execute(
            update(OutboxRow)
            .where(OutboxRow.id == row.id, OutboxRow.state == PENDING, OutboxRow.next_attempt_at == row.next_attempt_at)
            .values(next_attempt_at=None)
            .execution_options(synchronize_session=False)
        )


async def complete(session: AsyncSession, outbox_ids: Sequence[int]) -> None:
    if outbox_ids:
        await session.execute(delete(OutboxRow).where(OutboxRow.id.in_(list(outbox_ids))))


async def fail(session: AsyncSession, failures: Mapping[int, str], now: datetime, max_attempts: int) -> tuple[int, int]:
    """Count one failed attempt for each row (id -> error): backoff, or dead after the last
    attempt. Returns (rows to retry later, rows now dead)."""
    if not failures:
        return 0, 0
    rows = (await session.execute(select(OutboxRow).where(OutboxRow.id.in_(list(failures))))).scalars()
    retried = dead = 0
    for row in rows:
        attempts = row.attempts + 1
        values: dict[str, object] = {"attempts": attempts, "last_error": failures[row.id][:500]}
        retry_at = after_failure(now, attempts, max_attempts)
        if retry_at is None:
            values.update(state=DEAD, next_attempt_at=None)
            dead += 1
        else:
            values["next_attempt_at"] = retry_at
            retried += 1
        await session.execute(update(OutboxRow).where(OutboxRow.id == row.id).values(**values))
    return retried, dead


async def retry_dead(session: AsyncSession) -> int:
    """Give every dead row a fresh set of attempts. Returns how many."""
    result = await session.execute(
        update(OutboxRow)
        .where(OutboxRow.state == DEAD)
        .values(state=PENDING, attempts=0, next_attempt_at=None)
        .execution_options(synchronize_session=False)
    )
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


@dataclass(slots=True)
class OutboxSummary:
    pending: int
    oldest: datetime | None
    #: Pending rows that have failed at least once (waiting for their next attempt).
    failing: int
    dead: int
    last_error: str


async def summary(session: AsyncSession) -> OutboxSummary:
    counts = dict(
        (await session.execute(select(OutboxRow.state, func.count()).group_by(OutboxRow.state))).tuples().all()
    )
    oldest = (
        await session.execute(select(func.min(OutboxRow.created_at)).where(OutboxRow.state == PENDING))
    ).scalar_one()
    failing = (
        await session.execute(
            select(func.count()).select_from(OutboxRow).where(OutboxRow.state == PENDING, OutboxRow.attempts > 0)
        )
    ).scalar_one()
    last_error = (
        await session.execute(
            select(OutboxRow.last_error).where(OutboxRow.attempts > 0).order_by(OutboxRow.id.desc()).limit(1)
        )
    ).scalar_one_or_none()
    return OutboxSummary(
        pending=int(counts.get(PENDING, 0)),
        oldest=as_utc(oldest),
        failing=int(failing),
        dead=int(counts.get(DEAD, 0)),
        last_error=last_error or "",
    )
