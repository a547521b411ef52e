"""What the second local model (the ``e5`` extra) costs a turn, measured beside the bundled one.

Two engines in one process on one database, each with its own embedded Chroma folder: one with
the bundled model alone (the default), one with ``embedder.second_model = "e5"``; the same
synthetic Chinese facts (bench/_corpus.py) written into one chat of each. Then, interleaved
round by round so that the machine's noise falls on both alike:

* query embedding alone: the bundled model, e5, and the two joined (``FusedEmbedder``), one
  query at a time, nothing cached: p50/p95 ms and the ratio e5 / bundled;
* recall (the per-turn ``recall``, query cache off): p50/p95 ms with and without the second
  model, and their ratio.

Each figure is the median over ``--runs`` rounds. ``--quick``: fewer facts and queries.
``--embed-only``: only the CPU time of one query embedding per model (this thread's CPU, which a
loaded machine does not inflate the way it inflates wall times).

    uv run python bench/second_model_latency.py [--quick] [--runs 5] [--facts 2000] [--embed-only]
"""

from __future__ import annotations

import asyncio
import statistics
import time
from typing import Any

from _common import (
    engine_data_dir,
    init_engine_only,
    machine_line,
    p50_p95,
    parse_args,
    quiet_cognition_logs,
    remove_home,
    throwaway_home,
)
from _corpus import facts, queries


def _add_arguments(parser: Any) -> None:
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--facts", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--embed-only", action="store_true", help="only the CPU time of one query embedding per model")


def _cpu_per_query(args: Any) -> None:
    """CPU time (this thread's) of one query embedding per model, called directly: a figure the
    machine's load does not inflate the way it does wall times."""
    from amrita_plugin_cognition.index.embedders import LocalUSEEmbedder
    from amrita_plugin_cognition.index.second_model import LocalE5Embedder

    first, second = LocalUSEEmbedder(), LocalE5Embedder()
    first.embed_sync(["预热"])
    second.query_sync(["预热"])
    asked = queries(args.queries * args.runs)
    rounds: dict[str, list[tuple[float, float]]] = {"bundled": [], "e5": []}
    for run in range(args.runs):
        batch = asked[run * args.queries : (run + 1) * args.queries]
        for name, call in (("bundled", first.embed_sync), ("e5", second.query_sync)):
            times = []
            for text in batch:
                started = time.thread_time()
                call([text])
                times.append((time.thread_time() - started) * 1000)
            rounds[name].append(p50_p95(times))
    figures = {name: [statistics.median(part) for part in zip(*pairs, strict=True)] for name, pairs in rounds.items()}
    for name, (p50, p95) in figures.items():
        print(f"CPU per query {name:<8} p50 {p50:6.2f} ms  p95 {p95:6.2f} ms  (median of {args.runs} rounds)")
    print(f"e5 / bundled CPU per query: p50 ratio {figures['e5'][0] / figures['bundled'][0]:.1f}")


async def _engine(home: Any, name: str, embedder: Any) -> Any:
    from nonebot_plugin_orm import get_session

    from amrita_plugin_cognition.api import CognitionConfig, build_engine

    # the query cache off: every recall embeds its query, as a new message does
    config = CognitionConfig.model_validate({"chroma": {"mode": "embedded"}, "embedder": {"query_cache_seconds": 0}})
    engine = build_engine(config, engine_data_dir(home) / name, get_session, embedder=embedder)
    await engine.start()
    return engine


async def _fill(engine: Any, context: Any, texts: list[str]) -> None:
    from amrita_plugin_cognition.api import MemoryDraft, Provenance

    for start in range(0, len(texts), 500):
        drafts = [
            MemoryDraft(text=text, scope=context.scope, speaker_id=context.user_id, provenance=Provenance.IMPORTED)
            for text in texts[start : start + 500]
        ]
        await engine.memories.remember(context.bot_id, drafts)
    await engine.index.drain()


async def _timed(call: Any, items: list[str]) -> list[float]:
    times = []
    for item in items:
        started = time.perf_counter()
        await call(item)
        times.append((time.perf_counter() - started) * 1000)
    return times


async def _run(args: Any) -> None:
    from amrita_plugin_cognition.api import ChatContext, Scope
    from amrita_plugin_cognition.index.embedders import LocalUSEEmbedder
    from amrita_plugin_cognition.index.second_model import FusedEmbedder, LocalE5Embedder

    fact_count = 300 if args.quick else args.facts
    query_count = 20 if args.quick else args.queries
    runs = 2 if args.quick else args.runs
    home = throwaway_home("second-latency")
    init_engine_only(home)
    quiet_cognition_logs()
    first, second = LocalUSEEmbedder(), LocalE5Embedder()
    fused = FusedEmbedder(first, second)
    plain_engine = await _engine(home, "plain", first)
    fused_engine = await _engine(home, "fused", fused)
    try:
        texts, asked = facts(fact_count), queries(query_count * runs)
        contexts = {}
        for name, engine in (("plain", plain_engine), ("fused", fused_engine)):
            contexts[name] = ChatContext(f"bench-{name}", Scope("group", "30001"), "10001", "小明")
            started = time.perf_counter()
            await _fill(engine, contexts[name], texts)
            print(
                f"{name}: {fact_count} facts written and indexed in {time.perf_counter() - started:.1f} s", flush=True
            )
        await first.embed_queries(["预热"])
        await second.embed_queries(["预热"])
        rounds: dict[str, list[tuple[float, float]]] = {}
        for run in range(runs):
            batch = asked[run * query_count : (run + 1) * query_count]
            measured = {
                "embed bundled": await _timed(lambda text: first.embed_queries([text]), batch),
                "embed e5": await _timed(lambda text: second.embed_queries([text]), batch),
                "embed joined": await _timed(lambda text: fused.embed_queries([text]), batch),
                "recall bundled": await _timed(
                    lambda text: plain_engine.memories.recall(contexts["plain"], [text]), batch
                ),
                "recall joined": await _timed(
                    lambda text: fused_engine.memories.recall(contexts["fused"], [text]), batch
                ),
            }
            for name, values in measured.items():
                rounds.setdefault(name, []).append(p50_p95(values))
        figures = {
            name: tuple(statistics.median(part) for part in zip(*pairs, strict=True)) for name, pairs in rounds.items()
        }
        for name, (p50, p95) in figures.items():
            print(f"{name:<15} p50 {p50:7.2f} ms  p95 {p95:7.2f} ms  (median of {runs} rounds of {query_count})")
        for label, top, bottom in (
            ("e5 / bundled query embedding", "embed e5", "embed bundled"),
            ("recall with e5 / without", "recall joined", "recall bundled"),
        ):
            (top50, top95), (bottom50, bottom95) = figures[top], figures[bottom]
            print(f"{label}: p50 ratio {top50 / bottom50:.2f}, p95 ratio {top95 / bottom95:.2f}")
    finally:
        await plain_engine.close()
        await fused_engine.close()
        remove_home(home)


def main() -> None:
    args = parse_args("the second local model's cost per query and per recall", _add_arguments)
    print(f"# bench/second_model_latency.py  {machine_line()}")
    if args.embed_only:
        _cpu_per_query(args)
        return
    asyncio.run(_run(args))


if __name__ == "__main__":
    main()
