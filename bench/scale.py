"""A million memories (issue 23): the plugin on PostgreSQL and a Chroma server with 1,000,000
memories over 10,000 chats, against the same bank at 50,000 memories, in one run.

The bank grows in two steps on a database and a Chroma server of the run's own
(``_scale_store.py``): first ``--baseline`` memories (the first chats), measured; then up to
``--memories``, measured again the same way. Each chat holds ``memories / chats`` facts at both
sizes, so what changes between the two is the size of the bank, not of a chat. The rows are what
the plugin writes (its own insert and outbox drain, in bulk); the vectors are synthetic, of the
local model's size (``_corpus.SyntheticEmbedder``), and every query is also encoded by the local
model, so a turn costs what a real one does. Quality is measured on the real sets, not here.

At each size, in this order:

* recall: ``engine.turns.context`` (the hook's ``build_context``) in a random loaded chat, a
  distinct short query each turn (the query cache misses, as in a live chat), ``--queries`` turns
  per round; p50/p95 per round, medians over ``--rounds``;
* write: ``engine.memories.remember`` of one new fact in a random chat per call, same rounds;
* ``end``: ``bench/end_latency.py``'s rounds (the note and the historian job in one commit, in
  blocks alternating with a bare insert-and-commit of the same note row: the floor);
* the CLI: ``python -m amrita_plugin_cognition status --json`` and ``inspect --json`` on the
  run's home (a fresh process each, start to exit, ``bench/cli_latency.py``), median of
  ``--cli-runs``;
* the checks: SQL active rows, keyword rows and vectors equal to what was written, the outbox
  empty, and the index's id-by-id comparison with SQL (``missing_and_extra``, what the bot's
  startup repair runs), timed;
* memory: this process's RSS (the engine with the local model, as in a bot), the Chroma server's,
  the database's size on disk.

Then, at the full size, ``engine.index.reindex()`` for at most ``--reindex-seconds`` (stopped
there, its half-built generation dropped): rows/s of the machinery (SQL pages, vectors written
into the new generation; embedding synthetic), and the local model's own rate measured in the
same run, from which the time of a real reindex is projected.

    uv run python bench/scale.py [--smoke] [--memories N] [--chats N] [--baseline N] [--rounds N]
        [--queries N] [--cli-runs N] [--reindex-seconds S] [--json FILE]

Targets: recall p95 at full / baseline <= 1.5; write and ``end`` p95 unchanged; ``status`` and
``inspect`` < 2 s each at the full size.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from _common import (
    clean_env,
    init_engine_only,
    machine_line,
    median,
    ms_since,
    open_engine,
    p50_p95,
    quiet_cognition_logs,
    rss_mb,
)
from _corpus import SyntheticEmbedder, queries
from _scale_store import Bank, LoadReport, Services, load
from _store import BOT_ID, fact_draft
from cli_latency import run as run_cli
from end_latency import run as end_rounds
from reindex import model_rate
from sqlalchemy import text

from amrita_plugin_cognition.api import UTC

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
TARGET_RECALL_RATIO = 1.5
TARGET_CLI_SECONDS = 2.0
FULL = {"memories": 1_000_000, "chats": 10_000, "baseline": 50_000, "rounds": 3, "queries": 200, "cli_runs": 3}
SMOKE = {"memories": 3_000, "chats": 30, "baseline": 1_000, "rounds": 1, "queries": 20, "cli_runs": 1}
CLI_COMMANDS = {"inspect": ["inspect", "--json"], "status": ["status", "--json"]}


@dataclass
class Stage:
    """What one size measured (milliseconds, seconds, MiB)."""

    memories: int
    chats: int
    load: dict[str, float] = field(default_factory=dict)
    recall: tuple[float, float] = (0.0, 0.0)
    recalled_nothing: int = 0
    write: tuple[float, float] = (0.0, 0.0)
    end: tuple[float, float] = (0.0, 0.0)
    end_floor: tuple[float, float] = (0.0, 0.0)
    cli: dict[str, float] = field(default_factory=dict)
    checks: dict[str, int] = field(default_factory=dict)
    id_check_seconds: float = 0.0
    rss_mb: float = 0.0
    chroma_rss_mb: float = 0.0
    database_mb: float = 0.0


def progress_bar() -> Any:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn, TimeRemainingColumn

    return Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        transient=False,
    )


async def grow(engine: Any, bank: Bank, chats: range) -> LoadReport:
    with progress_bar() as bar:
        task = bar.add_task(f"loading chats {chats.start:,}-{chats.stop - 1:,}", total=len(chats) * bank.per_chat)
        return await load(engine, bank, chats, lambda rows: bar.advance(task, rows))


async def recall_rounds(engine: Any, chat_ids: list[str], texts: list[str], rounds: int) -> tuple[list[Any], int]:
    from amrita_plugin_cognition.api import ChatContext, Scope

    rng = random.Random(len(chat_ids))
    per_round = len(texts) // rounds
    results, empty = [], 0
    for number in range(rounds):
        times = []
        for query in texts[number * per_round : (number + 1) * per_round]:
            context = ChatContext(BOT_ID, Scope("group", rng.choice(chat_ids)), "40001", "小明")
            started = time.perf_counter()
            built = await engine.turns.context(context, [query], now=NOW)
            times.append(ms_since(started))
            empty += built.memories == 0
        results.append(p50_p95(times))
    return results, empty


async def write_rounds(engine: Any, bank: Bank, chat_ids: list[str], calls: int, rounds: int, tag: str) -> list[Any]:
    from amrita_plugin_cognition.api import Scope

    rng = random.Random(calls + len(chat_ids))
    results = []
    for number in range(rounds):
        times = []
        for call in range(calls):
            scope = Scope("group", rng.choice(chat_ids))
            fact = f"{rng.choice(bank.texts).rstrip('。')}（{tag}第{number}轮第{call}次）。"
            draft = fact_draft(fact, scope, NOW - timedelta(hours=1))
            started = time.perf_counter()
            result = await engine.memories.remember(BOT_ID, [draft], now=NOW)
            times.append(ms_since(started))
            if not result.written:
                raise SystemExit(f"a write was refused: {result.refused}")
        results.append(p50_p95(times))
    await engine.index_sync.settle()
    await engine.index.drain()
    return results


def cli_medians(services: Services, runs: int, timeout: float) -> dict[str, float]:
    """Median wall seconds of each command; a run past ``timeout`` counts as infinite (and the
    command is not run again: at a million memories ``status`` took more than 10 minutes)."""
    module = [sys.executable, "-m", "amrita_plugin_cognition"]
    env = clean_env(**services.cli_env())
    walls: dict[str, list[float]] = {name: [] for name in CLI_COMMANDS}
    for _ in range(runs):
        for name, argv in CLI_COMMANDS.items():
            if walls[name] and walls[name][-1] == float("inf"):
                continue
            try:
                walls[name].append(
                    run_cli([*module, *argv, "--home", str(services.home)], services.home, env, timeout)[0]
                )
            except subprocess.TimeoutExpired:
                print(f"  CLI {name}: no answer within {timeout:.0f} s", flush=True)
                walls[name].append(float("inf"))
    return {name: median(values) for name, values in walls.items()}


def profile_status(services: Services, folder: Path, memories: int, timeout: float) -> None:
    """``status`` once more under cProfile (``--cli-profile``): the stats file in ``folder``, and the
    25 functions with the most cumulative time printed (read the file with ``pstats`` for more)."""
    import pstats

    folder.mkdir(parents=True, exist_ok=True)
    stats_file = folder / f"status-{memories}.prof"
    command = [sys.executable, str(Path(__file__).with_name("_profile_cli.py")), str(stats_file)]
    env = clean_env(**services.cli_env())
    wall = run_cli([*command, "status", "--json", "--home", str(services.home)], services.home, env, timeout)[0]
    print(f"  status under cProfile: {wall:.2f} s wall; {stats_file}", flush=True)
    pstats.Stats(str(stats_file)).sort_stats("cumulative").print_stats(25)


async def checks(engine: Any, stage: Stage) -> None:
    """SQL, keyword rows, outbox and vectors agree; the id-by-id comparison timed."""
    async with engine.session() as session:

        async def scalar(statement: str) -> int:
            return int((await session.execute(text(statement))).scalar_one())

        stage.checks = {
            "active_rows": await scalar("SELECT count(*) FROM cognition_memory WHERE status = 'active'"),
            "keyword_rows": await scalar("SELECT count(*) FROM cognition_memory_kw"),
            "outbox_rows": await scalar("SELECT count(*) FROM cognition_outbox"),
        }
        stage.database_mb = await scalar("SELECT pg_database_size(current_database())") / 2**20
    stage.checks["vectors"] = await asyncio.to_thread(engine.vectors.total_count, engine.generation)
    started = time.perf_counter()
    report = await engine.index_sync.missing_and_extra()
    stage.id_check_seconds = time.perf_counter() - started
    stage.checks["missing_by_id"] = report.missing_count
    stage.checks["extra_by_id"] = report.extra_count


async def measure(engine: Any, services: Services, bank: Bank, chats: int, options: argparse.Namespace) -> Stage:
    stage = Stage(chats * bank.per_chat, chats)
    chat_ids = bank.chat_ids[:chats]
    offset = 0 if chats < bank.chats else options.queries * options.rounds
    texts = queries(2 * options.queries * options.rounds + 20)
    for query in texts[-20:]:  # warm-up: the model, the connections
        await engine.turns.context(_context(chat_ids[0]), [query], now=NOW)
    recall, stage.recalled_nothing = await recall_rounds(
        engine, chat_ids, texts[offset : offset + options.queries * options.rounds], options.rounds
    )
    stage.recall = (median([p50 for p50, _ in recall]), median([p95 for _, p95 in recall]))
    write = await write_rounds(engine, bank, chat_ids, options.queries, options.rounds, f"{chats}")
    stage.write = (median([p50 for p50, _ in write]), median([p95 for _, p95 in write]))
    end = await end_rounds(engine, 50 if options.smoke else 500, options.rounds)
    stage.end = (median([ours[0] for ours, _ in end]), median([ours[1] for ours, _ in end]))
    stage.end_floor = (median([floor[0] for _, floor in end]), median([floor[1] for _, floor in end]))
    print(
        f"  {stage.memories:,} memories: recall p50/p95 {stage.recall[0]:.1f}/{stage.recall[1]:.1f} ms "
        f"(nothing recalled {stage.recalled_nothing}); write {stage.write[0]:.1f}/{stage.write[1]:.1f} ms; "
        f"end {stage.end[0]:.2f}/{stage.end[1]:.2f} ms (floor {stage.end_floor[0]:.2f}/{stage.end_floor[1]:.2f})",
        flush=True,
    )
    await checks(engine, stage)
    stage.cli = await asyncio.to_thread(cli_medians, services, options.cli_runs, options.cli_timeout)
    if options.cli_profile:
        await asyncio.to_thread(profile_status, services, options.cli_profile, stage.memories, options.cli_timeout)
    stage.rss_mb = rss_mb()
    stage.chroma_rss_mb = rss_mb(services.chroma.process.pid) if services.chroma.process else float("nan")
    return stage


def _context(chat_id: str) -> Any:
    from amrita_plugin_cognition.api import ChatContext, Scope

    return ChatContext(BOT_ID, Scope("group", chat_id), "40001", "小明")


async def bounded_reindex(engine: Any, seconds: float) -> dict[str, float]:
    """``engine.index.reindex()`` stopped after ``seconds`` (its new generation dropped): rows
    written and rows/s; the whole time when it finished first."""
    done = [0]
    started = time.perf_counter()

    def progress(rows: int, _total: int) -> None:
        done[0] = rows

    task = asyncio.create_task(engine.index.reindex(progress=progress))
    finished, _ = await asyncio.wait({task}, timeout=seconds)
    elapsed = time.perf_counter() - started
    if finished:
        report = task.result()
        return {"rows": report.sql_active, "seconds": report.seconds, "finished": 1, "vectors": report.vectors_after}
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    await asyncio.sleep(2)  # an upsert already handed to a thread finishes before its generation is dropped
    generation = await engine.index_sync.current_generation(force=True)
    await asyncio.to_thread(engine.vectors.drop_generations, generation)
    return {"rows": done[0], "seconds": elapsed, "finished": 0}


async def run(options: argparse.Namespace) -> dict[str, Any]:
    bank = Bank.of(options.memories, options.chats)
    baseline_chats = max(1, options.baseline // bank.per_chat)
    print(
        f"# bench/scale.py  {machine_line()}{'  [smoke]' if options.smoke else ''}\n"
        f"{bank.memories:,} memories over {bank.chats:,} chats ({bank.per_chat} each), "
        f"against {baseline_chats * bank.per_chat:,} over {baseline_chats:,}; PostgreSQL + a Chroma server "
        f"keeping {options.chroma_cache:,} collections in memory",
        flush=True,
    )
    services = await Services.start(options.chroma_cache)
    try:
        init_engine_only(services.home, database_url=services.url)
        quiet_cognition_logs()
        embedder = SyntheticEmbedder()
        engine = await open_engine(services.home, embedder=embedder, chroma=services.chroma_config)
        await engine.index.check_fingerprint()  # the fingerprint stored, as at a bot's first start
        stages = []
        for chats in (baseline_chats, bank.chats):
            loaded = sum(stage.chats for stage in stages[-1:])
            report = await grow(engine, bank, range(loaded, chats))
            async with engine.session() as session:  # what autovacuum does after a bulk load
                await session.connection(execution_options={"isolation_level": "AUTOCOMMIT"})
                await session.execute(text("ANALYZE"))
            print(
                f"loaded {report.rows:,} rows in {report.seconds:.0f} s "
                f"({report.rows / max(report.seconds, 1e-9):.0f} rows/s; SQL inserts {report.insert_seconds:.0f} s, "
                f"waiting for vectors {report.vector_wait_seconds:.0f} s)",
                flush=True,
            )
            stage = await measure(engine, services, bank, chats, options)
            stage.load = asdict(report)
            stages.append(stage)
            print_stage(stage)
        reindex = await bounded_reindex(engine, options.reindex_seconds)
        reindex["model_texts_per_second"] = await model_rate(embedder.live, bank.texts)
        await engine.close()
    finally:
        await services.close()
    result = {"machine": machine_line(), "stages": [asdict(stage) for stage in stages], "reindex": reindex}
    print_summary(stages, reindex, bank.memories)
    return result


def print_stage(stage: Stage) -> None:
    print(
        f"  {stage.memories:,} memories: CLI "
        f"{', '.join(f'{name} {seconds:.2f} s' for name, seconds in stage.cli.items())}; "
        f"checks {stage.checks} (id check {stage.id_check_seconds:.1f} s); RSS {stage.rss_mb:.0f} MiB, "
        f"Chroma {stage.chroma_rss_mb:.0f} MiB, database {stage.database_mb:.0f} MiB",
        flush=True,
    )


def print_summary(stages: list[Stage], reindex: dict[str, float], memories: int) -> None:
    from rich.console import Console
    from rich.table import Table

    small, large = stages
    table = Table(title=f"{large.memories:,} vs {small.memories:,} memories (medians of the rounds)")
    for column in ("figure", f"{small.memories:,}", f"{large.memories:,}", "ratio", "target"):
        table.add_column(column, justify="left" if column == "figure" else "right")

    def row(name: str, low: float, high: float, target: str, unit: str = "ms") -> None:
        table.add_row(name, f"{low:.2f} {unit}", f"{high:.2f} {unit}", f"{high / low:.2f}", target)

    ratio = large.recall[1] / small.recall[1]
    row(
        "recall p95",
        small.recall[1],
        large.recall[1],
        f"<= {TARGET_RECALL_RATIO} ({'met' if ratio <= 1.5 else 'MISSED'})",
    )
    row("recall p50", small.recall[0], large.recall[0], "")
    row("write p95", small.write[1], large.write[1], "unchanged")
    row("end p95", small.end[1], large.end[1], "unchanged")
    row("end floor p95", small.end_floor[1], large.end_floor[1], "")
    for name in CLI_COMMANDS:
        met = "met" if large.cli[name] < TARGET_CLI_SECONDS else "MISSED"
        row(f"CLI {name} (wall)", small.cli[name], large.cli[name], f"< {TARGET_CLI_SECONDS:.0f} s ({met})", "s")
    row("id check (startup repair)", small.id_check_seconds, large.id_check_seconds, "", "s")
    row("process RSS", small.rss_mb, large.rss_mb, "", "MiB")
    row("Chroma server RSS", small.chroma_rss_mb, large.chroma_rss_mb, "", "MiB")
    row("database on disk", small.database_mb, large.database_mb, "", "MiB")
    Console().print(table)
    rate = reindex["rows"] / max(reindex["seconds"], 1e-9)
    model = reindex["model_texts_per_second"]
    how = "finished" if reindex["finished"] else f"stopped after {reindex['seconds']:.0f} s, its generation dropped"
    if not rate:  # stopped before its first page was written (its first step counts the old generation)
        print(f"reindex ({how}): no row written yet, nothing to project; the local model embeds {model:.0f} texts/s")
    else:
        print(
            f"reindex ({how}): {reindex['rows']:,.0f} rows in {reindex['seconds']:.0f} s = {rate:.0f} rows/s with "
            f"synthetic embedding; projected for {memories:,}: {memories / rate:.0f} s; the local model embeds "
            f"{model:.0f} texts/s here, so a real reindex of {memories:,} would take about "
            f"{memories / rate + memories / model:.0f} s"
        )
    for stage in stages:
        bad = failed_checks(stage.checks)
        print(f"checks at {stage.memories:,}: {'ok' if not bad else f'FAILED {bad}'}")


def failed_checks(found: dict[str, int]) -> dict[str, int]:
    """The counts that say the bank does not hold what was written (empty: it does)."""
    expected = found["active_rows"]
    bad = {name: value for name, value in found.items() if name in ("keyword_rows", "vectors") and value != expected}
    return bad | {
        name: value
        for name, value in found.items()
        if name in ("outbox_rows", "missing_by_id", "extra_by_id") and value
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="a few thousand rows, well under 30 s (the e2e test)")
    for name in ("memories", "chats", "baseline", "rounds", "queries", "cli_runs"):
        parser.add_argument(f"--{name.replace('_', '-')}", type=int, default=None)
    parser.add_argument("--reindex-seconds", type=float, default=None, help="stop the reindex there (full: 300)")
    parser.add_argument(
        "--chroma-cache", type=int, default=500, help="collections the Chroma server keeps in memory (default 500)"
    )
    parser.add_argument("--cli-timeout", type=float, default=600.0, help="give up a CLI command after (default 600 s)")
    parser.add_argument("--json", type=Path, help="write the figures there")
    parser.add_argument("--cli-profile", type=Path, help="also run status once under cProfile, stats in this folder")
    options = parser.parse_args()
    defaults = SMOKE if options.smoke else FULL
    for name, value in defaults.items():
        if getattr(options, name) is None:
            setattr(options, name, value)
    if options.reindex_seconds is None:
        options.reindex_seconds = 60.0 if options.smoke else 300.0
    result = asyncio.run(run(options))
    if options.json:
        options.json.write_text(json.dumps(result, indent=1), encoding="utf-8")
    failed = [stage["memories"] for stage in result["stages"] if failed_checks(stage["checks"])]
    if failed:
        raise SystemExit(f"the bank does not hold what was written at {failed}")


if __name__ == "__main__":
    main()
