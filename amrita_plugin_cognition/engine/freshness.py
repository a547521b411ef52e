"""How a process learns that another one changed what it caches (the CLI erased a user, restored
a backup, forgot a fact; a second bot process on the same database).

Every unit of work that changes stored content bumps its bot account's change counter in the
same transaction (``store/unit_of_work.py``, ``store/changes.py``). ``ChangeWatch.refresh`` reads
the counters, at most every ``POLL_SECONDS``, before a turn serves anything from a cache
(``engine/context.py``, the hook) and before ``end`` builds a job's context: a counter that moved
by a version this process did not write means another process changed that bot, and everything
cached of it is dropped (``CognitionEngine.drop_cached``): the turn caches (memo, pins, notes,
cards, whether a chat sees facts), the switches, the recent turns and the hook's last inputs. So
no cache outlives a change made elsewhere by more than ``POLL_SECONDS`` (plus one small read).

The process's own changes are known at once (the after-commit events) and never make it drop
its caches a second time: their versions are remembered (``ChangesCounted``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..domain.events import EVERY_BOT, ChangesCounted, Event
from ..logs import log_event
from ..store import changes

if TYPE_CHECKING:
    from .service import CognitionEngine

#: How often the counters are read at most (the bound on a cache outliving a change elsewhere).
POLL_SECONDS = 2.0
#: Own versions remembered per counter (between two reads a process writes far fewer).
OWN_KEEP = 4_096


class ChangeWatch:
    def __init__(self, drop: Callable[[str | None], None], poll_seconds: float = POLL_SECONDS) -> None:
        #: Called with a bot id whose cached content is stale, or None: every bot's.
        self._drop = drop
        self.poll_seconds = poll_seconds
        #: Counter key -> the version this process last accounted for.
        self._seen: dict[str, int] = {}
        #: Counter key -> versions this process wrote since it last read the counters.
        self._own: dict[str, set[int]] = {}
        self._read_at = -float("inf")
        self._lock = asyncio.Lock()
        #: How many times another process's change was found (tests and ``status``).
        self.foreign_changes = 0

    def apply(self, events: Sequence[Event]) -> None:
        """After-commit handler: the versions this process wrote are no news to it."""
        for event in events:
            if isinstance(event, ChangesCounted):
                for key, version in event.versions:
                    own = self._own.setdefault(key, set())
                    if len(own) < OWN_KEEP:
                        own.add(version)

    @property
    def due(self) -> bool:
        return time.monotonic() - self._read_at >= self.poll_seconds

    async def refresh(self, engine: CognitionEngine) -> None:
        """Read the counters when the last read is older than ``poll_seconds`` and drop what
        another process made stale. Concurrent callers share one read."""
        if not self.due:
            return
        async with self._lock:
            if not self.due:
                return
            started = time.perf_counter()
            async with engine.unit_of_work() as uow:
                current = await changes.versions(uow.session)
            self._read_at = time.monotonic()
            stale = self._stale(current)
            for key in stale:
                self._drop(None if key == EVERY_BOT else key)
            if stale:
                self.foreign_changes += len(stale)
                log_event("freshness", started, level=logging.INFO, foreign=",".join(stale))

    def _stale(self, current: dict[str, int]) -> list[str]:
        """The counters another process moved since the last read. A counter first seen counts
        as moved (its caches may predate this process's first read; dropping them is cheap)."""
        stale = []
        for key, version in current.items():
            seen = self._seen.get(key)
            own = self._own.pop(key, set())
            self._seen[key] = version
            if seen == version:
                continue
            if (
                seen is None
                or not 0 < version - seen <= len(own)
                or any(step not in own for step in range(seen + 1, version + 1))
            ):
                stale.append(key)
        return stale
