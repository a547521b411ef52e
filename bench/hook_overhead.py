"""Per-turn hook overhead with an EMPTY memory bank: ``build_context`` for a chat that has no
memories, no memo and no pins (a fresh store), p50/p95 over 1,000 calls. Target p95 <= 2 ms.

Patterns: ``distinct`` (a new message every turn in one chat, as in a live chat: the query
embedding cache misses), ``repeated`` (the same message every turn: that cache hits), ``new
chat`` (every turn in a chat not seen for a while: the per-chat caches, valid 10 s, miss too),
``new chat, bank answer expired`` (as ``new chat``, and the bot's "bank is empty" answer is
older than 10 s: the turn uses it and re-checks in the background), and ``first turn of a bot
account`` (every turn from a bot account the process has not served yet: nothing is known, the
turn asks the database; in the bot this happens at most once per account after a start, as the
account's bank is checked when it connects). When the p95 is over the target, a cProfile of the
distinct pattern shows where the time goes.

    uv run python bench/hook_overhead.py [--quick] [--no-profile]

Runs engine-only NoneBot on a throw-away folder; SQLite and embedded Chroma; no network.
"""

from __future__ import annotations

import asyncio
import cProfile
import io
import pstats
import time
from datetime import datetime

from _common import (
    init_engine_only,
    machine_line,
    median,
    ms_since,
    open_engine,
    p50_p95,
    parse_args,
    quiet_cognition_logs,
    remove_home,
    throwaway_home,
    verdict,
)
from _corpus import queries

from amrita_plugin_cognition.api import UTC

TARGET_P95_MS = 2.0
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


async def measure(engine, context, texts: list[str]) -> list[float]:  # type: ignore[no-untyped-def]
    """``context`` is one chat, or a function of the turn index giving a new chat every turn
    (then the per-chat caches never help: the cost of a chat's first turn in a while)."""

    times: list[float] = []
    for index, text in enumerate(texts):
        chat = context(index) if callable(context) else context
        started = time.perf_counter()
        built = await engine.turns.context(chat, [text], now=NOW)
        times.append(ms_since(started))
        if built.text:
            raise SystemExit(f"expected an empty block on an empty bank, got {built.text[:200]!r}")
    return times


async def stage_breakdown(engine, context, texts: list[str]) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """Median ms of the stages build_context runs, each timed alone (distinct queries)."""

    stages: dict[str, list[float]] = {"read_memo": [], "list_pins": [], "embed query (cold)": [], "recall": []}
    for index, text in enumerate(texts):
        started = time.perf_counter()
        await engine.notes.read_memo(context)
        stages["read_memo"].append(ms_since(started))
        started = time.perf_counter()
        await engine.notes.list_pins(context)
        stages["list_pins"].append(ms_since(started))
        started = time.perf_counter()
        await engine.embedder.embed_queries([f"{text}（{index}）"])
        stages["embed query (cold)"].append(ms_since(started))
        started = time.perf_counter()
        await engine.memories.recall(context, [f"{text}?{index}"], now=NOW)
        stages["recall"].append(ms_since(started))
    return {name: median(values) for name, values in stages.items()}


def profile(engine, context, texts: list[str], loop: asyncio.AbstractEventLoop) -> str:  # type: ignore[no-untyped-def]
    profiler = cProfile.Profile()
    profiler.enable()
    loop.run_until_complete(measure(engine, context, texts))
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).sort_stats("cumulative")
    stats.print_stats(22)
    return out.getvalue()


def main() -> None:
    args = parse_args(
        "per-turn hook overhead on an empty memory bank",
        lambda parser: parser.add_argument("--no-profile", action="store_true", help="skip the cProfile"),
    )
    calls = 100 if args.quick else 1000
    rounds = 1 if args.quick else 3
    home = throwaway_home("hook")
    try:
        init_engine_only(home)
        quiet_cognition_logs()
        from amrita_plugin_cognition.api import ChatContext, Scope

        loop = asyncio.new_event_loop()
        engine = loop.run_until_complete(open_engine(home))
        context = ChatContext("bench-bot", Scope("group", "30001"), "40001", "小明")
        distinct = queries(calls * (rounds + 2))
        loop.run_until_complete(measure(engine, context, distinct[:5]))  # warm-up: model load, connections
        print(f"# bench/hook_overhead.py  {machine_line()}  ({calls} calls x {rounds} rounds, empty bank)")
        results: dict[str, list[tuple[float, float]]] = {
            "distinct": [],
            "repeated": [],
            "new chat": [],
            "new chat, bank answer expired": [],
            "first turn of a bot account": [],
        }

        def new_chat(round_index: int):  # type: ignore[no-untyped-def]
            return lambda index: ChatContext(
                "bench-bot", Scope("group", str(1_000_000 * (round_index + 1) + index)), "40001", "小明"
            )

        def new_chat_expired(round_index: int):  # type: ignore[no-untyped-def]
            def chat(index: int) -> ChatContext:
                # as every 10 s: the empty-bank answer is stale, the turn re-checks in the background
                states = engine.caches.bank_state
                for bot, (empty, _) in list(states.items()):
                    states[bot] = (empty, 0.0)
                return ChatContext(
                    "bench-bot", Scope("group", str(2_000_000 * (round_index + 1) + index)), "40001", "小明"
                )

            return chat

        def new_bot(round_index: int):  # type: ignore[no-untyped-def]
            # the bank state of a bot account is unknown until its first turn has checked it
            return lambda index: ChatContext(
                f"bench-bot-{round_index}-{index}", Scope("group", "30001"), "40001", "小明"
            )

        for round_index in range(rounds):
            texts = distinct[calls * (round_index + 1) : calls * (round_index + 2)]
            results["distinct"].append(p50_p95(loop.run_until_complete(measure(engine, context, texts))))
            results["new chat"].append(p50_p95(loop.run_until_complete(measure(engine, new_chat(round_index), texts))))
            results["new chat, bank answer expired"].append(
                p50_p95(loop.run_until_complete(measure(engine, new_chat_expired(round_index), texts)))
            )
            results["first turn of a bot account"].append(
                p50_p95(loop.run_until_complete(measure(engine, new_bot(round_index), texts)))
            )
            results["repeated"].append(
                p50_p95(loop.run_until_complete(measure(engine, context, ["今天晚上吃什么好呢"] * calls)))
            )
        for name, pairs in results.items():
            p50 = median([pair[0] for pair in pairs])
            p95 = median([pair[1] for pair in pairs])
            print(
                f"build_context, empty bank, {name:<29} turns: p50 {p50:.3f} ms  p95 {p95:.3f} ms "
                f"(median of {rounds} rounds)  p95 {verdict(p95, TARGET_P95_MS)}"
            )
        stages = loop.run_until_complete(stage_breakdown(engine, context, distinct[: min(calls, 200)]))
        print("stage medians (each timed alone): " + ", ".join(f"{k} {v:.3f} ms" for k, v in stages.items()))
        worst = median([pair[1] for pair in results["distinct"]])
        if worst > TARGET_P95_MS and not args.no_profile and not args.quick:
            print("\n# cProfile of 200 build_context calls with distinct queries (cumulative):")
            print(profile(engine, context, distinct[-200:], loop))
        loop.close()
    finally:
        remove_home(home)


if __name__ == "__main__":
    main()
