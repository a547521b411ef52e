"""``engine.jobs``: the historian's durable queue: listing, retrying and dropping jobs, and running it."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...domain.records import MemoryRecord
    from ..queue import QueuedJob

from .base import UseCases, _Service

if TYPE_CHECKING:
    from .. import queue as _queue
    from .. import turns as _turns
else:  # imported on the first call into them (``base.UseCases``)
    _queue = UseCases("queue")
    _turns = UseCases("turns")


class JobService(_Service):
    """The historian's durable queue: listing, retrying and dropping jobs, and running it."""

    async def retry(self, job_ids: Sequence[int] | None = None, *, bot_id: str | None = None) -> int:
        """Make failed jobs (these, or all; of one bot account) pending again; how many."""
        return await _queue.retry_jobs(self._engine, job_ids, bot_id)

    async def drop(
        self, job_ids: Sequence[int] | None = None, state: str | None = None, *, bot_id: str | None = None
    ) -> int:
        """Delete jobs (these, or all of a state; of one bot account); how many."""
        return await _queue.drop_jobs(self._engine, job_ids, state, bot_id)

    async def queued(
        self, state: str | None = None, limit: int = 10_000, *, bot_id: str | None = None
    ) -> builtins.list[QueuedJob]:
        """The jobs with their payloads read, in the order they were enqueued (of one bot account)."""
        return await _queue.queued_jobs(self._engine, state, limit, bot_id)

    async def facts_of(self, job_ids: set[int]) -> dict[int, builtins.list[MemoryRecord]]:
        """The active facts the historian wrote for these jobs."""
        return await _queue.facts_of_jobs(self._engine, job_ids)

    async def flush_transcripts(self, now: datetime | None = None, *, everything: bool = False) -> int:
        """Turn the transcript turns still waiting into jobs (all of them with ``everything``)."""
        return await _turns.flush_transcripts(self._engine, now, everything=everything)

    def resume(self) -> None:
        """Let the scheduler and enqueues run the historian (the bot's start)."""
        self._engine.historian.running = True

    def pause(self) -> None:
        """Keep the scheduler and enqueues from running the historian (``run_until_idle`` still does)."""
        self._engine.historian.running = False

    def wake(self) -> None:
        """The queue poll: recover stale leases, batch transcripts, start due jobs."""
        self._engine.historian.wake()

    async def stop(self) -> int:
        """Cancel running jobs and give their leases back; how many were running."""
        return await self._engine.historian.stop()

    async def settle(self) -> None:
        """Wait for the jobs in flight."""
        await self._engine.historian.settle()

    async def run_until_idle(self, now: datetime | None = None, *, flush: bool = True) -> None:
        """Run every job due at ``now`` to its end, one tick after another (demo, tests)."""
        await self._engine.historian.run_until_idle(now, flush=flush)

    async def list(
        self, state: str | None = None, limit: int = 50, *, bot_id: str | None = None
    ) -> builtins.list[dict[str, Any]]:
        """The jobs for operators (``ambot cognition jobs``, the WebUI's page), as plain documents."""
        return await _queue.list_jobs(self._engine, state, limit, bot_id)
