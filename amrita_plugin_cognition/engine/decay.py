"""The decay sweep: a cursor walk over the whole memory table, one batch per unit of work.

Each batch reads the next ``consolidation.sweep_batch_size`` active or expired memories by id
after the cursor, asks the policy (``domain/decay.py``) what to do with each, demotes, retires
(status ``expired``, out of both indices: keyword rows at once, vectors through the outbox) and
purges, and moves the cursor, all in one transaction (``store/decay.py``). A sweep that stops
anywhere resumes after its last committed batch: within a pass no row is read twice and no row
waits behind rows already read. The pass ends at the end of the table (the cursor goes back to 0
and the pass's counts are kept as the last pass's); the next pass begins at the next due time
(``sweep_if_due``: ``consolidation.sweep_interval_hours`` after the last finished pass, at once
when a pass was left unfinished), or when the operator runs ``ambot cognition sweep``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..domain.clock import aware_or_now
from ..domain.decay import LOWER_TIER, Lifetimes, plan_batch, purge_cutoff, sweep_due
from ..domain.events import Event, IndexWorkQueued, MemoriesChanged
from ..logs import log_event
from ..store import decay as decay_store
from ..store.decay import PassCounts

if TYPE_CHECKING:
    from .service import CognitionEngine


@dataclass(slots=True)
class SweepReport:
    """What one run of the sweep did (a run may be part of a pass, or finish one)."""

    scanned: int
    demoted: int
    expired: int
    purged: int
    batches: int
    #: Whether the run reached the end of the table (the pass is complete).
    finished: bool
    #: Where the next run starts (0: a new pass).
    cursor: int
    elapsed_seconds: float


async def sweep(engine: CognitionEngine, now: datetime | None = None, max_batches: int | None = None) -> SweepReport:
    """Run the sweep from its cursor to the end of the table (or ``max_batches`` batches)."""
    settings = engine.config.consolidation
    lifetimes = Lifetimes(settings.short_term_days, settings.long_term_days)
    moment = aware_or_now(now)
    started = time.perf_counter()
    done = PassCounts()
    batches, finished, cursor = 0, False, 0
    while max_batches is None or batches < max_batches:
        async with engine.unit_of_work() as uow:
            state = await decay_store.lock_and_read(uow.session)
            if state.cursor == 0:
                state.pass_started_at, state.current = moment.isoformat(), PassCounts()
            page = await decay_store.page(uow.session, state.cursor, settings.sweep_batch_size)
            plan = plan_batch(page, moment, lifetimes, settings.expired_keep_days)
            counts = PassCounts(scanned=len(page))
            for tier, ids in plan.demote.items():
                counts.demoted += await decay_store.demote(uow.session, ids, tier, LOWER_TIER[tier], moment)
            retired = await decay_store.retire(uow.session, plan.retire, moment)
            purged = await decay_store.purge(uow.session, plan.purge, purge_cutoff(moment, settings.expired_keep_days))
            counts.expired, counts.purged = len(retired), len(purged)
            state.current.add(counts)
            finished = len(page) < settings.sweep_batch_size
            if finished:
                state.cursor, state.last_finished_at, state.last_pass = 0, moment.isoformat(), state.current
                state.current, state.pass_started_at = PassCounts(), None
            else:
                state.cursor = page[-1].id
            await decay_store.write_state(uow.session, state)
            uow.record(*_events(retired, purged))
            await uow.commit()
        done.add(counts)
        batches += 1
        cursor = state.cursor
        if finished:
            break
    elapsed = time.perf_counter() - started
    log_event(
        "decay_sweep",
        started,
        scanned=done.scanned,
        demoted=done.demoted,
        expired=done.expired,
        purged=done.purged,
        batches=batches,
        finished=finished,
        cursor=cursor,
    )
    return SweepReport(
        done.scanned, done.demoted, done.expired, done.purged, batches, finished, cursor, round(elapsed, 3)
    )


def _events(retired: list[Any], purged: list[Any]) -> list[Event]:
    """A retirement queued index work; a retirement or purge changes what the bot accounts touched
    hold (their caches: a chat may see nothing now). A demotion changes no cached thing (the
    caches hold emptiness, memo and pins; ranking reads importance from SQL each turn)."""
    events: list[Event] = [IndexWorkQueued()] if retired else []
    return [*events, *(MemoriesChanged(bot_id) for bot_id in sorted({row.bot_id for row in [*retired, *purged]}))]


async def sweep_if_due(engine: CognitionEngine, now: datetime | None = None) -> SweepReport | None:
    """The scheduled sweep: runs when due (``domain.decay.sweep_due``), else None."""
    moment = aware_or_now(now)
    async with engine.unit_of_work() as uow:
        state = await decay_store.read_state(uow.session)
    if not sweep_due(state.finished_at, state.cursor > 0, moment, engine.config.consolidation.sweep_interval_hours):
        return None
    return await sweep(engine, moment)


async def sweep_status(engine: CognitionEngine) -> dict[str, Any]:
    """The sweep's cursor and progress for ``status``."""
    async with engine.unit_of_work() as uow:
        state = await decay_store.read_state(uow.session)
    return {
        "cursor": state.cursor,
        "pass_started_at": state.pass_started_at,
        "current": vars_of(state.current),
        "last_finished_at": state.last_finished_at,
        "last_pass": vars_of(state.last_pass),
        "interval_hours": engine.config.consolidation.sweep_interval_hours,
    }


def vars_of(counts: PassCounts) -> dict[str, int]:
    return {"scanned": counts.scanned, "demoted": counts.demoted, "expired": counts.expired, "purged": counts.purged}
