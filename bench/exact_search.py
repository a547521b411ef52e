"""Up to which chat size the copy in SQL beats the vector index (``recall.exact_search_max_vectors``).

Per chat size: one chat's rows read from a SQLite table shaped as ``cognition_memory_vector``
(the chats' rows interleaved, as a bot writes them; 200 chats of that size) and ranked with
``index/exact.nearest``, against one query of that chat's own Chroma collection (the embedded
index, 512 dimensions, vectors back, as recall asks) with its index in memory, and read back from
the folder (``cached_indexes`` 1: another chat was asked in between). Random vectors, no model;
p50/p95 of 300 queries, median over ``--runs`` runs; ratio copy / index in the same run.

    uv run python bench/exact_search.py [--quick] [--runs 3]
"""

from __future__ import annotations

import sqlite3
import time
from typing import Any

from _common import machine_line, median, p50_p95, parse_args, remove_home, throwaway_home

DIMENSIONS = 512
CHATS = 200
QUERIES = 300
SIZES = (100, 300, 1000, 3000)


def _copy_table(path: str, size: int, rng: Any) -> sqlite3.Connection:
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(
        "CREATE TABLE cognition_memory_vector (generation INTEGER, memory_id INTEGER, bot_id TEXT,"
        " scope_kind TEXT, scope_id TEXT, vector BLOB, PRIMARY KEY (generation, memory_id))"
    )
    db.execute("CREATE INDEX ix_chat ON cognition_memory_vector (generation, bot_id, scope_kind, scope_id)")
    rows = (
        (1, index, "42", "group", str(index % CHATS), rng.standard_normal(DIMENSIONS).astype("<f2").tobytes())
        for index in range(size * CHATS)
    )
    db.executemany("INSERT INTO cognition_memory_vector VALUES (?, ?, ?, ?, ?, ?)", rows)
    db.commit()
    return db


def run_size(size: int, seed: int) -> dict[str, float]:
    import numpy as np

    from amrita_plugin_cognition.api import CognitionConfig, Scope
    from amrita_plugin_cognition.index.exact import nearest
    from amrita_plugin_cognition.index.vector import ChromaVectorIndex

    rng = np.random.default_rng(seed)
    home = throwaway_home("exact-search")
    try:
        db = _copy_table(str(home / "copy.sqlite3"), size, rng)
        settings = CognitionConfig.model_validate({"chroma": {"path": str(home / "chroma"), "cached_indexes": 1}})
        index = ChromaVectorIndex(settings.chroma, home)
        index.open()
        chats = [Scope("group", str(chat)) for chat in range(2)]
        for number, scope in enumerate(chats):
            ids = list(range(number * size, (number + 1) * size))
            index.upsert(
                1, "42", scope, ids, rng.standard_normal((size, DIMENSIONS)).astype(np.float32), [{"t": 0}] * size
            )
        copy_ms: list[float] = []
        warm_ms: list[float] = []
        cold_ms: list[float] = []
        for turn in range(QUERIES):
            query = rng.standard_normal(DIMENSIONS).astype(np.float32)
            began = time.perf_counter()
            found = db.execute(
                "SELECT memory_id, vector FROM cognition_memory_vector WHERE generation = 1 AND bot_id = '42'"
                " AND scope_kind = 'group' AND scope_id = ? LIMIT ?",
                (str(turn % CHATS), size + 1),
            ).fetchall()
            matrix = np.frombuffer(b"".join(row[1] for row in found), dtype="<f2").reshape(len(found), -1)
            nearest(None, query, [row[0] for row in found], matrix.astype(np.float32), 50)
            copy_ms.append((time.perf_counter() - began) * 1000)
            began = time.perf_counter()
            index.query(1, "42", chats[turn % 2], query, 50)  # the other chat's index was dropped: read back
            cold_ms.append((time.perf_counter() - began) * 1000)
            began = time.perf_counter()
            index.query(1, "42", chats[turn % 2], query, 50)  # now in memory
            warm_ms.append((time.perf_counter() - began) * 1000)
        index.close()
        db.close()
        figures: dict[str, float] = {}
        for name, values in (("copy", copy_ms), ("index_warm", warm_ms), ("index_cold", cold_ms)):
            figures[f"{name}_p50"], figures[f"{name}_p95"] = p50_p95(values)
        return figures
    finally:
        remove_home(home)


def main() -> None:
    args = parse_args(__doc__, extra=lambda parser: parser.add_argument("--runs", type=int, default=3))
    sizes = SIZES[:2] if args.quick else SIZES
    runs = 1 if args.quick else args.runs
    print(machine_line())
    print(
        "| chat size | copy p50 / p95 | index in memory p50 / p95 | index read back p50 / p95"
        " | copy / index p95 (in memory, read back) |"
    )
    print("|---|---|---|---|---|")
    for size in sizes:
        results = [run_size(size, seed) for seed in range(runs)]
        value = {key: median([result[key] for result in results]) for key in results[0]}
        warm = median([result["copy_p95"] / result["index_warm_p95"] for result in results])
        cold = median([result["copy_p95"] / result["index_cold_p95"] for result in results])
        print(
            f"| {size} | {value['copy_p50']:.2f} / {value['copy_p95']:.2f} ms"
            f" | {value['index_warm_p50']:.2f} / {value['index_warm_p95']:.2f} ms"
            f" | {value['index_cold_p50']:.2f} / {value['index_cold_p95']:.2f} ms | {warm:.2f}, {cold:.2f} |"
        )


if __name__ == "__main__":
    main()
