"""Building real engines for tests: real SQL (the session's database), real Chroma."""

from __future__ import annotations

import contextlib
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from amrita_plugin_cognition.config import CognitionConfig
from amrita_plugin_cognition.domain.clock import UTC
from amrita_plugin_cognition.domain.records import ChatContext, Scope
from amrita_plugin_cognition.engine.factory import build_engine
from amrita_plugin_cognition.engine.service import CognitionEngine
from amrita_plugin_cognition.index.embedders import Embedder, LocalUSEEmbedder

_LOCAL = LocalUSEEmbedder()
#: Every engine a test built: their background work is awaited after each test (conftest), so
#: that no drain of one test's engine applies another test's index work (they share one database).
ENGINES: list[CognitionEngine] = []
#: Every engine still open, in the order built: each test closes the ones built during it
#: (``close_engines_from``), so a worker does not keep hundreds of embedded Chroma systems alive.
OPEN: list[CognitionEngine] = []
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def shared_local_embedder() -> LocalUSEEmbedder:
    return _LOCAL


def chroma_settings(chroma_port: int | None) -> dict[str, Any]:
    if chroma_port:
        return {"mode": "server", "host": "127.0.0.1", "port": chroma_port}
    return {"mode": "embedded"}


async def settle_engines() -> None:
    while ENGINES:
        await ENGINES.pop().settle()


async def close_engines_from(first: int) -> None:
    """Close the engines built since ``OPEN`` held ``first`` of them (a module's engine, built
    before its first test started, stays open for the module's other tests)."""
    from amrita_plugin_cognition.errors import IndexUnavailable

    while len(OPEN) > first:
        with contextlib.suppress(IndexUnavailable):  # a test that broke its engine's index on purpose
            await OPEN.pop().close()


async def make_engine(
    tmp_root: Path, chroma_port: int | None, embedder: Embedder | None = None, **overrides: Any
) -> CognitionEngine:
    from nonebot_plugin_orm import get_session

    data = {"chroma": chroma_settings(chroma_port), **overrides}
    config = CognitionConfig.model_validate(data)
    folder = tmp_root / "engines" / uuid.uuid4().hex[:8]
    engine = build_engine(config, folder, get_session, embedder=embedder or _LOCAL)
    await engine.start()
    ENGINES.append(engine)
    OPEN.append(engine)
    return engine


def new_bot() -> str:
    """A fresh bot account per test: memory banks are isolated per bot, so tests never collide."""
    return f"b{uuid.uuid4().int % 10**9}"


def group(bot: str, group_id: str, user: str, name: str = "", role: str = "member") -> ChatContext:
    return ChatContext(bot, Scope("group", group_id), user, name or f"用户{user}", group_role=role)


def private(bot: str, user: str, name: str = "") -> ChatContext:
    return ChatContext(bot, Scope("private", user), user, name or f"用户{user}")


def days_ago(days: float) -> datetime:
    return NOW - timedelta(days=days)


async def empty_job_queue() -> None:
    """The job queue and the transcript are one table each for every bot: tests of them start
    (and end) with both empty."""
    from nonebot_plugin_orm import get_session
    from sqlalchemy import delete

    from amrita_plugin_cognition.store.models import JobRow, TranscriptRow

    async with get_session() as session:
        await session.execute(delete(JobRow))
        await session.execute(delete(TranscriptRow))
        await session.commit()


def historian_llm(preset: str, timeout_seconds: float = 10.0) -> dict[str, Any]:
    """The ``llm`` settings of a test engine whose historian calls ``preset`` once, without retries.
    The timeout is generous: a loaded CI machine took over 2 s for a first call to the fake model."""
    return {"preset": preset, "timeout_seconds": timeout_seconds, "max_retries": 0, "backoff_initial_seconds": 0.01,
            "backoff_max_seconds": 0.02}  # fmt: skip


def register_preset(preset: str, base_url: str) -> None:
    """A model preset known to amrita_core, answered by the fake model server at ``base_url`` (the
    path the historian takes outside the chat plugin)."""
    from amrita_core import ModelPreset, PresetManager
    from fake_openai import chat_preset

    manager = PresetManager()
    if preset not in {known.name for known in manager.get_all_presets()}:
        manager.add_preset(
            ModelPreset.model_validate(chat_preset(preset, "historian-model", base_url, "sk", stream=False))
        )


async def facts_of(engine: CognitionEngine, bot: str) -> list[Any]:
    """A bot account's active facts (SQL rows), in the order written."""
    from sqlalchemy import select

    from amrita_plugin_cognition.domain.records import MemoryStatus
    from amrita_plugin_cognition.store.models import MemoryRow

    async with engine.session() as session:
        rows = await session.execute(
            select(MemoryRow).where(MemoryRow.bot_id == bot, MemoryRow.status == MemoryStatus.ACTIVE.value)
            .order_by(MemoryRow.id)
        )  # fmt: skip
        return list(rows.scalars())


async def jobs_left(engine: CognitionEngine) -> list[Any]:
    """Every job row still in the queue (of every bot: tests of the queue empty it first)."""
    from sqlalchemy import select

    from amrita_plugin_cognition.store.models import JobRow

    async with engine.session() as session:
        return list((await session.execute(select(JobRow))).scalars())


async def keyword_rows(engine: CognitionEngine, ids: list[int]) -> set[int]:
    """Which of ``ids`` have a keyword row (SQLite FTS5 rowid, PostgreSQL ``memory_id``)."""
    from sqlalchemy import text

    async with engine.session() as session:
        sqlite = session.get_bind().dialect.name == "sqlite"
        statement = (
            "SELECT rowid FROM cognition_memory_fts WHERE rowid IN ({})"
            if sqlite
            else "SELECT memory_id FROM cognition_memory_kw WHERE memory_id IN ({})"
        )
        found = await session.execute(text(statement.format(", ".join(str(int(item)) for item in ids))))
    return {int(row[0]) for row in found}
