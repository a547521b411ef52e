"""Building (or reusing) a large store through the engine's real write path, plus the peer.

A store is a standalone home (SQLite + embedded Chroma) with ``count`` memories spread over
``scopes`` group scopes of one bot, written with ``engine.memories.remember`` in per-scope batches and
indexed with ``engine.index.drain()``. Beside it, ``peer/`` holds what a Chroma-only memory
plugin keeps: ONE shared collection with the very same vectors and a ``scope`` metadata field.
Full-scale stores are cached under ``/tmp/cognition-bench-cache``; ``complete.json`` marks a
finished build and records how long it took.

On the server backend (``ServerStore``) the same store lives in a PostgreSQL database of its own
(``bench_recall_COUNT_SCOPES`` on the server of ``PG_BASE``, kept with the cache: ``--rebuild``
drops it) and a ``chroma run`` server on the home's ``chroma-server`` folder, started for the run;
the peer's shared collection is on that server too.
"""

from __future__ import annotations

import json
import secrets
import shutil
import sys
import time
import zlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from _common import PG_BASE, REPO_ROOT, init_engine_only, open_engine, pg_admin, pg_server, quiet_cognition_logs
from _corpus import CACHE_ROOT, PrecomputedEmbedder, cached_vectors, facts

from amrita_plugin_cognition.api import UTC

BOT_ID = "bench-bot"
PEER_COLLECTION = "peer_shared_memories"
MARKER = "complete.json"
#: Distinct facts embedded (and cached) at most; a larger store repeats each fact in another
#: scope (never twice in one scope). Lower it (e.g. 50,000) to halve the first build's
#: embedding time (100,000 texts took about 20 minutes on 2 busy cores).
DISTINCT_TEXTS = 100_000


def memory_text_index(index: int, count: int) -> int:
    return index % min(count, DISTINCT_TEXTS)


def memory_scope_index(index: int, count: int, scopes: int) -> int:
    distinct = min(count, DISTINCT_TEXTS)
    return (index + index // distinct) % scopes


def store_dir(count: int, scopes: int, backend: str = "embedded") -> Path:
    return CACHE_ROOT / (f"store-{count}-{scopes}" + ("" if backend == "embedded" else f"-{backend}"))


class ServerStore:
    """PostgreSQL + a Chroma server for a store at ``home`` (see the module docstring)."""

    def __init__(self, home: Path, count: int, scopes: int, throwaway: bool = False) -> None:
        """``throwaway``: a database of this run alone (``drop`` it after), not the cached one."""
        if str(REPO_ROOT / "tests") not in sys.path:
            sys.path.insert(0, str(REPO_ROOT / "tests"))  # the Chroma server helper
        from chroma_server import ChromaServer

        suffix = f"_{secrets.token_hex(4)}" if throwaway else ""
        self.database = f"bench_recall_{count}_{scopes}{suffix}"
        self.url = f"{PG_BASE}/{self.database}"
        home.mkdir(parents=True, exist_ok=True)
        self.chroma = ChromaServer(home / "chroma-server", log=home / "chroma.log")

    async def database_exists(self) -> bool:
        async with pg_server() as connection:
            return bool(await connection.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", self.database))

    async def open(self, fresh: bool) -> None:
        """Start the Chroma server; a fresh store gets a new, empty database."""
        if fresh:
            await pg_admin(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')
            await pg_admin(f'CREATE DATABASE "{self.database}"')
        self.chroma.start()

    @property
    def chroma_config(self) -> dict[str, Any]:
        return {"mode": "server", "host": "127.0.0.1", "port": self.chroma.port}

    def peer_client(self):  # type: ignore[no-untyped-def]
        import chromadb
        from chromadb.config import Settings

        return chromadb.HttpClient(
            host="127.0.0.1", port=self.chroma.port, settings=Settings(anonymized_telemetry=False)
        )

    async def drop(self) -> None:
        await pg_admin(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')

    def close(self) -> None:
        self.chroma.stop()


@asynccontextmanager
async def throwaway_backend(
    prefix: str, backend: str, embedded: dict[str, Any]
) -> AsyncIterator[tuple[Path, dict[str, Any]]]:
    """A throw-away home with NoneBot initialised on it (engine only, quiet logs), and the
    ``chroma`` settings to open the engine with: ``embedded`` (SQLite beside it), or on
    ``backend == "server"`` a PostgreSQL database and a ``chroma run`` server of the run's own,
    both removed after."""
    from _common import remove_home, throwaway_home

    home = throwaway_home(prefix)
    server = ServerStore(home, 0, 0, throwaway=True) if backend == "server" else None
    try:
        chroma = embedded
        if server is not None:
            await server.open(fresh=True)
            chroma = server.chroma_config
        init_engine_only(home, database_url=server.url if server else None)  # NoneBot first: the models need it
        quiet_cognition_logs()
        yield home, chroma
    finally:
        if server is not None:
            server.close()
            await server.drop()
        remove_home(home)


def scope_ids(scopes: int) -> list[str]:
    return [str(500000 + index) for index in range(scopes)]


def fact_draft(text: str, scope: Any, happened_at: datetime) -> Any:
    """A corpus fact as an imported draft; its speaker is the person it names first (every corpus
    fact starts with a two-character name)."""
    from amrita_plugin_cognition.api import MemoryDraft, Provenance

    return MemoryDraft(
        text=text,
        scope=scope,
        speaker_id=f"u{zlib.crc32(text[:2].encode()) % 100000}",
        speaker_name=text[:2],
        provenance=Provenance.IMPORTED,
        happened_at=happened_at,
    )


def peer_client(home: Path):  # type: ignore[no-untyped-def]
    return peer_client_at(home / "peer")


def peer_client_at(path: Path):  # type: ignore[no-untyped-def]
    import chromadb
    from chromadb.config import Settings

    return chromadb.PersistentClient(path=str(path), settings=Settings(anonymized_telemetry=False))


async def build_or_open(
    count: int, scopes: int, home: Path | None = None, rebuild: bool = False, server: ServerStore | None = None
) -> tuple[Any, dict]:
    """The started engine on the store, and the build record (``seconds``, ``cached``...).
    ``server``: on PostgreSQL and a Chroma server (its home is then ``home``)."""
    home = home or store_dir(count, scopes)
    marker = home / MARKER
    if rebuild or (home.exists() and not marker.exists()):
        shutil.rmtree(home, ignore_errors=True)
    if server is not None and marker.exists() and not await server.database_exists():
        shutil.rmtree(home, ignore_errors=True)  # its database is gone: build it again
    texts = facts(min(count, DISTINCT_TEXTS))
    cached = marker.exists()
    began = time.perf_counter()
    vectors = cached_vectors(texts)
    embed_seconds = time.perf_counter() - began
    overrides: dict[str, Any] = {}
    if server is not None:
        home.mkdir(parents=True, exist_ok=True)
        await server.open(fresh=not cached)
        overrides["chroma"] = server.chroma_config
    init_engine_only(home, database_url=server.url if server is not None else None)
    quiet_cognition_logs()
    engine = await open_engine(home, embedder=PrecomputedEmbedder(texts, vectors), **overrides)
    if cached:
        record = json.loads(marker.read_text(encoding="utf-8"))
        record["cached"] = True
        return engine, record
    await engine.index.check_fingerprint()
    from amrita_plugin_cognition.api import Scope

    ids = scope_ids(scopes)
    per_scope: dict[str, list[int]] = {scope_id: [] for scope_id in ids}
    for index in range(count):
        per_scope[ids[memory_scope_index(index, count, scopes)]].append(index)
    base = datetime(2023, 1, 1, tzinfo=UTC)
    record_of: dict[int, int] = {}
    write_started = time.perf_counter()
    drain_seconds = 0.0
    written = 0
    for number, scope_id in enumerate(ids, start=1):
        scope = Scope("group", scope_id)
        members = per_scope[scope_id]
        for start in range(0, len(members), 1000):
            chunk = members[start : start + 1000]
            drafts = [
                fact_draft(texts[memory_text_index(index, count)], scope, base + timedelta(minutes=7 * index))
                for index in chunk
            ]
            result = await engine.memories.remember(BOT_ID, drafts, now=base + timedelta(minutes=7 * chunk[-1]))
            for draft_index, record_id in result.record_ids.items():
                record_of[chunk[draft_index]] = record_id
            written += len(result.written)
            if written % 2000 < len(chunk) or number == len(ids):
                drained = time.perf_counter()
                await engine.index.drain()
                drain_seconds += time.perf_counter() - drained
        if number % max(1, len(ids) // 10) == 0:
            print(f"  wrote {written}/{count} memories", file=sys.stderr, flush=True)
    drained = time.perf_counter()
    await engine.index.drain()
    drain_seconds += time.perf_counter() - drained
    engine_seconds = time.perf_counter() - write_started
    peer_started = time.perf_counter()
    client = server.peer_client() if server is not None else peer_client(home)
    collection = client.get_or_create_collection(
        PEER_COLLECTION, metadata={"hnsw:space": "cosine"}, embedding_function=None
    )
    order = sorted(record_of)
    for start in range(0, len(order), 5000):
        chunk = order[start : start + 5000]
        collection.add(
            ids=[str(record_of[index]) for index in chunk],
            embeddings=vectors[[memory_text_index(index, count) for index in chunk]],
            metadatas=[{"scope": f"group:{ids[memory_scope_index(index, count, scopes)]}"} for index in chunk],
        )
    record = {
        "count": count,
        "scopes": scopes,
        "written": written,
        "distinct_texts": len(texts),
        "embed_seconds_this_run": round(embed_seconds, 1),
        "engine_write_and_index_seconds": round(engine_seconds, 1),
        "of_which_drain_outbox_seconds": round(drain_seconds, 1),
        "peer_seconds": round(time.perf_counter() - peer_started, 1),
        "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    marker.write_text(json.dumps(record, indent=1), encoding="utf-8")
    record["cached"] = False
    return engine, record
