"""The durable job queue (historian work) in SQL.

A job is enqueued in the transaction of the change that asks for it (the ``end`` tool's note, a
transcript batch). Workers lease the job due longest (``next_attempt_at``, else ``enqueued_at``)
within tiers (``domain/job_kinds.LEASE_TIERS``): an ``end`` call's observations, then transcript
batches, then the rest (a card merge due in a burst must not keep the chat's new facts waiting),
unless a later tier's job has been due for ``BACKGROUND_PATIENCE_SECONDS``. A lease is a
conditional update, so two workers, in one process or several, never hold the same job: the update
only succeeds on a row that is still pending. A lease carries a random token and an expiry; a lease
that outlives its expiry (the worker died or hung) is recovered while the queue runs, counting one
attempt. A job's results are written in the same transaction that deletes it (``finish``,
conditional on the token): a worker whose lease was taken over cannot commit, so a job processed
twice writes its facts once. Failures retry with the backoff of ``domain/backoff.py`` (shared with
the outbox); after the last attempt a job is *dead*, kept with its error (the outbox's words:
attempts, lease, dead; stored as ``'failed'``, see ``DEAD``). A worker that shuts down cleanly
gives its leases back (``release``): due at once, no attempt counted.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import case, delete, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.backoff import after_failure
from ..domain.clock import as_utc
from ..domain.job_kinds import BACKGROUND_PATIENCE_SECONDS, LEASE_TIERS
from ..domain.records import Scope
from ..domain.sources import job_without_messages
from .models import JobRow
from .row_insert import NewRow, insert_rows

PENDING = "pending"
PROCESSING = "processing"
#: A job given up after its last attempt. Stored as ``'failed'`` (the column's value since the
#: first schema; the vocabulary changed, the data did not): ``public_state`` / ``stored_state``
#: translate between the stored value and the word the CLI, status and the Python API use.
DEAD = "failed"
STATES = (PENDING, PROCESSING, DEAD)
#: Stored state → the word shown and accepted (``dead``, like the outbox's dead rows).
_PUBLIC = {PENDING: "pending", PROCESSING: "processing", DEAD: "dead"}


def public_state(stored: str) -> str:
    """The word for a stored state: ``'failed'`` is shown as ``dead``."""
    return _PUBLIC.get(stored, stored)


def stored_state(state: str | None) -> str | None:
    """The stored value of a state asked for by its word (``dead``, or the old ``failed``)."""
    return DEAD if state in ("dead", DEAD) else state


#: A lease recovered from a worker that vanished counts as a failed attempt with this error.
LEASE_EXPIRED = "lease expired: the worker stopped or hung"
#: A leasing worker whose candidates were all taken by others looks again, this many times.
_LEASE_ROUNDS = 8


@dataclass(frozen=True, slots=True)
class Lease:
    job_id: int
    token: str
    kind: str
    bot_id: str
    scope: Scope
    payload: dict[str, Any]
    attempts: int
    enqueued_at: datetime


def job_row(
    kind: str,
    bot_id: str,
    scope: Scope,
    payload: dict[str, Any],
    now: datetime,
    not_before: datetime | None = None,
) -> NewRow:
    """A job as a new row (due at once, or from ``not_before``), for ``enqueue`` or a caller
    writing it with other rows at once."""
    values = {
        "kind": kind,
        "bot_id": bot_id,
        "scope_kind": scope.kind,
        "scope_id": scope.id,
        "payload": json.dumps(payload, ensure_ascii=False, default=str),
        "state": PENDING,
        "attempts": 0,
        "last_error": "",
        "enqueued_at": now,
        "next_attempt_at": not_before,
        "lease_token": None,
        "lease_expires_at": None,
        "updated_at": now,
    }
    return JobRow.__table__, values


async def enqueue(
    session: AsyncSession,
    kind: str,
    bot_id: str,
    scope: Scope,
    payload: dict[str, Any],
    now: datetime,
    not_before: datetime | None = None,
) -> None:
    """Add a job to the caller's transaction (due at once, or from ``not_before``; written at
    once, not at its flush)."""
    await insert_rows(session, [job_row(kind, bot_id, scope, payload, now, not_before)])


async def pending_of(session: AsyncSession, kind: str, bot_id: str, scope: Scope) -> JobRow | None:
    """The oldest pending job of ``kind`` for this scope, if any (coalescing work that waits)."""
    found = await session.execute(
        select(JobRow)
        .where(
            JobRow.kind == kind,
            JobRow.bot_id == bot_id,
            JobRow.scope_kind == scope.kind,
            JobRow.scope_id == scope.id,
            JobRow.state == PENDING,
        )
        .order_by(JobRow.id)
        .limit(1)
    )
    return found.scalars().first()


async def replace_payload(session: AsyncSession, job_id: int, payload: dict[str, Any], now: datetime) -> bool:
    """A job's payload replaced in the caller's transaction, only while it is still pending (its
    due time is kept). False when a worker leased it meanwhile."""
    result = await session.execute(
        update(JobRow)
        .where(JobRow.id == job_id, JobRow.state == PENDING)
        .values(payload=json.dumps(payload, ensure_ascii=False, default=str), updated_at=now)
        .execution_options(synchronize_session=False)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


def readable_payload(text: str) -> dict[str, Any] | None:
    """A job's payload as stored, or None when it cannot be read (the queue marks such a job
    dead and never runs it)."""
    try:
        payload = json.loads(text)
    except ValueError:
        return None
    return payload if isinstance(payload, dict) else None


def rewritten(payload: dict[str, Any], state: str) -> dict[str, Any]:
    """The column values of a job whose payload a forget or an erasure rewrote: a leased one is
    put back to pending, due at once, its lease void (the worker's ``finish``, conditional on the
    token, then fails, so nothing it drew from the old payload is written), no attempt counted."""
    values: dict[str, Any] = {"payload": json.dumps(payload, ensure_ascii=False, default=str)}
    if state == PROCESSING:
        values.update(state=PENDING, next_attempt_at=None, lease_token=None, lease_expires_at=None)
    return values


async def drop_message_sources(
    session: AsyncSession,
    bot_id: str,
    scope: Scope,
    message_ids: Collection[str],
    turn_ids: Collection[int],
    now: datetime,
) -> int:
    """The chat's jobs (any state) without what these messages said (``domain.sources``): a job
    made from one of them is deleted, a transcript batch loses those turns and every job the recent
    messages of the removed turns; a job left with nothing is deleted. A leased job is rewritten
    too and put back to pending, its lease dropped: the worker's ``finish`` (conditional on the
    token) then fails, so what it extracted from the old payload is never written, and the job runs
    again without the forgotten messages. Returns the jobs changed."""
    rows = await session.execute(
        select(JobRow.id, JobRow.payload, JobRow.state)
        .where(JobRow.bot_id == bot_id, JobRow.scope_kind == scope.kind, JobRow.scope_id == scope.id)
        # locked in the queue's lease order: a worker cannot lease one of them between this read
        # and its rewrite (it would run the old payload under a lease this rewrite never voided)
        .order_by(JobRow.enqueued_at, JobRow.id)
        .with_for_update()
    )
    dropped: list[int] = []
    changed = 0
    for job_id, text, state in rows.all():
        payload = readable_payload(text)
        if payload is None:
            continue
        kept = job_without_messages(payload, message_ids, turn_ids)
        if kept is payload:
            continue
        changed += 1
        if kept is None:
            dropped.append(job_id)
            continue
        await session.execute(
            update(JobRow)
            .where(JobRow.id == job_id)
            .values(**rewritten(kept, state), updated_at=now)
            .execution_options(synchronize_session=False)
        )
    if dropped:
        await session.execute(delete(JobRow).where(JobRow.id.in_(dropped)).execution_options(synchronize_session=False))
    return changed


def _due(now: datetime):  # type: ignore[no-untyped-def]
    return (JobRow.state == PENDING) & or_(JobRow.next_attempt_at.is_(None), JobRow.next_attempt_at <= now)


def _lease_order(now: datetime):  # type: ignore[no-untyped-def]
    due_at = func.coalesce(JobRow.next_attempt_at, JobRow.enqueued_at)
    patient = due_at <= now - timedelta(seconds=BACKGROUND_PATIENCE_SECONDS)
    tiers = [(JobRow.kind.in_(sorted(kinds)), rank) for rank, kinds in enumerate(LEASE_TIERS)]
    return case((patient, 0), *tiers, else_=len(LEASE_TIERS)), due_at, JobRow.id


async def lease(session: AsyncSession, now: datetime, limit: int, lease_seconds: float) -> list[Lease]:
    """Lease up to ``limit`` due jobs in the lease order (module docstring). The caller commits."""
    if limit <= 0:
        return []
    leased: list[Lease] = []
    expires = now + timedelta(seconds=lease_seconds)
    for _ in range(_LEASE_ROUNDS):
        chosen = (
            await session.execute(
                select(JobRow.id, JobRow.enqueued_at)
                .where(_due(now))
                .order_by(*_lease_order(now))
                .limit(limit - len(leased))
            )
        ).all()
        if not chosen:
            break
        # taken in the one lock order of the queue's rows (``drop_message_sources``), not in the
        # lease order, so a forget rewriting the chat's jobs cannot deadlock with a lease
        for job_id, _ in sorted(chosen, key=lambda row: (row[1], row[0])):
            held = await _take(session, job_id, now, expires)
            if held is not None:
                leased.append(held)
        if len(leased) >= limit:
            break
    return leased


async def _take(session: AsyncSession, job_id: int, now: datetime, expires: datetime) -> Lease | None:
    """Lease one job if it is still due (None when another worker took it first)."""
    token = secrets.token_hex(16)
    result = await session.execute(
        update(JobRow)
        .where(JobRow.id == job_id, _due(now))
        .values(state=PROCESSING, lease_token=token, lease_expires_at=expires, updated_at=now)
        .execution_options(synchronize_session=False)
    )
    if not result.rowcount:  # type: ignore[attr-defined]
        return None
    row = (await session.execute(select(JobRow).where(JobRow.id == job_id))).scalar_one()
    try:
        payload = json.loads(row.payload)
        scope = Scope(row.scope_kind, row.scope_id)  # type: ignore[arg-type]
        if not isinstance(payload, dict):
            raise ValueError("the payload is not a JSON object")
    except ValueError as error:  # an unreadable job must not stop the queue: kept as dead, with why
        await session.execute(
            update(JobRow)
            .where(JobRow.id == job_id)
            .values(state=DEAD, last_error=f"unreadable job: {error}"[:1000], lease_token=None, updated_at=now)
            .execution_options(synchronize_session=False)
        )
        return None
    return Lease(
        job_id=row.id,
        token=token,
        kind=row.kind,
        bot_id=row.bot_id,
        scope=scope,
        payload=payload,
        attempts=row.attempts,
        enqueued_at=as_utc(row.enqueued_at) or now,
    )


async def renew(session: AsyncSession, held: Lease, now: datetime, lease_seconds: float) -> bool:
    """Extend a lease still held; False when it was lost (recovered and maybe leased again)."""
    result = await session.execute(
        update(JobRow)
        .where(JobRow.id == held.job_id, JobRow.lease_token == held.token, JobRow.state == PROCESSING)
        .values(lease_expires_at=now + timedelta(seconds=lease_seconds), updated_at=now)
        .execution_options(synchronize_session=False)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


async def release(session: AsyncSession, held: Lease, now: datetime) -> bool:
    """Give back a lease still held, unfinished (the worker is shutting down): pending again and
    due at once, the attempt not counted. False when it was no longer held (finished, recovered)."""
    result = await session.execute(
        update(JobRow)
        .where(JobRow.id == held.job_id, JobRow.lease_token == held.token, JobRow.state == PROCESSING)
        .values(state=PENDING, next_attempt_at=None, lease_token=None, lease_expires_at=None, updated_at=now)
        .execution_options(synchronize_session=False)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


async def finish(session: AsyncSession, held: Lease) -> bool:
    """Delete a completed job in the caller's transaction, only if the lease is still held. The
    caller writes the job's results in the same transaction and rolls back on False."""
    result = await session.execute(
        delete(JobRow)
        .where(JobRow.id == held.job_id, JobRow.lease_token == held.token, JobRow.state == PROCESSING)
        .execution_options(synchronize_session=False)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


async def fail(session: AsyncSession, held: Lease, error: str, now: datetime, max_attempts: int) -> str | None:
    """Count a failed attempt of a held lease: back to pending with backoff, or dead.
    Returns the new state, or None when the lease was no longer held."""
    attempts = held.attempts + 1
    retry_at = after_failure(now, attempts, max_attempts)
    state = PENDING if retry_at is not None else DEAD
    result = await session.execute(
        update(JobRow)
        .where(JobRow.id == held.job_id, JobRow.lease_token == held.token, JobRow.state == PROCESSING)
        .values(
            state=state,
            attempts=attempts,
            last_error=error[:1000],
            next_attempt_at=retry_at,
            lease_token=None,
            lease_expires_at=None,
            updated_at=now,
        )
        .execution_options(synchronize_session=False)
    )
    return state if result.rowcount else None  # type: ignore[attr-defined]


async def recover_expired(session: AsyncSession, now: datetime, max_attempts: int) -> tuple[int, int]:
    """Leases past their expiry go back to pending (one attempt counted), or dead when
    that was their last attempt. Returns (recovered, dead)."""
    rows = (
        await session.execute(
            select(JobRow.id, JobRow.attempts, JobRow.lease_token)
            .where(JobRow.state == PROCESSING, JobRow.lease_expires_at < now)
            .order_by(JobRow.id)  # one lock order for every process
        )
    ).all()
    recovered = dead = 0
    for job_id, attempts, token in rows:
        retry_at = after_failure(now, attempts + 1, max_attempts)
        state = PENDING if retry_at is not None else DEAD
        result = await session.execute(
            update(JobRow)
            .where(JobRow.id == job_id, JobRow.lease_token == token, JobRow.state == PROCESSING)
            .values(
                state=state,
                attempts=attempts + 1,
                last_error=LEASE_EXPIRED,
                # a vanished worker's job is due again at once: the crash was not the job's fault
                next_attempt_at=None,
                lease_token=None,
                lease_expires_at=None,
                updated_at=now,
            )
            .execution_options(synchronize_session=False)
        )
        if result.rowcount:  # type: ignore[attr-defined]
            if state == PENDING:
                recovered += 1
            else:
                dead += 1
    return recovered, dead


async def prune_dead(session: AsyncSession, now: datetime, keep: int, max_age_days: float) -> int:
    """Drop dead jobs older than ``max_age_days`` and all but the newest ``keep``."""
    pruned = 0
    result = await session.execute(
        delete(JobRow)
        .where(JobRow.state == DEAD, JobRow.updated_at < now - timedelta(days=max_age_days))
        .execution_options(synchronize_session=False)
    )
    pruned += int(result.rowcount or 0)  # type: ignore[attr-defined]
    newest = (
        await session.execute(
            select(JobRow.id).where(JobRow.state == DEAD).order_by(JobRow.updated_at.desc(), JobRow.id.desc())
        )
    ).scalars()
    surplus = list(newest)[keep:]
    if surplus:
        result = await session.execute(
            delete(JobRow).where(JobRow.id.in_(surplus)).execution_options(synchronize_session=False)
        )
        pruned += int(result.rowcount or 0)  # type: ignore[attr-defined]
    return pruned


async def list_jobs(
    session: AsyncSession, state: str | None = None, limit: int = 50, bot_id: str | None = None
) -> list[JobRow]:
    query = select(JobRow).order_by(JobRow.enqueued_at, JobRow.id).limit(limit)
    if state:
        query = query.where(JobRow.state == stored_state(state))
    if bot_id is not None:
        query = query.where(JobRow.bot_id == bot_id)
    return list((await session.execute(query)).scalars())


async def retry(session: AsyncSession, job_ids: Sequence[int] | None, now: datetime, bot_id: str | None = None) -> int:
    """Dead jobs (all, or the given ids; of one bot account) back to pending with a fresh set of attempts."""
    query = update(JobRow).where(JobRow.state == DEAD)
    if bot_id is not None:
        query = query.where(JobRow.bot_id == bot_id)
    if job_ids is not None:
        query = query.where(JobRow.id.in_(list(job_ids)))
    result = await session.execute(
        query.values(state=PENDING, attempts=0, next_attempt_at=None, updated_at=now).execution_options(
            synchronize_session=False
        )
    )
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


async def drop(
    session: AsyncSession, job_ids: Sequence[int] | None, state: str | None, bot_id: str | None = None
) -> int:
    """Delete jobs by id, or every job in ``state`` (of one bot account; a job being processed is never dropped)."""
    query = delete(JobRow).where(JobRow.state != PROCESSING)
    if bot_id is not None:
        query = query.where(JobRow.bot_id == bot_id)
    if job_ids is not None:
        query = query.where(JobRow.id.in_(list(job_ids)))
    if state is not None:
        query = query.where(JobRow.state == stored_state(state))
    result = await session.execute(query.execution_options(synchronize_session=False))
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


@dataclass(slots=True)
class JobSummary:
    pending: int
    processing: int
    dead: int
    oldest_pending: datetime | None
    last_error: str


async def summary(session: AsyncSession) -> JobSummary:
    counts = dict((await session.execute(select(JobRow.state, func.count()).group_by(JobRow.state))).all())
    oldest = (await session.execute(select(func.min(JobRow.enqueued_at)).where(JobRow.state == PENDING))).scalar_one()
    last_error = (
        await session.execute(
            select(JobRow.last_error).where(JobRow.attempts > 0).order_by(JobRow.updated_at.desc()).limit(1)
        )
    ).scalar_one_or_none()
    return JobSummary(
        pending=int(counts.get(PENDING, 0)),
        processing=int(counts.get(PROCESSING, 0)),
        dead=int(counts.get(DEAD, 0)),
        oldest_pending=as_utc(oldest),
        last_error=last_error or "",
    )
