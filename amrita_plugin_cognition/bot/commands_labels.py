"""How ``/memory`` lists show a memory: its date, and in a private chat the chat it came from.

The date is when the fact happened, else when it was recorded, in the configured time zone:
``11-27`` in the current year, ``2025-11-27`` otherwise; a date said as a month or a year is
shown as one (``2027-01``, ``2027``). The chat is ``私聊``, ``群20001``, or
``群名·20001`` once the group's name is known from the OneBot API ``get_group_info``. Names are
cached (an hour; a failed or empty answer five minutes) and a reply waits for them at most
``LOOKUP_SECONDS``: a lookup still running then finishes in the background for the next reply.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from datetime import datetime, timezone, tzinfo
from zoneinfo import ZoneInfo

from nonebot.adapters.onebot.v11 import Bot

from ..api import MemoryRecord, Precision, Scope, normalise_text, precision_of
from ..api import happened_label as label

logger = logging.getLogger("cognition")

#: ``datetime.UTC`` is Python 3.11+.
_UTC = timezone.utc

#: How long one reply waits for group names it does not know yet.
LOOKUP_SECONDS = 1.5
NAME_TTL_SECONDS = 3600.0
MISS_TTL_SECONDS = 300.0
#: Group names remembered at most (least recently used ones go first).
CACHE_MAX = 2048
NAME_MAX_CHARS = 16


def zone_of(name: str) -> tzinfo:
    try:
        return ZoneInfo(name)
    except (KeyError, ValueError):  # the config validates it; stay readable if it did not
        return _UTC


def day_label(moment: datetime, zone: tzinfo, now: datetime | None = None) -> str:
    """``MM-DD`` in the current year (in ``zone``), ``YYYY-MM-DD`` otherwise."""
    return label(moment, Precision.DAY, zone, now or datetime.now(_UTC))


def when_label(record: MemoryRecord, zone: tzinfo, now: datetime | None = None) -> str:
    """When a fact happened at the precision it was said with (``2027-01`` for a month, never a
    day of it), else the day it happened or was recorded (``day_label``)."""
    precision = precision_of(record.source)
    if record.happened_at is not None and precision is not None:
        return label(record.happened_at, precision, zone, now or datetime.now(_UTC))
    return day_label(record.when, zone, now)


def short_name(name: str) -> str:
    name = normalise_text(name)
    return name if len(name) <= NAME_MAX_CHARS else name[: NAME_MAX_CHARS - 1] + "…"


def chat_label(scope: Scope, group_names: dict[str, str]) -> str:
    if not scope.is_group:
        return "私聊"
    name = group_names.get(scope.id, "")
    return f"{name}·{scope.id}" if name else f"群{scope.id}"


class GroupNames:
    """Group names per bot account, from ``get_group_info``, cached and never waited for long."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        #: (bot id, group id) -> (name, "" when unknown; expiry on ``clock``)
        self._entries: OrderedDict[tuple[str, str], tuple[str, float]] = OrderedDict()
        self._pending: dict[tuple[str, str], asyncio.Task[None]] = {}

    def cached(self, bot_id: str, group_id: str) -> str | None:
        """The cached name ("" when the API gave none), or None when not cached or expired."""
        key = (bot_id, group_id)
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry[1] <= self._clock():
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return entry[0]

    def _store(self, key: tuple[str, str], name: str) -> None:
        ttl = NAME_TTL_SECONDS if name else MISS_TTL_SECONDS
        self._entries[key] = (name, self._clock() + ttl)
        self._entries.move_to_end(key)
        while len(self._entries) > CACHE_MAX:
            self._entries.popitem(last=False)

    async def _fetch(self, bot: Bot, key: tuple[str, str]) -> None:
        name = ""
        try:
            info = await bot.get_group_info(group_id=int(key[1]))
            if isinstance(info, dict):
                name = short_name(str(info.get("group_name") or ""))
        except Exception as error:  # the QQ side may refuse or be gone: show the number
            logger.info("[cognition] stage=command group_info_failed group=%s error=%s", key[1], str(error)[:200])
        self._store(key, name)

    async def names(self, bot: Bot | None, group_ids: Iterable[str], timeout: float | None = None) -> dict[str, str]:
        """Group id -> name for ``group_ids`` ("" when not known within ``timeout`` seconds,
        default ``LOOKUP_SECONDS``)."""
        wanted = list(dict.fromkeys(group_ids))
        if bot is None or not wanted:
            return dict.fromkeys(wanted, "")
        bot_id = str(bot.self_id)
        found: dict[str, str] = {}
        waiting: list[asyncio.Task[None]] = []
        for group_id in wanted:
            name = self.cached(bot_id, group_id)
            if name is not None:
                found[group_id] = name
                continue
            key = (bot_id, group_id)
            task = self._pending.get(key)
            if task is None:
                task = asyncio.ensure_future(self._fetch(bot, key))
                self._pending[key] = task
                task.add_done_callback(lambda _done, key=key: self._pending.pop(key, None))  # type: ignore[misc]
            waiting.append(task)
        if waiting:
            await asyncio.wait(
                waiting, timeout=LOOKUP_SECONDS if timeout is None else timeout
            )  # never cancels: late answers fill the cache
        for group_id in wanted:
            if group_id not in found:
                found[group_id] = self.cached(bot_id, group_id) or ""
        return found

    def clear(self) -> None:
        self._entries.clear()


#: The process's cache (commands of every bot account share it, keyed by account).
GROUP_NAMES = GroupNames()


async def record_lines(
    records: Iterable[MemoryRecord], *, zone: tzinfo, bot: Bot | None, with_chat: bool, now: datetime | None = None
) -> list[str]:
    """``#12 [11-27 · 群20001] text`` per record (the chat only when ``with_chat``)."""
    records = list(records)
    names: dict[str, str] = {}
    if with_chat:
        names = await GROUP_NAMES.names(bot, [record.scope.id for record in records if record.scope.is_group])
    lines = []
    for record in records:
        shown = when_label(record, zone, now)
        if with_chat:
            shown += f" · {chat_label(record.scope, names)}"
        lines.append(f"#{record.id} [{shown}] {record.text}")
    return lines
