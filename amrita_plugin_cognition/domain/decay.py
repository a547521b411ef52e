"""The decay sweep's policy: how long a memory lives in its tier, what the sweep does to it. Pure.

A memory's **tier** is its importance (``records.Importance``). Each tier has a lifetime: low
``consolidation.short_term_days`` (7), high ``consolidation.long_term_days`` (90), medium their
geometric mean (about 25 days at the defaults: the middle of the two on a log scale, as medium is
the middle tier between a week and a season).

**The clock** of a memory starts at its ``updated_at``: when it was written, said again (a write
that finds it as a duplicate renews it: the historian's path, off the per-turn hook), restored,
or last demoted (a demotion restarts it). A memory about the future (a plan, an appointment: a
``happened_at`` after ``updated_at``) starts its clock when it happens, so a plan never expires
before its day. The memory's use in recall does not reset the clock: recall reads up to
``3·top_k`` candidates per turn and would need a write per turn on the hot path (Amrita runs the
precompletion hooks one after another) or a per-process buffer that the CLI's sweep never sees;
instead a user keeps what matters with ``/memory keep`` (the ``keep`` marker), and what was
retired stays restorable for ``expired_keep_days``.

**The verdict** of one sweep on one active memory: past its tier's lifetime, a medium or high
memory is **demoted** one tier (its clock restarts); a low one is **retired** (status
``expired``). One tier per sweep, never several at once: a bank that has just turned decay on
loses nothing at its first sweep, and every memory passes through low, where it is shown for a
week before it goes. A memory marked ``keep`` never decays. (Pins are not memories at all:
``cognition_pin`` rows are never swept.) An expired memory is **purged** (deleted for good, with
the versions it replaced) ``expired_keep_days`` after it expired.

``scoring.HALF_LIFE_DAYS`` is a different thing: a ranking weight that fades old memories'
scores smoothly; it never removes anything and is not configured here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from .records import Importance, StrEnum


class Verdict(StrEnum):
    KEEP = "keep"
    DEMOTE = "demote"
    RETIRE = "retire"


#: The tier below each tier (low has none: it retires).
LOWER_TIER: dict[Importance, Importance] = {Importance.HIGH: Importance.MEDIUM, Importance.MEDIUM: Importance.LOW}


@dataclass(frozen=True, slots=True)
class Lifetimes:
    """Days a memory lives in each tier (``consolidation.short_term_days`` and ``long_term_days``)."""

    short_term_days: float
    long_term_days: float

    def __post_init__(self) -> None:
        if not 0 < self.short_term_days <= self.long_term_days:
            raise ValueError("need 0 < short_term_days <= long_term_days")

    def days(self, importance: Importance) -> float:
        if importance is Importance.LOW:
            return self.short_term_days
        if importance is Importance.HIGH:
            return self.long_term_days
        return math.sqrt(self.short_term_days * self.long_term_days)


def clock_start(updated_at: datetime, happened_at: datetime | None) -> datetime:
    """When a memory's lifetime starts counting: its last write, restore or demotion, or when it
    happens if that is later (a plan lives until its day, then its lifetime)."""
    if happened_at is not None and happened_at > updated_at:
        return happened_at
    return updated_at


def verdict(
    importance: Importance,
    updated_at: datetime,
    happened_at: datetime | None,
    keep: bool,
    now: datetime,
    lifetimes: Lifetimes,
) -> Verdict:
    """What one sweep does to an active memory."""
    if keep:
        return Verdict.KEEP
    age = now - clock_start(updated_at, happened_at)
    if age < timedelta(days=lifetimes.days(importance)):
        return Verdict.KEEP
    return Verdict.DEMOTE if importance in LOWER_TIER else Verdict.RETIRE


def purge_cutoff(now: datetime, expired_keep_days: float) -> datetime:
    """Memories that expired at or before this are purged now."""
    return now - timedelta(days=expired_keep_days)


def purge_due(expired_at: datetime, now: datetime, expired_keep_days: float) -> bool:
    """Whether an expired memory has waited out its restorable time."""
    return expired_at <= purge_cutoff(now, expired_keep_days)


def purge_date(expired_at: datetime, expired_keep_days: float) -> datetime:
    """The day an expired memory will be purged (shown next to it)."""
    return expired_at + timedelta(days=expired_keep_days)


@dataclass(frozen=True, slots=True)
class Candidate:
    """What the sweep reads of one memory (active or expired)."""

    id: int
    expired: bool
    importance: Importance
    updated_at: datetime
    happened_at: datetime | None
    keep: bool
    #: When it expired (``invalid_at``), for an expired memory.
    expired_at: datetime | None = None


@dataclass(slots=True)
class BatchPlan:
    """What one batch of the sweep changes: ids to demote, by their current tier; to retire; to purge."""

    demote: dict[Importance, list[int]]
    retire: list[int]
    purge: list[int]


def plan_batch(candidates: list[Candidate], now: datetime, lifetimes: Lifetimes, expired_keep_days: float) -> BatchPlan:
    plan = BatchPlan(demote={}, retire=[], purge=[])
    for item in candidates:
        if item.expired:
            if item.expired_at is not None and purge_due(item.expired_at, now, expired_keep_days):
                plan.purge.append(item.id)
            continue
        judged = verdict(item.importance, item.updated_at, item.happened_at, item.keep, now, lifetimes)
        if judged is Verdict.DEMOTE:
            plan.demote.setdefault(item.importance, []).append(item.id)
        elif judged is Verdict.RETIRE:
            plan.retire.append(item.id)
    return plan


def sweep_due(last_finished_at: datetime | None, pass_unfinished: bool, now: datetime, interval_hours: float) -> bool:
    """Whether the scheduled sweep should run now: never when ``interval_hours`` is 0; at once when
    a pass stopped midway (a restart) or none ever finished; else ``interval_hours`` after the last
    pass finished. Read from SQL, so a bot restarted more often than the interval still sweeps."""
    if interval_hours <= 0:
        return False
    if pass_unfinished or last_finished_at is None:
        return True
    return now - last_finished_at >= timedelta(hours=interval_hours)
