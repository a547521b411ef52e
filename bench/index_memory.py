"""The embedded index's memory as a bot meets more chats: bounded (``chroma.cached_indexes``,
default 64) against chromadb's own count (the open-file limit / 5: unbounded in a container).

Each chat is a collection of its own, and chromadb allocates room for 1,000 vectors when a
collection's index is first loaded (about 2.6 MB at 512 dimensions). Each run is a fresh
process with its own throw-away folder: ``--chats`` chats each get ``--per-chat`` memories
(random 512-dimensional vectors, written ten at a time as the outbox does) and one query, then
three rounds query every chat once more each (most indexes no longer in memory when bounded:
read back from the folder). Reported per setting: RSS growth over chromadb's start at each
quarter of the writes and after each round, the growth per chat in the last round (flat when
bounded: what freed indexes leave to the allocator is reused), and the last round's query
p50/p95 (what reading an index back costs); median over ``--runs`` runs of each, alternating.
The ratio bounded / unbounded is taken within the same run. No network, no model.

    uv run python bench/index_memory.py [--quick] [--chats 600] [--per-chat 20] [--runs 3]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from _common import child_json, machine_line, median, p50_p95, parse_args, remove_home, rss_mb, throwaway_home

UNBOUNDED = 100_000
DIMENSIONS = 512
WRITE_BATCH = 10
#: Rounds of one query per chat after the writes (the allocator settles within two).
ROUNDS = 3


def child(chats: int, per_chat: int, cached: int) -> dict[str, Any]:
    """One run in this process: the figures as a dict."""
    import numpy as np

    from amrita_plugin_cognition.api import CognitionConfig, Scope
    from amrita_plugin_cognition.index.vector import ChromaVectorIndex

    home = throwaway_home("index-memory")
    rng = np.random.default_rng(7)
    settings = CognitionConfig.model_validate({"chroma": {"path": str(home / "chroma"), "cached_indexes": cached}})
    index = ChromaVectorIndex(settings.chroma, home)
    try:
        index.open()
        index.query(0, "42", Scope("group", "start"), rng.standard_normal(DIMENSIONS).astype(np.float32), 1)
        start = rss_mb()
        quarters: list[float] = []
        for chat in range(chats):
            scope = Scope("group" if chat % 2 else "private", str(chat))
            for first in range(0, per_chat, WRITE_BATCH):
                ids = list(range(chat * 10_000 + first, chat * 10_000 + min(per_chat, first + WRITE_BATCH)))
                vectors = rng.standard_normal((len(ids), DIMENSIONS)).astype(np.float32)
                index.upsert(0, "42", scope, ids, vectors, [{"t": 0}] * len(ids))
            index.query(0, "42", scope, rng.standard_normal(DIMENSIONS).astype(np.float32), 8)
            if (chat + 1) * 4 % chats == 0:
                quarters.append(rss_mb() - start)
        rounds: list[float] = []
        again: list[float] = []
        for _ in range(ROUNDS):
            again = []
            for chat in range(chats):
                scope = Scope("group" if chat % 2 else "private", str(chat))
                began = time.perf_counter()
                index.query(0, "42", scope, rng.standard_normal(DIMENSIONS).astype(np.float32), 8)
                again.append((time.perf_counter() - began) * 1000)
            rounds.append(rss_mb() - start)
        p50, p95 = p50_p95(again)
        return {
            "cached": index._client._server.hnsw_cache_size,
            "quarters_mb": quarters,
            "rounds_mb": rounds,
            "slope_mb_per_chat": (rounds[-1] - rounds[-2]) / chats,
            "query_p50_ms": p50,
            "query_p95_ms": p95,
            "end_mb": rounds[-1],
        }
    finally:
        index.close()
        remove_home(home)


def run(chats: int, per_chat: int, cached: int) -> dict[str, Any]:
    return dict(child_json(__file__, "--child", str(chats), str(per_chat), str(cached)))


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        print(json.dumps(child(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))))
        return

    def extra(parser) -> None:  # type: ignore[no-untyped-def]
        parser.add_argument("--chats", type=int, default=600)
        parser.add_argument("--per-chat", type=int, default=20)
        parser.add_argument("--runs", type=int, default=3)
        parser.add_argument("--cached", type=int, default=64, help="chroma.cached_indexes of the bounded runs")

    args = parse_args(__doc__.splitlines()[0], extra)
    chats, runs = (200, 1) if args.quick else (args.chats, args.runs)
    chats -= chats % 4
    print(machine_line())
    print(f"{chats} chats of {args.per_chat} memories; {runs} run(s) of each setting, alternating")
    results: dict[str, list[dict[str, Any]]] = {"bounded": [], "unbounded": []}
    for _ in range(runs):
        results["bounded"].append(run(chats, args.per_chat, args.cached))
        results["unbounded"].append(run(chats, args.per_chat, UNBOUNDED))
    for label, rows in results.items():

        def mid(key: str, rows: list[dict[str, Any]] = rows) -> float:
            return median([float(row[key]) for row in rows])

        quarters = [median([row["quarters_mb"][q] for row in rows]) for q in range(4)]
        rounds = [median([row["rounds_mb"][r] for row in rows]) for r in range(ROUNDS)]
        print(
            f"{label:9} (chromadb's cache: {rows[0]['cached']} indexes): RSS growth, writes at 1/4..4/4 "
            + " / ".join(f"{value:.0f}" for value in quarters)
            + " MB, after each query round "
            + " / ".join(f"{value:.0f}" for value in rounds)
            + f" MB; last round {mid('slope_mb_per_chat'):.3f} MB per chat; "
            f"its query p50 {mid('query_p50_ms'):.2f} ms, p95 {mid('query_p95_ms'):.2f} ms"
        )
    pairs = list(zip(results["bounded"], results["unbounded"], strict=True))
    growth = median([bounded["end_mb"] / max(unbounded["end_mb"], 1e-9) for bounded, unbounded in pairs])
    p95 = median([bounded["query_p95_ms"] / unbounded["query_p95_ms"] for bounded, unbounded in pairs])
    print(f"bounded / unbounded, same run: RSS growth {growth:.2f}, last round's query p95 {p95:.2f}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()
