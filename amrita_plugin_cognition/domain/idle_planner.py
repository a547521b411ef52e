"""When to run a chat's consolidation cycle: the idle-window planner and its back-off fallback
(pure; the chat's heat maps are ``chat_activity``'s).

``plan_window(activity, now, policy, zone)`` is what the cycle scheduler calls; it returns the
next window (start, end) and why, for logs and ``status``:

1. No history (nothing observed, or less than a day of it): a fixed window at
   ``idle_target_hour`` in the planner's zone (the rest of it when it has begun).
2. Otherwise the slots from now over ``idle_horizon_hours`` are read as cold or busy. The penalty
   (messages since the last successful cycle) sets the LENGTH of the quiet run required, not a
   delay: ``quiet_run_base_hours + quiet_run_penalty_hours × log2(1 + messages)``, at most
   ``quiet_run_max_hours``, in whole slots. A run is measured from where it began, so a run that
   began before now counts whole and its rest is used at once (a planner that measures from now
   finds the rest too short and jumps a week ahead to the same run's next occurrence).
3. No run long enough in the horizon: the requirement is halved, up to three times (never under
   one slot); then any cold slot with room for a short window is taken.
4. No cold slot at all (an always-active chat): a short window (``idle_short_window_minutes``)
   in the least busy slot of the next 24 hours, never one a week out.

Minute-level refinement inside the chosen run: the window starts now (inside a run already
begun) or ``idle_buffer_minutes`` after the run begins, and never sooner than that buffer after the
last message seen (a chat talking in a slot that is usually quiet is let finish); it lasts
``idle_window_minutes`` at most and ends at least ``idle_buffer_minutes`` before the run ends (the
next expected message); a run with less room than a short window is passed over.

``use_idle_window_planner = false``: exponential back-off instead (``backoff_window``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .chat_activity import SLOT_HOURS, SLOTS_PER_DAY, ChatActivity, HeatPolicy, SlotRates, Tier, slot_rates
from .clock import UTC, as_utc

#: The requirement is halved at most this many times.
MAX_RELAXATIONS = 3
#: The always-active chat's window starts within this long.
BUSY_CHAT_REACH = timedelta(hours=24)

Reason = Literal["quiet_run", "rest_of_run", "cold_slot", "busy_chat", "no_history", "backoff"]


@dataclass(frozen=True, slots=True)
class PlannerPolicy:
    """The ``consolidation`` settings the planner reads (built by the engine from the config)."""

    use_idle_window_planner: bool = True
    idle_target_hour: int = 3
    idle_window_minutes: int = 60
    idle_short_window_minutes: int = 20
    idle_buffer_minutes: int = 15
    idle_horizon_hours: int = 48
    quiet_run_base_hours: float = 2.0
    quiet_run_penalty_hours: float = 0.5
    quiet_run_max_hours: float = 8.0
    heat: HeatPolicy = field(default_factory=HeatPolicy)
    rethink_base_delay_minutes: float = 30.0
    rethink_penalty_multiplier: float = 1.5
    rethink_max_delay_minutes: float = 1440.0


@dataclass(frozen=True, slots=True)
class IdleWindow:
    """The next window of a chat's cycle and why it was chosen."""

    start: datetime
    end: datetime
    reason: Reason
    #: Which heat map tier decided ("none": no history, or the back-off).
    tier: Tier
    #: How many times the required quiet run was halved.
    relaxations: int = 0
    #: The quiet run required after the relaxations, in minutes (0 when no run was looked for).
    required_minutes: int = 0

    def fields(self) -> dict[str, Any]:
        """The window as log fields (``log_event``)."""
        return {
            "start": self.start.isoformat(timespec="minutes"),
            "end": self.end.isoformat(timespec="minutes"),
            "reason": self.reason,
            "tier": self.tier,
            "relaxations": self.relaxations,
            "required_min": self.required_minutes,
        }


def resolve_zone(name: str, fallback: str) -> tuple[tzinfo, str, bool]:
    """The planner's zone: ``name``, else ``fallback`` (the plugin's ``timezone``), else UTC.
    Returns the zone, its name and whether ``name`` was given but unknown (worth a warning)."""
    for index, candidate in enumerate((name, fallback)):
        if not candidate:
            continue
        try:
            return ZoneInfo(candidate), candidate, index > 0 and bool(name)
        except (ZoneInfoNotFoundError, ValueError):
            continue
    return UTC, "UTC", bool(name)


def ceil_minute(moment: datetime) -> datetime:
    whole = moment.replace(second=0, microsecond=0)
    return whole if whole == moment else whole + timedelta(minutes=1)


def required_slots(messages_since_cycle: int, policy: PlannerPolicy) -> int:
    """The quiet run the penalty asks for, in whole slots."""
    hours = policy.quiet_run_base_hours + policy.quiet_run_penalty_hours * math.log2(1 + max(messages_since_cycle, 0))
    hours = min(hours, policy.quiet_run_max_hours)
    return max(1, math.ceil(hours / SLOT_HOURS - 1e-9))


def backoff_window(activity: ChatActivity, now: datetime, policy: PlannerPolicy) -> IdleWindow:
    """The fallback without the planner: ``rethink_base_delay_minutes × multiplier^messages``
    (messages since the last cycle), at most ``rethink_max_delay_minutes``, then one window."""
    now = ceil_minute(as_utc(now))  # type: ignore[arg-type]
    base = max(policy.rethink_base_delay_minutes, 1e-9)
    exponent = max(activity.messages_since_cycle, 0) * math.log(max(policy.rethink_penalty_multiplier, 1.0))
    if math.log(base) + exponent >= math.log(max(policy.rethink_max_delay_minutes, 1e-9)):
        delay = policy.rethink_max_delay_minutes
    else:
        delay = min(base * math.exp(exponent), policy.rethink_max_delay_minutes)
    start = ceil_minute(now + timedelta(minutes=delay))
    return IdleWindow(start, start + timedelta(minutes=policy.idle_window_minutes), "backoff", "none")


def fixed_window(now: datetime, policy: PlannerPolicy, zone: tzinfo) -> IdleWindow:
    """No history: ``idle_target_hour`` in ``zone`` for ``idle_window_minutes`` (the rest of it
    when it has begun)."""
    now = as_utc(now)  # type: ignore[assignment]
    local = now.astimezone(zone)
    length = timedelta(minutes=policy.idle_window_minutes)
    for days in (-1, 0, 1, 2):
        day = local.date() + timedelta(days=days)
        start = datetime(day.year, day.month, day.day, policy.idle_target_hour, tzinfo=zone).astimezone(UTC)
        end = start + length
        if end - timedelta(minutes=policy.idle_short_window_minutes) >= ceil_minute(now):
            return IdleWindow(max(start, ceil_minute(now)), end, "no_history", "none")
    raise AssertionError("a target hour within three days always exists")  # pragma: no cover


@dataclass(frozen=True, slots=True)
class _Slot:
    start: datetime
    end: datetime
    cell: int


def _timeline(now: datetime, zone: tzinfo, back: int, forward_until: datetime) -> list[_Slot]:
    """Slots from ``back`` slots before the one holding ``now`` until ``forward_until`` (UTC bounds,
    local wall-clock cells)."""
    local = now.astimezone(zone)
    wall = datetime(local.year, local.month, local.day, local.hour - local.hour % SLOT_HOURS, tzinfo=zone)
    slots: list[_Slot] = []
    index = -back
    while True:
        begin = wall + timedelta(hours=SLOT_HOURS * index)
        start = begin.astimezone(UTC)
        if start >= forward_until:
            return slots
        end = (begin + timedelta(hours=SLOT_HOURS)).astimezone(UTC)
        cell = begin.weekday() * SLOTS_PER_DAY + begin.hour // SLOT_HOURS
        if end > start and (not slots or start >= slots[-1].end):
            slots.append(_Slot(start, end, cell))
        index += 1


def _runs(slots: list[_Slot], cold: tuple[bool, ...]) -> list[tuple[int, int]]:
    """The maximal runs of cold slots, as (first index, index after the last)."""
    runs: list[tuple[int, int]] = []
    begin: int | None = None
    for index, slot in enumerate([*slots, None]):
        if slot is not None and cold[slot.cell]:
            begin = index if begin is None else begin
        elif begin is not None:
            runs.append((begin, index))
            begin = None
    return runs


def _inside(
    start: datetime, end: datetime, now: datetime, settled: datetime, policy: PlannerPolicy
) -> tuple[datetime, datetime] | None:
    """Minute-level refinement of a run [start, end): the window inside it, not before ``settled``
    (a buffer after the last message seen), or None when too short."""
    buffer = timedelta(minutes=policy.idle_buffer_minutes)
    begin = max(ceil_minute(now) if start <= now else start + buffer, settled)
    finish = min(begin + timedelta(minutes=policy.idle_window_minutes), end - buffer)
    if finish - begin < timedelta(minutes=policy.idle_short_window_minutes):
        return None
    return begin, finish


def _busy_chat_window(
    slots: list[_Slot], rates: SlotRates, now: datetime, policy: PlannerPolicy
) -> tuple[datetime, datetime]:
    """A short window in the middle of the least busy slot (the earliest of equals; in the slot
    holding now, from now at the earliest), starting within the next 24 hours."""
    length = timedelta(minutes=policy.idle_short_window_minutes)
    best: tuple[float, datetime, datetime] | None = None
    for slot in slots:
        if slot.end <= now or slot.start >= now + BUSY_CHAT_REACH:
            continue
        middle = slot.start + (slot.end - slot.start - length) / 2
        begin = max(ceil_minute(middle), ceil_minute(now))
        if begin + length > slot.end or begin >= now + BUSY_CHAT_REACH:
            continue
        if best is None or rates.rates[slot.cell] < best[0]:
            best = (rates.rates[slot.cell], begin, begin + length)
    if best is None:  # only when a slot is shorter than the short window: start at once
        begin = ceil_minute(now)
        return begin, begin + length
    return best[1], best[2]


def plan_window(activity: ChatActivity, now: datetime, policy: PlannerPolicy, zone: tzinfo) -> IdleWindow:
    """The next window of the chat's cycle, as of ``now`` (see the module's docstring)."""
    now = as_utc(now)  # type: ignore[assignment]
    if not policy.use_idle_window_planner:
        return backoff_window(activity, now, policy)
    rates = slot_rates(activity, now, policy.heat)
    if rates is None:
        return fixed_window(now, policy, zone)
    required = required_slots(activity.messages_since_cycle, policy)
    last = activity.last_observed_at
    settled = ceil_minute(last + timedelta(minutes=policy.idle_buffer_minutes)) if last else now
    horizon = now + timedelta(hours=policy.idle_horizon_hours)
    # a run starting inside the horizon is measured whole: the timeline goes on past its end
    slots = _timeline(now, zone, required, horizon + timedelta(hours=SLOT_HOURS * required))
    runs = _runs(slots, rates.cold)
    for step in range(MAX_RELAXATIONS + 2):
        need = 1 if step > MAX_RELAXATIONS else max(1, math.ceil(required / 2**step))
        for first, after in runs:
            if after - first < need or slots[after - 1].end <= now or slots[first].start >= horizon:
                continue
            window = _inside(slots[first].start, slots[after - 1].end, now, settled, policy)
            if window is None or window[0] >= horizon:
                continue
            reason: Reason = "rest_of_run" if slots[first].start <= now else "quiet_run"
            if step > MAX_RELAXATIONS:
                reason = "cold_slot"
            minutes = need * SLOT_HOURS * 60
            return IdleWindow(window[0], window[1], reason, rates.tier, min(step, MAX_RELAXATIONS), minutes)
    begin, end = _busy_chat_window(slots, rates, now, policy)
    return IdleWindow(begin, end, "busy_chat", rates.tier, MAX_RELAXATIONS, 0)
