"""The Amrita/NoneBot adapter: startup, the per-turn hook, tools, commands, scheduled jobs."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Awaitable, Callable

from nonebot import get_driver, require
from nonebot.adapters import Bot
from nonebot.log import LoguruHandler, logger

require("nonebot_plugin_apscheduler")
from nonebot_plugin_apscheduler import scheduler  # noqa: E402

from ..api import CognitionEngine  # noqa: E402
from ..errors import TIMEOUTS, CognitionError, EngineUnavailable, IndexUnavailable  # noqa: E402
from ..runtime import add_startup_step, current_engine, get_engine  # noqa: E402
from . import activity, capture, commands, commands_profile, hook, tools  # noqa: E402,F401
from .jobs import (  # noqa: E402
    CYCLE_CHECK_MINUTES,
    SWEEP_CHECK_MINUTES,
    activity_flush,
    cycle_check,
    decay_sweep,
    historian_tick,
    outbox_catch_up,
    wait_for_background,
)
from .settings import bind_settings  # noqa: E402
from .webui import mount_when_ready as mount_webui_page  # noqa: E402

# The memory page in Amrita's WebUI (when it is on): routes must exist before the WebUI's
# catch-all, which it adds at the driver's start.
mount_webui_page()

#: How long shutdown waits for scheduled index work and bank checks.
SHUTDOWN_WAIT_SECONDS = 20.0

_cognition_logger = logging.getLogger("cognition")
if not any(isinstance(handler, LoguruHandler) for handler in _cognition_logger.handlers):
    _cognition_logger.addHandler(LoguruHandler())
    _cognition_logger.setLevel(logging.INFO)
    _cognition_logger.propagate = False

#: The operator may be asked on the terminal only while the bot starts; a start retried later
#: (from a chat turn, after a config fix) must not wait for a person.
_starting = False


async def _confirm_on_terminal(message: str) -> bool:
    if not _starting or not sys.stdin or not sys.stdin.isatty():
        return False
    answer = await asyncio.to_thread(input, f"[cognition] {message}\n重建向量索引？[y/N] ")
    return answer.strip().lower() in ("y", "yes")


def _every(
    seconds: float, job: Callable[[CognitionEngine], Awaitable[object]], engine: CognitionEngine, job_id: str
) -> None:
    """Run ``job(engine)`` every ``seconds`` (one at a time; missed runs coalesce into one)."""
    scheduler.add_job(
        job,
        "interval",
        seconds=seconds,
        args=[engine],
        id=job_id,
        replace_existing=True,
        max_instances=1,
        coalesce=True,
    )


async def _prepare_engine(engine: CognitionEngine) -> None:
    """Startup step of every engine start: the embedding fingerprint check, a repair pass of the
    vector index in the background (missing vectors re-queued by id), then the catch-up job, the
    historian's poll, the activity flush (the engine's close flushes a last time), the decay
    sweep's check and the consolidation cycles' check."""
    outcome = await engine.index.check_fingerprint(confirm=_confirm_on_terminal)  # refused: EngineUnavailable
    logger.info(f"[cognition] stage=startup fingerprint={outcome} index={engine.vectors.description}")
    engine.index.repair_soon()
    _every(engine.config.outbox_interval_seconds, outbox_catch_up, engine, "cognition_outbox_catch_up")
    engine.jobs.resume()
    _every(engine.config.historian.poll_interval_seconds, historian_tick, engine, "cognition_historian")
    engine.jobs.wake()  # jobs left from the last run
    _every(engine.config.consolidation.activity_flush_seconds, activity_flush, engine, "cognition_activity_flush")
    _every(SWEEP_CHECK_MINUTES * 60, decay_sweep, engine, "cognition_decay_sweep")
    _every(CYCLE_CHECK_MINUTES * 60, cycle_check, engine, "cognition_cycle_check")


@get_driver().on_startup
async def _start_engine() -> None:
    """Start memory with the bot, on the configuration in Amrita's place for it (bound to
    uniconf and the WebUI first). When it cannot start (the reason is logged once by the
    runtime), the bot runs without it and ``get_engine()`` starts it once the cause is gone."""
    global _starting
    await bind_settings()
    add_startup_step(_prepare_engine)
    engine = current_engine()
    if engine is not None:  # started before the driver (a CLI command, a test): prepare it now
        try:
            await _prepare_engine(engine)
        except CognitionError as error:
            logger.warning(f"[cognition] stage=startup prepare=failed error={error}")
        except Exception as error:  # unexpected: the bot still starts, with the traceback logged
            logger.opt(exception=error).error("[cognition] stage=startup prepare=failed")
        return
    _starting = True
    try:
        await get_engine()
    except EngineUnavailable:
        return
    finally:
        _starting = False


@get_driver().on_bot_connect
async def _prepare_bot_account(bot: Bot) -> None:
    """Learn in the background whether this account's memory bank is empty, so that even its
    first turn needs no database when it is (engine.bank_known_empty)."""
    try:
        engine = await get_engine()
    except EngineUnavailable:  # the runtime logged why memory is unavailable
        return
    engine.bank_known_empty(bot.self_id)


@get_driver().on_shutdown
async def _finish_background_work() -> None:
    """Let scheduled index work and bank checks end before the database goes away (bounded:
    what is not applied stays in the outbox for the next start). Historian jobs still running are
    cancelled first and their leases given back, so the next start runs them at once."""
    engine = current_engine()
    if engine is not None:
        try:
            await asyncio.wait_for(engine.jobs.stop(), timeout=SHUTDOWN_WAIT_SECONDS)
        except TIMEOUTS:  # the leases expire and are recovered at the next start
            logger.warning(f"[cognition] stage=shutdown historian_stop=timeout after {SHUTDOWN_WAIT_SECONDS} s")
    try:
        await asyncio.wait_for(wait_for_background(current_engine()), timeout=SHUTDOWN_WAIT_SECONDS)
    except TIMEOUTS:
        logger.warning(f"[cognition] stage=shutdown background work still running after {SHUTDOWN_WAIT_SECONDS} s")
        return
    engine = current_engine()
    if engine is not None:
        try:
            await engine.close()  # an embedded index folder is free for the CLI at once
        except IndexUnavailable as error:  # a stuck call still holds it: the exit releases it
            logger.warning(f"[cognition] stage=shutdown index_close={error}")
