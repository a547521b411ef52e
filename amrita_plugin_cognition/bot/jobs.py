"""Background work of the bot: the periodic vector-index catch-up, the startup repair, the
historian's queue poll, the activity flush (each chat's message counts into SQL) and the decay
sweep's check.

Drains after each write are started by the engine itself (the unit of work's after-commit
handler), whoever made the write."""

from __future__ import annotations

import logging

from ..api import CognitionEngine
from ..errors import StoreUnavailable
from ..runtime import warn_limited

logger = logging.getLogger("cognition")


async def wait_for_background(engine: CognitionEngine | None = None) -> None:
    """Tests and shutdown: wait until the engine's background drains and bank checks have
    finished, so that no task holds a database connection when the bot stops. Without an
    engine: the process's engine, if one was built."""
    from . import capture

    await capture.settle()
    if engine is None:
        from ..runtime import current_engine

        engine = current_engine()
    if engine is not None:
        await engine.settle()


async def outbox_catch_up(engine: CognitionEngine) -> int:
    applied = await engine.index.drain()
    if applied:
        logger.info("[cognition] stage=outbox_catch_up applied=%d", applied)
    return applied


async def historian_tick(engine: CognitionEngine) -> None:
    """The queue poll: recover stale leases, batch transcripts, start due jobs (an enqueue also
    wakes the workers at once)."""
    engine.jobs.wake()


async def activity_flush(engine: CognitionEngine) -> None:
    """Write the messages counted for the idle-window planner (a failure keeps them for the next
    flush; said once a minute while the database is unreachable)."""
    try:
        await engine.idle_windows.flush()
    except StoreUnavailable as error:
        warn_limited(
            "activity:database",
            "[cognition] stage=activity_flush database=unreachable error=%s; counts are kept for the next flush",
            error.reason,
        )


#: How often the bot asks whether the decay sweep is due (``consolidation.sweep_interval_hours``
#: counts from the last finished pass, kept in SQL: a restart neither postpones nor repeats it).
SWEEP_CHECK_MINUTES = 10


async def decay_sweep(engine: CognitionEngine) -> None:
    """The scheduled decay sweep: a pass when one is due (or one left unfinished), else nothing."""
    report = await engine.decay.sweep_if_due()
    if report is not None:
        logger.info(
            "[cognition] stage=decay_sweep_job scanned=%d demoted=%d expired=%d purged=%d finished=%s",
            report.scanned,
            report.demoted,
            report.expired,
            report.purged,
            report.finished,
        )
