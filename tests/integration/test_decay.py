"""The decay sweep on a real store (SQLite or PostgreSQL, real Chroma): demote then retire by the
tier lifetimes, never what is kept or what has not happened yet, expired memories out of every
output and index, restore, purge, forget and delete-all of expired memories, and a cursor that a
restarted sweep resumes from. The whole table is swept (every bot account of the worker's
database), so each test asserts on its own bot account's rows."""

from __future__ import annotations

from datetime import timedelta

import pytest
from engine_helpers import NOW, group, keyword_rows, make_engine, new_bot, private
from sqlalchemy import delete, func, select

from amrita_plugin_cognition.domain.erasure import ErasureTarget
from amrita_plugin_cognition.domain.permissions import Operator
from amrita_plugin_cognition.domain.profiles import Card
from amrita_plugin_cognition.domain.records import Importance, MemoryDraft, MemoryKind, MemoryStatus
from amrita_plugin_cognition.errors import InvalidInput, NotFound, PermissionDenied
from amrita_plugin_cognition.store.decay import SWEEP_KEY
from amrita_plugin_cognition.store.models import MemoryRow, MetaRow

U, V = "10001", "10002"
DAY = timedelta(days=1)


async def _rows(engine, bot: str) -> dict[str, MemoryRow]:  # type: ignore[no-untyped-def]
    async with engine.session() as session:
        rows = (await session.execute(select(MemoryRow).where(MemoryRow.bot_id == bot))).scalars().all()
    return {row.text: row for row in rows}


async def _vectors_match_sql(engine, bot: str) -> None:  # type: ignore[no-untyped-def]
    await engine.index.drain()
    report = await engine.index.repair()
    mine = [key for key in (*report.missing, *report.extra, *report.unmapped) if key.startswith(f"{bot}|")]
    assert mine == [], report


async def _fresh_pass(engine) -> None:  # type: ignore[no-untyped-def]
    """Start the test from a new pass (another test of this worker may have left one midway)."""
    async with engine.session() as session:
        await session.execute(delete(MetaRow).where(MetaRow.key == SWEEP_KEY))
        await session.commit()


@pytest.fixture
async def engine(tmp_root, chroma_port):  # type: ignore[no-untyped-def]
    built = await make_engine(tmp_root, chroma_port)
    await _fresh_pass(built)
    return built


async def test_tiers_demote_then_retire_and_the_expired_leave_every_output(engine) -> None:  # type: ignore[no-untyped-def]
    bot = new_bot()
    chat = group(bot, "20001", U, "小明", role="admin")
    low = await engine.memories.write(chat, "group", "小明把伞落在了羽毛球馆。", importance=Importance.LOW, now=NOW)
    medium = await engine.memories.write(chat, "group", "小明喜欢吃重庆火锅。", now=NOW)
    high = await engine.memories.write(chat, "group", "小明对花生过敏。", importance=Importance.HIGH, now=NOW)
    await engine.index.drain()

    week = await engine.decay.sweep(now=NOW + 7 * DAY + timedelta(minutes=1))
    assert week.finished and week.expired >= 1
    rows = await _rows(engine, bot)
    assert rows[low.text].status == MemoryStatus.EXPIRED.value and rows[low.text].invalid_at is not None
    assert rows[medium.text].status == rows[high.text].status == MemoryStatus.ACTIVE.value
    # out of recall, lists, search and the keyword index; its vector deleted
    assert low.id not in {hit.record.id for hit in (await engine.memories.recall(chat, ["伞 羽毛球馆"], now=NOW)).hits}
    listed, total = await engine.memories.list(chat, "group")
    assert total == 2 and low.id not in {record.id for record in listed}
    assert low.id not in {hit.record.id for hit in (await engine.memories.search(chat, "羽毛球馆")).hits}
    assert await keyword_rows(engine, [low.id, medium.id]) == {medium.id}
    await _vectors_match_sql(engine, bot)

    # medium lives sqrt(7 × 90) ≈ 25.1 days, then is low with its clock restarted
    month = NOW + 26 * DAY
    await engine.decay.sweep(now=month)
    rows = await _rows(engine, bot)
    assert (rows[medium.text].importance, rows[medium.text].status) == ("low", "active")
    assert rows[high.text].importance == "high"
    await engine.decay.sweep(now=month + 6 * DAY)  # not a week since its demotion
    assert (await _rows(engine, bot))[medium.text].status == "active"
    await engine.decay.sweep(now=month + 7 * DAY + timedelta(minutes=1))
    assert (await _rows(engine, bot))[medium.text].status == "expired"
    # high: 90 days, then medium (one tier per sweep, never two)
    await engine.decay.sweep(now=NOW + 365 * DAY)
    assert (await _rows(engine, bot))[high.text].importance == "medium"


async def test_kept_memories_and_plans_not_yet_happened_do_not_expire(engine) -> None:  # type: ignore[no-untyped-def]
    bot = new_bot()
    chat = group(bot, "20001", U, "小明")
    kept = await engine.memories.write(chat, "user", "小明的生日是三月五日。", importance=Importance.LOW, now=NOW)
    with pytest.raises(PermissionDenied):  # a member may not keep someone else's memory
        await engine.decay.keep(group(bot, "20001", V, "小红"), kept.id)
    await engine.decay.keep(chat, kept.id)
    trip = NOW + 60 * DAY
    plan = MemoryDraft(
        "小明计划2027年1月29日去哈尔滨看冰雕。",
        chat.scope,
        speaker_id=U,
        speaker_name="小明",
        kind=MemoryKind.PLAN,
        importance=Importance.LOW,
        happened_at=trip,
    )
    (plan_id,) = (await engine.memories.remember(bot, [plan], now=NOW)).record_ids.values()

    await engine.decay.sweep(now=NOW + 30 * DAY)
    rows = await _rows(engine, bot)
    assert rows[kept.text].status == "active" and rows[kept.text].keep
    assert rows[plan.text].status == "active"  # its trip is a month away still
    await engine.decay.sweep(now=trip + 7 * DAY + timedelta(minutes=1))  # a week after the trip
    rows = await _rows(engine, bot)
    assert rows[plan.text].status == "expired" and rows[plan.text].id == plan_id
    assert rows[kept.text].status == "active"
    # unkept, it decays again like any other
    await engine.decay.keep(chat, kept.id, keep=False)
    await engine.decay.sweep(now=NOW + 400 * DAY)
    assert (await _rows(engine, bot))[kept.text].status == "expired"


async def test_restore_brings_it_back_unless_forgotten_and_the_purge_deletes_with_its_versions(engine) -> None:  # type: ignore[no-untyped-def]
    bot = new_bot()
    chat = group(bot, "20001", U, "小明", role="admin")
    member = group(bot, "20001", V, "小红")
    first = await engine.memories.write(chat, "group", "群里周五晚上打羽毛球。", importance=Importance.LOW, now=NOW)
    newer = await engine.memories.update(chat, first.id, "群里周六晚上打羽毛球。", now=NOW)
    # the correction is low too (its old version's tier); it names Saturday (12-05), when its clock starts
    await engine.decay.sweep(now=NOW + 11 * DAY)
    assert (await _rows(engine, bot))[newer.text].status == "active"
    await engine.decay.sweep(now=NOW + 13 * DAY)
    assert (await _rows(engine, bot))[newer.text].status == "expired"

    listed, total = await engine.decay.expired(chat)
    assert total == 1 and listed[0].id == newer.id
    with pytest.raises(PermissionDenied):  # a member neither lists nor restores
        await engine.decay.expired(member)
    with pytest.raises(PermissionDenied):
        await engine.decay.restore(member, bot, newer.id)
    with pytest.raises(NotFound, match="已过期"):  # a correction of an expired memory is refused
        await engine.memories.update(chat, newer.id, "群里周日晚上打羽毛球。", now=NOW)

    restored = await engine.decay.restore(chat, bot, newer.id, now=NOW + 14 * DAY)
    assert restored.status == MemoryStatus.ACTIVE and restored.invalid_at is None
    assert await keyword_rows(engine, [newer.id]) == {newer.id}
    assert newer.id in {hit.record.id for hit in (await engine.memories.recall(chat, ["打羽毛球"], now=NOW)).hits}
    await _vectors_match_sql(engine, bot)
    with pytest.raises(InvalidInput, match="没有过期"):
        await engine.decay.restore(chat, bot, newer.id)

    # expired again, then the same fact learned anew and forgotten: its barrier bars the restore
    await engine.decay.sweep(now=NOW + 22 * DAY)
    again = await engine.memories.write(chat, "group", newer.text, now=NOW + 22 * DAY)
    assert again.id != newer.id
    await engine.governance.forget(chat, again.id)
    with pytest.raises(InvalidInput, match="遗忘"):
        await engine.decay.restore(Operator(), bot, newer.id)

    # 30 days after it expired it is purged, with the version it replaced
    await engine.decay.sweep(now=NOW + 22 * DAY + 31 * DAY)
    assert await _rows(engine, bot) == {}
    with pytest.raises(NotFound):
        await engine.decay.restore(Operator(), bot, newer.id)


async def test_forget_and_delete_all_cover_expired_memories(engine) -> None:  # type: ignore[no-untyped-def]
    bot = new_bot()
    in_group, in_private = group(bot, "20001", U, "小明"), private(bot, U, "小明")
    said = await engine.memories.write(in_group, "user", "小明周末去爬了泰山。", importance=Importance.LOW, now=NOW)
    secret = await engine.memories.write(in_private, "user", "小明在准备考研。", importance=Importance.LOW, now=NOW)
    await engine.decay.sweep(now=NOW + 8 * DAY)
    assert {row.status for row in (await _rows(engine, bot)).values()} == {"expired"}

    forgotten = await engine.governance.forget(in_group, said.id)  # by id, though expired
    assert forgotten.id == said.id
    report = await engine.governance.delete_all(ErasureTarget.user(bot, U), actor=in_private)
    assert report.counts["memories"] == 1
    assert await _rows(engine, bot) == {}
    with pytest.raises(NotFound):
        await engine.decay.restore(Operator(), bot, secret.id)


async def test_a_restarted_sweep_resumes_after_its_cursor_and_rescans_nothing(tmp_root, chroma_port) -> None:  # type: ignore[no-untyped-def]
    engine = await make_engine(tmp_root, chroma_port, consolidation={"sweep_batch_size": 10})
    await _fresh_pass(engine)
    bot = new_bot()
    chat = group(bot, "20001", U, "小明")
    drafts = [MemoryDraft(f"小明第{number}次去图书馆借书。", chat.scope, speaker_id=U) for number in range(35)]
    await engine.memories.remember(bot, drafts, now=NOW)
    async with engine.session() as session:
        swept = (
            await session.execute(
                select(func.count()).select_from(MemoryRow).where(MemoryRow.status.in_(("active", "expired")))
            )
        ).scalar_one()

    first = await engine.decay.sweep(now=NOW, max_batches=2)  # "stopped" after two batches
    assert (first.scanned, first.batches, first.finished) == (20, 2, False)
    state = await engine.decay.status()
    assert state["cursor"] == first.cursor > 0 and state["current"]["scanned"] == 20
    rest = await engine.decay.sweep(now=NOW)  # a new run (a restart) goes on from the cursor
    assert rest.finished and first.scanned + rest.scanned == swept
    state = await engine.decay.status()
    assert state["cursor"] == 0 and state["last_pass"]["scanned"] == swept and state["last_finished_at"]
    # the next pass is due only after the interval
    assert await engine.decay.sweep_if_due(now=NOW + 23 * timedelta(hours=1)) is None
    assert (await engine.decay.sweep_if_due(now=NOW + 24 * timedelta(hours=1))).scanned == swept  # type: ignore[union-attr]


async def test_a_fact_said_again_restarts_its_clock(engine) -> None:  # type: ignore[no-untyped-def]
    bot = new_bot()
    chat = group(bot, "20001", U, "小明")
    draft = MemoryDraft("小明每天早上喝一杯美式咖啡。", chat.scope, speaker_id=U, importance=Importance.LOW)
    (first,) = (await engine.memories.remember(bot, [draft], now=NOW)).record_ids.values()
    again = await engine.memories.remember(bot, [draft], now=NOW + 5 * DAY)  # said again: a duplicate
    assert again.record_ids == {0: first} and again.refused[0][2] == "duplicate"
    await engine.memories.remember(bot, [draft], now=NOW + DAY)  # an older message never winds it back
    await engine.decay.sweep(now=NOW + 8 * DAY)
    assert (await _rows(engine, bot))[draft.text].status == "active"  # 3 days since it was said again
    await engine.decay.sweep(now=NOW + 12 * DAY + timedelta(minutes=1))
    assert (await _rows(engine, bot))[draft.text].status == "expired"


async def test_a_purge_takes_its_ids_out_of_cards_and_knowledge_and_withdraws_nothing(engine) -> None:  # type: ignore[no-untyped-def]
    bot = new_bot()
    chat = group(bot, "20001", U, "小明", role="admin")
    fleeting = await engine.memories.write(chat, "group", "群里周五晚上打羽毛球。", importance=Importance.LOW, now=NOW)
    kept = await engine.memories.write(chat, "group", "打羽毛球要先热身十分钟。", importance=Importance.HIGH, now=NOW)
    card = Card(bot, "group", "20001", "group", body="爱打羽毛球的群。", source_ids=[fleeting.id, kept.id])
    await engine.profiles.save(card, now=NOW)
    entry = await engine.knowledge.create(
        bot, "羽毛球", "先热身", "打羽毛球前先热身十分钟。", [fleeting.id, kept.id], by="test", now=NOW
    )
    await engine.decay.sweep(now=NOW + 13 * DAY)  # the low fact expires: nothing is told yet (it may be restored)
    assert list((await engine.profiles.get(bot, "group", "20001")).source_ids) == [fleeting.id, kept.id]
    await engine.decay.sweep(now=NOW + 13 * DAY + 31 * DAY)  # purged: its id leaves both, their text stays
    assert fleeting.text not in await _rows(engine, bot)
    stored = await engine.profiles.get(bot, "group", "20001")
    assert list(stored.source_ids) == [kept.id] and stored.body == "爱打羽毛球的群。"
    after = await engine.knowledge.get(bot, entry.id)
    assert list(after.source_ids) == [kept.id] and after.shown and after.version == entry.version
