"""The consolidation pre-pass's near-duplicate clusters of ONE chat of 10,000 memories:
``engine.memories.duplicate_clusters`` (SQL read, stored vectors read from their copy in SQL,
candidate pairs, the parts decision, union-find), median of several runs, with the candidate pairs
and the pairs judged; then the chat's vectors read both ways, from the copy and from Chroma.

The chat holds 9,000 distinct template facts (``_corpus.facts``: people x dates x companions x
places x activities, so many pairs are close in vector space yet differ in a part) and 1,000
planted rewrites of some of them (the date in another writing, the sentence reordered). Every
memory goes through the real write path (admission, SQL, outbox, Chroma); the template facts'
vectors come from the corpus cache of the same local model, the rewrites are embedded by it.

Two ways to find the candidate pairs are timed on the same stored vectors: blocked matrix
products over the upper triangle (``domain.clusters.close_pairs``, what the engine uses) and
Chroma neighbour queries (every vector asked for its 10 nearest in a collection holding the same
vectors), so the choice is measured, not assumed.

    uv run python bench/dedup_clusters.py [--quick] [--runs N]
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import time
from datetime import datetime, timedelta, timezone

import numpy as np
from _common import machine_line, median, parse_args, quiet_cognition_logs, remove_home, throwaway_home
from _corpus import cached_vectors, facts
from _store import peer_client_at

BOT_ID = "bench-dedup"
GROUP_ID = "700001"
FULL = (9_000, 1_000)
QUICK = (1_800, 200)
TARGET_MS = 2_000.0
NEIGHBOURS = 10
_DATE = re.compile(r"(\d{4})年(\d{1,2})月(\d{1,2})日")


def rewrite(text: str, rng: random.Random) -> str:
    """The same fact written another way: the date as 2024-03-05, and the date moved to the front
    (or kept in place with a comma dropped)."""
    found = _DATE.search(text)
    if found is None:  # every template fact has a date
        return text + "。"
    iso = f"{found.group(1)}-{int(found.group(2)):02d}-{int(found.group(3)):02d}"
    without = text[: found.start()] + text[found.end() :]
    if rng.random() < 0.5:
        return f"{iso}，{without}"
    return text[: found.start()] + iso + text[found.end() :]


async def build(home, base_count: int, planted: int):  # type: ignore[no-untyped-def]
    from _common import init_engine_only, open_engine
    from _corpus import PrecomputedEmbedder

    from amrita_plugin_cognition.api import MemoryDraft, Provenance, Scope

    texts = facts(base_count)
    vectors = cached_vectors(texts)
    rng = random.Random(3)
    sources = rng.sample(range(base_count), planted)
    rewrites = [rewrite(texts[index], rng) for index in sources]
    init_engine_only(home)
    quiet_cognition_logs()
    engine = await open_engine(home, embedder=PrecomputedEmbedder(texts, vectors))
    await engine.index.check_fingerprint()
    scope = Scope("group", GROUP_ID)
    base = datetime(2024, 1, 1, tzinfo=timezone.utc)
    everything = texts + rewrites
    ids: list[int] = []
    for start in range(0, len(everything), 1000):
        drafts = [
            MemoryDraft(text=text, scope=scope, provenance=Provenance.IMPORTED, happened_at=base + timedelta(minutes=i))
            for i, text in enumerate(everything[start : start + 1000], start=start)
        ]
        result = await engine.memories.remember(BOT_ID, drafts, now=base + timedelta(days=400))
        ids += [result.record_ids[index] for index in range(len(drafts))]
        await engine.index.drain()
    await engine.index.drain()
    planted_pairs = [(ids[source], ids[base_count + number]) for number, source in enumerate(sources)]
    return engine, scope, planted_pairs


def chroma_neighbour_pairs(home, vectors: np.ndarray, threshold: float) -> tuple[float, int]:  # type: ignore[no-untyped-def]
    """Milliseconds to find the close pairs by asking Chroma each vector's nearest neighbours."""
    collection = peer_client_at(home / "peer").get_or_create_collection(
        "dedup_peer", metadata={"hnsw:space": "cosine"}, embedding_function=None
    )
    ids = [str(row) for row in range(len(vectors))]
    for start in range(0, len(vectors), 5000):
        collection.add(ids=ids[start : start + 5000], embeddings=vectors[start : start + 5000])
    started = time.perf_counter()
    pairs: set[tuple[int, int]] = set()
    for start in range(0, len(vectors), 1000):
        result = collection.query(
            query_embeddings=vectors[start : start + 1000], n_results=NEIGHBOURS, include=["distances"]
        )
        for offset, (found, distances) in enumerate(zip(result["ids"], result["distances"], strict=True)):
            row = start + offset
            for other, distance in zip(found, distances, strict=True):
                if int(other) != row and 1.0 - distance >= threshold:
                    pairs.add((min(row, int(other)), max(row, int(other))))
    return (time.perf_counter() - started) * 1000, len(pairs)


async def main() -> None:
    args = parse_args(__doc__ or "", lambda parser: parser.add_argument("--runs", type=int, default=5))
    base_count, planted = QUICK if args.quick else FULL
    home = throwaway_home("dedup")
    try:
        built = time.perf_counter()
        engine, scope, planted_pairs = await build(home, base_count, planted)
        print(f"built one chat of {base_count + planted} memories in {time.perf_counter() - built:.0f} s")
        timings: list[float] = []
        result = None
        for _ in range(args.runs):
            started = time.perf_counter()
            result = await engine.memories.duplicate_clusters(BOT_ID, scope)
            timings.append((time.perf_counter() - started) * 1000)
        assert result is not None
        cluster_of = {member: cluster for cluster in result.clusters for member in cluster.member_ids}
        found = sum(1 for first, second in planted_pairs if cluster_of.get(first) is cluster_of.get(second) is not None)
        sizes = sorted((len(cluster.member_ids) for cluster in result.clusters), reverse=True)
        print(f"{machine_line()}, load average {os.getloadavg()[0]:.1f}")
        print(
            f"duplicate_clusters on {result.memories} memories ({result.without_vector} without a vector): "
            f"median {median(timings):.0f} ms over {args.runs} runs (min {min(timings):.0f}, max {max(timings):.0f}); "
            f"target < {TARGET_MS:.0f} ms: {'OK' if median(timings) < TARGET_MS else 'OVER'}"
        )
        print(
            f"candidate pairs {result.candidates}, judged by their parts {result.checked}, "
            f"clusters {len(result.clusters)} (exact {len(result.exact)}), largest {sizes[:5]}; "
            f"planted rewrites found {found}/{len(planted_pairs)}"
        )
        await candidate_search_compared(engine, home, scope)
        await engine.close()
    finally:
        remove_home(home)


async def candidate_search_compared(engine, home, scope) -> None:  # type: ignore[no-untyped-def]
    """The two candidate searches on the chat's stored vectors, each a median of 3."""
    from amrita_plugin_cognition.domain.clusters import VECTOR_THRESHOLD, close_pairs
    from amrita_plugin_cognition.store import vector_copy

    generation = await engine.index_sync.current_generation()
    _ids, vectors = await asyncio.to_thread(engine.vectors.stored_vectors, generation, BOT_ID, scope)
    read: list[float] = []
    copied: list[float] = []
    for _ in range(3):  # alternating, so both reads share the machine's moods
        started = time.perf_counter()
        await asyncio.to_thread(engine.vectors.stored_vectors, generation, BOT_ID, scope)
        read.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        async with engine.unit_of_work() as uow:
            await vector_copy.chat(uow.session, generation, BOT_ID, scope)
        copied.append((time.perf_counter() - started) * 1000)
    blocked = []
    pairs = 0
    for _ in range(3):
        started = time.perf_counter()
        pairs = len(close_pairs(vectors, VECTOR_THRESHOLD)[0])
        blocked.append((time.perf_counter() - started) * 1000)
    neighbour_ms, neighbour_pairs = chroma_neighbour_pairs(home, vectors, VECTOR_THRESHOLD)
    print(
        f"reading the {len(vectors)} stored vectors: from their copy in SQL median {median(copied):.0f} ms, "
        f"from Chroma {median(read):.0f} ms; copy / Chroma {median(copied) / median(read):.2f}"
    )
    print(
        f"candidate pairs at cosine >= {VECTOR_THRESHOLD}: blocked matrix products {median(blocked):.0f} ms "
        f"({pairs} pairs, all of them); Chroma {NEIGHBOURS}-nearest queries {neighbour_ms:.0f} ms "
        f"({neighbour_pairs} pairs, capped at {NEIGHBOURS - 1} per fact)"
    )


if __name__ == "__main__":
    asyncio.run(main())
