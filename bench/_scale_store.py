"""The bank of ``bench/scale.py``: PostgreSQL and a Chroma server of the run's own, and a bulk load
that leaves exactly what the plugin writes.

Services: a database ``bench_scale_<random>`` on the shared PostgreSQL (``COGNITION_TEST_PG``,
else 127.0.0.1:5432; dropped at the end) and a ``chroma run`` server on a free 127.0.0.1 port with
its folder in the run's home (``tests/chroma_server.py``), keeping at most ``index_cache``
collections' HNSW indexes in memory (its default keeps every one: about 2.8 MB per chat of 100
vectors). The home also holds the plugin's configuration file
(``config/amrita_plugin_cognition/config.toml``: the Chroma server), where the standalone CLI
(``python -m amrita_plugin_cognition … --home``) reads it; the CLI is given the database with
``COGNITION_DATABASE_URL``: ``status`` and ``inspect`` open what the bench wrote.

The load: ``memories`` facts, ``memories // chats`` in each of ``chats`` group chats of one bot
account, written chat after chat. Rows go in through the store's own insert
(``repository.insert_memories``: the memory row, its keyword row and its outbox row, as
``engine.memories.remember`` writes them once admission and the per-chat checks have passed),
many chats per transaction instead of one ``remember`` per chat. The vectors go in as the outbox
drain writes them (the engine's ``upsert_rows``: the plugin's collection names, ids and metadata),
a few chats at once, then their outbox rows are taken out as the drain does. They are made by
``_corpus.SyntheticEmbedder`` (vectors of the local model's size and fingerprint made without it:
a million real embeddings take days on two cores).
"""

from __future__ import annotations

import asyncio
import secrets
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from _common import drop_outbox
from _corpus import facts
from _store import BOT_ID, DISTINCT_TEXTS, fact_draft, scope_ids

from amrita_plugin_cognition.api import UTC

REPO = Path(__file__).resolve().parent.parent
if str(REPO / "tests") not in sys.path:
    sys.path.insert(0, str(REPO / "tests"))  # the Chroma server helper

from _common import PG_BASE, pg_admin  # noqa: E402
from chroma_server import ChromaServer  # noqa: E402

#: When the bank's facts were recorded (recall runs a month later).
LOADED_AT = datetime(2026, 10, 31, 12, 0, tzinfo=UTC)
#: Rows per transaction of the load.
ROWS_PER_COMMIT = 5_000
#: Chats whose vectors are written at once (the engine's server-mode index has 8 call threads).
CHROMA_CALLS = 4


@dataclass
class Services:
    """The run's home, database and Chroma server; ``close`` removes all three."""

    home: Path
    database: str
    chroma: ChromaServer

    @classmethod
    async def start(cls, index_cache: int) -> Services:
        """``index_cache``: collections whose HNSW index the Chroma server keeps in memory."""
        home = Path(tempfile.mkdtemp(prefix="cognition-bench-scale-"))
        database = f"bench_scale_{secrets.token_hex(4)}"
        await pg_admin(f'CREATE DATABASE "{database}"')
        chroma = ChromaServer(home / "chroma-server", log=home / "chroma.log", index_cache=index_cache)
        services = cls(home, database, chroma)
        try:
            chroma.start()
            services.write_config()
        except BaseException:
            await services.close()
            raise
        return services

    @property
    def url(self) -> str:
        return f"{PG_BASE}/{self.database}"

    @property
    def chroma_config(self) -> dict[str, Any]:
        return {"mode": "server", "host": "127.0.0.1", "port": self.chroma.port}

    def write_config(self) -> None:
        """The plugin's configuration file where the standalone CLI reads it on this home."""
        folder = self.home / "config" / "amrita_plugin_cognition"
        folder.mkdir(parents=True, exist_ok=True)
        lines = ["[chroma]", *(f"{key} = {value!r}" for key, value in self.chroma_config.items())]
        (folder / "config.toml").write_text("\n".join(lines).replace("'", '"') + "\n", encoding="utf-8")

    def cli_env(self) -> dict[str, str]:
        """What the CLI is given besides ``--home``: the database."""
        return {"COGNITION_DATABASE_URL": self.url}

    async def close(self) -> None:
        self.chroma.stop()
        await pg_admin(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')
        shutil.rmtree(self.home, ignore_errors=True)


@dataclass(frozen=True)
class Bank:
    """Which facts each chat holds: chat ``c`` the ``per_chat`` corpus facts from ``c * per_chat``
    on (the corpus repeats after ``DISTINCT_TEXTS`` facts, in another chat, never twice in one)."""

    memories: int
    chats: int
    texts: list[str] = field(repr=False)

    @classmethod
    def of(cls, memories: int, chats: int) -> Bank:
        if memories % chats or memories < chats:
            raise SystemExit(f"--memories ({memories}) must be a multiple of --chats ({chats})")
        return cls(memories, chats, facts(min(memories, DISTINCT_TEXTS)))

    @property
    def per_chat(self) -> int:
        return self.memories // self.chats

    @property
    def chat_ids(self) -> list[str]:
        return scope_ids(self.chats)

    def drafts(self, chat: int) -> list[Any]:
        from amrita_plugin_cognition.api import Scope

        scope = Scope("group", self.chat_ids[chat])
        first = chat * self.per_chat
        return [
            fact_draft(self.texts[index % len(self.texts)], scope, LOADED_AT - timedelta(minutes=7 * index))
            for index in range(first, first + self.per_chat)
        ]


@dataclass
class LoadReport:
    rows: int = 0
    seconds: float = 0.0
    #: Time the SQL inserts took, and time spent waiting for the vectors after them.
    insert_seconds: float = 0.0
    vector_wait_seconds: float = 0.0


async def load(engine: Any, bank: Bank, chats: range, advance: Callable[[int], None]) -> LoadReport:
    """Chats ``chats`` of ``bank`` into the store and their vectors into the index, ``advance(rows)``
    after each transaction's vectors (the progress bar). The vectors of one transaction are
    written (``CHROMA_CALLS`` chats at once) while the next one's rows are inserted."""
    from amrita_plugin_cognition.store import repository

    report = LoadReport()
    began = time.perf_counter()
    per_commit = max(1, ROWS_PER_COMMIT // bank.per_chat)
    writing: asyncio.Task[None] | None = None
    for first in range(chats.start, chats.stop, per_commit):
        drafts = [draft for chat in range(first, min(chats.stop, first + per_commit)) for draft in bank.drafts(chat)]
        started = time.perf_counter()
        async with engine.unit_of_work() as uow:
            rows = await repository.insert_memories(uow.session, BOT_ID, drafts, LOADED_AT)
            await uow.commit()
        report.insert_seconds += time.perf_counter() - started
        report.rows += len(rows)
        started = time.perf_counter()
        if writing is not None:
            await writing
        report.vector_wait_seconds += time.perf_counter() - started
        writing = asyncio.create_task(write_vectors(engine, rows, advance))
    if writing is not None:
        await writing
    report.seconds = time.perf_counter() - began
    return report


async def write_vectors(engine: Any, rows: list[Any], advance: Callable[[int], None]) -> None:
    """What the outbox drain does for ``rows``, in bulk: each chat's vectors into its collection
    (the engine's own ``upsert_rows``: collection names, ids, metadata), then their outbox rows out."""
    from amrita_plugin_cognition.api import Scope

    by_chat: dict[tuple[str, Any], list[Any]] = {}
    for row in rows:
        by_chat.setdefault((row.bot_id, Scope(row.scope_kind, row.scope_id)), []).append(row)
    gate = asyncio.Semaphore(CHROMA_CALLS)
    generation = engine.index_sync.generation

    async def one(key: tuple[str, Any], chat_rows: list[Any]) -> None:
        async with gate:
            await engine.index_sync.upsert_rows({key: chat_rows}, generation)

    await asyncio.gather(*(one(key, chat_rows) for key, chat_rows in by_chat.items()))
    await drop_outbox(engine, [row.id for row in rows])
    advance(len(rows))
