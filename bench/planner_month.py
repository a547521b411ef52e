"""The idle-window planner over a simulated month of three chats with different rhythms.

Each chat's messages come from a Poisson process per minute with a rate by weekday and hour of
its rhythm (in Asia/Shanghai): an office-hours group (workdays 09:00-18:00, busiest before lunch
and mid-afternoon, a few messages on weekend afternoons), a night owl's private chat (21:00-03:00
every day, a little at lunch) and an always-active group (every hour, ±30 %). The simulated clock
runs minute by minute through 30 days, the way the bot would run it: messages are counted and
added to the chat's heat maps each minute (the flush); the first message after a cycle plans the next
one (a cycle is only worth running when something new was said), a message close to or inside the
planned window re-plans, a message while the cycle runs interrupts it (it yields; the next one is
planned); the cycle starts at its window's start and, at its end, resets the penalty. Nothing is
slept: ``plan_window`` is given the simulated time.

Printed per chat, medians over several seeds: cycles run; the share of cycles that started in a
slot where the chat is usually busy (its true rate there is over the cold thresholds), over the
whole month and after the first day (the first day has no history: the fixed 03:00 window); the
share of cycles a message interrupted; hours from a plan to its window (median, max); and for the
always-active chat the share of plans whose window starts within 24 h. Targets: no cycle in a busy
slot when the chat has cold ones (office, night owl) after the first day; every plan of the
always-active chat within 24 h.

    uv run python bench/planner_month.py [--quick] [--seeds N]
"""

from __future__ import annotations

import math
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine_line, parse_args

from amrita_plugin_cognition.api import (
    ChatActivity,
    IdleWindow,
    PlannerPolicy,
    activity_cell_of,
    activity_cycle_done,
    add_activity_counts,
    plan_window,
)

ZONE = ZoneInfo("Asia/Shanghai")
START = datetime(2026, 11, 2, tzinfo=ZONE)  # a Monday
POLICY = PlannerPolicy()

Rhythm = Callable[[int, int], float]  # (weekday, hour) -> messages per hour


def office(weekday: int, hour: int) -> float:
    if weekday < 5 and 9 <= hour < 18:
        return 40.0 if hour in (10, 11, 14, 15) else 15.0
    if weekday >= 5 and 14 <= hour < 17:
        return 1.5
    return 0.0


def night_owl(weekday: int, hour: int) -> float:
    if hour >= 21 or hour < 3:
        return 12.0
    return 2.0 if hour == 12 else 0.0


def always_active(weekday: int, hour: int) -> float:
    return 30.0 * (1.0 + 0.3 * math.sin((weekday * 24 + hour) / 5.0))


CHATS: dict[str, Rhythm] = {
    "office group": office,
    "night-owl private chat": night_owl,
    "always-active group": always_active,
}


def busy_slot(rhythm: Rhythm, moment: datetime) -> bool:
    """Whether the chat is usually busy in the two-hour slot of ``moment``: its true rate there is
    over the planner's cold thresholds (share of an even slot's, or the count)."""
    local = moment.astimezone(ZONE)
    slot_start = local.hour - local.hour % 2
    rate = rhythm(local.weekday(), slot_start) + rhythm(local.weekday(), slot_start + 1)  # per slot
    mean = sum(rhythm(day, hour) for day in range(7) for hour in range(24)) / (7 * 12)
    heat = POLICY.heat
    return not (rate <= mean * heat.cold_slot_max_share_percent / 100 and rate <= heat.cold_slot_max_messages)


@dataclass
class Outcome:
    cycles: int = 0
    busy: int = 0
    busy_after_first_day: int = 0
    cycles_after_first_day: int = 0
    interrupted: int = 0
    plans: int = 0
    plans_within_24h: int = 0
    leads_hours: list[float] | None = None


def simulate(rhythm: Rhythm, days: int, seed: int) -> Outcome:
    rng = random.Random(seed)
    outcome = Outcome(leads_hours=[])
    activity = ChatActivity()
    window: IdleWindow | None = None  # planned once there is something new since the last cycle
    running = False
    first_day_end = START + timedelta(days=1)

    def replan(at: datetime) -> None:
        nonlocal window
        window = plan_window(activity, at, POLICY, ZONE)
        outcome.plans += 1
        outcome.plans_within_24h += window.start < at + timedelta(hours=24)
        assert outcome.leads_hours is not None
        outcome.leads_hours.append((window.start - at).total_seconds() / 3600)

    for minute in range(days * 24 * 60):
        now = START + timedelta(minutes=minute)
        local = now.astimezone(ZONE)
        messages = _poisson(rng, rhythm(local.weekday(), local.hour) / 60)
        if messages:
            activity = add_activity_counts(activity, {activity_cell_of(now, ZONE): messages}, now, now, POLICY.heat)
            if running:
                outcome.interrupted += 1
                running = False  # the cycle finishes its step and yields; the next one is planned
                activity = activity_cycle_done(activity, now)
                activity = add_activity_counts(activity, {activity_cell_of(now, ZONE): messages}, now, now, POLICY.heat)
                replan(now)
            elif window is None or window.start <= now + timedelta(minutes=POLICY.idle_buffer_minutes):
                replan(now)  # new work after a cycle, or a message close to (or inside) the planned window
        if window is None:
            continue
        if not running and now >= window.start:
            running = True
            outcome.cycles += 1
            busy = busy_slot(rhythm, now)
            outcome.busy += busy
            if now >= first_day_end:
                outcome.cycles_after_first_day += 1
                outcome.busy_after_first_day += busy
        if running and now >= window.end:
            running = False
            activity = activity_cycle_done(activity, now)
            window = None  # the next cycle is planned at the next message
    return outcome


def _poisson(rng: random.Random, mean: float) -> int:
    if mean <= 0:
        return 0
    limit, count, product = math.exp(-mean), 0, rng.random()
    while product > limit:
        count += 1
        product *= rng.random()
    return count


def main() -> None:
    args = parse_args(
        "the idle-window planner over a simulated month of three chats",
        lambda parser: parser.add_argument("--seeds", type=int, default=0, help="runs per chat (default 5; quick 2)"),
    )
    seeds = args.seeds or (2 if args.quick else 5)
    days = 10 if args.quick else 30
    print(f"# bench/planner_month.py  {machine_line()}  ({days} simulated days, {seeds} seeds per chat)")
    started = time.perf_counter()
    for name, rhythm in CHATS.items():
        outcomes = [simulate(rhythm, days, seed) for seed in range(seeds)]
        share = statistics.median(o.busy / o.cycles for o in outcomes if o.cycles)
        after = statistics.median(
            o.busy_after_first_day / o.cycles_after_first_day for o in outcomes if o.cycles_after_first_day
        )
        interrupted = statistics.median(o.interrupted / o.cycles for o in outcomes if o.cycles)
        within = statistics.median(o.plans_within_24h / max(o.plans, 1) for o in outcomes)
        leads = [lead for o in outcomes for lead in (o.leads_hours or [])]
        print(
            f"{name}: cycles {statistics.median(o.cycles for o in outcomes):.0f}, "
            f"in a busy slot {share:.1%} (after the first day {after:.1%}), interrupted {interrupted:.1%}, "
            f"plan to window median {statistics.median(leads):.1f} h max {max(leads):.1f} h, "
            f"plans within 24 h {within:.1%}"
        )
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
