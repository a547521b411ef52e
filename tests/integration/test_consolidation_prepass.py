"""The consolidation cycle's model-free pre-pass on a real engine: exact duplicates merged through
the write and supersede paths, lineage both ways, a forget of either side taking the other,
barriers, opt-out, a switched-off chat, delete-all.

Runs on SQLite + embedded Chroma by default and on PostgreSQL + a Chroma server with
COGNITION_TEST_BACKEND=server.
"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from engine_helpers import NOW, group, keyword_rows, make_engine, new_bot
from sqlalchemy import select

from amrita_plugin_cognition.domain.erasure import ErasureTarget
from amrita_plugin_cognition.domain.permissions import Operator
from amrita_plugin_cognition.domain.records import (
    Importance,
    MemoryDraft,
    MemoryStatus,
    Provenance,
    Scope,
    content_hash,
)
from amrita_plugin_cognition.errors import NotFound, PermissionDenied
from amrita_plugin_cognition.store import memory_sources
from amrita_plugin_cognition.store.models import BarrierRow, MemoryRow, MemorySourceRow

CHAT = Scope("group", "20001")
U, V = "10001", "10002"
CAT = "QQ号10002（昵称小红）于2026-11-20领养了一只橘猫。"
CAT_BANG = "QQ号10002（昵称小红）于2026-11-20领养了一只橘猫！"
CAT_SPACED = "QQ号10002（昵称小红） 于2026-11-20领养了一只橘猫"
GYM = "QQ号10005（昵称阿杰）每周三晚上去健身房。"
GYM_REWORDED = "阿杰（QQ号10005）每个星期三晚上去健身房。"
RUN = "QQ号10004（昵称老王）每天早上六点起床跑步。"
RUN_BANG = "QQ号10004（昵称老王）每天早上六点起床跑步！"


@pytest.fixture
async def engine(tmp_root, chroma_port):  # type: ignore[no-untyped-def]
    # the pre-pass alone: the judgement step (the model) is off (test_judgement.py tests it)
    return await make_engine(tmp_root, chroma_port, consolidation={"daily_token_budget": 0})


async def _write(engine, bot: str, text_: str, speaker: str = U, **fields) -> int:  # type: ignore[no-untyped-def]
    at = fields.pop("at", NOW)
    draft = MemoryDraft(text=text_, scope=fields.pop("scope", CHAT), speaker_id=speaker, speaker_name="小明", **fields)
    result = await engine.memories.remember(bot, [draft], now=at)
    assert result.written, result.refused
    return result.written[0].id


async def _row(engine, memory_id: int) -> MemoryRow | None:  # type: ignore[no-untyped-def]
    async with engine.session() as session:
        return (await session.execute(select(MemoryRow).where(MemoryRow.id == memory_id))).scalar_one_or_none()


async def _statuses(engine, ids: list[int]) -> set[str]:  # type: ignore[no-untyped-def]
    async with engine.session() as session:
        return set((await session.execute(select(MemoryRow.status).where(MemoryRow.id.in_(ids)))).scalars())


async def _cat_chat(engine, bot: str) -> list[int]:  # type: ignore[no-untyped-def]
    """Three writings of one fact (merged), one of another fact (left), a near pair (proposed)."""
    first = await _write(engine, bot, CAT, importance=Importance.LOW, tags=["宠物"], at=NOW - timedelta(days=3))
    second = await _write(
        engine, bot, CAT_BANG, importance=Importance.HIGH, tags=["猫", "宠物"], at=NOW - timedelta(days=2)
    )
    third = await _write(engine, bot, CAT_SPACED, importance=Importance.MEDIUM, at=NOW - timedelta(days=1))
    await _write(engine, bot, GYM)
    await _write(engine, bot, GYM_REWORDED)
    await engine.index.drain()
    return [first, second, third]


async def test_exact_duplicates_are_merged_with_lineage_both_ways(engine) -> None:  # type: ignore[no-untyped-def]
    bot = new_bot()
    sources = await _cat_chat(engine, bot)
    dry = await engine.consolidation.dry_run(Operator(), bot, CHAT, now=NOW)
    assert [plan.source_ids for plan in dry.planned] == [tuple(sources)] and not dry.merged
    assert (await _row(engine, sources[0])).status == MemoryStatus.ACTIVE.value  # a dry run changes nothing

    await engine.decay.keep(group(bot, CHAT.id, U), sources[1], True)  # after the dry run's read
    report = await engine.consolidation.run_now(Operator(), bot, CHAT, now=NOW)
    assert len(report.merged) == 1 and not report.skipped
    assert len(report.near) == 1  # the gym pair: proposed, never merged here
    merged = await _row(engine, report.merged[0].merged_id)
    assert merged.provenance == Provenance.CONSOLIDATED.value and merged.status == MemoryStatus.ACTIVE.value
    assert merged.text == CAT_SPACED  # the newest wording
    assert json.loads(merged.source)["sources"] == sources
    assert merged.importance == "high" and json.loads(merged.tags) == ["宠物", "猫"] and merged.keep
    assert merged.recorded_at.replace(tzinfo=None) == (NOW - timedelta(days=3)).replace(tzinfo=None)
    for source_id in sources:
        row = await _row(engine, source_id)
        assert row.status == MemoryStatus.SUPERSEDED.value and row.superseded_by == merged.id
        assert row.invalid_at is not None
    # out of the keyword index, the merge in it
    assert await keyword_rows(engine, [*sources, merged.id]) == {merged.id}
    async with engine.session() as session:
        assert await memory_sources.sources_of(session, [merged.id]) == {merged.id: sources}
        assert await memory_sources.built_from(session, sources) == dict.fromkeys(sources, merged.id)
    # recall finds the merge, not its sources
    await engine.index.drain()
    found = await engine.memories.recall(group(bot, CHAT.id, U), ["小红领养的橘猫"], now=NOW)
    ids = [hit.record.id for hit in found.hits]
    assert merged.id in ids and not set(sources) & set(ids)
    # a second pass has nothing left to merge
    again = await engine.consolidation.run_now(Operator(), bot, CHAT, now=NOW)
    assert again.planned == [] and again.merged == []


async def test_different_speakers_or_days_are_not_merged(engine) -> None:  # type: ignore[no-untyped-def]
    bot = new_bot()
    await _write(engine, bot, RUN, speaker=U)
    await _write(engine, bot, RUN_BANG, speaker=V)
    report = await engine.consolidation.run_now(Operator(), bot, CHAT, now=NOW)
    assert report.planned == [] and report.merged == []


async def test_forgetting_the_merge_forgets_its_sources(engine) -> None:  # type: ignore[no-untyped-def]
    bot = new_bot()
    sources = await _cat_chat(engine, bot)
    report = await engine.consolidation.run_now(Operator(), bot, CHAT, now=NOW)
    merged_id = report.merged[0].merged_id
    await engine.governance.forget(group(bot, CHAT.id, U), merged_id, now=NOW)
    for memory_id in [merged_id, *sources]:
        assert await _row(engine, memory_id) is None
    async with engine.session() as session:
        barred = (await session.execute(select(BarrierRow.memory_id, BarrierRow.content_hash))).all()
        lineage = (await session.execute(select(MemorySourceRow).where(MemorySourceRow.bot_id == bot))).all()
    barred_ids = {memory_id for memory_id, _ in barred}
    assert {merged_id, *sources} <= barred_ids
    assert {content_hash(bot, CHAT, text_) for text_ in (CAT, CAT_BANG, CAT_SPACED)} <= {digest for _, digest in barred}
    assert lineage == []
    # the barrier holds: none of the writings is learned again
    result = await engine.memories.remember(bot, [MemoryDraft(text=CAT_BANG, scope=CHAT, speaker_id=U)], now=NOW)
    assert result.refused and result.refused[0][2] == "forgotten"


async def test_forgetting_a_source_forgets_the_merge(engine) -> None:  # type: ignore[no-untyped-def]
    bot = new_bot()
    sources = await _cat_chat(engine, bot)
    report = await engine.consolidation.run_now(Operator(), bot, CHAT, now=NOW)
    merged_id = report.merged[0].merged_id
    context = group(bot, CHAT.id, U)
    shown = await engine.governance.forgettable(context, sources[0])
    assert shown.id == merged_id  # the confirm step shows what goes: the merge
    with pytest.raises(PermissionDenied):
        await engine.governance.forget(group(bot, CHAT.id, "10009"), sources[1], now=NOW)
    await engine.governance.forget(context, sources[1], now=NOW)
    for memory_id in [merged_id, *sources]:
        assert await _row(engine, memory_id) is None
    with pytest.raises(NotFound):
        await engine.governance.forget(context, sources[0], now=NOW)


async def test_a_barrier_an_opt_out_or_a_switched_off_chat_leaves_duplicates_alone(engine) -> None:  # type: ignore[no-untyped-def]
    bot = new_bot()
    sources = await _cat_chat(engine, bot)
    # a barrier on one writing (as a restore's replay leaves it): that merge is skipped
    async with engine.session() as session:
        session.add(
            BarrierRow(
                memory_id=None, content_hash=content_hash(bot, CHAT, CAT_BANG), bot_id=bot, reason="t", created_at=NOW
            )
        )
        await session.commit()
    report = await engine.consolidation.run_now(Operator(), bot, CHAT, now=NOW)
    assert report.merged == [] and report.skipped == [(tuple(sources), "forgotten")]

    other = new_bot()
    kept = await _cat_chat(engine, other)
    await engine.governance.set_opt_out(other, U, True, Operator(), now=NOW)
    report = await engine.consolidation.run_now(Operator(), other, CHAT, now=NOW)
    assert report.merged == [] and report.skipped == [(tuple(kept), "opted_out")]
    assert await _statuses(engine, kept) == {MemoryStatus.ACTIVE.value}

    third = new_bot()
    left = await _cat_chat(engine, third)
    await engine.governance.set_chat_memory(third, CHAT, False, Operator(), now=NOW)
    report = await engine.consolidation.run_now(Operator(), third, CHAT, now=NOW)
    assert report.switched_off and report.planned == []
    assert await _statuses(engine, left) == {MemoryStatus.ACTIVE.value}
    assert await engine.consolidation.refresh(now=NOW) >= 0
    assert [job for job in await engine.jobs.queued() if job.bot_id == third] == []


async def test_a_users_delete_all_takes_the_merge_and_its_sources(engine) -> None:  # type: ignore[no-untyped-def]
    bot = new_bot()
    sources = await _cat_chat(engine, bot)
    report = await engine.consolidation.run_now(Operator(), bot, CHAT, now=NOW)
    merged_id = report.merged[0].merged_id
    await engine.governance.delete_all(ErasureTarget.user(bot, V), Operator(), now=NOW)  # the text names 10002
    for memory_id in [merged_id, *sources]:
        assert await _row(engine, memory_id) is None
    async with engine.session() as session:
        assert (await session.execute(select(MemorySourceRow).where(MemorySourceRow.bot_id == bot))).all() == []


async def test_a_backup_carries_the_lineage_and_a_restore_keeps_the_forget(engine, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from amrita_plugin_cognition.engine import backup

    kept_bot, gone_bot = new_bot(), new_bot()
    kept_sources = await _cat_chat(engine, kept_bot)
    gone_sources = await _cat_chat(engine, gone_bot)
    kept = (await engine.consolidation.run_now(Operator(), kept_bot, CHAT, now=NOW)).merged[0].merged_id
    gone = (await engine.consolidation.run_now(Operator(), gone_bot, CHAT, now=NOW)).merged[0].merged_id
    info = await backup.create_backup(engine, tmp_path / "merges.jsonl.gz")
    assert info.counts["memory_source"] >= 6
    await engine.governance.forget(group(gone_bot, CHAT.id, U), gone, now=NOW)  # after the backup

    await backup.restore_backup(engine, info.path)
    async with engine.session() as session:
        assert await memory_sources.sources_of(session, [kept, gone]) == {kept: kept_sources}
    assert await _statuses(engine, kept_sources) == {MemoryStatus.SUPERSEDED.value}
    assert await _statuses(engine, [gone, *gone_sources]) == set()  # the forget holds through the restore
    # and the restored lineage still carries a forget from a source to its merge
    await engine.governance.forget(group(kept_bot, CHAT.id, U), kept_sources[0], now=NOW)
    assert await _statuses(engine, [kept, *kept_sources]) == set()
