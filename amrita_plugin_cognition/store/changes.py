"""Change counters: one per bot account (and ``*`` for all of them), bumped in the transaction of
every change to what a process may cache, read by every process at most every few seconds
(``engine/freshness.py``).

A counter row per bot, not a log of changes: a version is taken under the row's lock (PostgreSQL)
or the database's write lock (SQLite), so versions are handed out in commit order and a reader
never misses one that commits late. The bump is the last statement before the commit, so the row
is locked for a moment only.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.ext.asyncio import AsyncSession

from .models import ChangeRow


async def bump(session: AsyncSession, keys: Sequence[str], now: datetime) -> dict[str, int]:
    """Add one to each counter (created at 1), in a fixed order (two transactions bumping the same
    counters never wait on each other crosswise); returns the new versions."""
    ordered = sorted(set(keys))
    if session.get_bind().dialect.name == "postgresql":
        for key in ordered:
            statement = postgresql_insert(ChangeRow).values(bot_id=key, version=1, changed_at=now)
            await session.execute(
                statement.on_conflict_do_update(
                    index_elements=[ChangeRow.bot_id],
                    set_={"version": ChangeRow.version + 1, "changed_at": now},
                )
            )
    else:
        # SQLite: this transaction holds the database's write lock from its first write on, so an
        # update that found no row is followed by an insert no other writer can race
        for key in ordered:
            result = await session.execute(
                update(ChangeRow)
                .where(ChangeRow.bot_id == key)
                .values(version=ChangeRow.version + 1, changed_at=now)
                .execution_options(synchronize_session=False)
            )
            if not result.rowcount:  # type: ignore[attr-defined]
                session.add(ChangeRow(bot_id=key, version=1, changed_at=now))
        await session.flush()
    rows = await session.execute(select(ChangeRow.bot_id, ChangeRow.version).where(ChangeRow.bot_id.in_(ordered)))
    return {key: int(version) for key, version in rows.all()}


async def versions(session: AsyncSession) -> dict[str, int]:
    """Every counter: a handful of rows (one per bot account that ever changed)."""
    rows = await session.execute(select(ChangeRow.bot_id, ChangeRow.version))
    return {key: int(version) for key, version in rows.all()}
