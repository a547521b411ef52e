"""SQLite settings the store relies on.

The default rollback journal makes a commit wait until no other connection is reading; with
several connections of one bot (turns, background drains, Amrita's own tables) a commit could
wait out the driver's 5 s busy timeout and fail. Write-ahead logging lets readers and the one
writer proceed side by side (the database keeps ``-wal`` and ``-shm`` files beside it). The mode
is stored in the database file, so it is set once.
"""

from __future__ import annotations

import logging

from sqlalchemy import text
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncSession

logger = logging.getLogger("cognition")


async def use_write_ahead_log(session: AsyncSession) -> str:
    """Switch a file database to WAL (no-op elsewhere). Returns the journal mode in force."""
    if session.get_bind().dialect.name != "sqlite":
        return ""
    mode = str((await session.execute(text("PRAGMA journal_mode"))).scalar_one()).lower()
    if mode in ("wal", "memory"):
        return mode
    try:
        mode = str((await session.execute(text("PRAGMA journal_mode=WAL"))).scalar_one()).lower()
    except OperationalError as error:  # another connection is busy: the next start tries again
        logger.warning("[cognition] stage=sqlite journal_mode=%s wal_refused=%s", mode, str(error)[:200])
    return mode
