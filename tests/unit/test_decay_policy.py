"""The decay sweep's policy (``domain/decay.py``): tier lifetimes, demote then retire, what never
expires, purge and when the sweep is due. Pure: examples and properties (hypothesis)."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from amrita_plugin_cognition.config import ConsolidationSettings
from amrita_plugin_cognition.domain.decay import (
    LOWER_TIER,
    Candidate,
    Lifetimes,
    Verdict,
    clock_start,
    plan_batch,
    purge_date,
    purge_due,
    sweep_due,
    verdict,
)
from amrita_plugin_cognition.domain.records import Importance
from amrita_plugin_cognition.domain.scoring import HALF_LIFE_DAYS

UTC = timezone.utc
T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
DEFAULT = Lifetimes(7, 90)
DAY = timedelta(days=1)

tiers = st.sampled_from(list(Importance))
days = st.floats(min_value=0, max_value=3650, allow_nan=False)
lifetimes = st.tuples(
    st.floats(min_value=0.01, max_value=1000, allow_nan=False), st.floats(min_value=0.01, max_value=1000)
).map(lambda pair: Lifetimes(min(pair), max(pair)))


def test_default_lifetimes_are_a_week_a_season_and_their_geometric_mean() -> None:
    assert DEFAULT.days(Importance.LOW) == 7 and DEFAULT.days(Importance.HIGH) == 90
    assert DEFAULT.days(Importance.MEDIUM) == pytest.approx(25.0998, abs=1e-4)
    settings = ConsolidationSettings()
    assert (settings.short_term_days, settings.long_term_days, settings.expired_keep_days) == (7, 90, 30)
    with pytest.raises(ValueError, match="short_term_days"):
        ConsolidationSettings(short_term_days=100, long_term_days=90)
    with pytest.raises(ValueError):
        Lifetimes(0, 90)


def test_the_decay_lifetimes_are_not_the_ranking_half_lives() -> None:
    # two concepts, two names: the ranking's recency half-lives stay as they were
    assert dict(HALF_LIFE_DAYS) == {Importance.LOW: 30.0, Importance.MEDIUM: 180.0, Importance.HIGH: 720.0}


@pytest.mark.parametrize(
    ("tier", "age_days", "expected"),
    [
        (Importance.LOW, 6.9, Verdict.KEEP),
        (Importance.LOW, 7.0, Verdict.RETIRE),
        (Importance.MEDIUM, 25.0, Verdict.KEEP),
        (Importance.MEDIUM, 25.2, Verdict.DEMOTE),
        (Importance.HIGH, 89.9, Verdict.KEEP),
        (Importance.HIGH, 400.0, Verdict.DEMOTE),  # one tier at a time, however old
    ],
)
def test_verdicts_at_the_default_lifetimes(tier: Importance, age_days: float, expected: Verdict) -> None:
    assert verdict(tier, T0, None, False, T0 + timedelta(days=age_days), DEFAULT) is expected


def test_a_plan_lives_until_it_happens_then_its_lifetime() -> None:
    trip = T0 + 60 * DAY
    assert clock_start(T0, trip) == trip and clock_start(T0, T0 - 300 * DAY) == T0
    assert verdict(Importance.LOW, T0, trip, False, trip + 6 * DAY, DEFAULT) is Verdict.KEEP
    assert verdict(Importance.LOW, T0, trip, False, trip + 7 * DAY, DEFAULT) is Verdict.RETIRE
    # a fact about the past counts from when it was written (an import of old events is not aged)
    assert verdict(Importance.LOW, T0, T0 - 300 * DAY, False, T0 + 6 * DAY, DEFAULT) is Verdict.KEEP


@given(tiers, days, days, lifetimes)
def test_kept_memories_never_decay(tier: Importance, age: float, ahead: float, lives: Lifetimes) -> None:
    happened = T0 + timedelta(days=ahead)
    assert verdict(tier, T0, happened, True, T0 + timedelta(days=age), lives) is Verdict.KEEP


@given(tiers, days, lifetimes)
def test_only_low_retires_and_nothing_decays_before_its_lifetime(
    tier: Importance, age: float, lives: Lifetimes
) -> None:
    judged = verdict(tier, T0, None, False, T0 + timedelta(days=age), lives)
    if age < lives.days(tier) * 0.999:
        assert judged is Verdict.KEEP
    if judged is Verdict.RETIRE:
        assert tier is Importance.LOW
    if judged is Verdict.DEMOTE:
        assert tier in LOWER_TIER


@given(st.floats(min_value=0, max_value=10_000, allow_nan=False), st.floats(min_value=0, max_value=10_000), lifetimes)
def test_nothing_about_the_future_decays_before_it_happens(ahead: float, before: float, lives: Lifetimes) -> None:
    happens = T0 + timedelta(days=ahead)
    now = happens - timedelta(days=min(before, ahead))
    for tier in Importance:
        assert verdict(tier, T0, happens, False, now, lives) is Verdict.KEEP


@given(lifetimes)
def test_medium_lives_between_low_and_high_on_a_log_scale(lives: Lifetimes) -> None:
    low, medium, high = (lives.days(tier) for tier in (Importance.LOW, Importance.MEDIUM, Importance.HIGH))
    assert low <= medium * (1 + 1e-9) and medium <= high * (1 + 1e-9)
    assert math.log(medium) == pytest.approx((math.log(low) + math.log(high)) / 2)


@given(
    st.lists(
        st.tuples(st.booleans(), tiers, days, st.booleans(), st.floats(min_value=0, max_value=100)),
        max_size=40,
    ),
    st.floats(min_value=0, max_value=60),
)
def test_a_batch_plan_sorts_every_memory_once_by_the_verdict(rows: list, keep_days: float) -> None:  # type: ignore[type-arg]
    now = T0 + 200 * DAY
    candidates = [
        Candidate(
            id=number,
            expired=expired,
            importance=tier,
            updated_at=now - timedelta(days=age),
            happened_at=None,
            keep=keep,
            expired_at=now - timedelta(days=waited) if expired else None,
        )
        for number, (expired, tier, age, keep, waited) in enumerate(rows)
    ]
    plan = plan_batch(candidates, now, DEFAULT, keep_days)
    planned = [*plan.retire, *plan.purge, *(item for ids in plan.demote.values() for item in ids)]
    assert len(planned) == len(set(planned))
    by_id = {item.id: item for item in candidates}
    for item in plan.purge:
        assert by_id[item].expired and purge_due(by_id[item].expired_at, now, keep_days)  # type: ignore[arg-type]
    for item in candidates:
        if item.expired:
            assert item.id not in plan.retire and all(item.id not in ids for ids in plan.demote.values())
            continue
        expected = verdict(item.importance, item.updated_at, None, item.keep, now, DEFAULT)
        assert (item.id in plan.retire) == (expected is Verdict.RETIRE)
        assert (item.id in plan.demote.get(item.importance, [])) == (expected is Verdict.DEMOTE)


def test_purge_after_the_keep_days_and_the_date_shown() -> None:
    assert purge_date(T0, 30) == T0 + 30 * DAY
    assert not purge_due(T0, T0 + 29 * DAY, 30) and purge_due(T0, T0 + 30 * DAY, 30)


def test_the_sweep_is_due_after_the_interval_from_the_last_pass_and_at_once_when_unfinished() -> None:
    assert sweep_due(None, False, T0, 24)
    assert not sweep_due(T0, False, T0 + 23 * timedelta(hours=1), 24)
    assert sweep_due(T0, False, T0 + 24 * timedelta(hours=1), 24)
    assert sweep_due(T0, True, T0 + timedelta(minutes=5), 24)  # a pass stopped midway goes on
    assert not sweep_due(None, True, T0, 0)  # 0: only by the command


def test_who_keeps_and_who_lists_or_restores_expired_memories() -> None:
    from amrita_plugin_cognition.domain.permissions import Operator, check_keep_memory, check_manage_expired
    from amrita_plugin_cognition.domain.records import ChatContext, MemoryRecord, MemoryStatus, Scope
    from amrita_plugin_cognition.errors import PermissionDenied

    group = Scope("group", "20001")
    member = ChatContext("9", group, "10002")
    admin = ChatContext("9", group, "10003", group_role="admin")
    speaker = ChatContext("9", group, "10001")
    record = MemoryRecord(
        1, "9", group, "小明周五打球。", "10001", "小明", "10001", "小明", "fact", [], Importance.LOW,
        "user_stated", {}, None, T0, T0, MemoryStatus.EXPIRED, None, T0, "h",
    )  # fmt: skip
    check_keep_memory(speaker, record)
    check_keep_memory(admin, record)
    with pytest.raises(PermissionDenied):
        check_keep_memory(member, record)
    check_manage_expired(admin, "9", group)
    check_manage_expired(Operator(), "9", group)
    check_manage_expired(ChatContext("9", Scope("private", "10001"), "10001"), "9", Scope("private", "10001"))
    for refused, scope in ((member, group), (speaker, group), (admin, Scope("group", "20002"))):
        with pytest.raises(PermissionDenied):
            check_manage_expired(refused, "9", scope)
    with pytest.raises(PermissionDenied):  # another bot account
        check_manage_expired(ChatContext("8", group, "10003", group_role="admin"), "9", group)
