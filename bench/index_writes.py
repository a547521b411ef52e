"""What a chat's single vector write costs now that every write is saved before it returns.

chromadb loses what it had not saved of an index it drops from memory, so a call of fewer records
than ``SYNC_EVERY`` is made again (``index/vector.py`` ``_saved_write``): one upsert or delete of a
single memory is two writes and a save. The floor is chromadb's own single write on a collection
made with the same settings, which saves every second call. Each run is a fresh process and folder:
two chats of ``--vectors`` vectors each, then ``--writes`` single upserts and as many single
deletes, ours and the floor alternating so that both see the same machine. p50/p95 per run,
medians over ``--runs`` runs, and the ratio ours/floor within each run. No network, no model.

    uv run python bench/index_writes.py [--quick] [--vectors 5000] [--writes 400] [--runs 3]
"""

from __future__ import annotations

import json
import time
from functools import partial
from pathlib import Path
from typing import Any

from _common import child_json, machine_line, median, p50_p95, parse_args, remove_home, throwaway_home

DIMENSIONS = 512
FILL_BATCH = 500


def child(vectors: int, writes: int) -> dict[str, Any]:
    """One run in this process: p50/p95 of ours and of the floor, for upserts and deletes."""
    import numpy as np

    from amrita_plugin_cognition.api import CognitionConfig, Scope
    from amrita_plugin_cognition.index.collections import COLLECTION_METADATA
    from amrita_plugin_cognition.index.vector import ChromaVectorIndex

    home = throwaway_home("index-writes")
    rng = np.random.default_rng(3)
    settings = CognitionConfig.model_validate({"chroma": {"path": str(home / "chroma")}})
    index = ChromaVectorIndex(settings.chroma, home)
    ours_scope = Scope("group", "ours")
    try:
        index.open()
        floor = index._connect().get_or_create_collection(
            "floor-single-writes", metadata=dict(COLLECTION_METADATA), embedding_function=None
        )
        for first in range(0, vectors, FILL_BATCH):
            ids = list(range(first, min(vectors, first + FILL_BATCH)))
            batch = rng.standard_normal((len(ids), DIMENSIONS)).astype(np.float32)
            index.upsert(0, "42", ours_scope, ids, batch, [{"t": 0}] * len(ids))
            floor.upsert(ids=[str(item) for item in ids], embeddings=batch, metadatas=[{"t": 0}] * len(ids))
        times: dict[str, list[float]] = {"ours_upsert": [], "floor_upsert": [], "ours_delete": [], "floor_delete": []}

        def alternating(position: int, *calls: tuple[str, Any]) -> None:
            for key, call in calls if position % 2 else reversed(calls):
                begin = time.perf_counter()
                call()
                times[key].append((time.perf_counter() - begin) * 1000)

        for position in range(writes):
            memory_id = vectors + position
            vector = rng.standard_normal((1, DIMENSIONS)).astype(np.float32)
            alternating(
                position,
                ("ours_upsert", partial(index.upsert, 0, "42", ours_scope, [memory_id], vector, [{"t": 0}])),
                ("floor_upsert", partial(floor.upsert, ids=[str(memory_id)], embeddings=vector, metadatas=[{"t": 0}])),
            )
        for position in range(writes):
            memory_id = vectors + position
            alternating(
                position,
                ("ours_delete", partial(index.delete, 0, "42", ours_scope, [memory_id])),
                ("floor_delete", partial(floor.delete, ids=[str(memory_id)])),
            )
        return {key: p50_p95(values) for key, values in times.items()}
    finally:
        index.close()
        remove_home(home)


def main() -> None:
    def extra(parser) -> None:  # type: ignore[no-untyped-def]
        parser.add_argument("--vectors", type=int, default=5000, help="vectors already in each chat")
        parser.add_argument("--writes", type=int, default=400, help="single upserts (and as many deletes) per run")
        parser.add_argument("--runs", type=int, default=3)
        parser.add_argument("--child", action="store_true", help="one run in this process, figures as JSON")

    args = parse_args("a chat's single vector write, saved before it returns, against chromadb's own", extra)
    vectors, writes, runs = (500, 60, 1) if args.quick else (args.vectors, args.writes, args.runs)
    if args.child:
        print(json.dumps(child(vectors, writes)))
        return
    print(f"# bench/index_writes.py  {machine_line()}{'  [quick]' if args.quick else ''}")
    print(f"{runs} run(s): a chat of {vectors:,} vectors, {writes} single upserts then {writes} single deletes")
    script = str(Path(__file__).resolve())
    results = [child_json(script, "--child", "--vectors", str(vectors), "--writes", str(writes)) for _ in range(runs)]
    for operation in ("upsert", "delete"):
        ours = [run[f"ours_{operation}"] for run in results]
        floor = [run[f"floor_{operation}"] for run in results]
        ratios = [(mine[0] / theirs[0], mine[1] / theirs[1]) for mine, theirs in zip(ours, floor, strict=True)]
        print(
            f"single {operation}: ours p50/p95 {median([pair[0] for pair in ours]):.2f} / "
            f"{median([pair[1] for pair in ours]):.2f} ms, chromadb's own "
            f"{median([pair[0] for pair in floor]):.2f} / {median([pair[1] for pair in floor]):.2f} ms; "
            f"ratio ours/floor p50 {median([pair[0] for pair in ratios]):.2f}, "
            f"p95 {median([pair[1] for pair in ratios]):.2f} "
            f"(runs, p95: {', '.join(f'{pair[1]:.2f}' for pair in ratios)})"
        )


if __name__ == "__main__":
    main()
