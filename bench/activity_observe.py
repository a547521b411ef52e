"""What the idle-window planner costs: a message observed, a flush, a plan.

* ``observe``: ``engine.idle_windows.observe`` (what the bot's event preprocessor does for every
  message of every chat: one dict increment, no SQL), µs per message over 100,000 messages spread
  over 1,000 chats of one bot account; peer: the same messages each written to SQL at once (one
  ``flush`` per message, what a write in the hook would cost every chat), over 300 messages.
* ``flush``: writing the counts of 1,000 chats (five units of work of 200 chats), ms per flush.
* ``plan``: ``engine.idle_windows.plan`` of a chat with four weeks of history (its row read, the
  planner run), ms per plan; and ``plan_window`` alone, the pure planner.

Medians of several rounds. SQLite in a throw-away folder; no network.

    uv run python bench/activity_observe.py [--quick]
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timedelta

from _common import (
    init_engine_only,
    machine_line,
    median,
    ms_since,
    open_engine,
    parse_args,
    quiet_cognition_logs,
    remove_home,
    throwaway_home,
)

from amrita_plugin_cognition.api import UTC

BOT = "bench-bot"
START = datetime(2026, 11, 2, tzinfo=UTC)


async def observe_round(engine, messages: int, chats: int, day: int) -> float:  # type: ignore[no-untyped-def]
    """µs per observed message."""
    from amrita_plugin_cognition.api import Scope

    scopes = [Scope("group", str(500_000 + index)) for index in range(chats)]
    base = START + timedelta(days=day)
    started = time.perf_counter()
    for index in range(messages):
        engine.idle_windows.observe(BOT, scopes[index % chats], "40001", base + timedelta(seconds=index))
    return ms_since(started) * 1000 / messages


async def write_each_round(engine, messages: int, day: int) -> float:  # type: ignore[no-untyped-def]
    """µs per message written to SQL at once (the peer)."""
    from amrita_plugin_cognition.api import Scope

    scope = Scope("group", "600000")
    base = START + timedelta(days=day)
    started = time.perf_counter()
    for index in range(messages):
        engine.idle_windows.observe(BOT, scope, "40001", base + timedelta(seconds=index))
        await engine.idle_windows.flush()
    return ms_since(started) * 1000 / messages


async def main_async(quick: bool) -> None:
    rounds = 3 if quick else 7
    messages = 10_000 if quick else 100_000
    peer_messages = 50 if quick else 300
    chats = 100 if quick else 1000
    home = throwaway_home("activity")
    try:
        init_engine_only(home)
        quiet_cognition_logs()
        from amrita_plugin_cognition.api import Scope, plan_window, planner_policy

        engine = await open_engine(home)
        print(f"# bench/activity_observe.py  {machine_line()}  ({rounds} rounds)")
        observe, flushes, peer = [], [], []
        for round_index in range(rounds):
            observe.append(await observe_round(engine, messages, chats, round_index))
            started = time.perf_counter()
            await engine.idle_windows.flush()
            flushes.append(ms_since(started))
            peer.append(await write_each_round(engine, peer_messages, round_index))
        # a chat with four weeks of office hours, then plans of it
        scope = Scope("group", "700000")
        for minute in range(0, 28 * 24 * 60, 10):
            moment = START + timedelta(minutes=minute)
            if moment.weekday() < 5 and 1 <= moment.hour < 10:  # 09:00-18:00 in Shanghai
                engine.idle_windows.observe(BOT, scope, "40001", moment)
        await engine.idle_windows.flush()
        now = START + timedelta(days=29, hours=3)
        plans: list[float] = []
        for _ in range(rounds):
            times = []
            for index in range(200):
                started = time.perf_counter()
                await engine.idle_windows.plan(BOT, scope, now + timedelta(minutes=7 * index))
                times.append(ms_since(started))
            plans.append(median(times))
        activity = await engine.idle_windows.state(BOT, scope)
        policy = planner_policy(engine.config)
        from zoneinfo import ZoneInfo

        zone = ZoneInfo("Asia/Shanghai")
        pure: list[float] = []
        for _ in range(rounds):
            times = []
            for index in range(500):
                started = time.perf_counter()
                plan_window(activity, now + timedelta(minutes=7 * index), policy, zone)
                times.append(ms_since(started))
            pure.append(median(times))
        print(f"observe: {median(observe):.2f} µs/message ({messages} messages over {chats} chats, no SQL)")
        print(
            f"peer, a SQL write per message: {median(peer):.0f} µs/message "
            f"(ratio peer/observe {median(peer) / median(observe):.0f}x)"
        )
        print(f"flush of {chats} chats: {median(flushes):.1f} ms")
        print(f"plan (row read + planner): {median(plans):.2f} ms; plan_window alone: {median(pure):.2f} ms")
        await engine.close()
    finally:
        remove_home(home)


def main() -> None:
    args = parse_args("cost of observing a message, flushing and planning (idle-window planner)")
    asyncio.run(main_async(args.quick))


if __name__ == "__main__":
    main()
