"""The process's memory stays flat whatever the number of chats: RSS while 100,000 DISTINCT chats
each have one turn, on a bank that is not empty.

The per-turn caches are bounded (``engine/caches.py``: TTL caches of 20,000 chats, valid 10 s;
the hook's last inputs ``engine/caches.py::TurnCaches.recent_inputs``: an LRU of 20,000 chats; the unit of
work's per-chat locks: an LRU of 4,096, taken by writes only). So once the caches are full the
resident set should stop growing: the figure is RSS at 100k chats / RSS at 25k chats (close to 1).

Every turn does what the bot's hook does: ``recall_queries`` (the hook's own function, which
keeps the chat's last inputs), then ``build_context`` under the hook's timeout. The bank holds a
few facts, a memo and pins in a handful of chats (an empty bank short-circuits every turn), so a
new chat costs the one-statement read of its memo, pins and "sees any fact?" answer, which the
caches keep. Every ``--recall-every``-th turn one more turn goes to one of the chats with facts
(a full recall: query embedding, keyword and vector search), timed apart. Chats alternate
between groups and private chats, all ids distinct; texts are short, distinct Chinese lines.

RSS is ``VmRSS`` of ``/proc/self/status`` after ``gc.collect()``; the per-turn times are kept in a
preallocated array and the texts are made per turn, so the bench itself holds no growing state.
``--tracemalloc`` traces allocations from the first chat on and prints the largest growth by
source line between the 25 % point and the end (the caches' live entries are traced at both
points, so their turnover cancels out; tracing costs ~10x the time and some memory: its RSS
figures are not the plain ones).

    uv run python bench/cache_memory.py [--quick] [--chats N] [--recall-every N] [--tracemalloc]

Runs engine-only NoneBot on a throw-away folder; SQLite and embedded Chroma; the bundled local
embedder; no network.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import time
import tracemalloc
from array import array
from datetime import datetime, timedelta
from typing import Any

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
)
from _corpus import facts, queries

from amrita_plugin_cognition.api import UTC

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
BOT_ID = "bench-bot"
#: Appended to the base queries so that 100,000 short texts are all distinct.
TAILS = [
    "",
    "？",
    "，你记得吗",
    "，我忘了",
    "，帮我想想",
    "，说说看",
    "呀",
    "呢",
    "，快告诉我",
    "，有印象吗",
    "，还记得不",
    "？急",
    "，问一下",
    "，好奇",
    "，随便聊聊",
    "，想知道",
    "，你说呢",
    "啊",
    "，请问",
    "，顺便问问",
]
BASES = 5_000
SEEDED_GROUPS = ["30001", "30002", "30003", "30004"]
SEEDED_PRIVATE = ["10001", "10002"]


def rss_kib() -> int:
    """Resident set of this process (``VmRSS``), in KiB."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS in /proc/self/status")


def mib(kib: float) -> float:
    return kib / 1024.0


def sample_points(chats: int, quick: bool) -> list[int]:
    points = [0, 1_000, 2_500, 5_000] if quick else [0, 1_000, 10_000, 25_000, 50_000, 75_000, 100_000]
    scale = chats / points[-1]
    return sorted({min(chats, round(point * scale)) for point in points})


async def seed_bank(engine: Any) -> dict[str, int]:
    """A few facts, memos and pins in a handful of chats, written through the engine."""
    from amrita_plugin_cognition.api import ChatContext, MemoryDraft, Provenance, Scope

    texts = facts(48)
    speakers = [*SEEDED_PRIVATE, "40001", "40002", "40003"]
    drafts = [
        MemoryDraft(
            text=text,
            scope=Scope("group", SEEDED_GROUPS[index % len(SEEDED_GROUPS)]),
            speaker_id=speakers[index % len(speakers)],
            speaker_name=text[:2],
            provenance=Provenance.IMPORTED,
            happened_at=NOW - timedelta(days=400 - 7 * index),
        )
        for index, text in enumerate(texts[:40])
    ]
    drafts += [
        MemoryDraft(
            text=text,
            scope=Scope("private", SEEDED_PRIVATE[index % len(SEEDED_PRIVATE)]),
            speaker_id=SEEDED_PRIVATE[index % len(SEEDED_PRIVATE)],
            provenance=Provenance.IMPORTED,
            happened_at=NOW - timedelta(days=60 - 7 * index),
        )
        for index, text in enumerate(texts[40:])
    ]
    result = await engine.memories.remember(BOT_ID, drafts, now=NOW - timedelta(days=1))
    await engine.index.drain()
    memos = pins = 0
    for group in SEEDED_GROUPS[:2]:
        owner = ChatContext(BOT_ID, Scope("group", group), "40001", "小明", group_role="owner")
        await engine.notes.update_memo(owner, "群规：周五晚上八点开黑，迟到的请奶茶。\n下次聚会地点待定。", now=NOW)
        memos += 1
    for group in SEEDED_GROUPS[1:]:
        member = ChatContext(BOT_ID, Scope("group", group), "40002", "小红", group_role="member")
        await engine.notes.add_pin(member, "周六上午十点提醒大家交报名表", now=NOW)
        await engine.notes.add_pin(member, "下周三是阿杰生日，记得准备蛋糕", now=NOW)
        pins += 2
    private = ChatContext(BOT_ID, Scope("private", SEEDED_PRIVATE[0]), SEEDED_PRIVATE[0], "小明")
    await engine.notes.update_memo(private, "我对花生过敏，别推荐花生做的菜。", now=NOW)
    await engine.notes.add_pin(private, "每天晚上十一点提醒我睡觉", now=NOW)
    return {"facts": len(result.written), "memos": memos + 1, "pins": pins + 1}


def seeded_chat(index: int) -> Any:
    from amrita_plugin_cognition.api import ChatContext, Scope

    if index % 3 == 2:
        user = SEEDED_PRIVATE[index % len(SEEDED_PRIVATE)]
        return ChatContext(BOT_ID, Scope("private", user), user, "小明")
    return ChatContext(BOT_ID, Scope("group", SEEDED_GROUPS[index % len(SEEDED_GROUPS)]), "40001", "小明")


def distinct_chat(index: int) -> Any:
    """Chat ``index``: groups and private chats alternate, every id distinct (and unlike the seeded ones)."""
    from amrita_plugin_cognition.api import ChatContext, Scope

    if index % 2 == 0:
        return ChatContext(BOT_ID, Scope("group", str(7_000_000 + index)), str(8_000_000 + index), "群友")
    user = str(9_000_000 + index)
    return ChatContext(BOT_ID, Scope("private", user), user, "网友")


def turn_text(bases: list[str], index: int) -> str:
    """A new string object every turn (as an incoming message is), distinct up to 100,000 turns."""
    return f"{bases[index % len(bases)]}{TAILS[(index // len(bases)) % len(TAILS)]}"


class Hook:
    """What ``bot/hook.py::inject_memory`` does per turn, past the NoneBot event: the config
    checks, ``recall_queries`` (keeps the chat's last inputs), ``engine.turns.context`` under the hook's
    timeout."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.recent_inputs = engine.caches.recent_inputs
        try:
            from amrita_plugin_cognition.bot import hook
        except Exception as error:  # engine-only NoneBot may not load the adapter
            self.recall_queries = lambda engine, context, text, short: engine.turns.recall_queries(
                context.bot_id, context.scope, text, short
            )
            self.how = f"replicated (importing amrita_plugin_cognition.bot failed: {type(error).__name__}: {error})"
        else:
            self.recall_queries = hook.recall_queries
            self.how = "bot.hook.recall_queries + engine.turns.context under the hook's timeout"

    async def turn(self, context: Any, text: str) -> Any:
        engine = self.engine
        if not engine.config.enable or context.scope.key in engine.config.disabled_scopes:
            return None
        chat_queries = self.recall_queries(engine, context, text, engine.config.recall.short_query_chars)
        return await asyncio.wait_for(
            engine.turns.context(context, chat_queries, now=NOW),
            timeout=engine.config.hook_timeout_seconds,
        )


def cache_sizes(engine: Any, hook: Hook) -> dict[str, str]:
    caches = engine.caches
    sizes = {
        "chat_sees": f"{len(caches.chat_sees)}/{caches.chat_sees.maxsize}",
        "notes": f"{len(caches.notes)}/{caches.notes.maxsize}",
        "bank_state": f"{len(caches.bank_state)}/{caches.bank_state.maxsize}",
        "scope_locks": f"{len(engine._scope_locks._locks)}/{engine._scope_locks._locks.maxsize}",
        "query_vectors": f"{len(engine.embedder._cache)}/{engine.embedder._max_entries}",
    }
    sizes["recent_inputs"] = f"{len(hook.recent_inputs)}/{hook.recent_inputs.maxsize}"
    return sizes


async def run(args: Any, home: Any) -> None:
    from amrita_plugin_cognition.engine.caches import CHAT_TTL_SECONDS

    chats = args.chats or (5_000 if args.quick else 100_000)
    points = sample_points(chats, args.quick)
    fill_point = points[len(points) // 2] if args.quick else min(chats, round(25_000 * chats / 100_000))
    started_all = time.perf_counter()

    before_engine = rss_kib()
    engine = await open_engine(home)
    hook = Hook(engine)  # imports the bot package (Amrita's chat core with it) before any sample
    quiet_cognition_logs()
    gc.collect()
    after_start = rss_kib()
    seeded = await seed_bank(engine)
    bases = queries(BASES)
    times = array("d", bytes(8 * chats))  # preallocated: the bench's own state does not grow
    recall_every = max(0, args.recall_every)
    recall_times = array("d", bytes(8 * (chats // recall_every + 1 if recall_every else 1)))
    recall_memories = 0
    # warm-up in the seeded chats: the model, the connections, the Chroma collections
    for index in range(12):
        await hook.turn(seeded_chat(index), f"{bases[index]}（热身）")
    await asyncio.sleep(0)
    await engine.settle()

    print(f"# bench/cache_memory.py  {machine_line()}")
    print(
        f"# {chats:,} distinct chats x 1 turn (groups and private chats alternating), bank: "
        f"{seeded['facts']} facts, {seeded['memos']} memos, {seeded['pins']} pins in "
        f"{len(SEEDED_GROUPS) + len(SEEDED_PRIVATE)} chats; a recall turn in a seeded chat every "
        f"{recall_every or 'never'} turns; chat caches valid {CHAT_TTL_SECONDS:g} s"
    )
    print(f"# per turn: {hook.how}")
    if args.tracemalloc:
        print(f"# tracemalloc on from 0 chats, compared {fill_point:,} -> {chats:,}: RSS below includes its overhead")
    print(f"RSS before engine start: {mib(before_engine):.1f} MiB (NoneBot, models not loaded)")
    print(
        f"RSS baseline right after engine start (bot hook imported): {mib(after_start):.1f} MiB "
        "(the embedding model loads at the first embedding: the 0-chat row is after the bank's writes and a warm-up)"
    )

    header = f"{'chats':>9}  {'RSS MiB':>9}  {'vs 0':>8}  {'elapsed s':>9}  caches (len/max)"
    print(header)
    rss_at: dict[int, int] = {}
    snapshot_at_fill = None

    def sample(done: int) -> None:
        nonlocal snapshot_at_fill
        gc.collect()
        rss_at[done] = rss_kib()
        sizes = " ".join(f"{name} {value}" for name, value in cache_sizes(engine, hook).items())
        grown = mib(rss_at[done] - rss_at[points[0]])
        elapsed = time.perf_counter() - run_started
        print(f"{done:>9,}  {mib(rss_at[done]):>9.1f}  {grown:>+8.1f}  {elapsed:>9.1f}  {sizes}", flush=True)
        if args.tracemalloc and done == 0:
            tracemalloc.start(6)
        if args.tracemalloc and done == fill_point:
            snapshot_at_fill = tracemalloc.take_snapshot()

    run_started = time.perf_counter()
    sample(0)
    next_points = iter(points[1:])
    next_point = next(next_points, None)
    recalls = 0
    for index in range(chats):
        text = turn_text(bases, index)
        context = distinct_chat(index)
        began = time.perf_counter()
        built = await hook.turn(context, text)
        times[index] = ms_since(began)
        if built is None or built.text:
            raise SystemExit(f"a new chat got a block or no turn: {built!r}")
        if recall_every and index % recall_every == recall_every - 1:
            began = time.perf_counter()
            built = await hook.turn(seeded_chat(recalls), turn_text(bases, chats + index))
            recall_times[recalls] = ms_since(began)
            recall_memories += built.memories
            recalls += 1
        done = index + 1
        if done == next_point:
            await engine.settle()
            sample(done)
            next_point = next(next_points, None)

    print()
    first, last = rss_at[fill_point], rss_at[chats]
    print(
        f"RSS growth {fill_point:,} -> {chats:,} chats: {mib(last - first):+.1f} MiB; "
        f"ratio RSS@{chats:,} / RSS@{fill_point:,} = {last / first:.3f}"
    )
    print(
        f"RSS growth 0 -> {chats:,} chats: {mib(last - rss_at[0]):+.1f} MiB "
        f"({(last - rss_at[0]) / chats * 1024:.0f} bytes per chat); over the engine-start baseline "
        f"{mib(last - after_start):+.1f} MiB"
    )
    sizes = cache_sizes(engine, hook)
    print(
        f"engine caches at the end: len(engine.caches.chat_sees) = {sizes['chat_sees']}, "
        f"len(engine.caches.notes) = {sizes['notes']} (len/maxsize; TTL {CHAT_TTL_SECONDS:g} s)"
    )
    print("all caches at the end: " + ", ".join(f"{name} {value}" for name, value in sizes.items()))
    p50, p95 = p50_p95(list(times))
    print(f"new-chat turn: median {p50:.3f} ms  p95 {p95:.3f} ms  ({chats:,} turns)")
    if recalls:
        r50, r95 = p50_p95(list(recall_times[:recalls]))
        print(
            f"seeded-chat (recall) turn: median {r50:.3f} ms  p95 {r95:.3f} ms  ({recalls:,} turns, "
            f"{recall_memories / recalls:.1f} memories recalled per turn)"
        )
    segments = []
    for low, high in itertools.pairwise(points):
        segments.append(f"{low:,}-{high:,}: {median(list(times[low:high])):.3f}")
    print("new-chat turn median by segment (ms): " + ", ".join(segments))
    print(f"total {time.perf_counter() - started_all:.1f} s")

    if snapshot_at_fill is not None:
        gc.collect()
        final = tracemalloc.take_snapshot()
        tracemalloc.stop()
        filters = [tracemalloc.Filter(False, tracemalloc.__file__)]
        stats = final.filter_traces(filters).compare_to(snapshot_at_fill.filter_traces(filters), "lineno")
        total = sum(stat.size_diff for stat in stats) / 1024
        print(f"\n# tracemalloc: traced Python memory {fill_point:,} -> {chats:,} chats: {total:+.1f} KiB, by line")
        for stat in stats[:15]:
            print(f"  {stat.size_diff / 1024:+9.1f} KiB  {stat.count_diff:+8d} blocks  {stat.traceback[0]}")
        biggest = stats[0] if stats else None
        if biggest is not None and biggest.size_diff > 0:
            print("\n# traceback of the largest growth:")
            for frame in (
                final.filter_traces(filters)
                .compare_to(snapshot_at_fill.filter_traces(filters), "traceback")[0]
                .traceback.format()
            ):
                print(f"  {frame}")
    await engine.settle()


def main() -> None:
    def extra(parser: Any) -> None:
        parser.add_argument("--chats", type=int, default=0, help="distinct chats (default 100,000; 5,000 quick)")
        parser.add_argument(
            "--recall-every", type=int, default=100, help="one more turn in a seeded chat every N turns (0: none)"
        )
        parser.add_argument("--tracemalloc", action="store_true", help="trace allocations, print growth 25 %%->end")

    args = parse_args("RSS while many distinct chats each have one turn", extra)
    home = throwaway_home("cache-memory")
    try:
        init_engine_only(home)
        quiet_cognition_logs()
        asyncio.run(run(args, home))
    finally:
        remove_home(home)


if __name__ == "__main__":
    main()
