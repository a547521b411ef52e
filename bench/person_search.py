"""A private chat's recall when its user has facts in many groups: the copy in SQL against the index.

Under the strict policy a private chat also searches every group where its user has facts (said by
them or about them), filtered on that person. Through the index that is one filtered query per
such group per turn; from the copy, one statement through the memory table's person indices for
all of them (``engine/exact_search.py``). This bench asks ``engine.memories.recall`` (the whole
recall: keyword side, query embedding, both vector paths) from random users' private chats,
alternating ``recall.exact_search_max_vectors`` between 500 (the copy) and 0 (always the index)
query by query on one engine, so both see the same machine.

The bank, written through ``engine.memories.remember`` and the outbox drain (row, keyword row,
index and copy): ``GROUPS`` groups of ``GROUP_FACTS`` facts by other members, and ``USERS`` users,
each with ``USER_FACTS`` facts in each of ``USER_GROUPS`` random groups. Vectors are synthetic
(``_corpus.SyntheticEmbedder``: each query still pays the local model's encoding); the default
index settings (embedded Chroma keeps ``chroma.cached_indexes`` collections in memory). p50/p95 per
mode, median over ``--runs`` runs (a fresh process each), the ratio copy / index in the same run.
``--backend server``: PostgreSQL (a database of the run's own) and a ``chroma run`` server of its own.

    uv run python bench/person_search.py [--quick] [--runs 3] [--backend embedded|server]
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import time
from typing import Any

from _common import child_json, machine_line, median, open_engine, p50_p95, parse_args

GROUPS = 40
GROUP_FACTS = 200
USERS = 30
USER_GROUPS = 12
USER_FACTS = 4
QUERIES = 200
MODES = {"copy": 500, "index": 0}


async def measure(groups: int, queries: int, backend: str) -> dict[str, Any]:
    from _corpus import SyntheticEmbedder, facts
    from _corpus import queries as corpus_queries
    from _store import throwaway_backend

    async with throwaway_backend("person-search", backend, {"mode": "embedded"}) as (home, chroma):
        from amrita_plugin_cognition.api import ChatContext, Importance, MemoryDraft, Scope

        engine = await open_engine(home, embedder=SyntheticEmbedder(), chroma=chroma)
        await engine.index.check_fingerprint()  # as at a bot's first start: a new bank's copy is complete
        rng = random.Random(5)
        bot = "bench"
        users = [str(20_000 + number) for number in range(USERS)]
        texts = iter(facts(groups * GROUP_FACTS + USERS * USER_GROUPS * USER_FACTS, seed=19))
        drafts: list[Any] = []
        for number in range(groups):
            scope = Scope("group", str(900_000 + number))
            members = [str(10_000 + rng.randrange(500)) for _ in range(GROUP_FACTS)]
            drafts += [
                MemoryDraft(next(texts), scope, speaker_id=member, importance=Importance.MEDIUM) for member in members
            ]
        person_facts = 0
        for user in users:
            for number in rng.sample(range(groups), min(USER_GROUPS, groups)):
                scope = Scope("group", str(900_000 + number))
                drafts += [
                    MemoryDraft(next(texts), scope, speaker_id=user, importance=Importance.MEDIUM)
                    for _ in range(USER_FACTS)
                ]
                person_facts += USER_FACTS
        rng.shuffle(drafts)  # a bot's writes come chat after chat, interleaved
        for start in range(0, len(drafts), 500):
            await engine.memories.remember(bot, drafts[start : start + 500])
        await engine.index.drain()
        asked = corpus_queries(queries * len(MODES), seed=29)
        times: dict[str, list[float]] = {mode: [] for mode in MODES}
        hits: dict[str, int] = dict.fromkeys(MODES, 0)
        for number, query in enumerate(asked):
            mode = list(MODES)[number % len(MODES)]
            engine.config.recall.exact_search_max_vectors = MODES[mode]
            user = rng.choice(users)
            context = ChatContext(bot, Scope("private", user), user, f"用户{user}")
            began = time.perf_counter()
            result = await engine.memories.recall(context, [query])
            times[mode].append((time.perf_counter() - began) * 1000)
            assert result.mode == "full", result.mode
            assert all(hit.record.speaker_id == user for hit in result.hits)  # only the person's group facts
            hits[mode] += len(result.hits)
        await engine.close()
        figures: dict[str, Any] = {"facts": len(drafts), "person_facts_each": USER_GROUPS * USER_FACTS}
        for mode, values in times.items():
            figures[f"{mode}_p50"], figures[f"{mode}_p95"] = p50_p95(values)
            figures[f"{mode}_hits"] = hits[mode]
        return figures


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        print(json.dumps(asyncio.run(measure(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]))))
        return

    def options(parser: Any) -> None:
        parser.add_argument("--runs", type=int, default=3)
        parser.add_argument("--backend", choices=("embedded", "server"), default="embedded")

    args = parse_args(__doc__, extra=options)
    groups = 8 if args.quick else GROUPS
    runs = 1 if args.quick else args.runs
    queries = 20 if args.quick else QUERIES
    print(f"{machine_line()}, backend {args.backend}")
    results = [child_json(__file__, "--child", str(groups), str(queries), args.backend) for _ in range(runs)]
    first = results[0]
    print(
        f"{groups} groups, {first['facts']:,} facts; each of {USERS} users has {first['person_facts_each']} facts"
        f" in {min(USER_GROUPS, groups)} groups; {queries} queries per mode, {runs} run(s)"
    )
    print("| path | recall p50 / p95 (medians) | hits |")
    print("|---|---|---|")
    for mode in MODES:
        p50 = median([result[f"{mode}_p50"] for result in results])
        p95 = median([result[f"{mode}_p95"] for result in results])
        print(f"| {mode} | {p50:.2f} / {p95:.2f} ms | {first[f'{mode}_hits']} |")
    ratio = median([result["copy_p95"] / result["index_p95"] for result in results])
    print(f"copy / index p95, median of the runs' ratios: {ratio:.2f}")


if __name__ == "__main__":
    main()
