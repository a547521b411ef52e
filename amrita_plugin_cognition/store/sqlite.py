"""SQLite settings the store relies on.

The default rollback journal makes a commit wait until no other connection is reading; with
several connections of one bot (turns, background drains, Amrita's own tables) a commit could
wait out the driver's 5 s busy timeout and fail. Write-ahead logging lets readers and the one
writer proceed side by side (the database keeps ``-wal`` and ``-shm`` files beside it). The mode
is stored in the database file, so it is set once.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from sqlalchemy import event, text
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


# ------------------------------------------------------------------------------ erased bytes
#
# Deleting a row leaves its bytes in the file: in the page's free space and in freed pages
# (unless ``secure_delete``), in FTS5's index segments (a delete only adds a tombstone until the
# segments are merged; FTS5's own 'secure-delete' needs SQLite 3.42, and Python's bundled SQLite
# is often older), and in the write-ahead log until it is checkpointed and truncated. A delete-all
# therefore runs, in its own transaction: ``secure_delete_now`` before its deletes, then
# ``scrub_deleted`` (merge every FTS5 index into one segment, so no tombstoned document's terms
# are left, and overwrite the free pages left by earlier deletes with zeros); after its commit,
# ``truncate_log``.
# ``bench/erasure_bytes.py`` measures what this costs.

#: The FTS5 tables of the plugin (memories, cards, knowledge entries): merged after an erasure.
FTS5_TABLES = ("cognition_memory_fts", "cognition_profile_fts", "cognition_knowledge_fts")


def _is_sqlite(session: AsyncSession) -> bool:
    return session.get_bind().dialect.name == "sqlite"


_SECURE_DELETE_MARK = "cognition_secure_delete"


def _set_secure_delete(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
    """Pool checkout: ``secure_delete`` on, once per connection (also those opened before)."""
    if record.info.get(_SECURE_DELETE_MARK):
        return
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA secure_delete = ON")
    cursor.close()
    record.info[_SECURE_DELETE_MARK] = True


def use_secure_delete(session: AsyncSession) -> bool:
    """Every connection of this database, from its next checkout on, overwrites deleted content
    with zeros (cell space and freed pages), so no later delete or update leaves bytes behind
    (``bench/erasure_bytes.py``: what it costs ordinary writes). Returns whether the database
    is SQLite."""
    if not _is_sqlite(session):
        return False
    engine = session.get_bind()
    sync_engine = getattr(engine, "sync_engine", engine)
    if not event.contains(sync_engine, "checkout", _set_secure_delete):
        event.listen(sync_engine, "checkout", _set_secure_delete)
    return True


async def secure_delete_now(session: AsyncSession) -> None:
    """``secure_delete`` on for the session's connection (it may predate ``use_secure_delete``),
    before an erasure deletes anything."""
    if _is_sqlite(session):
        await session.execute(text("PRAGMA secure_delete = ON"))


async def scrub_deleted(session: AsyncSession) -> None:
    """In the caller's transaction, after the deletes of an erasure: every FTS5 index merged into
    one segment, and the free pages overwritten with zeros (a table of one zero blob as large as
    the free list, dropped again). No-op on PostgreSQL (the README says what it keeps until VACUUM)."""
    if not _is_sqlite(session):
        return
    for table in FTS5_TABLES:
        await session.execute(text(f"INSERT INTO {table}({table}) VALUES ('optimize')"))
    free = int((await session.execute(text("PRAGMA freelist_count"))).scalar_one())
    if free:
        size = int((await session.execute(text("PRAGMA page_size"))).scalar_one())
        await session.execute(text(f"CREATE TABLE IF NOT EXISTS {_SCRATCH} (filler BLOB)"))
        await session.execute(text(f"INSERT INTO {_SCRATCH} (filler) VALUES (zeroblob(:size))"), {"size": free * size})
        await session.execute(text(f"DROP TABLE {_SCRATCH}"))


_SCRATCH = "cognition_erasure_scratch"
#: How long ``truncate_log`` keeps trying while other connections read.
TRUNCATE_ATTEMPTS = 20
TRUNCATE_PAUSE_SECONDS = 0.1


async def truncate_log(session: AsyncSession) -> bool:
    """Copy the write-ahead log into the database and truncate it to zero bytes, so that no old
    page image of an erased row stays in the ``-wal`` file. Tried again for a while when another
    connection is reading or writing; returns whether it was done (True on PostgreSQL and without WAL).

    Each try answers at once: a checkpoint that finds a reader waits the connection's whole busy
    timeout (5 s) before it says busy, so twenty tries beside one long reader held an erasure's
    answer for 100 s. The busy timeout is 0 during each try, on that try's connection."""
    if not _is_sqlite(session):
        return True
    for _ in range(TRUNCATE_ATTEMPTS):
        if await _truncate_now(session):
            return True
        await asyncio.sleep(TRUNCATE_PAUSE_SECONDS)
    logger.warning("[cognition] stage=sqlite wal_truncate=busy attempts=%s", TRUNCATE_ATTEMPTS)
    return False


async def _truncate_now(session: AsyncSession) -> bool:
    """One checkpoint with truncation that does not wait: whether it was done. (A commit hands the
    connection back to the pool, so the busy timeout is set and restored before it.)"""
    waited = int((await session.execute(text("PRAGMA busy_timeout"))).scalar_one())
    await session.execute(text("PRAGMA busy_timeout = 0"))
    try:
        busy, _log, _done = (await session.execute(text("PRAGMA wal_checkpoint(TRUNCATE)"))).one()
    except OperationalError as error:  # a writer holds the lock: busy too (the erasure itself is committed)
        logger.info("[cognition] stage=sqlite wal_truncate=locked error=%s", str(error)[:200])
        busy = 1
    finally:
        await session.execute(text(f"PRAGMA busy_timeout = {waited}"))
    await session.commit()
    return not busy
