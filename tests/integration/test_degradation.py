"""When a part is down. The database unreachable: the turn goes on without memory, the hook says
so once, nothing is invented. The Chroma server stopped: writes, corrections and forgets commit in
SQL, and the vector side follows from the outbox once the server is back (rows in SQL and vectors
in Chroma counted, with the server stopped and then started again)."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from chat_helpers import SELF_ID, connect_bot, deliver, memory_engine, private_message, system_text
from chroma_server import ChromaServer, free_port
from engine_helpers import NOW, make_engine, new_bot, private
from nonebug import App
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import async_sessionmaker, create_async_engine

from amrita_plugin_cognition.domain.clock import UTC
from amrita_plugin_cognition.domain.events import StoreReplaced
from amrita_plugin_cognition.domain.records import MemoryDraft, Scope
from amrita_plugin_cognition.store.models import MemoryRow, OutboxRow

BOT = str(SELF_ID)


@pytest.mark.chatflow
async def test_an_unreachable_database_costs_the_turn_its_memory_and_nothing_else(
    app: App, fake_openai, monkeypatch, caplog
) -> None:
    engine = await memory_engine()
    fact = "阿岚养了一只叫团子的橘猫。"
    await engine.memories.remember(BOT, [MemoryDraft(text=fact, scope=Scope("private", "10401"), speaker_id="10401")])
    await engine.index.drain()
    async with app.test_api() as ctx:
        bot, qq = await connect_bot(ctx, monkeypatch, BOT)
        await deliver(bot, private_message("我的猫叫什么", 10401, "阿岚"))
        assert fact in system_text(fake_openai.chat_requests[-1])  # memory works before

        # nothing listens on this port: every connection is refused
        unreachable = create_async_engine(f"postgresql+asyncpg://nobody@127.0.0.1:{free_port()}/none")
        reachable = engine._session_factory
        engine._session_factory = async_sessionmaker(unreachable)
        engine.caches.apply([StoreReplaced()])  # no cached answer may stand in for the database
        fake_openai.reset()
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="cognition"):
            for question in ("我的猫叫什么", "团子几岁了", "我养了什么宠物"):
                sent = len(qq.sent)
                await deliver(bot, private_message(question, 10401, "阿岚"))
                assert len(qq.sent) == sent + 1  # the reply still goes out
        assert len(fake_openai.chat_requests) >= 3
        for body in fake_openai.chat_requests:
            assert "cognition_memory" not in system_text(body) and "团子" not in system_text(body)
        said = [
            r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING and "stage=hook" in r.getMessage()
        ]
        assert len(said) == 1 and "database=unreachable" in said[0], said
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR]  # no traceback per turn
        await unreachable.dispose()

        engine._session_factory = reachable  # the database is back: so is memory
        fake_openai.reset()
        await deliver(bot, private_message("我的猫叫什么", 10401, "阿岚"))
        assert fact in system_text(fake_openai.chat_requests[-1])


async def _active_ids(engine, bot: str) -> set[int]:  # type: ignore[no-untyped-def]
    async with engine.session() as session:
        rows = await session.execute(select(MemoryRow.id).where(MemoryRow.bot_id == bot, MemoryRow.status == "active"))
        return set(rows.scalars())


async def _vector_ids(engine, bot: str, scope: Scope) -> set[int]:  # type: ignore[no-untyped-def]
    return await asyncio.to_thread(engine.vectors.collection_ids, engine.generation, bot, scope)


async def _pending_outbox(engine, bot: str) -> int:  # type: ignore[no-untyped-def]
    async with engine.session() as session:
        query = select(func.count()).select_from(OutboxRow).where(OutboxRow.bot_id == bot)
        return int((await session.execute(query)).scalar_one())


async def test_a_stopped_chroma_server_loses_no_write_correction_or_forget(tmp_path: Path, tmp_root) -> None:
    server = ChromaServer(tmp_path / "chroma")
    server.start()
    try:
        settings = {"mode": "server", "host": "127.0.0.1", "port": server.port, "call_timeout_seconds": 3}
        engine = await make_engine(tmp_root, server.port, chroma=settings)
        bot = new_bot()
        chat = private(bot, "10402", "阿林")
        kept = await engine.memories.write(chat, "user", "阿林每天早上跑五公里。", now=NOW)
        corrected = await engine.memories.write(chat, "user", "阿林住在苏州。", now=NOW)
        forgotten = await engine.memories.write(chat, "user", "阿林的前任叫小雨。", now=NOW)
        await engine.index.drain()
        assert await _vector_ids(engine, bot, chat.scope) == {kept.id, corrected.id, forgotten.id}

        server.stop()
        added = await engine.memories.write(chat, "user", "阿林在学日语。", now=NOW)
        moved = await engine.memories.update(chat, corrected.id, "阿林搬到了杭州。", now=NOW)
        await engine.governance.forget(chat, forgotten.id, now=NOW)
        assert await _active_ids(engine, bot) == {kept.id, added.id, moved.id}  # SQL has every change
        await engine.index.drain()  # the index is down: the work waits in the outbox
        assert await _pending_outbox(engine, bot) >= 4

        server.start()
        # the failed rows wait out their backoff: drain as the outbox timer would, once they are due
        await engine.index.drain(now=datetime.now(UTC) + timedelta(hours=1))
        assert await _pending_outbox(engine, bot) == 0
        assert await _vector_ids(engine, bot, chat.scope) == {kept.id, added.id, moved.id}
        hits = await engine.memories.recall(chat, ["阿林的前任"], now=NOW)
        assert forgotten.id not in {hit.record.id for hit in hits.hits}
    finally:
        server.stop()
