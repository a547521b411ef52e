"""When a chat is usually busy: its decayed heat maps and what they predict for a two-hour slot
(pure).

Every message of a chat adds one to two maps, in the chat's local time (the planner's zone):

* the fine map, 7 × 12 cells (weekday × two-hour slot of the day), which learns a weekly rhythm
  (an office group quiet at weekends) and needs weeks to do it: it decays slowly
  (``fine_half_life_days``, 28 by default);
* the coarse map, 12 cells (slot of the day, every weekday together), which sees each of its cells
  seven times as often and so can follow a changed daily rhythm sooner: it decays faster
  (``coarse_half_life_days``, 7).

Counts are kept as of ``decayed_at`` and decayed lazily (to the next observation, or to the moment
of a plan). What a cell predicts is a rate, the messages expected in one occurrence of that slot:
the cell's decayed count over the decayed number of its occurrences seen, where the days of
history come from ``first_observed_at`` decayed with the same half-life (so a constant rate reads
as itself at any age). Three tiers, each shrunk toward the next coarser one by its own number of
occurrences seen (``weight = occurrences / (occurrences + shrinkage_prior_occurrences)``):

* coarse: the slot of the day (one occurrence a day);
* mid: workdays or weekend × slot, summed from the fine map (five or two occurrences a week),
  shrunk toward coarse;
* fine: weekday × slot (one occurrence a week), shrunk toward mid.

A cell is cold when its rate is at most ``cold_slot_max_share_percent`` of the mean cell's rate
(its share of the week's messages is that far under an even share) and at most
``cold_slot_max_messages`` (so in a chat of hundreds of messages a night, the night's twenty are
not "cold"); a cell expecting at most ``QUIET_RATE`` (0.1) messages is cold whatever its share (a
chat once busy at every hour and silent for months is quiet at every hour). The tests compare the
same rate, so the cold cells are always the least busy ones.

The maps say which zone they were counted in (``zone``). Read in another zone (``idle_timezone``
changed), each count moves to the cell its moments fall in there (``rezoned``: a shift of part of
a slot, one hour, splits a count between two cells), so a changed zone keeps the history.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, tzinfo
from typing import Literal

from .clock import UTC, as_utc

WEEKDAYS = 7
SLOTS_PER_DAY = 12
SLOT_HOURS = 2
CELLS = WEEKDAYS * SLOTS_PER_DAY
#: Monday..Friday are workdays (the mid tier's two kinds of day).
WORKDAYS = frozenset(range(5))
#: A slot expecting at most this many messages is cold whatever its share (a chat as busy at every
#: hour as at any other, months ago, is quiet at every hour now).
QUIET_RATE = 0.1
#: Less than this many days since the first message is no history (the fixed window applies).
MIN_HISTORY_DAYS = 1.0

Tier = Literal["none", "coarse", "mid", "fine"]


@dataclass(frozen=True, slots=True)
class ChatActivity:
    """What the planner knows of one chat (the SQL row ``cognition_chat_activity``, as values)."""

    #: Decayed counts of the fine map, index ``weekday * 12 + slot`` (Monday = 0, slot = hour // 2).
    fine: tuple[float, ...] = (0.0,) * CELLS
    #: Decayed counts of the coarse map, index ``slot``.
    coarse: tuple[float, ...] = (0.0,) * SLOTS_PER_DAY
    #: The moment both maps' counts are valued at (None: nothing observed yet).
    decayed_at: datetime | None = None
    first_observed_at: datetime | None = None
    last_observed_at: datetime | None = None
    #: The penalty: messages observed since the last successful consolidation cycle.
    messages_since_cycle: int = 0
    last_cycle_at: datetime | None = None
    #: The zone the maps were counted in ("": not recorded, read as the zone in force).
    zone: str = ""


@dataclass(frozen=True, slots=True)
class HeatPolicy:
    fine_half_life_days: float = 28.0
    coarse_half_life_days: float = 7.0
    shrinkage_prior_occurrences: float = 2.0
    cold_slot_max_share_percent: float = 50.0
    cold_slot_max_messages: float = 2.0


@dataclass(frozen=True, slots=True)
class SlotRates:
    """What the maps predict as of one moment: messages expected in one occurrence of each cell."""

    #: Blended rate per cell (index ``weekday * 12 + slot``).
    rates: tuple[float, ...]
    #: Whether each cell is cold.
    cold: tuple[bool, ...]
    #: The finest tier whose own weight is at least one half.
    tier: Tier
    #: Decayed days of history of the fine map.
    history_days: float


def cell_of(moment: datetime, zone: tzinfo) -> int:
    """The fine map's cell of ``moment`` in ``zone``."""
    local = as_utc(moment).astimezone(zone)  # type: ignore[union-attr]
    return local.weekday() * SLOTS_PER_DAY + local.hour // SLOT_HOURS


def zone_shift_hours(old: tzinfo, new: tzinfo, at: datetime) -> float:
    """How many hours the clock of ``new`` is ahead of the clock of ``old`` at ``at``."""
    moment = as_utc(at)
    ahead = moment.astimezone(new).utcoffset() or timedelta()  # type: ignore[union-attr]
    behind = moment.astimezone(old).utcoffset() or timedelta()  # type: ignore[union-attr]
    return (ahead - behind).total_seconds() / 3600


def _rotated(values: tuple[float, ...], cells: float) -> tuple[float, ...]:
    """``values`` of a cyclic map moved ``cells`` cells later; a fraction of a cell splits each
    count between the two cells it falls across (the counts add up as before)."""
    whole = math.floor(cells)
    part = cells - whole
    moved = [0.0] * len(values)
    for index, value in enumerate(values):
        if value:
            moved[(index + whole) % len(values)] += value * (1 - part)
            moved[(index + whole + 1) % len(values)] += value * part
    return tuple(moved)


def rezoned(activity: ChatActivity, zone_name: str, hours: float) -> ChatActivity:
    """``activity`` read in the zone ``zone_name``, whose clock is ``hours`` ahead of the one its
    maps were counted in: every count moved to the cell of the same moments there."""
    if not hours:
        return replace(activity, zone=zone_name)
    cells = hours / SLOT_HOURS
    return replace(
        activity, fine=_rotated(activity.fine, cells), coarse=_rotated(activity.coarse, cells), zone=zone_name
    )


def decay_factor(elapsed: timedelta, half_life_days: float) -> float:
    days = max(elapsed.total_seconds(), 0.0) / 86400
    return 0.5 ** (days / half_life_days)


def add_counts(
    activity: ChatActivity,
    cells: Mapping[int, int],
    first_at: datetime,
    last_at: datetime,
    policy: HeatPolicy,
) -> ChatActivity:
    """``activity`` with ``cells`` (cell → messages, observed between ``first_at`` and ``last_at``)
    added: the maps decayed to ``last_at`` first, every message counted once in each map and once
    toward the penalty. Counts observed out of order (before ``decayed_at``) are added as they are."""
    count = sum(cells.values())
    if count <= 0:
        return activity
    first_at, last_at = first_at.astimezone(UTC), last_at.astimezone(UTC)
    reference = activity.decayed_at or last_at
    moved_to = max(reference, last_at)
    fine_keep = decay_factor(moved_to - reference, policy.fine_half_life_days)
    coarse_keep = decay_factor(moved_to - reference, policy.coarse_half_life_days)
    fine = [value * fine_keep for value in activity.fine]
    coarse = [value * coarse_keep for value in activity.coarse]
    for cell, added in cells.items():
        fine[cell] += added
        coarse[cell % SLOTS_PER_DAY] += added
    first = activity.first_observed_at
    last = activity.last_observed_at
    return replace(
        activity,
        fine=tuple(fine),
        coarse=tuple(coarse),
        decayed_at=moved_to,
        first_observed_at=first_at if first is None else min(first, first_at),
        last_observed_at=last_at if last is None else max(last, last_at),
        messages_since_cycle=activity.messages_since_cycle + count,
    )


def cycle_done(activity: ChatActivity, at: datetime) -> ChatActivity:
    """After a successful consolidation cycle: the penalty starts again from nothing."""
    return replace(activity, messages_since_cycle=0, last_cycle_at=as_utc(at))


def decayed_days(span: timedelta, half_life_days: float) -> float:
    """Days of history ``span`` long, each weighted as its counts are now: the integral of the
    decay over the span (a constant rate of one message a day has this decayed count)."""
    days = max(span.total_seconds(), 0.0) / 86400
    rate = math.log(2) / half_life_days
    return (1 - math.exp(-rate * days)) / rate


def _weight(occurrences: float, prior: float) -> float:
    return occurrences / (occurrences + prior) if occurrences + prior > 0 else 0.0


def slot_rates(activity: ChatActivity, now: datetime, policy: HeatPolicy) -> SlotRates | None:
    """The maps' prediction as of ``now``; None when there is no history (nothing observed, or
    less than ``MIN_HISTORY_DAYS`` since the first message)."""
    now = as_utc(now)  # type: ignore[assignment]
    if activity.decayed_at is None or activity.first_observed_at is None:
        return None
    span = now - activity.first_observed_at
    if span < timedelta(days=MIN_HISTORY_DAYS):
        return None
    fine_days = decayed_days(span, policy.fine_half_life_days)
    coarse_days = decayed_days(span, policy.coarse_half_life_days)
    fine_keep = decay_factor(now - activity.decayed_at, policy.fine_half_life_days)
    coarse_keep = decay_factor(now - activity.decayed_at, policy.coarse_half_life_days)
    fine = [value * fine_keep for value in activity.fine]
    if sum(fine) <= 0:
        return None
    prior = policy.shrinkage_prior_occurrences
    coarse_rate = [value * coarse_keep / coarse_days for value in activity.coarse]
    fine_occurrences = fine_days / WEEKDAYS
    fine_weight = _weight(fine_occurrences, prior)
    kinds = {True: sorted(WORKDAYS), False: [day for day in range(WEEKDAYS) if day not in WORKDAYS]}
    mid_weights = {kind: _weight(fine_occurrences * len(days), prior) for kind, days in kinds.items()}
    rates: list[float] = []
    for day in range(WEEKDAYS):
        days = kinds[day in WORKDAYS]
        mid_weight = mid_weights[day in WORKDAYS]
        for slot in range(SLOTS_PER_DAY):
            mid_rate = sum(fine[other * SLOTS_PER_DAY + slot] for other in days) / (fine_occurrences * len(days))
            mid = mid_weight * mid_rate + (1 - mid_weight) * coarse_rate[slot]
            own = fine[day * SLOTS_PER_DAY + slot] / fine_occurrences
            rates.append(fine_weight * own + (1 - fine_weight) * mid)
    mean = sum(rates) / CELLS
    ceiling = max(min(mean * policy.cold_slot_max_share_percent / 100, policy.cold_slot_max_messages), QUIET_RATE)
    cold = tuple(rate <= ceiling for rate in rates)
    tier: Tier = "fine" if fine_weight >= 0.5 else "mid" if mid_weights[True] >= 0.5 else "coarse"
    return SlotRates(tuple(rates), cold, tier, fine_days)
