"""The idle-window planner and the heat maps it reads (``domain/idle_planner.py``,
``domain/chat_activity.py``): property tests on the failures to beat, unit tests on each rule."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from amrita_plugin_cognition.domain.chat_activity import (
    CELLS,
    SLOTS_PER_DAY,
    ChatActivity,
    HeatPolicy,
    add_counts,
    cell_of,
    cycle_done,
    decayed_days,
    rezoned,
    slot_rates,
    zone_shift_hours,
)
from amrita_plugin_cognition.domain.idle_planner import (
    BUSY_CHAT_REACH,
    PlannerPolicy,
    backoff_window,
    ceil_minute,
    plan_window,
    required_slots,
    resolve_zone,
)

UTC = timezone.utc
SHANGHAI = ZoneInfo("Asia/Shanghai")
ZONES = [SHANGHAI, UTC, ZoneInfo("America/New_York"), ZoneInfo("Europe/Berlin")]
POLICY = PlannerPolicy()
START = datetime(2026, 1, 5, tzinfo=UTC)  # a Monday
HISTORY = timedelta(days=120)


def history(fine: list[float], now: datetime, zone_slots_daily: bool = False) -> ChatActivity:
    """A chat observed for ``HISTORY`` until ``now`` whose maps read ``fine`` (a rate per cell)
    as of ``now``: counts scaled by the decayed occurrences, so the rates are exactly ``fine``."""
    heat = POLICY.heat
    first = now - HISTORY
    fine_occurrences = decayed_days(HISTORY, heat.fine_half_life_days) / 7
    coarse_days = decayed_days(HISTORY, heat.coarse_half_life_days)
    coarse = [sum(fine[day * SLOTS_PER_DAY + slot] for day in range(7)) / 7 * coarse_days for slot in range(12)]
    return ChatActivity(
        fine=tuple(rate * fine_occurrences for rate in fine),
        coarse=tuple(coarse),
        decayed_at=now,
        first_observed_at=first,
        last_observed_at=now,
    )


def daily(busy: set[int], rate: float = 10.0) -> list[float]:
    """Busy at the same slots (of the planner zone's day) every day, silent otherwise."""
    return [rate if cell % SLOTS_PER_DAY in busy else 0.0 for cell in range(CELLS)]


moments = st.datetimes(min_value=datetime(2026, 1, 1), max_value=datetime(2027, 12, 31), timezones=st.just(UTC)).map(
    lambda moment: moment.astimezone(UTC)
)
zones = st.sampled_from(ZONES)


def slots_of(start: datetime, end: datetime, zone: ZoneInfo) -> set[int]:
    """The cells a window [start, end) touches."""
    cells = set()
    moment = start
    while moment < end:
        cells.add(cell_of(moment, zone))
        moment += timedelta(minutes=1)
    return cells


# ------------------------------------------------------------------ the failures to beat (properties)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    now=moments,
    zone=zones,
    run_slots=st.integers(min_value=2, max_value=10),
    into=st.integers(min_value=0, max_value=9),
    minutes_in=st.integers(min_value=0, max_value=119),
    messages=st.integers(min_value=0, max_value=50),
    silent=st.integers(min_value=0, max_value=600),
)
def test_inside_a_quiet_run_already_begun_the_rest_of_it_is_used(
    now: datetime, zone: ZoneInfo, run_slots: int, into: int, minutes_in: int, messages: int, silent: int
) -> None:
    """The seed's planner measured the run from now, found the rest too short and jumped a week
    ahead; a run is measured from where it began. The window waits a buffer after the last message
    (``silent`` minutes ago), no more."""
    into = min(into, run_slots - 1)
    local = now.astimezone(zone)
    slot_now = local.hour // 2
    # the run began `into` slots before the slot holding now and lasts `run_slots` slots
    quiet = {(slot_now - into + offset) % SLOTS_PER_DAY for offset in range(run_slots)}
    busy = set(range(SLOTS_PER_DAY)) - quiet
    slot_start = datetime(local.year, local.month, local.day, local.hour - local.hour % 2, tzinfo=zone)
    run_end = (slot_start + timedelta(hours=2 * (run_slots - into))).astimezone(UTC)
    now = slot_start.astimezone(UTC) + timedelta(minutes=minutes_in)
    activity = history(daily(busy), now)
    last = now - timedelta(minutes=silent)
    activity = ChatActivity(**{**_fields(activity), "messages_since_cycle": messages, "last_observed_at": last})
    needed = required_slots(messages, POLICY)
    buffer = timedelta(minutes=POLICY.idle_buffer_minutes)
    start = max(ceil_minute(now), ceil_minute(last + buffer))
    left = (run_end - buffer - start).total_seconds() / 60  # minutes the window could have
    window = plan_window(activity, now, POLICY, zone)
    if run_slots >= needed and left >= POLICY.idle_short_window_minutes and busy:
        event("the rest of a long enough run is left")
        assert window.reason == "rest_of_run", window
        assert window.start == start
        assert window.relaxations == 0
    assert window.start >= now and window.start >= ceil_minute(last + buffer)


@settings(max_examples=200, deadline=None)
@given(
    now=moments,
    zone=zones,
    level=st.floats(min_value=3.0, max_value=500.0),
    jitter=st.lists(st.floats(min_value=0.9, max_value=1.1), min_size=CELLS, max_size=CELLS),
    messages=st.integers(min_value=0, max_value=10_000),
)
def test_an_always_active_chat_gets_a_short_window_within_24_hours(
    now: datetime, zone: ZoneInfo, level: float, jitter: list[float], messages: int
) -> None:
    activity = history([level * factor for factor in jitter], now)
    activity = ChatActivity(**{**_fields(activity), "messages_since_cycle": messages})
    window = plan_window(activity, now, POLICY, zone)
    assert window.reason == "busy_chat"
    assert now <= window.start < now + BUSY_CHAT_REACH
    assert window.end - window.start == timedelta(minutes=POLICY.idle_short_window_minutes)


@settings(max_examples=300, deadline=None)
@given(
    now=moments,
    zone=zones,
    rates=st.lists(st.sampled_from([0.0, 0.5, 1.0, 5.0, 30.0, 200.0]), min_size=CELLS, max_size=CELLS),
    messages=st.integers(min_value=0, max_value=5000),
    days=st.floats(min_value=0.0, max_value=200.0),
)
def test_never_in_the_past_and_never_in_a_busy_slot_when_a_cold_one_is_in_the_horizon(
    now: datetime, zone: ZoneInfo, rates: list[float], messages: int, days: float
) -> None:
    activity = history(rates, now)
    activity = ChatActivity(
        **{**_fields(activity), "messages_since_cycle": messages, "first_observed_at": now - timedelta(days=days)}
    )
    window = plan_window(activity, now, POLICY, zone)
    assert window.start >= now
    assert window.end > window.start
    predicted = slot_rates(activity, now, POLICY.heat)
    if predicted is None:
        assert window.reason == "no_history"
        return
    horizon = now + timedelta(hours=POLICY.idle_horizon_hours)
    moment = ceil_minute(now).replace(minute=0) + timedelta(hours=1)
    cold_ahead = False
    while moment + timedelta(hours=2) <= horizon:  # a whole cold slot after now, inside the horizon
        if all(predicted.cold[cell] for cell in slots_of(moment, moment + timedelta(hours=2), zone)):
            cold_ahead = True
            break
        moment += timedelta(hours=1)
    event(f"a cold slot ahead: {cold_ahead}")
    if cold_ahead:
        assert window.reason != "busy_chat"
        assert all(predicted.cold[cell] for cell in slots_of(window.start, window.end, zone)), window


def _fields(activity: ChatActivity) -> dict[str, object]:
    return {name: getattr(activity, name) for name in ChatActivity.__dataclass_fields__}


# ------------------------------------------------------------------ the rules one by one


def test_counts_decay_with_their_half_lives() -> None:
    heat = HeatPolicy(fine_half_life_days=10, coarse_half_life_days=5)
    at = START + timedelta(hours=3)
    first = add_counts(ChatActivity(), {cell_of(at, UTC): 4}, at, at, heat)
    later = at + timedelta(days=10)
    second = add_counts(first, {cell_of(later, UTC): 1}, later, later, heat)
    assert second.fine[cell_of(at, UTC)] == pytest.approx(2.0)  # one fine half-life
    assert second.coarse[cell_of(at, UTC) % 12] == pytest.approx(1.0 + 1.0)  # two coarse half-lives, plus the new one
    assert second.messages_since_cycle == 5
    assert second.first_observed_at == at and second.last_observed_at == later
    assert cycle_done(second, later).messages_since_cycle == 0


def test_a_constant_rate_reads_as_itself_at_any_age() -> None:
    heat = HeatPolicy(shrinkage_prior_occurrences=0.0)
    activity = ChatActivity()
    moment = START
    for _ in range(24 * 60):  # 60 days, one message at each hour's start
        activity = add_counts(activity, {cell_of(moment, UTC): 1}, moment, moment, heat)
        moment += timedelta(hours=1)
    rates = slot_rates(activity, moment, heat)
    assert rates is not None
    # two hours, one message each: the mean exactly, each cell within a week's decay of it
    assert sum(rates.rates) / CELLS == pytest.approx(2.0, rel=0.03)
    assert all(rate == pytest.approx(2.0, rel=0.15) for rate in rates.rates)
    assert not any(rates.cold)


def test_shrinkage_moves_a_young_chat_toward_the_coarse_map_and_an_old_one_toward_its_own_week() -> None:
    # busy only on Mondays 10:00-12:00; the coarse map spreads it over every day
    cell = cell_of(START + timedelta(hours=10), UTC)
    monday_only = [10.0 if index == cell else 0.0 for index in range(CELLS)]
    tuesday = cell + SLOTS_PER_DAY
    young = slot_rates(_young(monday_only, days=3), START + timedelta(days=3), POLICY.heat)
    old = slot_rates(history(monday_only, START + HISTORY), START + HISTORY, POLICY.heat)
    assert young is not None and old is not None
    assert young.tier == "mid" and old.tier == "fine"
    assert young.rates[tuesday] > 0.2 * young.rates[cell]  # a young chat's Tuesday borrows from Monday
    assert old.rates[tuesday] < 0.1 * old.rates[cell]


def _young(fine_rates: list[float], days: float) -> ChatActivity:
    now = START + timedelta(days=days)
    activity = history(fine_rates, now)
    return ChatActivity(**{**_fields(activity), "first_observed_at": now - timedelta(days=days)})


def test_tiers_follow_the_days_of_history() -> None:
    rates = daily({4, 5})
    now = START + timedelta(days=200)
    aged = {days: _aged(history(rates, now), now - timedelta(days=days)) for days in (0.5, 1.5, 4, 30)}
    tiers = {days: slot_rates(activity, now, POLICY.heat) for days, activity in aged.items()}
    assert tiers[0.5] is None
    assert [tiers[days].tier for days in (1.5, 4, 30)] == ["coarse", "mid", "fine"]  # type: ignore[union-attr]


def _aged(activity: ChatActivity, first: datetime) -> ChatActivity:
    return ChatActivity(**{**_fields(activity), "first_observed_at": first})


def test_cold_needs_both_a_low_share_and_few_messages() -> None:
    now = START + HISTORY
    # night slots at 20 messages against 400 by day: a small share, but twenty messages are not quiet
    rates = [20.0 if cell % 12 < 3 else 400.0 for cell in range(CELLS)]
    predicted = slot_rates(history(rates, now), now, POLICY.heat)
    assert predicted is not None and not any(predicted.cold)
    relaxed = HeatPolicy(cold_slot_max_messages=50.0)
    predicted = slot_rates(history(rates, now), now, relaxed)
    assert predicted is not None and sum(predicted.cold) == 7 * 3


def test_the_penalty_sets_the_length_of_the_run_not_a_delay() -> None:
    assert required_slots(0, POLICY) == 1
    assert required_slots(15, POLICY) == 2  # 2 h + 0.5 h × 4
    assert required_slots(10_000, POLICY) == 4  # the 8 h ceiling
    # quiet 00:00-06:00 every day (three slots): a long penalty needs four, so it is relaxed once
    zone = UTC
    now = START + HISTORY + timedelta(hours=13)
    activity = history(daily(set(range(3, 12))), now)
    calm = plan_window(activity, now, POLICY, zone)
    pressed = plan_window(ChatActivity(**{**_fields(activity), "messages_since_cycle": 10_000}), now, POLICY, zone)
    assert calm.start == pressed.start  # the same night, no later
    assert (calm.relaxations, pressed.relaxations) == (0, 1)
    assert pressed.required_minutes == 240


def test_relaxation_halves_the_requirement_up_to_three_times_then_takes_any_cold_slot() -> None:
    zone = UTC
    now = START + HISTORY + timedelta(hours=13)
    one_quiet_slot = history(daily(set(range(1, 12))), now)  # quiet 00:00-02:00 only
    long_run = PlannerPolicy(quiet_run_base_hours=16.0, quiet_run_max_hours=16.0)  # 8 slots
    window = plan_window(one_quiet_slot, now, long_run, zone)
    assert (window.relaxations, window.required_minutes, window.reason) == (3, 120, "quiet_run")
    longer = PlannerPolicy(quiet_run_base_hours=40.0, quiet_run_max_hours=40.0)  # 20 slots: 10, 5, 3 after halving
    window = plan_window(one_quiet_slot, now, longer, zone)
    assert window.reason == "cold_slot"
    assert window.start.astimezone(zone).hour in (0, 1)


def test_refinement_leaves_a_buffer_before_the_next_expected_message() -> None:
    zone = UTC
    day = START + HISTORY
    activity = history(daily(set(range(2, 12))), day)  # quiet 00:00-04:00
    now = day + timedelta(hours=3, minutes=10)  # 50 minutes of the run left
    window = plan_window(activity, now, POLICY, zone)
    assert window.reason == "rest_of_run"
    assert window.start == now
    assert window.end == day + timedelta(hours=4) - timedelta(minutes=POLICY.idle_buffer_minutes)
    late = day + timedelta(hours=3, minutes=30)  # 30 minutes left: not enough for 20 + a 15 minute buffer
    window = plan_window(activity, late, POLICY, zone)
    assert window.start == day + timedelta(days=1, minutes=POLICY.idle_buffer_minutes)  # the next night, after a buffer
    assert window.end - window.start == timedelta(minutes=POLICY.idle_window_minutes)


def test_no_history_gives_the_fixed_window_at_the_target_hour() -> None:
    now = datetime(2026, 12, 6, 12, 0, tzinfo=SHANGHAI)
    window = plan_window(ChatActivity(), now, POLICY, SHANGHAI)
    assert window.reason == "no_history" and window.tier == "none"
    assert window.start == datetime(2026, 12, 7, 3, 0, tzinfo=SHANGHAI)
    assert window.end - window.start == timedelta(minutes=60)
    during = datetime(2026, 12, 7, 3, 20, 30, tzinfo=SHANGHAI)  # inside today's window: the rest of it
    window = plan_window(ChatActivity(), during, POLICY, SHANGHAI)
    assert window.start == datetime(2026, 12, 7, 3, 21, tzinfo=SHANGHAI)
    assert window.end == datetime(2026, 12, 7, 4, 0, tzinfo=SHANGHAI)
    # a chat seen for an hour has no history yet either
    seen = add_counts(ChatActivity(), {cell_of(now, SHANGHAI): 3}, now - timedelta(hours=1), now, POLICY.heat)
    assert plan_window(seen, now, POLICY, SHANGHAI).reason == "no_history"


def test_an_unknown_zone_falls_back_to_the_plugin_zone_then_utc() -> None:
    zone, name, unknown = resolve_zone("Mars/Olympus_Mons", "Asia/Shanghai")
    assert (name, unknown) == ("Asia/Shanghai", True) and zone == SHANGHAI
    zone, name, unknown = resolve_zone("Mars/Olympus_Mons", "Nowhere/Else")
    assert (name, unknown, zone) == ("UTC", True, UTC)
    assert resolve_zone("", "Asia/Shanghai")[1:] == ("Asia/Shanghai", False)  # empty: the plugin zone, no warning
    assert resolve_zone("Europe/Berlin", "Asia/Shanghai")[1:] == ("Europe/Berlin", False)


def test_without_the_planner_the_backoff_grows_with_the_penalty_up_to_its_cap() -> None:
    policy = PlannerPolicy(use_idle_window_planner=False)
    now = START
    delays = []
    for messages in (0, 1, 2, 5, 100_000):
        activity = ChatActivity(messages_since_cycle=messages)
        window = plan_window(activity, now, policy, UTC)
        assert window.reason == "backoff" and window == backoff_window(activity, now, policy)
        delays.append((window.start - now).total_seconds() / 60)
        assert window.end - window.start == timedelta(minutes=policy.idle_window_minutes)
    assert delays[0] == 30
    assert delays[1] == 45 and math.isclose(delays[2], 67.5, abs_tol=1)
    assert delays == sorted(delays)
    assert delays[-1] == policy.rethink_max_delay_minutes


def test_a_chat_silent_for_months_is_quiet_at_every_hour() -> None:
    """Busy at every hour once: no slot has a small share, but none expects a message now."""
    now = START + HISTORY
    long_ago = history([20.0] * CELLS, now - timedelta(days=300))  # about 0.01 a slot now
    predicted = slot_rates(long_ago, now, POLICY.heat)
    assert predicted is not None and all(predicted.cold)
    window = plan_window(long_ago, now, POLICY, UTC)
    assert window.reason == "rest_of_run" and window.start == now


def test_a_run_that_starts_inside_the_horizon_is_measured_whole() -> None:
    zone = UTC
    now = START + HISTORY + timedelta(hours=9)  # quiet 00:00-08:00 every day
    activity = ChatActivity(
        **{**_fields(history(daily({4, 5, 6, 7, 8, 9, 10, 11}), now)), "messages_since_cycle": 10_000}
    )
    policy = PlannerPolicy(idle_horizon_hours=16)  # the four-slot run starts at hour 15 of it
    window = plan_window(activity, now, policy, zone)
    assert (window.reason, window.relaxations) == ("quiet_run", 0)
    assert window.start == START + HISTORY + timedelta(days=1, minutes=policy.idle_buffer_minutes)


@given(
    moments=st.lists(
        st.datetimes(min_value=datetime(2026, 1, 1), max_value=datetime(2026, 12, 31), timezones=st.just(UTC)),
        min_size=1,
        max_size=30,
    ),
    old=st.sampled_from(ZONES),
    new=st.sampled_from(ZONES),
)
@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
def test_maps_counted_in_one_zone_read_in_another_as_if_counted_there(
    moments: list[datetime], old: ZoneInfo | timezone, new: ZoneInfo | timezone
) -> None:
    """Whole-hour differences that are a whole number of slots land exactly; the counts always add up."""
    at = moments[0]
    counted = ChatActivity()
    there = ChatActivity()
    for moment in moments:
        counted = add_counts(counted, {cell_of(moment, old): 1}, moment, moment, HeatPolicy(fine_half_life_days=1e9))
        there = add_counts(there, {cell_of(moment, new): 1}, moment, moment, HeatPolicy(fine_half_life_days=1e9))
    hours = zone_shift_hours(old, new, at)
    moved = rezoned(counted, "new", hours)
    assert moved.zone == "new"
    assert sum(moved.fine) == pytest.approx(sum(counted.fine))
    assert sum(moved.coarse) == pytest.approx(sum(counted.coarse))
    same_offsets = all(zone_shift_hours(old, new, moment) == hours for moment in moments)
    if same_offsets and hours % 2 == 0:
        assert moved.fine == pytest.approx(there.fine)


def test_an_hour_apart_splits_each_count_between_two_slots() -> None:
    activity = ChatActivity(fine=(4.0,) + (0.0,) * (CELLS - 1), coarse=(4.0,) + (0.0,) * (SLOTS_PER_DAY - 1))
    later = rezoned(activity, "later", 1.0)
    assert later.fine[:2] == (2.0, 2.0) and later.coarse[:2] == (2.0, 2.0)
    earlier = rezoned(activity, "earlier", -8.0)  # Shanghai's maps read in UTC: Monday 00-02 is Sunday 16-18
    assert earlier.fine[CELLS - 4] == 4.0 and earlier.coarse[SLOTS_PER_DAY - 4] == 4.0
    assert rezoned(activity, "same", 0.0) == ChatActivity(fine=activity.fine, coarse=activity.coarse, zone="same")
