"""The consolidation cycle's model-free pre-pass on ONE chat of 1,000 memories: how many planted
exact duplicates it merges, whether any fact is lost, and how long it takes (median of several runs,
each on a fresh chat built the same way).

Each chat holds 880 distinct template facts (``_corpus.facts``), 100 planted exact duplicates (one
of those facts written again with other punctuation, an extra space or no final full stop: the same
text once folded, the same speaker and time) and 20 near ones (the date written another way and
moved: what only the judgement step may merge). Every memory goes through the real write path
(admission, SQL, outbox, Chroma); vectors come from the corpus cache of the local model.

Checked after each run, from storage (``engine.governance.inspect``): every planted pair merged
into one active ``consolidated`` memory whose text is one of the pair's; every one of the 1,000
memories still reachable (active, or superseded by an active merge that names it as a source);
no near pair merged. Timed: ``engine.consolidation.run_now`` (clusters, plans, one unit of work per
merge; the judgement step off: ``daily_token_budget = 0``, recorded as skipped) and the dry run
(clusters and plans only).

    uv run python bench/consolidation_prepass.py [--quick] [--runs N]
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import time
from datetime import datetime, timedelta, timezone

from _common import machine_line, median, parse_args, quiet_cognition_logs, remove_home, throwaway_home
from _corpus import cached_vectors, facts

BOT_ID = "bench-prepass"
FULL = (880, 100, 20)
QUICK = (176, 20, 4)
_DATE = re.compile(r"(\d{4})年(\d{1,2})月(\d{1,2})日")


def exact_copy(text: str, number: int) -> str:
    """The same text once folded: other final punctuation, a space inside, or no final full stop
    (full-width digits are no copy: the write path folds them, and the copy is refused as a
    duplicate at once)."""
    kind = number % 3
    if kind == 0:
        return text.rstrip("。") + "！"
    if kind == 1:
        return text[:2] + " " + text[2:]
    return text.rstrip("。")


def near_copy(text: str) -> str:
    """The same fact reworded: the date as 2024-03-05, moved to the front."""
    found = _DATE.search(text)
    if found is None:
        return "据说，" + text
    iso = f"{found.group(1)}-{int(found.group(2)):02d}-{int(found.group(3)):02d}"
    return f"{iso}，{text[: found.start()] + text[found.end() :]}"


async def build_chat(engine, scope, texts, base_count: int, planted: int, near: int):  # type: ignore[no-untyped-def]
    """Write one chat; returns every id, the planted (original, copy) pairs and the near pairs."""
    from amrita_plugin_cognition.api import MemoryDraft, Provenance

    rng = random.Random(int(scope.id))
    chosen = rng.sample(range(base_count), planted + near)
    base = datetime(2024, 1, 1, tzinfo=timezone.utc)
    when = [base + timedelta(minutes=index) for index in range(base_count)]
    entries = [(text, when[index]) for index, text in enumerate(texts)]
    entries += [(exact_copy(texts[index], number), when[index]) for number, index in enumerate(chosen[:planted])]
    entries += [(near_copy(texts[index]), when[index]) for index in chosen[planted:]]
    ids: list[int] = []
    for start in range(0, len(entries), 500):
        drafts = [
            MemoryDraft(text=text, scope=scope, provenance=Provenance.IMPORTED, happened_at=at)
            for text, at in entries[start : start + 500]
        ]
        result = await engine.memories.remember(BOT_ID, drafts, now=base + timedelta(days=400))
        assert len(result.written) == len(drafts), result.refused[:3]
        ids += [result.record_ids[index] for index in range(len(drafts))]
    await engine.index.drain()
    pairs = [(ids[index], ids[base_count + number]) for number, index in enumerate(chosen[:planted])]
    near_pairs = [(ids[index], ids[base_count + planted + number]) for number, index in enumerate(chosen[planted:])]
    return ids, pairs, near_pairs, {memory_id: text for memory_id, (text, _) in zip(ids, entries, strict=True)}


async def lineage_check(engine, scope, ids, pairs, near_pairs, texts):  # type: ignore[no-untyped-def]
    """(planted pairs merged, memories reachable, near pairs merged), read back from storage."""
    from amrita_plugin_cognition.api import InspectFilter

    found = {}
    offset = 0
    while True:
        page, total = await engine.governance.inspect(InspectFilter(bot_id=BOT_ID, scope=scope), offset, 200)
        found.update((item.record.id, item) for item in page)
        offset += len(page)
        if not page or offset >= total:
            break

    def current(memory_id: int):  # type: ignore[no-untyped-def]
        item = found.get(memory_id)
        if item is None:
            return None
        if item.record.status.value == "active":
            return item.record
        head = found.get(item.superseded_by[-1]) if item.superseded_by else None
        if head is None or head.record.status.value != "active":
            return None
        if memory_id not in head.record.source.get("sources", []):
            return None
        return head.record

    merged = 0
    for original, copy in pairs:
        first, second = current(original), current(copy)
        same = first is not None and second is not None and first.id == second.id
        if same and first.provenance == "consolidated" and first.text in (texts[original], texts[copy]):
            merged += 1
    reachable = sum(1 for memory_id in ids if current(memory_id) is not None)
    near_merged = sum(
        1
        for first, second in near_pairs
        if (current(first) and current(second) and current(first).id == current(second).id)
    )
    return merged, reachable, near_merged


async def main() -> None:
    args = parse_args(__doc__ or "", lambda parser: parser.add_argument("--runs", type=int, default=5))
    base_count, planted, near = QUICK if args.quick else FULL
    home = throwaway_home("prepass")
    try:
        from _common import init_engine_only, open_engine
        from _corpus import PrecomputedEmbedder

        init_engine_only(home)
        quiet_cognition_logs()
        from amrita_plugin_cognition.api import Operator, Scope

        texts = facts(base_count)
        vectors = cached_vectors(texts)
        # the pre-pass alone: the judgement step (the model) is off (a daily budget of 0)
        engine = await open_engine(
            home, embedder=PrecomputedEmbedder(texts, vectors), consolidation={"daily_token_budget": 0}
        )
        await engine.index.check_fingerprint()
        runs, dry_runs, results = [], [], []
        for run in range(args.runs):
            scope = Scope("group", str(710001 + run))
            ids, pairs, near_pairs, by_id = await build_chat(engine, scope, texts, base_count, planted, near)
            started = time.perf_counter()
            await engine.consolidation.dry_run(Operator(), BOT_ID, scope)
            dry_runs.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            report = await engine.consolidation.run_now(Operator(), BOT_ID, scope)
            runs.append((time.perf_counter() - started) * 1000)
            merged, reachable, near_merged = await lineage_check(engine, scope, ids, pairs, near_pairs, by_id)
            results.append((len(ids), len(report.merged), merged, reachable, near_merged, len(report.near)))
        await engine.close()
        print(f"{machine_line()}, load average {os.getloadavg()[0]:.1f}")
        total, done, merged, reachable, near_merged, proposed = results[-1]
        print(
            f"one chat of {total} memories ({planted} planted exact duplicates, {near} near), {args.runs} runs: "
            f"planted merged {min(row[2] for row in results)}/{planted} (worst run; "
            f"{'OK' if min(row[2] for row in results) >= 0.9 * planted else 'UNDER 90 %'}), "
            f"merges written {done}, memories reachable by lineage {min(row[3] for row in results)}/{total}, "
            f"near pairs merged {max(row[4] for row in results)} (must be 0), near clusters proposed {proposed}"
        )
        print(
            f"pre-pass (clusters + merges): median {median(runs):.0f} ms (min {min(runs):.0f}, max {max(runs):.0f}); "
            f"dry run (clusters + plans): median {median(dry_runs):.0f} ms"
        )
        if any(row[2] < 0.9 * planted or row[3] != row[0] or row[4] for row in results):
            raise SystemExit("FAILED: a planted duplicate was left, a fact lost, or a near pair merged")
    finally:
        remove_home(home)


if __name__ == "__main__":
    asyncio.run(main())
