"""What it costs that erased text cannot be read back from the SQLite file (issue 20, item 5).

A delete-all on SQLite deletes with ``secure_delete`` on, merges the FTS5 indices into one
segment and zeroes the free pages in its transaction, and truncates the write-ahead log after it
(``store/sqlite.py``); every connection deletes with ``secure_delete`` on. Measured here on a
bank of ``--rows`` facts (1,000 group chats, 200 speakers) plus transcript turns and notes,
written straight through the store (no vectors: the vector side is not what is measured):

1. a user's delete-all (her 40 facts and 10 turns, 80 facts and 20 turns of others naming her by
   number or nickname, inserted afresh before each run), with the scrub and without it
   (``secure_delete`` off, no FTS5 merge, no zeroing, no log truncation), alternating, ``--rounds``
   times each; medians, and the scrub's own steps;
2. ordinary writes with ``secure_delete`` on and off for every connection, alternating blocks:
   ``remember`` (one fact: row, keyword row, outbox row), ``record_turn`` (one transcript turn)
   and ``forget_memory`` (one fact deleted with its keyword row and a barrier); median ms per call.

    uv run python bench/erasure_bytes.py [--quick] [--rows N] [--rounds N]

Runs engine-only NoneBot on a throw-away folder; SQLite and embedded Chroma; no network.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

from _common import (
    FlatEmbedder,
    drop_outbox,
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
from _corpus import facts
from sqlalchemy import event, text

# The package is imported once NoneBot is initialised (the standalone boot reloads it as a plugin:
# a class imported before would be another class than the engine's).
ChatContext: Any = None
ErasureTarget: Any = None
InputMessage: Any = None
MemoryDraft: Any = None
Operator: Any = None
Scope: Any = None
repository: Any = None
short_term: Any = None
row_insert: Any = None
sqlite: Any = None


def _import_after_init() -> None:
    global ChatContext, ErasureTarget, InputMessage, MemoryDraft, Operator, Scope
    global repository, row_insert, short_term, sqlite
    from amrita_plugin_cognition.api import ChatContext, ErasureTarget, InputMessage, MemoryDraft, Operator, Scope
    from amrita_plugin_cognition.store import repository, row_insert, short_term, sqlite


BOT = "bench-bot"
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
CHATS = 1_000
SPEAKERS = 200
BATCH = 2_000
#: Calls per block of ordinary writes (blocks alternate secure_delete on and off).
BLOCK = 20
_CHINESE = str.maketrans("0123456789", "零一二三四五六七八九")


def chat(index: int) -> Any:
    return Scope("group", str(600000 + index % CHATS))


def speaker(index: int) -> str:
    return str(70000 + index % SPEAKERS)


async def insert(engine: Any, drafts: list[MemoryDraft]) -> list[int]:
    """Facts straight through the store (row, keyword row, outbox row), no index work scheduled."""
    ids: list[int] = []
    for start in range(0, len(drafts), BATCH):
        async with engine.unit_of_work() as uow:
            rows = await repository.insert_memories(uow.session, BOT, drafts[start : start + BATCH], NOW)
            ids += [row.id for row in rows]
            await uow.commit()
    return ids


async def add_turns(engine: Any, turns: list[tuple[Scope, str, str, str]]) -> None:
    for start in range(0, len(turns), BATCH):
        async with engine.unit_of_work() as uow:
            for number, (scope, user, name, said) in enumerate(turns[start : start + BATCH]):
                at = NOW + timedelta(seconds=number)
                short_term.add_turn(uow.session, BOT, scope, user, name, f"t{number}", said, "好的", at, False)
                await row_insert.insert_rows(uow.session, [short_term.note_row(BOT, scope, user, name, said[:40], at)])
            await uow.commit()


async def build(engine: Any, rows: int) -> None:
    texts = facts(min(rows, 100_000))
    drafts = [
        MemoryDraft(text=texts[index % len(texts)], scope=chat(index), speaker_id=speaker(index), speaker_name="成员")
        for index in range(rows)
    ]
    started = time.perf_counter()
    await insert(engine, drafts)
    await add_turns(
        engine, [(chat(index), speaker(index), "成员", texts[index % len(texts)]) for index in range(rows // 5)]
    )
    await drop_outbox(engine)
    built = ms_since(started) / 1000
    print(f"bank: {rows:,} facts, {rows // 5:,} turns and notes in {CHATS:,} chats, built in {built:.1f} s")


async def add_target(engine: Any, round_number: int) -> str:
    """A fresh user named in the bank: her own facts and turns, and others' naming her."""
    user = str(800000000 + round_number)
    name = f"星河{round_number:03d}号"
    theirs = [
        MemoryDraft(text=f"我在第{index}个周末去爬山。", scope=chat(index), speaker_id=user, speaker_name=name)
        for index in range(40)
    ]
    writings = [user, user.translate(_CHINESE), name]
    about = [
        MemoryDraft(
            text=f"{writings[index % 3]}说周六请大家吃饭（第{index}次）。", scope=chat(index), speaker_id=speaker(index)
        )
        for index in range(80)
    ]
    await insert(engine, theirs + about)
    turns = [(chat(index), user, name, f"我第{index}次说话") for index in range(10)]
    turns += [(chat(index), speaker(index), "成员", f"{writings[index % 3]}第{index}次被提到") for index in range(20)]
    await add_turns(engine, turns)
    await drop_outbox(engine)
    return user


async def erasure_runs(engine: Any, rounds: int) -> None:
    real = (sqlite.secure_delete_now, sqlite.scrub_deleted, sqlite.truncate_log)
    steps: dict[str, list[float]] = {"secure_delete_now": [], "scrub_deleted": [], "truncate_log": []}

    def timed(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        async def run(*args: Any) -> Any:
            started = time.perf_counter()
            result = await function(*args)
            steps[name].append(ms_since(started))
            return result

        return run

    async def secure_delete_off(session: Any) -> None:
        await session.execute(text("PRAGMA secure_delete = OFF"))

    async def nothing(session: Any) -> None:
        return None

    async def not_truncated(session: Any) -> bool:
        return True

    modes: dict[str, tuple[Any, Any, Any]] = {
        "without": (secure_delete_off, nothing, not_truncated),
        "with": tuple(timed(function.__name__, function) for function in real),  # type: ignore[dict-item]
    }
    took: dict[str, list[float]] = {"without": [], "with": []}
    for round_number in range(rounds):
        for mode in ("without", "with") if round_number % 2 == 0 else ("with", "without"):
            user = await add_target(engine, round_number * 2 + (mode == "with"))
            sqlite.secure_delete_now, sqlite.scrub_deleted, sqlite.truncate_log = modes[mode]  # type: ignore[assignment]
            started = time.perf_counter()
            report = await engine.governance.delete_all(ErasureTarget.user(BOT, user), actor=Operator("bench"), now=NOW)
            took[mode].append(ms_since(started))
            sqlite.secure_delete_now, sqlite.scrub_deleted, sqlite.truncate_log = real  # type: ignore[assignment]
            assert report.counts["memories"] == 120 and report.counts["turns"] == 30, report.counts
            await engine.settle()
    without, with_scrub = median(took["without"]), median(took["with"])
    print(f"\ndelete-all of one user ({rounds} runs each, median):")
    print(f"  without the scrub: {without:,.0f} ms   (runs: {', '.join(f'{v:,.0f}' for v in took['without'])})")
    print(f"  with the scrub:    {with_scrub:,.0f} ms   (runs: {', '.join(f'{v:,.0f}' for v in took['with'])})")
    print(f"  difference: {with_scrub - without:+,.0f} ms ({with_scrub / without:.2f}x)")
    for name, values in steps.items():
        print(f"    {name}: median {median(values):,.1f} ms")


async def write_runs(engine: Any, rounds: int, calls: int) -> None:
    """Ordinary writes with ``secure_delete`` on and off for every connection: blocks of ``BLOCK``
    calls alternate on/off, so both see the same machine load; median of the blocks' medians."""
    async with engine.unit_of_work() as uow:
        bind = uow.session.get_bind()
        sync_engine = getattr(bind, "sync_engine", bind)
    state = {"secure": True}

    def per_checkout(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA secure_delete = {'ON' if state['secure'] else 'OFF'}")
        cursor.close()

    event.listen(sync_engine, "checkout", per_checkout)
    context = ChatContext(BOT, Scope("group", "699999"), "79999", "写手")
    blocks: dict[tuple[str, bool], list[float]] = {}
    counter = 0
    try:
        for block in range(rounds * calls // BLOCK):
            for secure in (True, False) if block % 2 == 0 else (False, True):
                state["secure"] = secure
                written: list[int] = []
                for operation in ("remember", "record_turn", "forget_memory"):
                    times: list[float] = []
                    for _ in range(BLOCK):
                        counter += 1
                        started = time.perf_counter()
                        if operation == "remember":
                            draft = MemoryDraft(text=f"写手第{counter}次记下周六打球。", scope=context.scope,
                                                speaker_id="79999", speaker_name="写手")  # fmt: skip
                            result = await engine.memories.remember(BOT, [draft], now=NOW)
                            written.append(result.written[0].id)
                        elif operation == "record_turn":
                            message = InputMessage(f"w{counter}", "79999", "写手", f"第{counter}句话", NOW)
                            await engine.turns.record(context, message, "好的", ended=True)
                        else:
                            await engine.governance.forget(context, written.pop())
                        times.append(ms_since(started))
                    blocks.setdefault((operation, secure), []).append(median(times))
                await drop_outbox(engine)
    finally:
        event.remove(sync_engine, "checkout", per_checkout)
    count = len(blocks[("remember", True)])
    print(f"\nordinary writes ({count} blocks of {BLOCK} calls per mode, alternating; median of block medians, ms):")
    for operation in ("remember", "record_turn", "forget_memory"):
        on, off = median(blocks[(operation, True)]), median(blocks[(operation, False)])
        print(f"  {operation:14} secure_delete on {on:6.2f}   off {off:6.2f}   ({on / off:.2f}x)")


async def main() -> None:
    args = parse_args(__doc__.splitlines()[0], _extra)
    rows = args.rows or (5_000 if args.quick else 100_000)
    rounds = args.rounds or (2 if args.quick else 5)
    home = throwaway_home("erasure")
    try:
        init_engine_only(home)
        _import_after_init()
        quiet_cognition_logs()
        engine = await open_engine(home, embedder=FlatEmbedder(), outbox_interval_seconds=3600)
        print(f"{machine_line()}, load average {os.getloadavg()[0]:.1f}")
        await build(engine, rows)
        await erasure_runs(engine, rounds)
        await write_runs(engine, rounds, 40 if args.quick else 200)
        print(f"load average at the end {os.getloadavg()[0]:.1f}")
        await engine.close()
    finally:
        remove_home(home)


def _extra(parser: Any) -> None:
    parser.add_argument("--rows", type=int, default=0, help="facts in the bank (default 100,000; --quick 5,000)")
    parser.add_argument("--rounds", type=int, default=0, help="runs of each mode (default 5; --quick 2)")


if __name__ == "__main__":
    asyncio.run(main())
