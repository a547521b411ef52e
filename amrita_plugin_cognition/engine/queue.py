"""The historian's job queue for operators (``ambot cognition jobs``, the Python API)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..domain.clock import as_utc, aware_or_now
from ..domain.events import JobsQueued
from ..domain.records import MemoryRecord
from ..store import jobs, repository
from .profile_queue import memory_ids, payload_of, rebuild_parts

if TYPE_CHECKING:
    from .ports import Transactional


async def list_jobs(
    engine: Transactional, state: str | None = None, limit: int = 50, bot_id: str | None = None
) -> list[dict[str, Any]]:
    async with engine.unit_of_work() as uow:
        rows = await jobs.list_jobs(uow.session, state, limit, bot_id)
    return [
        {
            "id": row.id,
            "kind": row.kind,
            "state": jobs.public_state(row.state),
            "bot_id": row.bot_id,
            "scope": f"{row.scope_kind}:{row.scope_id}",
            "attempts": row.attempts,
            "enqueued_at": (as_utc(row.enqueued_at) or row.enqueued_at).isoformat(),
            "next_attempt_at": (as_utc(row.next_attempt_at) or row.next_attempt_at).isoformat()
            if row.next_attempt_at
            else None,
            "last_error": row.last_error,
        }
        for row in rows
    ]


async def retry_jobs(engine: Transactional, job_ids: Sequence[int] | None = None, bot_id: str | None = None) -> int:
    async with engine.unit_of_work() as uow:
        count = await jobs.retry(uow.session, job_ids, aware_or_now(None), bot_id)
        if count:
            uow.record(JobsQueued())
        await uow.commit()
    return count


async def drop_jobs(
    engine: Transactional, job_ids: Sequence[int] | None = None, state: str | None = None, bot_id: str | None = None
) -> int:
    async with engine.unit_of_work() as uow:
        count = await jobs.drop(uow.session, job_ids, state, bot_id)
        await uow.commit()
    return count


@dataclass(frozen=True, slots=True)
class QueuedJob:
    """One job as the queue holds it, its payload read (``{}`` when it cannot be read)."""

    id: int
    kind: str
    state: str
    bot_id: str
    #: ``group:20001`` / ``private:10001``.
    scope: str
    attempts: int
    #: When it is due (UTC; None once leased).
    next_attempt_at: datetime | None
    last_error: str
    payload: dict[str, Any]

    def merge_parts(self) -> dict[str, list[int]]:
        """A card merge's parts with the ids of the new facts each carries."""
        parts = self.payload.get("parts")
        return {str(part): memory_ids(ids) for part, ids in parts.items()} if isinstance(parts, dict) else {}

    def rebuild_parts(self) -> list[str]:
        """The parts a card merge must rebuild (a fact they were built from was forgotten)."""
        return rebuild_parts(self.payload)


async def queued_jobs(
    engine: Transactional, state: str | None = None, limit: int = 10_000, bot_id: str | None = None
) -> list[QueuedJob]:
    """The queue's jobs in the order they were enqueued (of one state, or all; of one bot account), payloads read."""
    async with engine.unit_of_work() as uow:
        rows = await jobs.list_jobs(uow.session, state, limit, bot_id)
    return [
        QueuedJob(
            id=int(row.id),
            kind=str(row.kind),
            state=str(row.state),
            bot_id=str(row.bot_id),
            scope=f"{row.scope_kind}:{row.scope_id}",
            attempts=int(row.attempts),
            next_attempt_at=as_utc(row.next_attempt_at),
            last_error=str(row.last_error or ""),
            payload=payload_of(row.payload),
        )
        for row in rows
    ]


async def facts_of_jobs(engine: Transactional, job_ids: set[int]) -> dict[int, list[MemoryRecord]]:
    """The active facts the historian wrote for these jobs (read from their sources), in id order."""
    found: dict[int, list[MemoryRecord]] = {}
    after = 0
    async with engine.unit_of_work() as uow:
        while True:
            rows = await repository.active_page(uow.session, after, 500)
            if not rows:
                break
            after = rows[-1].id
            for row in rows:
                try:
                    source = json.loads(row.source or "{}")
                except json.JSONDecodeError:
                    continue
                if not isinstance(source, dict) or source.get("via") != "historian" or source.get("job") not in job_ids:
                    continue
                found.setdefault(int(source["job"]), []).append(repository.to_record(row))
    return found
