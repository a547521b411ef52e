"""The historian's workers: lease jobs from the SQL queue and run them, a few at a time.

A tick (from the bot's scheduler every ``poll_interval_seconds``, and at once after an enqueue
commits) recovers leases that outlived ``job_lease_seconds``, turns waiting transcript
batches into jobs, and leases as many due jobs as ``max_concurrency`` leaves room for. Each job
runs in its own task; a failure counts an attempt (backoff, then dead) and never stops the
workers. Now and then a tick also prunes dead jobs and trims each chat's notes and turns.

A clean shutdown (``stop``) leases nothing more, cancels the jobs still running and gives their
leases back (``store/jobs.release``): due again at once, the attempt not counted, so the next start
runs them without waiting out ``job_lease_seconds``. A job is idempotent (its facts and its
completion are one transaction), so running it again costs one more model call and nothing else.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Awaitable, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from ..domain.clock import aware_or_now
from ..domain.events import Event, JobsQueued
from ..domain.job_kinds import CONSOLIDATION_JOB
from ..logs import log_event
from ..store import jobs, planner_stats, short_term
from .turns import flush_transcripts

if TYPE_CHECKING:
    from .service import CognitionEngine

#: Housekeeping (pruning dead jobs, trimming notes and turns) at most this often.
HOUSEKEEPING_EVERY = timedelta(minutes=10)


class HistorianWorkers:
    def __init__(self, engine: CognitionEngine) -> None:
        self._engine = engine
        self._in_flight: dict[int, asyncio.Task[None]] = {}
        self._ticking: asyncio.Task[None] | None = None
        self._again = False
        self._stopping = False
        self._last_housekeeping: float | None = None
        #: The lease of each job in flight, to give back on ``stop``.
        self._leases: dict[int, jobs.Lease] = {}
        #: Set by the bot at startup: only then does an enqueue wake the workers by itself.
        self.running = False
        self.worker_id = secrets.token_hex(4)
        self.completed = 0
        self.dead = 0

    # ---------------------------------------------------------------- waking

    def after_commit(self, events: Sequence[Event]) -> None:
        if any(isinstance(event, JobsQueued) for event in events):
            self.wake()

    def wake(self) -> None:
        """Look at the queue soon (coalesced: one tick at a time, one more if woken meanwhile)."""
        if not self.running:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if self._ticking is not None and not self._ticking.done():
            self._again = True
            return
        self._ticking = loop.create_task(self._tick_loop())

    async def _tick_loop(self) -> None:
        while True:
            self._again = False
            try:
                await self.tick()
            except Exception as error:  # the next poll tries again; a tick must never kill the loop
                log_event("historian", level=logging.WARNING, tick_failed=str(error)[:300])
            if not self._again:
                return

    # ---------------------------------------------------------------- the tick

    @property
    def in_flight(self) -> int:
        return len(self._in_flight)

    async def tick(self, now: datetime | None = None) -> int:
        """Recover, batch, lease and start jobs. Returns how many were started."""
        if self._stopping:
            return 0
        engine = self._engine
        settings = engine.config.historian
        moment = aware_or_now(now)
        # each step on its own: a busy database in one must not keep the others (leasing) from running
        await self._step("recover", self._recover(moment))
        if settings.capture != "end":
            await self._step("transcript", flush_transcripts(engine, moment))
        await self._step("housekeeping", self._housekeeping(moment))
        room = settings.max_concurrency - len(self._in_flight)
        if room <= 0 or self._stopping:  # stopped while the steps ran
            return 0
        async with engine.unit_of_work() as uow:
            leased = await jobs.lease(uow.session, moment, room, settings.job_lease_seconds)
            await uow.commit()
        for held in leased:
            if held.job_id in self._in_flight:  # recovered and leased again while its first run lingers
                log_event("historian", level=logging.WARNING, job=held.job_id, leased_again=1)
            self._leases[held.job_id] = held
            self._in_flight[held.job_id] = asyncio.ensure_future(self._run(held, now))
        return len(leased)

    @staticmethod
    async def _step(name: str, work: Awaitable[object]) -> None:
        try:
            await work
        except Exception as error:
            log_event("historian", level=logging.WARNING, step=name, failed=str(error)[:300])

    async def _recover(self, moment: datetime) -> None:
        async with self._engine.unit_of_work() as uow:
            recovered, gave_up = await jobs.recover_expired(
                uow.session, moment, self._engine.config.historian.job_max_attempts
            )
            await uow.commit()
        if recovered or gave_up:
            log_event("historian", level=logging.WARNING, recovered_leases=recovered, dead=gave_up)

    async def _heartbeat(self, held: jobs.Lease) -> None:
        """Keep a running job's lease (a slow model must not make it look abandoned): renewed every
        third of ``job_lease_seconds``; stops once the lease is lost."""
        while True:
            lease_seconds = self._engine.config.historian.job_lease_seconds
            await asyncio.sleep(lease_seconds / 3)
            try:
                async with self._engine.unit_of_work() as uow:
                    held_still = await jobs.renew(uow.session, held, aware_or_now(None), lease_seconds)
                    await uow.commit()
            except Exception as error:  # the next beat tries again; the lease has two thirds left
                log_event("historian", level=logging.WARNING, job=held.job_id, renew_failed=str(error)[:200])
                continue
            if not held_still:
                return

    async def _run(self, held: jobs.Lease, now: datetime | None) -> None:
        from . import cycles, historian, profile_merge  # the resolver and gate load only where jobs run
        from .profile_queue import MERGE_JOB

        engine = self._engine
        # on the real clock only (a simulated ``now`` is driven by hand, beat by beat)
        beating = asyncio.ensure_future(self._heartbeat(held)) if now is None else None
        try:
            if held.kind == MERGE_JOB:
                report: historian.JobReport | profile_merge.MergeReport | cycles.CycleRun = await profile_merge.process(
                    engine, held, now
                )
            elif held.kind == CONSOLIDATION_JOB:
                report = await cycles.process(engine, held, now)
            else:
                report = await historian.process(engine, held, now)
            if report.outcome == "lost":
                log_event("historian", level=logging.WARNING, job=held.job_id, lease="lost")
            else:
                self.completed += 1
        except Exception as error:
            await self._fail(held, error, now)
        finally:
            if beating is not None:
                beating.cancel()
            if self._in_flight.get(held.job_id) is asyncio.current_task():
                del self._in_flight[held.job_id]
                self._leases.pop(held.job_id, None)
        self.wake()  # room for the next one

    async def _fail(self, held: jobs.Lease, error: Exception, now: datetime | None) -> None:
        engine = self._engine
        reason = f"{type(error).__name__}: {error}"
        try:
            async with engine.unit_of_work() as uow:
                state = await jobs.fail(
                    uow.session, held, reason, aware_or_now(now), engine.config.historian.job_max_attempts
                )
                await uow.commit()
        except Exception as failure:  # the lease expires and the job is recovered later
            log_event("historian", level=logging.ERROR, job=held.job_id, fail_not_recorded=str(failure)[:200])
            return
        if state == jobs.DEAD:
            self.dead += 1
        level = logging.ERROR if state == jobs.DEAD else logging.WARNING
        log_event("historian", level=level, job=held.job_id, attempt=held.attempts + 1, state=state, error=reason[:300])

    async def _housekeeping(self, now: datetime) -> None:
        if (
            self._last_housekeeping is not None
            and time.monotonic() - self._last_housekeeping < HOUSEKEEPING_EVERY.total_seconds()
        ):
            return
        self._last_housekeeping = time.monotonic()
        settings = self._engine.config.historian
        async with self._engine.unit_of_work() as uow:
            pruned = await jobs.prune_dead(uow.session, now, settings.dead_jobs_keep, settings.dead_jobs_keep_days)
            trimmed = 0
            for bot_id, scope in await short_term.chats_over(uow.session, settings.notes_keep, settings.turns_keep):
                trimmed += await short_term.prune(uow.session, bot_id, scope, settings.notes_keep, settings.turns_keep)
            await uow.commit()
        async with self._engine.unit_of_work() as uow:  # PostgreSQL without autovacuum: the planner's statistics
            analysed = await planner_stats.analyse_stale(uow.session)
            await uow.commit()
        if pruned or trimmed or analysed:
            log_event("historian", pruned_dead_jobs=pruned, trimmed_rows=trimmed, analysed_tables=len(analysed))

    # ---------------------------------------------------------------- stopping

    async def stop(self) -> int:
        """A clean shutdown: lease nothing more, let a tick under way end, cancel the jobs still
        running and release their leases (pending, due at once, the attempt not counted: the job
        did not fail, the process stopped). Returns how many leases were given back."""
        self.running = False
        if self._stopping and not self._in_flight:
            return 0  # stopped already
        self._stopping = True
        if self._ticking is not None and not self._ticking.done():
            await asyncio.gather(self._ticking, return_exceptions=True)
        running = dict(self._in_flight)
        held = {job_id: self._leases[job_id] for job_id in running if job_id in self._leases}
        for task in running.values():
            task.cancel()
        await asyncio.gather(*running.values(), return_exceptions=True)
        released = 0
        if held:
            try:
                async with self._engine.unit_of_work() as uow:
                    for lease in held.values():
                        released += await jobs.release(uow.session, lease, aware_or_now(None))
                    await uow.commit()
            except Exception as error:  # the leases expire and are recovered at the next start
                log_event("historian", level=logging.WARNING, stop="release_failed", error=str(error)[:200])
                released = 0
        self._in_flight.clear()
        self._leases.clear()
        log_event("historian", stopped=1, cancelled=len(running), released=released)
        return released

    # ---------------------------------------------------------------- driving by hand

    async def settle(self) -> None:
        """Wait for the jobs in flight and a pending tick (shutdown, tests)."""
        while self._in_flight or (self._ticking is not None and not self._ticking.done()):
            waiting = list(self._in_flight.values())
            if self._ticking is not None and not self._ticking.done():
                waiting.append(self._ticking)
            await asyncio.gather(*waiting, return_exceptions=True)

    async def run_until_idle(self, now: datetime | None = None, *, flush: bool = True, max_ticks: int = 1000) -> None:
        """Process everything that is due now (the CLI, the demo and tests): ``flush`` also turns
        every waiting transcript turn into a job, paused or not."""
        if flush:
            await flush_transcripts(self._engine, now, everything=True)
        for _ in range(max_ticks):
            started = await self.tick(now)
            await self.settle()
            if not started and not self._in_flight:
                return
