"""Up to which chat size the copy in SQL beats the vector index (``recall.exact_search_max_vectors``).

Recall's two ways to a chat's nearest vectors, each as recall calls it, on one engine (SQLite +
embedded Chroma, the defaults): the copy (``engine.exact_search.search``: one SQL statement
through the async session, the rows decoded and ranked by ``index/exact.nearest``) and the index
(``engine/recall._index_search``: the hop to the index's thread and the chat's Chroma query, vectors
back). Per chat size, ``CHATS`` chats of random 512-dimensional vectors, written as the drain
writes them (the chat's collection, then its copy; the copy's rows interleaved across chats, as a
bot's writes come); each query asks a random chat of that size, so with more chats than
``chroma.cached_indexes`` (4 here) the index is mostly read back from the folder, as in a bot of
many chats; then the same chat again (its index in memory). p50/p95 of ``QUERIES`` queries, median
over ``--runs`` runs (a fresh process each); ratio copy / index in the same run. ``--backend
server``: PostgreSQL (a database of the run's own on ``COGNITION_TEST_PG``, 127.0.0.1:5432 by
default) and a ``chroma run`` server of the run's own (its own cache setting: every index kept).

    uv run python bench/exact_search.py [--quick] [--runs 3] [--backend embedded|server]
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

from _common import child_json, machine_line, median, open_engine, p50_p95, parse_args

DIMENSIONS = 512
CHATS = 12
QUERIES = 300
SIZES = (100, 300, 1000, 3000)
#: Rows per copy write while the chats' rows are interleaved (a drain batch's size in a busy bot).
INTERLEAVE = 20


async def _put_rows(session: Any, generation: int, bot: str, scope: Any, ids: list[int], vectors: Any) -> None:
    """The copy's rows as the drain writes them (``vector_copy.put`` keeps only the copies of active
    facts, and these vectors have no fact behind them: the bench writes the rows itself)."""
    from sqlalchemy import insert

    from amrita_plugin_cognition.store import vector_copy
    from amrita_plugin_cognition.store.models import MemoryVectorRow

    await session.execute(
        insert(MemoryVectorRow).values(
            [
                {
                    "generation": generation,
                    "memory_id": memory_id,
                    "bot_id": bot,
                    "scope_kind": scope.kind,
                    "scope_id": scope.id,
                    "vector": vector_copy.encode(vector),
                }
                for memory_id, vector in zip(ids, vectors, strict=True)
            ]
        )
    )


async def measure(sizes: tuple[int, ...], queries: int, backend: str) -> dict[str, dict[str, float]]:
    import numpy as np
    from _store import throwaway_backend

    async with throwaway_backend("exact-search", backend, {"mode": "embedded", "cached_indexes": 4}) as (home, chroma):
        from amrita_plugin_cognition.api import Scope
        from amrita_plugin_cognition.engine.recall import _index_search
        from amrita_plugin_cognition.store import vector_copy

        engine = await open_engine(home, chroma=chroma, recall={"exact_search_max_vectors": max(sizes)})
        generation = await engine.index_sync.current_generation(force=True)
        async with engine.unit_of_work() as uow:
            await vector_copy.mark_complete(uow.session, generation)
            await uow.commit()
        rng = np.random.default_rng(11)
        figures: dict[str, dict[str, float]] = {}
        next_id = 1
        for size in sizes:
            bot = f"bench{size}"
            chats = [Scope("group", str(chat)) for chat in range(CHATS)]
            pending: list[tuple[Scope, list[int], Any]] = []
            for scope in chats:
                ids = list(range(next_id, next_id + size))
                next_id += size
                vectors = rng.standard_normal((size, DIMENSIONS)).astype(np.float32)
                engine.vectors.upsert(generation, bot, scope, ids, vectors, [{"importance": "medium"}] * size)
                pending.append((scope, ids, vectors))
            for start in range(0, size, INTERLEAVE):  # the copy's rows interleaved across the chats
                async with engine.unit_of_work() as uow:
                    for scope, ids, vectors in pending:
                        end = start + INTERLEAVE
                        await _put_rows(uow.session, generation, bot, scope, ids[start:end], vectors[start:end])
                    await uow.commit()
            times: dict[str, list[float]] = {"copy": [], "index_read_back": [], "index_in_memory": []}
            for _ in range(queries):
                scope = chats[int(rng.integers(CHATS))]
                query = rng.standard_normal((1, DIMENSIONS)).astype(np.float32)
                began = time.perf_counter()
                hits, left = await engine.exact_search.search(generation, bot, [(scope, None)], query, 50)
                times["copy"].append((time.perf_counter() - began) * 1000)
                assert not left and len(hits[0]) == 50
                for name in ("index_read_back", "index_in_memory"):
                    began = time.perf_counter()
                    await _index_search(engine, generation, bot, [(scope, None)], query, 50, time.monotonic() + 30)
                    times[name].append((time.perf_counter() - began) * 1000)
            figures[str(size)] = {}
            for name, values in times.items():
                figures[str(size)][f"{name}_p50"], figures[str(size)][f"{name}_p95"] = p50_p95(values)
        await engine.close()
        return figures


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        sizes = tuple(int(size) for size in sys.argv[2].split(","))
        print(json.dumps(asyncio.run(measure(sizes, int(sys.argv[3]), sys.argv[4]))))
        return

    def options(parser: Any) -> None:
        parser.add_argument("--runs", type=int, default=3)
        parser.add_argument("--backend", choices=("embedded", "server"), default="embedded")

    args = parse_args(__doc__, extra=options)
    sizes = SIZES[:2] if args.quick else SIZES
    runs = 1 if args.quick else args.runs
    queries = 60 if args.quick else QUERIES
    print(f"{machine_line()}, backend {args.backend}")
    arguments = ("--child", ",".join(map(str, sizes)), str(queries), args.backend)
    results = [child_json(__file__, *arguments) for _ in range(runs)]
    print(
        "| chat size | copy p50 / p95 | index read back p50 / p95 | index in memory p50 / p95"
        " | copy / index p95 (read back, in memory), runs' median |"
    )
    print("|---|---|---|---|---|")
    for size in map(str, sizes):
        value = {key: median([result[size][key] for result in results]) for key in results[0][size]}
        cold = median([result[size]["copy_p95"] / result[size]["index_read_back_p95"] for result in results])
        warm = median([result[size]["copy_p95"] / result[size]["index_in_memory_p95"] for result in results])
        print(
            f"| {size} | {value['copy_p50']:.2f} / {value['copy_p95']:.2f} ms"
            f" | {value['index_read_back_p50']:.2f} / {value['index_read_back_p95']:.2f} ms"
            f" | {value['index_in_memory_p50']:.2f} / {value['index_in_memory_p95']:.2f} ms | {cold:.2f}, {warm:.2f} |"
        )


if __name__ == "__main__":
    main()
