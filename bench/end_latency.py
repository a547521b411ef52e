"""Latency of the ``end`` tool's work (``engine.turns.end``): the note and the historian job in
one local transaction. Targets: p95 <= 5 ms, and p95 within 1.5x of the physical floor measured in
the same run on the same database: one bare insert-and-commit of the same note row (the ORM
session and the database the engine uses, nothing else).

Each round times ``calls`` end calls (memo + two observations + one input message, in one chat
whose recent turns are already cached, as in a live chat: the job's transaction checks that those
turns are still kept), then ``calls`` bare commits,
alternating in blocks so both see the same machine load. The figures are medians over rounds.

    uv run python bench/end_latency.py [--quick] [--backend sqlite|postgres]

Runs engine-only NoneBot on a throw-away folder and embedded Chroma; SQLite in that folder, or
(``--backend postgres``) a database of the run's own on the PostgreSQL of ``COGNITION_TEST_PG``
(127.0.0.1:5432 by default), dropped after.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from datetime import datetime, timedelta

from _common import (
    PG_BASE,
    init_engine_only,
    machine_line,
    median,
    ms_since,
    open_engine,
    p50_p95,
    parse_args,
    pg_admin,
    quiet_cognition_logs,
    remove_home,
    throwaway_home,
    verdict,
)

from amrita_plugin_cognition.api import UTC

TARGET_P95_MS = 5.0
TARGET_RATIO = 1.5
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
BLOCK = 50


async def end_calls(engine, context, count: int, offset: int) -> list[float]:  # type: ignore[no-untyped-def]
    from amrita_plugin_cognition.api import InputMessage

    times = []
    for index in range(offset, offset + count):
        at = NOW + timedelta(seconds=index)
        batch = [InputMessage(f"m{index}", context.user_id, context.user_name, f"我明天要去成都出差，第{index}次", at)]
        started = time.perf_counter()
        await engine.turns.end(
            context,
            f"小明说明天去成都出差（第{index}轮）",
            [f"QQ号40001（昵称小明）明天要去成都出差（第{index}次）", "QQ号40001（昵称小明）喜欢吃火锅"],
            batch=batch,
            now=at,
        )
        times.append(ms_since(started))
    return times


async def bare_commits(engine, context, count: int, offset: int) -> list[float]:  # type: ignore[no-untyped-def]
    """The floor: the same note row, added and committed in a bare session of the same database."""
    from amrita_plugin_cognition.store.models import NoteRow

    times = []
    for index in range(offset, offset + count):
        started = time.perf_counter()
        async with engine.session() as session:
            session.add(
                NoteRow(
                    bot_id=context.bot_id, scope_kind=context.scope.kind, scope_id=context.scope.id,
                    user_id=context.user_id, user_name=context.user_name,
                    content=f"小明说明天去成都出差（第{index}轮）", created_at=NOW + timedelta(seconds=index),
                )
            )  # fmt: skip
            await session.commit()
        times.append(ms_since(started))
    return times


async def run(engine, calls: int, rounds: int) -> list[tuple[tuple[float, float], tuple[float, float]]]:  # type: ignore[no-untyped-def]
    from amrita_plugin_cognition.api import ChatContext, InputMessage, Scope

    context = ChatContext("bench-bot", Scope("group", "30001"), "40001", "小明")
    for index in range(engine.config.historian.recent_messages_k):  # the chat's transcript, as in a live chat
        said = InputMessage(f"t{index}", context.user_id, context.user_name, f"第{index}句闲聊", NOW)
        await engine.turns.record(context, said, f"第{index}句回复", ended=True)
    await end_calls(engine, context, 20, 0)  # warm-up: connections, the chat's recent turns
    await bare_commits(engine, context, 20, 0)
    results = []
    offset = 100
    for _ in range(rounds):
        ours: list[float] = []
        floor: list[float] = []
        for _ in range(calls // BLOCK):
            ours += await end_calls(engine, context, BLOCK, offset)
            floor += await bare_commits(engine, context, BLOCK, offset)
            offset += BLOCK
        results.append((p50_p95(ours), p50_p95(floor)))
    return results


def main() -> None:
    args = parse_args(
        "latency of the end tool against one bare insert-and-commit",
        lambda parser: parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite"),
    )
    calls = 100 if args.quick else 1000
    rounds = 1 if args.quick else 5
    home = throwaway_home("end")
    database = f"bench_end_{secrets.token_hex(4)}" if args.backend == "postgres" else None
    try:
        if database:
            asyncio.run(pg_admin(f'CREATE DATABASE "{database}"'))
        init_engine_only(home, database_url=f"{PG_BASE}/{database}" if database else None)
        quiet_cognition_logs()
        loop = asyncio.new_event_loop()
        engine = loop.run_until_complete(open_engine(home))
        backend = "PostgreSQL" if database else "SQLite"
        print(f"# bench/end_latency.py  {machine_line()}  ({calls} calls x {rounds} rounds, {backend})")
        results = loop.run_until_complete(run(engine, calls, rounds))
        end_p50 = median([ours[0] for ours, _ in results])
        end_p95 = median([ours[1] for ours, _ in results])
        floor_p50 = median([floor[0] for _, floor in results])
        floor_p95 = median([floor[1] for _, floor in results])
        ratios = [ours[1] / floor[1] for ours, floor in results]
        print(
            f"end_turn (note + job, one commit): p50 {end_p50:.3f} ms  p95 {end_p95:.3f} ms  "
            f"p95 {verdict(end_p95, TARGET_P95_MS)}"
        )
        print(f"floor (bare insert-and-commit of the note row): p50 {floor_p50:.3f} ms  p95 {floor_p95:.3f} ms")
        print(
            f"ratio end/floor p95: {median(ratios):.2f} (rounds: {', '.join(f'{r:.2f}' for r in ratios)})  "
            f"{verdict(median(ratios), TARGET_RATIO)}"
        )
        loop.run_until_complete(engine.close())
        loop.close()
    finally:
        remove_home(home)
        if database:
            asyncio.run(pg_admin(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)'))


if __name__ == "__main__":
    main()
