"""The relevance floor of ``/memory … search`` (``engine/search.py``), measured on the public sets.

Stores MADial-Bench zh and LoCoMo (``/work/shared/data``, the files ``bench/quality.py`` reads)
through the real write path, asks every query through the real recall (as ``eval recall`` does),
and looks at the top-5 hits of each query: a hit is *relevant* when the set lists it for the
query, *irrelevant* otherwise. For each candidate floor it prints the share of relevant top-5
hits the floor keeps, the share of irrelevant top-5 hits it cuts, and R@5 before and after.

Floors compared: a shared significant word (``query_keywords``) OR cosine >= t (the shipped
rule), cosine >= t alone, a shared word alone, and the fused ranking score >= f. On these
queries (long questions, whole dialogues) nearly every hit shares a word with the query, so the
word part cannot be measured here; a search typed in a chat is a few words that often share none
with a real match (体检 / 检查身体). The script therefore picks the largest t at which the cosine
part ALONE keeps >= 0.98 of the relevant top-5 hits (those the vector side scored) on every set,
and compares it with ``engine.search.DEFAULT_FLOOR``. The fused score is shown to say why it is
not used: it is normalised per query, so it keeps nearly everything at any useful level.

    uv run python bench/relevance_floor.py [--quick] [--data DIR] [--dump FILE]

``--quick`` evaluates a slice of each set (first scope, 40 queries): not comparable.
Runs engine-only NoneBot on a throw-away folder; SQLite and embedded Chroma; no network.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from _common import (
    init_engine_only,
    machine_line,
    open_engine,
    parse_args,
    quiet_cognition_logs,
    remove_home,
    throwaway_home,
)
from quality import DEFAULT_DATA, SETS, quick_slice

TOP = 5
KEEP_TARGET = 0.98
COSINES = sorted({round(0.05 * step, 2) for step in range(0, 15)} | {0.16, 0.17, 0.18, 0.19})  # 0.00 … 0.70
FUSED = [0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5]

#: A hand-made probe of what ``/memory search`` is typed with: short Chinese keywords against one
#: person's facts (query -> indices of the facts judged relevant). NOT a public set: it only shows
#: how the chosen floor behaves on short queries, which the public sets do not have.
PROBE_FACTS = [
    "小明下周二上午去市医院做年度体检，要空腹。",
    "小明每周六下午在体育馆打羽毛球。",
    "小明上个月做了体检，血压有点高。",
    "小明的猫叫咪咪，三岁了。",
    "小明喜欢吃火锅，尤其是重庆火锅。",
    "小明去医院检查身体，医生说一切正常。",
    "小明周末和朋友去爬山。",
    "小明对花生过敏。",
    "小明在杭州一家互联网公司做后端开发。",
    "小明打算明年考研。",
]
PROBE_QUERIES = {
    "体检": {0, 2, 5},
    "羽毛球": {1},
    "医院": {0, 5},
    "身体检查": {0, 2, 5},
    "宠物": {3},
    "猫": {3},
    "吃的": {4},
    "过敏": {7},
    "工作": {8},
    "运动": {1, 6},
    "考试": {9},
    "健康": {0, 2, 5},
}


@dataclass(slots=True)
class Hit:
    """One of a query's top-5 hits, with what the floors look at."""

    set_name: str
    query_id: str
    rank: int
    relevant: bool
    similarity: float
    keyword_score: float
    score: float
    word_match: bool
    query_chars: int


async def collect(set_name: str, path: Path, home: Path) -> tuple[list[Hit], int]:
    """Every query's top-5 hits on a fresh bot account (one engine per set), and the number of
    relevant (query, memory) pairs (the denominator of R@5)."""
    from amrita_plugin_cognition.api import ChatContext
    from amrita_plugin_cognition.cli.evaluation import parse_recall_file, store_memories
    from amrita_plugin_cognition.engine.search import matches_keywords, query_keywords

    memories, queries = parse_recall_file(path)
    engine = await open_engine(home)
    bot_id = f"floor-{set_name.split()[0].lower()}"
    try:
        record_of = await store_memories(engine, bot_id, memories)
        await engine.index.drain()
        eval_ids: dict[int, set[str]] = {}
        for eval_id, record_id in record_of.items():
            eval_ids.setdefault(record_id, set()).add(eval_id)
        hits: list[Hit] = []
        pairs = 0
        for query in queries:
            relevant = set(query.relevant)
            pairs += len(relevant)
            context = ChatContext(bot_id, query.scope, query.asker[0] or query.scope.id, query.asker[1])
            result = await engine.memories.recall(context, [query.text], now=query.time, top_k=20)
            keywords = query_keywords(query.text)
            for rank, hit in enumerate(result.hits[:TOP], start=1):
                hits.append(
                    Hit(
                        set_name=set_name,
                        query_id=query.id,
                        rank=rank,
                        relevant=bool(eval_ids.get(hit.record.id, set()) & relevant),
                        similarity=round(hit.similarity, 4),
                        keyword_score=round(hit.keyword_score, 4),
                        score=round(hit.score, 4),
                        word_match=matches_keywords(keywords, hit.record),
                        query_chars=len(query.text),
                    )
                )
        return hits, pairs
    finally:
        await engine.close()


Rule = Callable[[Hit], bool]


def figures(hits: list[Hit], pairs: int, rule: Rule) -> tuple[float, float, float, float]:
    """(share of relevant top-5 hits kept, share of irrelevant ones cut, R@5, R@5 above the floor).
    R@5 here is relevant top-5 hits over relevant pairs (micro-averaged)."""
    relevant = [hit for hit in hits if hit.relevant]
    irrelevant = [hit for hit in hits if not hit.relevant]
    kept = sum(1 for hit in relevant if rule(hit))
    cut = sum(1 for hit in irrelevant if not rule(hit))
    return (
        kept / len(relevant) if relevant else 1.0,
        cut / len(irrelevant) if irrelevant else 0.0,
        len(relevant) / pairs if pairs else 0.0,
        kept / pairs if pairs else 0.0,
    )


def either(threshold: float) -> Rule:
    return lambda hit: hit.word_match or hit.similarity >= threshold


def cosine(threshold: float) -> Rule:
    return lambda hit: hit.similarity >= threshold


def fused(threshold: float) -> Rule:
    return lambda hit: hit.score >= threshold


def word(hit: Hit) -> bool:
    return hit.word_match


def print_table(name: str, hits: list[Hit], pairs: int) -> None:
    relevant = sum(1 for hit in hits if hit.relevant)
    print(
        f"\n{name}: {len({hit.query_id for hit in hits})} queries with hits, {len(hits)} top-{TOP} hits "
        f"({relevant} relevant, {len(hits) - relevant} irrelevant), {pairs} relevant pairs"
    )
    print(f"  {'floor':<28} {'relevant kept':>13} {'irrelevant cut':>14} {'R@5 (micro)':>11} {'above floor':>11}")

    def row(label: str, rule: Rule) -> None:
        kept, cut, before, after = figures(hits, pairs, rule)
        print(f"  {label:<28} {kept:>13.3f} {cut:>14.3f} {before:>11.3f} {after:>11.3f}")

    row("word match only", word)
    for threshold in COSINES:
        row(f"word OR cosine >= {threshold:.2f}", either(threshold))
    for threshold in COSINES:
        row(f"cosine >= {threshold:.2f}", cosine(threshold))
    for threshold in FUSED:
        row(f"fused score >= {threshold:.2f}", fused(threshold))


def dense_scored(hits: list[Hit]) -> list[Hit]:
    """The hits the vector side scored (a hit only the keyword side found has similarity 0.0)."""
    return [hit for hit in hits if hit.similarity != 0.0]


def pick(per_set: dict[str, tuple[list[Hit], int]]) -> float:
    """The largest cosine threshold (0.01 steps) that, ALONE, keeps KEEP_TARGET of the relevant
    top-5 hits the vector side scored, on every set.

    The word criterion cannot be measured on these queries (long questions and dialogues share
    a word with nearly every hit), and a search typed in a chat is a few words that often share
    none with a real match (体检 / 检查身体). So the cosine part must keep real matches on its
    own; the word part only adds to it."""
    best = 0.0
    for step in range(0, 101):
        threshold = step / 100
        kept = [figures(dense_scored(hits), pairs, cosine(threshold))[0] for hits, pairs in per_set.values()]
        if min(kept) >= KEEP_TARGET:
            best = threshold
    return best


def probe(threshold: float) -> list[str]:
    """The shipped rule on ``PROBE_QUERIES`` (every query against every fact), with the bundled
    embedder: relevant pairs kept, irrelevant pairs cut, and the pairs it gets wrong."""
    import numpy as np

    from amrita_plugin_cognition.engine.search import query_keywords, text_matches_keywords
    from amrita_plugin_cognition.index.embedders import LocalUSEEmbedder

    embedder = LocalUSEEmbedder()
    facts = embedder.embed_sync(PROBE_FACTS)
    queries = list(PROBE_QUERIES)
    similarity = embedder.embed_sync(queries) @ facts.T
    kept = cut = relevant_pairs = irrelevant_pairs = 0
    wrong: list[str] = []
    for row, query in enumerate(queries):
        keywords = query_keywords(query)
        for column, fact in enumerate(PROBE_FACTS):
            cosine_value = float(np.round(similarity[row, column], 3))
            shown = text_matches_keywords(keywords, fact) or cosine_value >= threshold
            if column in PROBE_QUERIES[query]:
                relevant_pairs += 1
                kept += shown
                if not shown:
                    wrong.append(f"missed {query} -> {fact} (cosine {cosine_value:.2f})")
            else:
                irrelevant_pairs += 1
                cut += not shown
                if shown:
                    wrong.append(f"shown {query} -> {fact} (cosine {cosine_value:.2f})")
    lines = [
        f"short-query probe (hand-made, {len(queries)} queries x {len(PROBE_FACTS)} facts; not a public set): "
        f"relevant kept {kept / relevant_pairs:.3f} ({kept}/{relevant_pairs}), "
        f"irrelevant cut {cut / irrelevant_pairs:.3f} ({cut}/{irrelevant_pairs})"
    ]
    lines += [f"  {item}" for item in wrong]
    return lines


def main() -> None:
    def extra(parser):  # type: ignore[no-untyped-def]
        parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
        parser.add_argument("--dump", type=Path, default=None, help="write every top-5 hit as JSON lines")

    args = parse_args("relevance floor of /memory search on MADial zh and LoCoMo", extra)
    home = throwaway_home("floor")
    try:
        init_engine_only(home)
        quiet_cognition_logs()
        from amrita_plugin_cognition.api import DEFAULT_FLOOR

        print(
            f"# bench/relevance_floor.py  {machine_line()}{'  [quick: slices, not comparable]' if args.quick else ''}"
        )
        per_set: dict[str, tuple[list[Hit], int]] = {}
        loop = asyncio.new_event_loop()
        for name, (relative, *_rest) in SETS.items():
            source = args.data / relative
            path = quick_slice(source, scopes=1, max_queries=40) if args.quick else source
            per_set[name] = loop.run_until_complete(collect(name, path, home))
            print_table(name, *per_set[name])
        if args.dump:
            with args.dump.open("w", encoding="utf-8") as handle:
                for hits, _pairs in per_set.values():
                    for hit in hits:
                        handle.write(json.dumps(asdict(hit), ensure_ascii=False) + "\n")
        chosen = pick(per_set)
        shipped = DEFAULT_FLOOR.min_similarity
        print(
            f"\nlargest t with cosine >= t alone keeping >= {KEEP_TARGET:.2f} of the relevant top-{TOP} hits "
            f"(scored by the vector side) on every set: {chosen:.2f}; shipped: {shipped:.2f}"
        )
        for name, (hits, pairs) in per_set.items():
            scored = dense_scored(hits)
            dense_kept = figures(scored, pairs, cosine(shipped))[0]
            kept, cut, before, after = figures(hits, pairs, either(shipped))
            unmatched = [hit for hit in hits if hit.relevant and not hit.word_match]
            rescued = sum(1 for hit in unmatched if hit.similarity >= shipped)
            print(
                f"  {name}: cosine >= {shipped:.2f} alone keeps {dense_kept:.3f} of {sum(h.relevant for h in scored)} "
                f"relevant scored hits (ratio to {KEEP_TARGET:.2f}: {dense_kept / KEEP_TARGET:.3f}, "
                f"{'OK' if dense_kept >= KEEP_TARGET else 'BELOW'}); shipped rule 'word OR cosine >= {shipped:.2f}' "
                f"keeps {kept:.3f} (ratio {kept / KEEP_TARGET:.3f}), cuts {cut:.3f} of irrelevant, "
                f"R@5 {before:.3f} -> {after:.3f}; relevant hits sharing no word: {len(unmatched)}, kept {rescued}"
            )
        print()
        print("\n".join(probe(shipped)))
    finally:
        remove_home(home)


if __name__ == "__main__":
    main()
