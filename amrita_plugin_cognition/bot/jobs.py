"""Background work of the bot: the periodic vector-index catch-up, the startup repair, the
historian's queue poll, the activity flush (each chat's message counts into SQL, then the cycles
of the chats that talked re-planned), the consolidation cycles' check (with the delivery of the
messages cycles left for private chats' users) and the decay sweep's check.

Drains after each write are started by the engine itself (the unit of work's after-commit
handler), whoever made the write."""

from __future__ import annotations

import logging

import nonebot
from nonebot.adapters.onebot.v11 import ActionFailed, Bot, NetworkError

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
    flush; said once a minute while the database is unreachable), then re-plan the consolidation
    cycles of the chats that talked (a message moves a waiting cycle to the chat's next window)."""
    try:
        await engine.consolidation.flush_and_refresh()
    except StoreUnavailable as error:
        warn_limited(
            "activity:database",
            "[cognition] stage=activity_flush database=unreachable error=%s; counts are kept for the next flush",
            error.reason,
        )


#: How often the bot plans cycles for every chat with new memories and no cycle waiting (chats
#: that talked are planned at each activity flush already).
CYCLE_CHECK_MINUTES = 10


async def cycle_check(engine: CognitionEngine) -> None:
    """Queue a consolidation cycle for each chat with memories new since its last cycle, at its
    idle window (cheapest first; nothing when ``consolidation.cycle`` is false); then deliver the
    messages cycles left for private chats' users (``deliver_cycle_messages``)."""
    planned = await engine.consolidation.refresh()
    if planned:
        logger.info("[cognition] stage=cycle_check planned=%d", planned)
    await deliver_cycle_messages(engine)


async def deliver_cycle_messages(engine: CognitionEngine) -> int:
    """Send each message a cycle left for a private chat's user (``consolidation.allow_send_to_user``,
    checked now: off, nothing goes) to that private chat only, through the bot account that ran the
    cycle (OneBot V11 ``send_private_msg``), and mark it sent, so it goes once. A bot account not
    connected now, or a send that fails, leaves the message for the next check (the engine stops
    offering it after a day). Returns the messages sent."""
    sent = 0
    for message in await engine.consolidation.undelivered_messages():
        bot = nonebot.get_bots().get(message.bot_id)
        if not isinstance(bot, Bot):
            continue
        try:
            await bot.send_private_msg(user_id=int(message.user_id), message=message.text)
        except (ActionFailed, NetworkError) as error:
            logger.warning("[cognition] stage=cycle_message run=%d send=failed error=%s", message.run_id, error)
            continue
        await engine.consolidation.mark_message_sent(message.run_id)
        sent += 1
        logger.info("[cognition] stage=cycle_message run=%d sent=1", message.run_id)
    return sent


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
