"""The historian's job queue for operators (``ambot cognition jobs``, the Python API)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..domain.clock import as_utc, aware_or_now
from ..domain.events import JobsQueued
from ..store import jobs

if TYPE_CHECKING:
    from .service import CognitionEngine


async def list_jobs(engine: CognitionEngine, state: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
    async with engine.unit_of_work() as uow:
        rows = await jobs.list_jobs(uow.session, state, limit)
    return [
        {
            "id": row.id,
            "kind": row.kind,
            "state": row.state,
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


async def retry_jobs(engine: CognitionEngine, job_ids: Sequence[int] | None = None) -> int:
    async with engine.unit_of_work() as uow:
        count = await jobs.retry(uow.session, job_ids, aware_or_now(None))
        if count:
            uow.record(JobsQueued())
        await uow.commit()
    return count


async def drop_jobs(engine: CognitionEngine, job_ids: Sequence[int] | None = None, state: str | None = None) -> int:
    async with engine.unit_of_work() as uow:
        count = await jobs.drop(uow.session, job_ids, state)
        await uow.commit()
    return count
