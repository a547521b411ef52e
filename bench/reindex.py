"""``engine.index.reindex()`` of 100,000 memories (1,000 scopes): time, rows in SQL before/after,
vectors in Chroma before/after, and an id-by-id check that no vector is lost.

Works on a COPY of the store ``bench/recall_latency.py`` builds and caches (built here if
missing). The engine's real reindex runs: it pages SQL, embeds, and upserts into generation
N+1, switches, drops N. Embedding: by default the engine's embedder serves the cached vectors
of the same local model (so the figure is the reindex machinery: SQL paging, Chroma writes,
the switch); the local model's own rate is measured in the same run and the projected time
with live embedding is printed. ``--live-embedder`` reindexes with the model itself (slow:
about 100,000 / rate seconds).

    uv run python bench/reindex.py [--quick] [--live-embedder]
"""

from __future__ import annotations

import asyncio
import shutil
import time
from pathlib import Path

from _common import machine_line, parse_args, remove_home, throwaway_home

FULL = (100_000, 1_000)
QUICK = (2_000, 20)


async def sql_counts(engine) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    from sqlalchemy import func, select

    from amrita_plugin_cognition.store.models import MemoryRow

    async with engine.session() as session:
        total = (await session.execute(select(func.count()).select_from(MemoryRow))).scalar_one()
        active = (
            await session.execute(select(func.count()).select_from(MemoryRow).where(MemoryRow.status == "active"))
        ).scalar_one()
    return int(total), int(active)


async def missing_vectors(engine, home: Path) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """(active rows whose vector is absent from the current generation, rows checked), read
    straight from Chroma (the engine's own collection naming, a separate client)."""
    from _common import engine_data_dir
    from _store import peer_client_at
    from sqlalchemy import select

    from amrita_plugin_cognition.api import Scope
    from amrita_plugin_cognition.index.vector import collection_name
    from amrita_plugin_cognition.store.models import MemoryRow

    async with engine.session() as session:
        rows = (
            await session.execute(
                select(MemoryRow.id, MemoryRow.bot_id, MemoryRow.scope_kind, MemoryRow.scope_id).where(
                    MemoryRow.status == "active"
                )
            )
        ).all()
    by_scope: dict[tuple[str, Scope], list[int]] = {}
    for memory_id, bot_id, kind, scope_id in rows:
        by_scope.setdefault((bot_id, Scope(kind, scope_id)), []).append(memory_id)
    client = peer_client_at(engine_data_dir(home) / engine.config.chroma.path)
    missing = 0
    for (bot_id, scope), ids in by_scope.items():
        try:
            collection = client.get_collection(collection_name(engine.generation, bot_id, scope))
        except Exception:  # chromadb raises several types for a missing collection
            missing += len(ids)
            continue
        found: set[int] = set()
        for start in range(0, len(ids), 5000):
            page = [str(memory_id) for memory_id in ids[start : start + 5000]]
            found.update(int(item) for item in collection.get(ids=page, include=[])["ids"])
        missing += len(set(ids) - found)
    return missing, len(rows)


async def model_rate(model, texts: list[str]) -> float:  # type: ignore[no-untyped-def]
    """Texts/s of the local model on this machine now, on 600 of ``texts`` in batches of 100
    (one chat's page of a reindex)."""
    probe = texts[:600]
    await model.embed(probe[:8])
    began = time.perf_counter()
    for start in range(0, len(probe), 100):
        await model.embed(probe[start : start + 100])
    return len(probe) / (time.perf_counter() - began)


async def run(quick: bool, live: bool) -> None:
    from _corpus import facts
    from _store import MARKER, build_or_open, store_dir

    count, scopes = QUICK if quick else FULL
    work = throwaway_home("reindex")
    try:
        print(f"# bench/reindex.py  {machine_line()}{'  [quick]' if quick else ''}", flush=True)
        source = store_dir(count, scopes)
        if not quick and not (source / MARKER).exists():
            print(f"building the store first in {source} (several minutes; cached for reruns)", flush=True)
            began = time.perf_counter()
            import subprocess
            import sys

            subprocess.run(
                [sys.executable, str(Path(__file__).with_name("recall_latency.py")), "--case", "b", "--build-only"],
                check=True,
            )
            print(f"store built in {time.perf_counter() - began:.0f} s")
        home = work / "home"
        if quick:
            engine, _record = await build_or_open(count, scopes, home=home)
        else:
            began = time.perf_counter()
            shutil.copytree(source, home)
            print(
                f"copied the cached store ({count:,} memories, {scopes:,} scopes) "
                f"in {time.perf_counter() - began:.1f} s"
            )
            engine, _record = await build_or_open(count, scopes, home=home)
        if live:
            engine.embedder.inner = engine.embedder.inner.inner  # the LocalUSEEmbedder itself
        model = engine.embedder.inner if live else engine.embedder.inner.inner
        rate = await model_rate(model, facts(min(count, 2_000)))

        total_before, active_before = await sql_counts(engine)
        vectors_before = await asyncio.to_thread(engine.vectors.total_count, engine.generation)
        generation_before = engine.generation
        report = await engine.index.reindex()
        print(f"engine.index.reindex(): {report.seconds:.1f} s", flush=True)
        total_after, active_after = await sql_counts(engine)
        vectors_after = await asyncio.to_thread(engine.vectors.total_count, engine.generation)
        missing, checked = await missing_vectors(engine, home)
        status = await engine.index.status()
        print(
            f"reindex of {active_before:,} memories: {report.seconds:.1f} s "
            f"({active_before / report.seconds:.0f} rows/s)"
            f"{' with live embedding' if live else ' (embeddings served from the cache of the same model)'}"
        )
        print(f"SQL rows before/after: {total_before:,}/{total_after:,} (active {active_before:,}/{active_after:,})")
        print(
            f"Chroma vectors before/after: {vectors_before:,}/{vectors_after:,} "
            f"(generation {generation_before} -> {engine.generation}; "
            f"report {report.vectors_before:,}/{report.vectors_after:,}, "
            f"reapplied {report.reapplied})"
        )
        print(
            f"id-by-id check: {missing} of {checked:,} active rows without a vector"
            f" -> {'none lost' if missing == 0 and vectors_after == active_after else 'LOST VECTORS'}"
        )
        print(f"outbox after: {status['outbox']}, index missing: {status['index'].get('missing')}")
        print(f"local model rate now: {rate:.0f} texts/s (batches of 100)")
        if not live:
            projected = report.seconds + active_before / rate
            print(
                f"projected reindex with live local embedding: {projected:.0f} s "
                f"(= {report.seconds:.0f} s machinery + {active_before:,} / {rate:.0f} per s)"
            )
    finally:
        remove_home(work)


def main() -> None:
    args = parse_args(
        "engine.index.reindex() on a copy of the 100k store",
        lambda parser: parser.add_argument("--live-embedder", action="store_true"),
    )
    asyncio.run(run(args.quick, args.live_embedder))


if __name__ == "__main__":
    main()
