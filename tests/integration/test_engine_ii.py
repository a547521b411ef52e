"""Engine II holes on a real store: the turn's budget, the outbox's per-row retries, a forget
during a reindex, another process's reindex, and who may change the memo and pins."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timedelta

import pytest
from engine_helpers import NOW, group, make_engine, new_bot

from amrita_plugin_cognition.domain.clock import UTC
from amrita_plugin_cognition.domain.records import Scope
from amrita_plugin_cognition.errors import IndexUnavailable, PermissionDenied
from amrita_plugin_cognition.index.embedders import OpenAIEmbedder

LATER = datetime.now(UTC) + timedelta(days=2)


async def test_a_slow_embedder_never_costs_the_memo_pins_or_keyword_memories(
    tmp_root, chroma_port, fake_openai
) -> None:
    from amrita_plugin_cognition.engine import notes
    from amrita_plugin_cognition.engine.context import build_context

    embedder = OpenAIEmbedder(url=fake_openai.base_url, model="fake-embed", api_key="sk-test", timeout=30)
    engine = await make_engine(tmp_root, chroma_port, embedder=embedder, hook_timeout_seconds=1.0)
    bot = new_bot()
    admin = group(bot, "20001", "10001", role="admin")
    await notes.update_memo(engine, admin, "本群是登山群。")
    await notes.add_pin(engine, admin, "周六提醒大家带雨衣")
    await engine.memories.write(admin, "group", "群友小明下个月去成都出差。", now=NOW)
    await engine.settle()
    fake_openai.embeddings_delay = 8.0  # slow, not failing
    started = time.monotonic()
    built = await build_context(engine, admin, ["小明去成都出差的事"], now=NOW)
    elapsed = time.monotonic() - started
    assert elapsed < 1.0, elapsed
    assert "本群是登山群。" in built.text and "周六提醒大家带雨衣" in built.text
    assert "成都出差" in built.text and built.recall_mode == "keyword_only"
    fake_openai.embeddings_delay = 0.0


class _RefusesOneFact:
    """A vector index that cannot take one particular fact (and takes every other)."""

    def __init__(self, real, poisoned: set[int]) -> None:  # type: ignore[no-untyped-def]
        self._real = real
        self.poisoned = poisoned

    def upsert(self, generation, bot_id, scope, ids, vectors, metadatas):  # type: ignore[no-untyped-def]
        if self.poisoned & set(ids):
            raise IndexUnavailable(en="chroma refused the row")
        return self._real.upsert(generation, bot_id, scope, ids, vectors, metadatas)

    def __getattr__(self, name):  # type: ignore[no-untyped-def]
        return getattr(self._real, name)


async def test_one_failing_row_does_not_hold_back_the_others_and_ends_dead(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port, outbox_max_attempts=2)
    await engine.settle()
    bot = new_bot()
    context = group(bot, "20001", "10001")
    real = engine.vectors
    engine.vectors = _RefusesOneFact(real, set())  # type: ignore[assignment]
    poisoned = await engine.memories.write(context, "group", "这一条写不进向量索引。", now=NOW)
    engine.vectors.poisoned.add(poisoned.id)  # type: ignore[attr-defined]
    others = [await engine.memories.write(context, "group", f"第{index}条普通群事实。", now=NOW) for index in range(3)]
    await engine.settle()
    await engine.index.drain(now=LATER)
    stored = (await asyncio.to_thread(real.stored_ids, engine.generation, [(bot, context.scope)])).by_scope
    assert {record.id for record in others} <= stored[(bot, context.scope)]
    assert poisoned.id not in stored[(bot, context.scope)]
    await engine.index.drain(now=LATER + timedelta(days=2))  # second failure: dead
    status = await engine.index.status()
    assert status["outbox"]["dead"] >= 1 and status["index"]["missing"] >= 1
    engine.vectors.poisoned.clear()  # type: ignore[attr-defined]
    assert await engine.index.retry_dead() >= 1
    await engine.index.drain()
    stored = (await asyncio.to_thread(real.stored_ids, engine.generation, [(bot, context.scope)])).by_scope
    assert poisoned.id in stored[(bot, context.scope)]
    assert (await engine.index.status())["outbox"]["dead"] == 0


async def test_a_forget_during_a_reindex_is_not_in_the_new_generation(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    context = group(bot, "20001", "10001")
    records = [
        await engine.memories.write(context, "group", f"群里第{index}件要记的事。", now=NOW) for index in range(5)
    ]
    await engine.settle()
    doomed = records[2]
    real_upsert = engine.index_sync.upsert_rows
    forgotten = False

    async def upsert_after_a_forget(groups, generation):  # type: ignore[no-untyped-def]
        nonlocal forgotten
        if engine.index_sync.building_generation == generation and not forgotten:
            forgotten = True  # the page holding it is read; now it is forgotten, before its upsert
            await engine.governance.forget(context, doomed.id, now=NOW)
            await asyncio.sleep(0.3)  # room for any drain that does not wait for the rebuild
        await real_upsert(groups, generation)

    engine.index_sync.upsert_rows = upsert_after_a_forget  # type: ignore[method-assign]
    report = await engine.index.reindex(page_size=100)
    engine.index_sync.upsert_rows = real_upsert  # type: ignore[method-assign]
    assert forgotten and report.generation_after == engine.generation
    stored = (await asyncio.to_thread(engine.vectors.stored_ids, engine.generation, [(bot, context.scope)])).by_scope
    assert doomed.id not in stored[(bot, context.scope)]
    assert {record.id for record in records} - {doomed.id} <= stored[(bot, context.scope)]


async def test_a_reindex_by_another_process_is_followed(tmp_root, chroma_port) -> None:
    """Two engines on one database and one index stand for the bot and ``ambot cognition
    reindex`` run beside it (with a Chroma server; an embedded folder has one owner)."""
    bot_engine = await make_engine(tmp_root, chroma_port)
    cli_engine = await make_engine(tmp_root, chroma_port)
    cli_engine.vectors = bot_engine.vectors
    bot = new_bot()
    context = group(bot, "20001", "10001")
    await bot_engine.memories.write(context, "group", "群友小红养了一只叫团子的猫。", now=NOW)
    await bot_engine.settle()
    assert (await bot_engine.memories.recall(context, ["小红的猫"], now=NOW)).hits[0].similarity > 0
    before = bot_engine.generation
    await cli_engine.index.reindex()
    assert bot_engine.generation == before  # the bot has not looked yet
    result = await bot_engine.memories.recall(context, ["小红的猫"], now=NOW)
    assert result.mode == "full" and result.hits[0].similarity > 0
    assert bot_engine.generation == cli_engine.generation
    later = await bot_engine.memories.write(context, "group", "团子最爱吃冻干。", now=NOW)
    await bot_engine.settle()
    status = await bot_engine.index.status()
    assert status["index"]["missing"] == 0 and status["index"]["stale"] == 0
    stored = await asyncio.to_thread(bot_engine.vectors.stored_ids, cli_engine.generation, [(bot, context.scope)])
    assert later.id in stored.by_scope[(bot, context.scope)]


async def test_members_append_but_only_admins_replace_the_memo_and_it_can_be_restored(tmp_root, chroma_port) -> None:
    from amrita_plugin_cognition.engine import notes

    engine = await make_engine(tmp_root, chroma_port, memo_revisions_keep=2)
    bot = new_bot()
    member = group(bot, "20001", "10001")
    admin = group(bot, "20001", "10002", role="admin")
    await notes.append_memo(engine, member, "本群周六爬山。")
    with pytest.raises(PermissionDenied):
        await notes.update_memo(engine, member, "本群解散了。")
    await notes.update_memo(engine, admin, "本群周日爬山。")
    await notes.update_memo(engine, admin, "本群周日爬山，带雨衣。")
    await notes.update_memo(engine, admin, "本群改成读书群。")
    revisions = await notes.memo_revisions(engine, bot, member.scope)
    assert [revision.content for revision in revisions] == ["本群周日爬山，带雨衣。", "本群周日爬山。"]
    await notes.restore_memo(engine, bot, member.scope, revisions[1].id)
    assert await notes.read_memo(engine, member) == "本群周日爬山。"
    assert (await notes.memo_revisions(engine, bot, member.scope))[0].content == "本群改成读书群。"
    # a private chat is its user's own
    await notes.update_memo(
        engine, group(bot, "20001", "10001").__class__(bot, Scope("private", "10001"), "10001"), "我的备忘"
    )


async def test_a_pin_is_changed_by_its_author_or_an_admin_only(tmp_root, chroma_port) -> None:
    from amrita_plugin_cognition.engine import notes

    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    author = group(bot, "20001", "10001")
    other = group(bot, "20001", "10003")
    pin = await notes.add_pin(engine, author, "周五交周报")
    with pytest.raises(PermissionDenied):
        await notes.update_pin(engine, other, pin.id, "周报取消了")
    with pytest.raises(PermissionDenied):
        await notes.delete_pin(engine, other, pin.id)
    await notes.update_pin(engine, author, pin.id, "周四交周报")
    await notes.delete_pin(engine, group(bot, "20001", "10002", role="owner"), pin.id)
    assert await notes.list_pins(engine, author) == []


async def test_sqlite_runs_with_a_write_ahead_log(tmp_root, chroma_port, backend) -> None:
    """Readers never hold a commit back (the rollback journal made commits wait for them)."""
    from sqlalchemy import text

    if backend == "server":
        pytest.skip("a SQLite setting")
    engine = await make_engine(tmp_root, chroma_port)
    async with engine.session() as session:
        assert (await session.execute(text("PRAGMA journal_mode"))).scalar_one().lower() == "wal"


async def test_a_local_time_is_stored_as_the_same_instant(tmp_root, chroma_port) -> None:
    """A caller's aware time in another zone (+08:00) is stored and compared as the same instant:
    SQLite keeps no offset, so the store converts to UTC before binding."""
    from datetime import timezone

    from sqlalchemy import select

    from amrita_plugin_cognition.store.models import MemoryRow

    engine = await make_engine(tmp_root, chroma_port)
    context = group(new_bot(), "20001", "10001")
    shanghai = timezone(timedelta(hours=8))
    local = NOW.astimezone(shanghai)
    record = await engine.memories.write(context, "group", "时区测试：本地时间写入。", now=local)
    async with engine.session() as session:
        stored = (await session.execute(select(MemoryRow.recorded_at).where(MemoryRow.id == record.id))).scalar_one()
        later = (
            await session.execute(select(MemoryRow.id).where(MemoryRow.recorded_at > (NOW - timedelta(minutes=1))))
        ).scalars()
        assert record.id in set(later)
    stored = stored if stored.tzinfo else stored.replace(tzinfo=UTC)
    assert stored == NOW


def test_a_naive_time_is_taken_as_utc_on_every_database() -> None:
    """asyncpg would read a naive value as the host's local time: the column makes it UTC first."""
    from datetime import timezone

    from amrita_plugin_cognition.store.models import UTCDateTime

    column = UTCDateTime()
    naive = datetime(2026, 1, 1, 8, 0)
    assert column.process_bind_param(naive, None) == naive.replace(tzinfo=UTC)  # type: ignore[arg-type]
    local = datetime(2026, 1, 1, 8, 0, tzinfo=timezone(timedelta(hours=8)))
    assert column.process_bind_param(local, None) == datetime(2026, 1, 1, 0, 0, tzinfo=UTC)  # type: ignore[arg-type]


async def test_a_too_long_text_is_reported_without_its_secret(tmp_root, chroma_port) -> None:
    from amrita_plugin_cognition.domain.records import MemoryDraft
    from amrita_plugin_cognition.engine.writes import remember

    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    text = "我的QQ密码是 Dragon9703!xq，" + "后面是很长的流水账。" * (engine.config.memory_max_chars // 8)
    result = await remember(engine, bot, [MemoryDraft(text, Scope("group", "20001"), speaker_id="10001")], now=NOW)
    assert not result.written and result.refused[0][2] == "too_long"
    assert "Dragon9703" not in result.refused[0][1] and "[已隐去]" in result.refused[0][1]
