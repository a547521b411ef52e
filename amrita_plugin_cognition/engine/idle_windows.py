"""Each chat's activity, observed on every message, and the window of its next consolidation
cycle (the idle-window planner: ``domain/idle_planner.py`` over ``domain/chat_activity.py``).

The hot path stays hot: ``observe`` is a dict increment in this process (``ActivityTally``), no
SQL, no await; the bot calls it for every message of every chat it sees. The counts are written
to SQL by ``flush`` on a timer (``consolidation.activity_flush_seconds``, 60 s) and when the engine
closes, per bot account in units of work of at most ``FLUSH_CHATS_PER_UNIT`` chats, under the bot
account's activity lock (so a cycle's reset in another process is never lost). What a crash can lose:
the counts of at most one flush interval (the messages since the last flush), nothing else. A
flush that fails gives its counts back to the tally for the next one. Memory is bounded: at most
``MAX_PENDING_CHATS`` chats wait between flushes; messages of further chats are not counted until
the next flush (counted in ``dropped``, logged once per flush).

Governance at the flush: a chat whose memory is off (the master switch, ``disabled_scopes``,
``/memory off``) keeps no counts, and the messages of an opted-out user are not counted (their
rhythm is about them); a delete-all takes the erased chats' rows and their waiting counts.

``plan`` reads the chat's row, adds what waits in the tally (so a plan never lags a flush
interval), and asks the planner; ``cycle_done`` resets the penalty after a successful cycle. The
planner's zone is ``consolidation.idle_timezone``, else ``timezone``, else UTC; an unknown name is
warned about once per process.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING

from ..config import CognitionConfig
from ..domain.chat_activity import (
    ChatActivity,
    HeatPolicy,
    add_counts,
    cell_of,
    cycle_done,
    rezoned,
    zone_shift_hours,
)
from ..domain.clock import aware_or_now
from ..domain.idle_planner import IdleWindow, PlannerPolicy, plan_window, resolve_zone
from ..domain.records import Scope
from ..logs import log_event
from ..store import chat_activity as store
from . import switches as _switches

if TYPE_CHECKING:
    from .service import CognitionEngine

#: Chats whose counts may wait in memory between two flushes.
MAX_PENDING_CHATS = 10_000
#: Chats written (and locked) per unit of work of a flush.
FLUSH_CHATS_PER_UNIT = 200

#: Unknown zone names warned about in this process (each once).
_WARNED_ZONES: set[str] = set()


def planner_policy(config: CognitionConfig) -> PlannerPolicy:
    """The planner's settings from the ``consolidation`` section."""
    section = config.consolidation
    heat = HeatPolicy(
        fine_half_life_days=section.heat_half_life_days,
        coarse_half_life_days=section.coarse_heat_half_life_days,
        shrinkage_prior_occurrences=section.shrinkage_prior_occurrences,
        cold_slot_max_share_percent=section.cold_slot_max_share_percent,
        cold_slot_max_messages=section.cold_slot_max_messages,
    )
    return PlannerPolicy(
        use_idle_window_planner=section.use_idle_window_planner,
        idle_target_hour=section.idle_target_hour,
        idle_window_minutes=section.idle_window_minutes,
        idle_short_window_minutes=section.idle_short_window_minutes,
        idle_buffer_minutes=section.idle_buffer_minutes,
        idle_horizon_hours=section.idle_horizon_hours,
        quiet_run_base_hours=section.quiet_run_base_hours,
        quiet_run_penalty_hours=section.quiet_run_penalty_hours,
        quiet_run_max_hours=section.quiet_run_max_hours,
        heat=heat,
        rethink_base_delay_minutes=section.rethink_base_delay_minutes,
        rethink_penalty_multiplier=section.rethink_penalty_multiplier,
        rethink_max_delay_minutes=section.rethink_max_delay_minutes,
    )


def planner_zone(config: CognitionConfig) -> tuple[tzinfo, str]:
    """The planner's zone and its name; an unknown ``idle_timezone`` is warned about once per
    process (not per call: this runs for every message)."""
    name = config.consolidation.idle_timezone
    zone, used, unknown = resolve_zone(name, config.timezone)
    if unknown and name not in _WARNED_ZONES:
        _WARNED_ZONES.add(name)
        log_event("idle_planner", level=logging.WARNING, unknown_timezone=repr(name), using=used)
    return zone, used


def in_zone(activity: ChatActivity, zone: tuple[tzinfo, str], now: datetime) -> ChatActivity:
    """A chat's stored maps read in the planner's zone (``zone``: the zone and its name): maps
    counted in another zone (``idle_timezone`` changed since) are moved by the two clocks'
    difference at ``now``; maps that name no zone were counted in this one."""
    current, name = zone
    if activity.zone in ("", name):
        return replace(activity, zone=name) if activity.zone != name else activity
    counted_in = resolve_zone(activity.zone, "UTC")[0]
    return rezoned(activity, name, zone_shift_hours(counted_in, current, now))


@dataclass(slots=True)
class PendingActivity:
    """One chat's messages counted since the last flush, by (cell, speaker)."""

    counts: dict[tuple[int, str], int] = field(default_factory=dict)
    first_at: datetime | None = None
    last_at: datetime | None = None

    def add(self, cell: int, user_id: str, at: datetime, messages: int = 1) -> None:
        key = (cell, user_id)
        self.counts[key] = self.counts.get(key, 0) + messages
        self._span(at)

    def merge(self, other: PendingActivity) -> None:
        for key, messages in other.counts.items():
            self.counts[key] = self.counts.get(key, 0) + messages
        for moment in (other.first_at, other.last_at):
            if moment is not None:
                self._span(moment)

    def _span(self, moment: datetime) -> None:
        self.first_at = moment if self.first_at is None or moment < self.first_at else self.first_at
        self.last_at = moment if self.last_at is None or moment > self.last_at else self.last_at

    def cells(self, leave_out: Iterable[str] = ()) -> dict[int, int]:
        """Messages per cell, without those of the users in ``leave_out``."""
        left_out = set(leave_out)
        cells: dict[int, int] = {}
        for (cell, user_id), messages in self.counts.items():
            if user_id not in left_out:
                cells[cell] = cells.get(cell, 0) + messages
        return cells


class ActivityTally:
    """The per-process accumulator of observed messages, per (bot account, chat)."""

    def __init__(self, max_chats: int = MAX_PENDING_CHATS) -> None:
        self.max_chats = max_chats
        self._pending: dict[tuple[str, str], tuple[Scope, PendingActivity]] = {}
        #: The zone cache: (idle_timezone, timezone) → zone, so a message costs no zone lookup.
        self._zone: tuple[tuple[str, str], tzinfo] | None = None
        #: Messages not counted because ``max_chats`` chats were waiting already.
        self.dropped = 0

    def __len__(self) -> int:
        return len(self._pending)

    def zone(self, config: CognitionConfig) -> tzinfo:
        key = (config.consolidation.idle_timezone, config.timezone)
        if self._zone is None or self._zone[0] != key:
            self._zone = (key, planner_zone(config)[0])
        return self._zone[1]

    def observe(self, bot_id: str, scope: Scope, user_id: str, at: datetime, zone: tzinfo) -> bool:
        """Count one message; False when it was not counted (too many chats waiting)."""
        key = (bot_id, scope.key)
        entry = self._pending.get(key)
        if entry is None:
            if len(self._pending) >= self.max_chats:
                self.dropped += 1
                return False
            entry = self._pending[key] = (scope, PendingActivity())
        entry[1].add(cell_of(at, zone), user_id, at)
        return True

    def snapshot(self) -> dict[str, list[Scope]]:
        """The chats whose counts wait now, by bot account (read only)."""
        chats: dict[str, list[Scope]] = {}
        for (bot_id, _), (scope, _pending) in self._pending.items():
            chats.setdefault(bot_id, []).append(scope)
        return chats

    def peek(self, bot_id: str, scope: Scope) -> PendingActivity | None:
        entry = self._pending.get((bot_id, scope.key))
        return None if entry is None else entry[1]

    def take(
        self, bot_id: str | None = None, scope: Scope | None = None
    ) -> dict[str, list[tuple[Scope, PendingActivity]]]:
        """Take what waits (of one chat, of one bot account, or all), by bot account."""
        taken: dict[str, list[tuple[Scope, PendingActivity]]] = {}
        for key in list(self._pending):
            if (bot_id is None or key[0] == bot_id) and (scope is None or key[1] == scope.key):
                entry = self._pending.pop(key)
                taken.setdefault(key[0], []).append(entry)
        return taken

    def give_back(self, bot_id: str, entries: Iterable[tuple[Scope, PendingActivity]]) -> None:
        """Counts a failed flush took, back for the next one (merged with what came meanwhile)."""
        for scope, pending in entries:
            key = (bot_id, scope.key)
            current = self._pending.get(key)
            if current is None:
                self._pending[key] = (scope, pending)
            else:
                current[1].merge(pending)

    def drop(self, bot_id: str, scope: Scope | None = None) -> None:
        """Forget what waits of an erased chat (or of every chat of an erased bot account)."""
        self.take(bot_id, scope)


async def flush(engine: CognitionEngine, now: datetime | None = None) -> int:
    """Write what the tally holds to SQL; the number of chats written. When a unit of work fails,
    what it and the ones after it held goes back to the tally for the next flush."""
    started = time.perf_counter()
    now = aware_or_now(now)
    tally = engine.activity_tally
    dropped, tally.dropped = tally.dropped, 0
    units = [
        (bot_id, entries[first : first + FLUSH_CHATS_PER_UNIT])
        for bot_id, entries in tally.take().items()
        for first in range(0, len(entries), FLUSH_CHATS_PER_UNIT)
    ]
    written = 0
    for index, (bot_id, chunk) in enumerate(units):
        try:
            written += await _write(engine, bot_id, chunk, now)
        except BaseException:
            for left_bot, left in units[index:]:
                tally.give_back(left_bot, left)
            raise
    if written or dropped:
        log_event("activity_flush", started, chats=written, dropped_messages=dropped)
    return written


async def _countable(engine: CognitionEngine, bot_id: str, scope: Scope, pending: PendingActivity) -> dict[int, int]:
    """What of a chat's waiting counts may be kept: nothing while its memory is off, and never the
    messages of an opted-out user."""
    switches = await _switches.chat_switches(engine, bot_id, scope)
    return pending.cells(switches.opted_out) if switches is not None else {}


async def _write(
    engine: CognitionEngine,
    bot_id: str,
    entries: list[tuple[Scope, PendingActivity]],
    now: datetime,
    cycle_of: Scope | None = None,
) -> int:
    """Add the counts of ``entries`` to their chats' rows in one unit of work (the chats' memory
    on, the opted-out users' messages left out); with ``cycle_of``, that chat's penalty is reset
    after its counts are added (a successful cycle at ``now``)."""
    kept: list[tuple[Scope, dict[int, int], PendingActivity]] = []
    for scope, pending in entries:
        cells = await _countable(engine, bot_id, scope, pending)
        if cells:
            kept.append((scope, cells, pending))
    scopes = list(
        {scope.key: scope for scope in [*(scope for scope, _, _ in kept), *([cycle_of] if cycle_of else [])]}.values()
    )
    if not scopes:
        return 0
    policy = planner_policy(engine.config).heat
    zone = planner_zone(engine.config)
    async with engine.unit_of_work() as uow:
        await store.lock_activity(uow.session, bot_id)
        stored = await store.load(uow.session, bot_id, scopes)
        stored = {key: in_zone(stored.get(key, ChatActivity()), zone, now) for key in (scope.key for scope in scopes)}
        for scope, cells, pending in kept:
            assert pending.first_at is not None and pending.last_at is not None
            stored[scope.key] = add_counts(stored[scope.key], cells, pending.first_at, pending.last_at, policy)
        if cycle_of is not None:
            stored[cycle_of.key] = cycle_done(stored[cycle_of.key], now)
        await store.save(uow.session, bot_id, {scope: stored[scope.key] for scope in scopes}, now)
        await uow.commit()
    return len(kept)


async def state(engine: CognitionEngine, bot_id: str, scope: Scope) -> ChatActivity:
    """The chat's activity as of now: its row with what waits in the tally added."""
    async with engine.unit_of_work() as uow:
        activity = (await store.load(uow.session, bot_id, [scope])).get(scope.key, ChatActivity())
    activity = in_zone(activity, planner_zone(engine.config), aware_or_now(None))
    pending = engine.activity_tally.peek(bot_id, scope)
    if pending is None or pending.first_at is None or pending.last_at is None:
        return activity
    cells = await _countable(engine, bot_id, scope, pending)
    return add_counts(activity, cells, pending.first_at, pending.last_at, planner_policy(engine.config).heat)


async def plan(engine: CognitionEngine, bot_id: str, scope: Scope, now: datetime | None = None) -> IdleWindow:
    """The window of the chat's next cycle as of ``now`` (logged with why it was chosen)."""
    started = time.perf_counter()
    now = aware_or_now(now)
    activity = await state(engine, bot_id, scope)
    zone, zone_name = planner_zone(engine.config)
    window = plan_window(activity, now, planner_policy(engine.config), zone)
    log_event(
        "idle_plan", started, scope=scope.key, zone=zone_name, penalty=activity.messages_since_cycle, **window.fields()
    )
    return window


async def record_cycle(engine: CognitionEngine, bot_id: str, scope: Scope, at: datetime | None = None) -> ChatActivity:
    """After a successful cycle of the chat at ``at``: its waiting counts are written, then its
    penalty (messages since the last cycle) starts again from nothing."""
    at = aware_or_now(at)
    entries = engine.activity_tally.take(bot_id, scope).get(bot_id, [])
    try:
        await _write(engine, bot_id, entries, at, cycle_of=scope)
    except BaseException:
        engine.activity_tally.give_back(bot_id, entries)
        raise
    return await state(engine, bot_id, scope)
