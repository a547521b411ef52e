"""The decay sweep over a bank of 100,000 memories (issue 22): bounded time and memory, and a
restarted sweep rescans nothing.

A bank of ``--rows`` facts in 1,000 group chats, written straight through the store (row, keyword
row; no vectors: the sweep is SQL work, and the vector deletes it queues are applied by the outbox
drain, timed apart), tiers in equal thirds (low, medium, high), all recorded at one moment. Then:

1. **idle passes**: a whole pass when nothing is due (every row read, none changed), ``--rounds``
   times; median seconds and rows/s; peak RSS (VmHWM, reset before each pass) and the tracemalloc
   peak of one pass (a separate run: tracing slows it), first at a fifth of the bank and again at
   the whole bank: memory stays flat while the bank grows (a batch holds ``sweep_batch_size`` rows);
   and one pass run batch by batch: the median batch of the first tenth of the table against the
   last (full) ones, flat if a batch reads only its own rows wherever the cursor stands;
2. **busy passes**: a pass 30 days later (every low retired: status, keyword rows out, an outbox
   row each; every medium demoted), ``--rounds`` times, the bank reset between them; median
   seconds, and the drain of the queued vector deletes timed apart once;
3. **a restart**: a pass stopped after half its batches, then a new engine (a restart) finishes it:
   rows read in both runs together = rows in the table, the second run starting past the cursor.

    uv run python bench/decay_sweep.py [--quick] [--rows N] [--rounds N]

Runs engine-only NoneBot on a throw-away folder; SQLite and embedded Chroma; no network.
"""

from __future__ import annotations

import asyncio
import gc
import os
import time
import tracemalloc
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from _common import (
    FlatEmbedder,
    drop_outbox,
    init_engine_only,
    machine_line,
    median,
    open_engine,
    parse_args,
    quiet_cognition_logs,
    remove_home,
    rss_mb,
    throwaway_home,
)
from _corpus import facts
from sqlalchemy import case, delete, select, update

Importance: Any = None
MemoryDraft: Any = None
Scope: Any = None
MemoryRow: Any = None
repository: Any = None


def _import_after_init() -> None:
    global Importance, MemoryDraft, Scope, MemoryRow, repository
    from amrita_plugin_cognition.api import Importance, MemoryDraft, Scope
    from amrita_plugin_cognition.store import repository
    from amrita_plugin_cognition.store.models import MemoryRow


BOT = "bench-bot"
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
CHATS = 1_000
BATCH = 2_000
TIERS = ("low", "medium", "high")


def _tier(index: int) -> Any:
    return Importance(TIERS[index % 3])


async def add_rows(engine: Any, start: int, stop: int) -> None:
    """Facts ``start`` … ``stop - 1`` straight through the store (row, keyword row, outbox row)."""
    texts = facts(100_000)
    for first in range(start, stop, BATCH):
        drafts = [
            MemoryDraft(
                text=texts[index % len(texts)],
                scope=Scope("group", str(600000 + index % CHATS)),
                speaker_id=str(70000 + index % 200),
                speaker_name="成员",
                importance=_tier(index),
            )
            for index in range(first, min(stop, first + BATCH))
        ]
        async with engine.unit_of_work() as uow:
            await repository.insert_memories(uow.session, BOT, drafts, NOW)
            await uow.commit()
    await drop_outbox(engine)


async def reset(engine: Any) -> None:
    """The bank as built: every row active, in its first tier, its clock at NOW, the retired rows'
    keyword rows written again; the sweep's cursor and the outbox emptied."""
    from amrita_plugin_cognition.store.decay import SWEEP_KEY
    from amrita_plugin_cognition.store.models import MetaRow

    async with engine.unit_of_work() as uow:
        retired = list((await uow.session.execute(select(MemoryRow).where(MemoryRow.status == "expired"))).scalars())
        tier = case(*((MemoryRow.id % 3 == (number + 1) % 3, name) for number, name in enumerate(TIERS)))
        await uow.session.execute(
            update(MemoryRow).values(status="active", invalid_at=None, updated_at=NOW, importance=tier)
        )
        for first in range(0, len(retired), BATCH):
            await repository.enter_indices(uow.session, retired[first : first + BATCH], NOW)
        await uow.session.execute(delete(MetaRow).where(MetaRow.key == SWEEP_KEY))
        await uow.commit()
    await drop_outbox(engine)


def reset_peak_rss() -> None:
    Path("/proc/self/clear_refs").write_text("5")


def peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def idle_passes(engine: Any, rows: int, rounds: int) -> None:
    seconds, peaks = [], []
    for _ in range(rounds):
        gc.collect()
        before = rss_mb()
        reset_peak_rss()
        started = time.perf_counter()
        report = await engine.decay.sweep(now=NOW + timedelta(days=1))
        seconds.append(time.perf_counter() - started)
        peaks.append(peak_rss_mb() - before)
        assert report.finished and report.scanned == rows and report.demoted == report.expired == 0, report
    batch_ms = []  # one more pass, batch by batch: a batch far into the table costs what the first did
    while True:
        started = time.perf_counter()
        step = await engine.decay.sweep(now=NOW + timedelta(days=1), max_batches=1)
        batch_ms.append((time.perf_counter() - started) * 1000)
        if step.finished:
            break
    tenth = max(1, len(batch_ms) // 10)
    gc.collect()
    tracemalloc.start()
    await engine.decay.sweep(now=NOW + timedelta(days=1))
    _, traced = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(
        f"  {rows:>7,} rows: {median(seconds):6.2f} s per pass (median of {rounds}; "
        f"{rows / median(seconds):,.0f} rows/s; {report.batches} batches), "
        f"peak RSS +{median(peaks):.1f} MB over {before:.0f} MB, tracemalloc peak {traced / 2**20:.1f} MB; "
        f"a batch in the first tenth {median(batch_ms[:tenth]):.1f} ms, "
        f"in the last {median(batch_ms[-tenth - 1 : -1]):.1f} ms"
    )


async def busy_passes(engine: Any, rows: int, rounds: int) -> None:
    seconds, drained = [], 0.0
    report = None
    for round_number in range(rounds):
        await reset(engine)
        started = time.perf_counter()
        report = await engine.decay.sweep(now=NOW + timedelta(days=30))
        seconds.append(time.perf_counter() - started)
        if round_number == 0:
            started = time.perf_counter()
            await engine.index.drain()
            drained = time.perf_counter() - started
    assert report is not None and report.finished
    print(
        f"  {rows:>7,} rows: {median(seconds):6.2f} s per pass (median of {rounds}): "
        f"{report.expired:,} retired (keyword rows out, a vector delete queued each), {report.demoted:,} demoted; "
        f"the drain of those deletes {drained:.1f} s (once)"
    )


async def restart(home: Path, engine: Any, rows: int, batch_size: int) -> Any:
    await reset(engine)
    half = max(1, rows // batch_size // 2)
    first = await engine.decay.sweep(now=NOW + timedelta(days=1), max_batches=half)
    await engine.close()
    engine = await open_engine(home, embedder=FlatEmbedder(), outbox_interval_seconds=3600)
    _no_background_drain(engine)
    second = await engine.decay.sweep(now=NOW + timedelta(days=1))
    state = await engine.decay.status()
    together = first.scanned + second.scanned
    print(
        f"  stopped after {first.batches} batches at id {first.cursor:,} ({first.scanned:,} rows); a new engine "
        f"read {second.scanned:,} more from there: {together:,} of {rows:,} rows, none twice "
        f"(pass total {state['last_pass']['scanned']:,}) {'ok' if together == rows else 'MISMATCH'}"
    )
    return engine


def _no_background_drain(engine: Any) -> None:
    """The sweep's own time: the vector deletes it queues wait for the drain timed apart."""
    engine.index_sync.schedule_drain = lambda: None


async def main() -> None:
    args = parse_args(__doc__.splitlines()[0], _extra)
    rows = args.rows or (5_000 if args.quick else 100_000)
    rounds = args.rounds or (2 if args.quick else 5)
    home = throwaway_home("decay")
    try:
        init_engine_only(home)
        _import_after_init()
        quiet_cognition_logs()
        engine = await open_engine(home, embedder=FlatEmbedder(), outbox_interval_seconds=3600)
        _no_background_drain(engine)
        batch_size = engine.config.consolidation.sweep_batch_size
        print(f"{machine_line()}, load average {os.getloadavg()[0]:.1f}; batches of {batch_size:,} rows")
        started = time.perf_counter()
        await add_rows(engine, 0, rows // 5)
        print("idle passes (nothing due):")
        await idle_passes(engine, rows // 5, rounds)
        await add_rows(engine, rows // 5, rows)
        print(f"  (bank of {rows:,} facts in {CHATS:,} chats built in {time.perf_counter() - started:.0f} s)")
        await idle_passes(engine, rows, rounds)
        print("busy passes (30 days later):")
        await busy_passes(engine, rows, rounds)
        print("restart:")
        engine = await restart(home, engine, rows, batch_size)
        print(f"load average at the end {os.getloadavg()[0]:.1f}")
        await engine.close()
    finally:
        remove_home(home)


def _extra(parser: Any) -> None:
    parser.add_argument("--rows", type=int, default=0, help="facts in the bank (default 100,000; --quick 5,000)")
    parser.add_argument("--rounds", type=int, default=0, help="passes of each kind (default 5; --quick 2)")


if __name__ == "__main__":
    asyncio.run(main())
