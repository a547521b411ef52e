"""The unit of work: one transaction of the authority store, and its effects after commit.

    async with engine.unit_of_work() as uow:
        await uow.lock_scope(bot_id, scope)          # when counting before writing
        rows = await repository.insert_memories(uow.session, ...)
        uow.record(IndexWorkQueued(), MemoriesChanged(bot_id))
        await uow.commit()                           # then the after-commit handlers run

Leaving the block without ``commit()`` rolls back and runs nothing. A commit whose events change
stored content bumps the bot account's change counter in the same transaction
(``domain.events.counted_changes``, ``store/changes.py``): no use case has to remember it, and
every other process learns of the change within seconds. Handlers run after the
commit, in order, each at most once per event; a failing handler is logged and never undoes the
committed change.

``lock_scope`` serialises the writers of one chat for the rest of the transaction, within this
process (an asyncio lock) and across processes: PostgreSQL takes an advisory transaction lock;
SQLite takes its database write lock *before* the caller reads anything, so a count followed by
an insert (the per-chat limits) or a read followed by a write (a memo append) is never
interleaved with another process's (pysqlite starts a transaction only at the first write, so a
read done earlier would sit outside it).

A database that cannot be reached raises ``StoreUnavailable`` (from the driver's error), whether
it fails as the unit of work opens, in a statement of its body, or at the commit
(``store/unreachable.py`` says which errors are that); every other error leaves it as it was.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import AsyncExitStack, contextmanager
from types import TracebackType

from cachetools import LRUCache
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.clock import aware_or_now
from ..domain.events import ChangesCounted, Event, counted_changes
from ..domain.records import Scope
from . import changes
from .unreachable import unavailable

logger = logging.getLogger("cognition")

#: Called as ``factory(expire_on_commit=False)`` (``nonebot_plugin_orm.get_session`` or an
#: ``async_sessionmaker``): records are read after commit, never lazily refreshed.
SessionFactory = Callable[..., AsyncSession]
#: Receives the events of one committed unit of work.
AfterCommit = Callable[[Sequence[Event]], None]


class ScopeLocks:
    """In-process locks per (bot, chat), bounded: a chat's lock is dropped once 4,096 other chats
    were used after it. Should that happen while it is held, a newcomer gets a fresh lock and
    waits on the database lock instead (``take_write_lock``), which serialises them all the same."""

    def __init__(self, size: int = 4096) -> None:
        self._locks: LRUCache[str, asyncio.Lock] = LRUCache(maxsize=size)

    def get(self, bot_id: str, scope: Scope) -> asyncio.Lock:
        key = f"{bot_id}:{scope.key}"
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        return lock


@contextmanager
def _mapped() -> Iterator[None]:
    """An unreachable database's error raised as ``StoreUnavailable`` from it; others unchanged."""
    try:
        yield
    except Exception as error:
        mapped = unavailable(error)
        if mapped is None:
            raise
        raise mapped from error


class UnitOfWork:
    def __init__(self, session_factory: SessionFactory, after_commit: AfterCommit, scope_locks: ScopeLocks) -> None:
        self._session_factory = session_factory
        self._after_commit = after_commit
        self._scope_locks = scope_locks
        self._events: list[Event] = []
        self._stack = AsyncExitStack()
        self._locked: set[str] = set()
        self.session: AsyncSession

    async def __aenter__(self) -> UnitOfWork:
        with _mapped():
            self.session = await self._stack.enter_async_context(self._session_factory(expire_on_commit=False))
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        # Closing the session rolls back whatever was not committed; the objects read stay
        # usable (detached, not expired), so a read-only unit of work hands its rows out.
        self._events.clear()
        mapped = unavailable(error) if isinstance(error, Exception) else None
        try:
            with _mapped():
                await self._stack.aclose()
        except Exception:
            if mapped is None:
                raise
            # the session of a database that went away may fail to close: the first error tells
        if mapped is not None:  # a statement of the body found the database unreachable
            raise mapped from error

    def record(self, *events: Event) -> None:
        """Effects to run once this unit of work has committed."""
        self._events.extend(events)

    async def lock_scope(self, bot_id: str, *scopes: Scope) -> None:
        """Take the write lock of each chat for the rest of the transaction (see the module
        docstring). Several chats are locked in one call, in a fixed order, so two units of work
        never wait on each other; a unit of work locks once, before it writes."""
        if self._locked:
            raise RuntimeError("a unit of work takes its scope locks once, all in one call")
        keys = sorted({f"{bot_id}:{scope.key}" for scope in scopes})
        by_key = {f"{bot_id}:{scope.key}": scope for scope in scopes}
        for key in keys:
            await self._stack.enter_async_context(self._scope_locks.get(bot_id, by_key[key]))
            self._locked.add(key)
        with _mapped():
            for key in keys:
                await take_write_lock(self.session, f"cognition:{key}")

    async def commit(self) -> None:
        events, self._events = list(dict.fromkeys(self._events)), []
        counted = counted_changes(events)
        with _mapped():
            if counted:  # the last statement before the commit: other processes learn of the change
                versions = await changes.bump(self.session, counted, aware_or_now(None))
                events.append(ChangesCounted(tuple(sorted(versions.items()))))
            await self.session.commit()
        if events:
            try:
                self._after_commit(events)
            except Exception:  # the change is committed; an effect failing must not hide that
                logger.exception("[cognition] stage=after_commit failed events=%s", events)


async def take_write_lock(session: AsyncSession, key: str) -> None:
    """Serialise this transaction with every other one that takes the same key, in any process."""
    if session.get_bind().dialect.name == "postgresql":
        await session.execute(text("SELECT pg_advisory_xact_lock(hashtext(:key))"), {"key": key})
        return
    # SQLite: the first write statement takes the database's write lock (and opens the
    # transaction); updating no row is enough. Other writers wait (busy timeout) until commit.
    await session.execute(text("UPDATE cognition_meta SET value = value WHERE key = :key"), {"key": key})
