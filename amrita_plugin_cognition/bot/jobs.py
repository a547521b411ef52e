"""Background work of the bot: vector-index catch-up (after each write, and on a timer)."""

from __future__ import annotations

import asyncio
import logging

from ..engine.service import CognitionEngine

logger = logging.getLogger("cognition")

_tasks: set[asyncio.Task[int]] = set()


def schedule_outbox_drain(engine: CognitionEngine) -> None:
    """Apply fresh writes to the vector index soon, without making the caller wait."""
    task = asyncio.get_running_loop().create_task(engine.drain_outbox())
    _tasks.add(task)
    task.add_done_callback(_finished)


def _finished(task: asyncio.Task[int]) -> None:
    _tasks.discard(task)
    if not task.cancelled() and task.exception() is not None:
        logger.error("[cognition] stage=outbox drain failed: %r", task.exception())


async def wait_for_background(engine: CognitionEngine | None = None) -> None:
    """Tests and shutdown: wait until scheduled drains (and the engine's background checks)
    have finished, so that no task holds a database connection when the bot stops."""
    while _tasks:
        await asyncio.gather(*list(_tasks), return_exceptions=True)
    if engine is not None:
        await engine.settle()


async def outbox_catch_up(engine: CognitionEngine) -> int:
    applied = await engine.drain_outbox()
    if applied:
        logger.info("[cognition] stage=outbox_catch_up applied=%d", applied)
    return applied
