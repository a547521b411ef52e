"""The memory bank on real storage: write path, isolation, recall stages, governance, faults.

Runs on SQLite + embedded Chroma by default and on PostgreSQL + a Chroma server with
COGNITION_TEST_BACKEND=server.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
import time
from datetime import datetime, timedelta

import pytest
from engine_helpers import NOW, days_ago, group, make_engine, new_bot, private
from sqlalchemy import text as sql_text

from amrita_plugin_cognition.domain.clock import UTC
from amrita_plugin_cognition.domain.records import Importance, MemoryDraft, MemoryStatus, Scope
from amrita_plugin_cognition.engine.service import RecallFilters
from amrita_plugin_cognition.errors import InvalidInput, LimitExceeded, NotFound, PermissionDenied
from amrita_plugin_cognition.index.embedders import OpenAIEmbedder
from amrita_plugin_cognition.index.vector import SYNC_EVERY

FILLER = [
    "小刚昨天修好了自行车的刹车。",
    "小丽在读一本关于宋朝历史的书。",
    "阿强的电脑换了一块新硬盘。",
    "老王每天早上六点起床跑步。",
    "小美最近在学做广式早茶。",
    "阿杰下个月要参加驾照考试。",
]


def texts(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [hit.record.text for hit in result.hits]


async def remember(engine, bot, scope, *facts, speaker="10001", name="小明", when=None, importance=Importance.MEDIUM):  # type: ignore[no-untyped-def]
    drafts = [
        MemoryDraft(
            text=fact, scope=scope, speaker_id=speaker, speaker_name=name, importance=importance, happened_at=when
        )
        for fact in facts
    ]
    result = await engine.memories.remember(bot, drafts, now=NOW)
    await engine.index.drain()
    return result


async def test_group_recall_stays_in_its_group(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    await remember(engine, bot, Scope("group", "20001"), "QQ号10001（昵称小明）计划于2026-12-04去成都出差。")
    await remember(engine, bot, Scope("group", "20002"), "QQ号10002（昵称小红）下周要去成都吃火锅。", speaker="10002")

    here = await engine.memories.recall(group(bot, "20001", "10001"), ["我之前说要去哪出差来着？"], now=NOW)
    assert texts(here) == ["QQ号10001（昵称小明）计划于2026-12-04去成都出差。"]
    assert here.mode == "full"
    other = await engine.memories.recall(group(bot, "20003", "10001"), ["成都出差"], now=NOW)
    assert other.hits == []


async def test_private_facts_never_reach_a_group_even_when_open(tmp_root, chroma_port) -> None:
    for policy in ("strict", "open"):
        engine = await make_engine(tmp_root, chroma_port, scope_policy=policy)
        bot = new_bot()
        await remember(engine, bot, Scope("private", "10001"), "QQ号10001（昵称小明）的过敏原是花生。")
        in_group = await engine.memories.recall(group(bot, "20001", "10001"), ["小明对什么过敏"], now=NOW)
        assert in_group.hits == [], policy
        other_private = await engine.memories.recall(private(bot, "10002"), ["小明对什么过敏"], now=NOW)
        assert other_private.hits == [], policy
        own = await engine.memories.recall(private(bot, "10001"), ["我对什么过敏"], now=NOW)
        assert texts(own) == ["QQ号10001（昵称小明）的过敏原是花生。"], policy


async def test_private_chat_sees_group_facts_about_its_user_only(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    await remember(engine, bot, Scope("group", "20001"), "QQ号10001（昵称小明）在群里说他最爱吃火锅。")
    await remember(
        engine,
        bot,
        Scope("group", "20001"),
        "QQ号10002（昵称小红）在群里说她最爱吃火锅。",
        speaker="10002",
        name="小红",
    )
    mine = await engine.memories.recall(private(bot, "10001"), ["火锅"], now=NOW)
    assert texts(mine) == ["QQ号10001（昵称小明）在群里说他最爱吃火锅。"]
    stranger = await engine.memories.recall(private(bot, "10003"), ["火锅"], now=NOW)
    assert stranger.hits == []


async def test_open_policy_shares_groups_and_boosts_the_current_one(tmp_root, chroma_port) -> None:
    bot = new_bot()
    strict = await make_engine(tmp_root, chroma_port)
    await remember(strict, bot, Scope("group", "20001"), "群20001约定每周五晚上八点一起打羽毛球。", *FILLER)
    await remember(
        strict, bot, Scope("group", "20002"), "群20002约定每周五晚上八点一起打羽毛球。", *FILLER, speaker="10002"
    )
    question = ["每周五晚上打羽毛球的约定"]
    strict_hits = (await strict.memories.recall(group(bot, "20002", "10009"), question, now=NOW)).hits
    assert {hit.record.scope.id for hit in strict_hits} == {"20002"}
    open_engine = await make_engine(tmp_root, chroma_port, scope_policy="open")
    open_engine.vectors = strict.vectors

    def badminton(result) -> list[str]:  # type: ignore[no-untyped-def]
        return [hit.record.scope.id for hit in result.hits if "羽毛球" in hit.record.text]

    assert badminton(await open_engine.memories.recall(group(bot, "20001", "10009"), question, now=NOW)) == [
        "20001",
        "20002",
    ]
    assert badminton(await open_engine.memories.recall(group(bot, "20002", "10009"), question, now=NOW)) == [
        "20002",
        "20001",
    ]


async def test_two_character_chinese_words_match_by_keyword(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port, recall={"exact_search_max_vectors": 0})
    bot = new_bot()
    scope = Scope("group", "20001")
    await remember(engine, bot, scope, "小明周末和同事去吃了重庆火锅。", "小红周末去图书馆看书。", "小刚周末去爬山。")
    engine.vectors = _BrokenVectors(engine.vectors)  # keyword side alone must find it
    result = await engine.memories.recall(group(bot, "20001", "10001"), ["火锅"], now=NOW)
    assert result.mode == "keyword_only"
    assert texts(result)[0] == "小明周末和同事去吃了重庆火锅。"


class _BrokenVectors:
    """A vector index whose server went away."""

    def __init__(self, inner) -> None:  # type: ignore[no-untyped-def]
        self.inner = inner
        self.description = "broken"

    def __getattr__(self, name):  # type: ignore[no-untyped-def]
        from amrita_plugin_cognition.index.vector import IndexUnavailable

        def fail(*args, **kwargs):  # type: ignore[no-untyped-def]
            raise IndexUnavailable(en="connection refused")

        return fail


async def test_correction_supersedes_and_keeps_history(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    context = group(bot, "20001", "10001")
    old = await engine.memories.write(context, "user", "QQ号10001（昵称小明）住在北京。", now=NOW)
    await engine.index.drain()
    new = await engine.memories.update(context, old.id, "QQ号10001（昵称小明）搬到了上海居住。", now=NOW)
    await engine.index.drain()
    result = await engine.memories.recall(context, ["小明住在哪里"], now=NOW)
    assert texts(result) == ["QQ号10001（昵称小明）搬到了上海居住。"]
    async with engine.session() as session:
        from amrita_plugin_cognition.store import repository

        rows = await repository.get_rows(session, bot, [old.id, new.id])
    assert rows[old.id].status == MemoryStatus.SUPERSEDED.value
    assert rows[old.id].superseded_by == new.id
    assert rows[old.id].invalid_at is not None


async def test_forget_is_final_even_through_rewrite_and_reindex(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    context = private(bot, "10001")
    record = await engine.memories.write(context, "user", "QQ号10001（昵称小明）的前任叫小丽。", now=NOW)
    await engine.index.drain()
    await engine.governance.forget(context, record.id)
    await engine.index.drain()
    assert (await engine.memories.recall(context, ["前任"], now=NOW)).hits == []
    with pytest.raises(InvalidInput, match="遗忘"):
        await engine.memories.write(context, "user", "QQ号10001（昵称小明）的前任叫小丽。", now=NOW)
    await engine.index.reindex()
    assert (await engine.memories.recall(context, ["前任 小丽"], now=NOW)).hits == []
    with pytest.raises(NotFound):
        await engine.governance.forget(context, record.id)


async def test_secrets_and_do_not_remember_are_refused(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    context = private(bot, "10001")
    with pytest.raises(InvalidInput, match="凭据"):
        await engine.memories.write(context, "user", "小明的QQ密码是 hunter2abc")
    with pytest.raises(InvalidInput, match="不要记住"):
        await engine.memories.write(context, "user", "这个别记下来：小明下周要去医院复查")
    records, total = await engine.memories.list(context, "user")
    assert total == 0 and records == []


async def test_bad_input_changes_nothing(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port, memory_max_chars=50)
    bot = new_bot()
    context = group(bot, "20001", "10001")
    with pytest.raises(InvalidInput, match="不能为空"):
        await engine.memories.write(context, "group", "   ")
    with pytest.raises(LimitExceeded, match="上限 50"):
        await engine.memories.write(context, "group", "长" * 51)
    with pytest.raises(InvalidInput, match="scope"):
        await engine.memories.write(context, "everyone", "事实")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="私聊"):
        await engine.memories.write(private(bot, "10001"), "group", "事实")
    with pytest.raises(NotFound):
        await engine.memories.update(context, 999999999, "新内容")
    with pytest.raises(InvalidInput, match="limit"):
        await engine.memories.list(context, "group", limit=51)
    assert (await engine.memories.list(context, "group"))[1] == 0


async def test_members_edit_only_their_own_group_memories(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    author = group(bot, "20001", "10001")
    record = await engine.memories.write(author, "group", "群20001的群规第一条：禁止刷屏。", now=NOW)
    with pytest.raises(PermissionDenied):
        await engine.governance.forget(group(bot, "20001", "10002"), record.id)
    with pytest.raises(NotFound):  # another group cannot even see it
        await engine.governance.forget(group(bot, "20002", "10001", role="owner"), record.id)
    updated = await engine.memories.update(
        group(bot, "20001", "10003", role="admin"), record.id, "群20001的群规第一条：禁止刷屏和广告。"
    )
    await engine.governance.forget(author, updated.id)
    assert (await engine.memories.list(author, "group"))[1] == 0


async def test_scope_limit_holds_under_concurrent_writers(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port, memories_max_per_scope=10)
    bot = new_bot()
    context = group(bot, "20001", "10001")

    async def write(index: int) -> bool:
        try:
            await engine.memories.write(context, "group", f"第{index}条互不相同的群事实：编号{index * 7919}。")
            return True
        except LimitExceeded:
            return False

    outcomes = await asyncio.gather(*(write(index) for index in range(25)))
    assert sum(outcomes) == 10
    assert (await engine.memories.list(context, "group", limit=50))[1] == 10


async def test_writes_survive_an_embedder_outage_and_catch_up(tmp_root, chroma_port, fake_openai) -> None:
    embedder = OpenAIEmbedder(url=fake_openai.base_url, model="fake-embed", api_key="sk-test", timeout=5)
    engine = await make_engine(tmp_root, chroma_port, embedder=embedder)
    bot = new_bot()
    context = group(bot, "20001", "10001")
    fake_openai.embeddings_down = True
    await engine.memories.write(context, "group", "群友小明下个月去成都出差。", now=NOW)
    assert await engine.index.drain() == 0
    status = await engine.index.status()
    assert status["outbox"]["pending"] >= 1 and status["outbox"]["failing"] >= 1
    degraded = await engine.memories.recall(context, ["成都出差"], now=NOW)
    assert degraded.mode == "keyword_only"
    assert texts(degraded) == ["群友小明下个月去成都出差。"]
    fake_openai.embeddings_down = False
    assert await engine.index.drain() == 0  # the failed row waits for its backoff
    later = datetime.now(UTC) + timedelta(hours=2)
    assert await engine.index.drain(now=later) >= 1
    assert (await engine.index.status())["outbox"]["pending"] == 0
    healthy = await engine.memories.recall(context, ["成都出差"], now=NOW)
    assert healthy.mode == "full" and texts(healthy) == ["群友小明下个月去成都出差。"]


async def test_reindex_switches_model_and_dimension_without_loss(tmp_root, chroma_port, fake_openai) -> None:
    wide = OpenAIEmbedder(url=fake_openai.base_url, model="fake-embed", dimensions=64)
    engine = await make_engine(tmp_root, chroma_port, embedder=wide)
    bot = new_bot()
    facts = [f"群20001第{index}号成员的爱好是第{index}种运动。" for index in range(30)]
    await remember(engine, bot, Scope("group", "20001"), *facts)
    await engine.index.check_fingerprint()
    narrow = OpenAIEmbedder(url=fake_openai.base_url, model="fake-embed-2", dimensions=32)
    switched = await make_engine(tmp_root, chroma_port, embedder=narrow)
    switched.vectors = engine.vectors
    switched._generation = engine.generation
    assert await switched.index.check_fingerprint() == "rebuilt"
    status = await switched.index.status()
    assert status["fingerprint"]["model"] == "fake-embed-2"
    assert status["index"]["missing"] == 0
    result = await switched.memories.recall(group(bot, "20001", "10001"), ["第7号成员的爱好"], now=NOW)
    assert result.mode == "full" and any("第7号" in text for text in texts(result)[:3])


async def _ordering(tmp_root, chroma_port, shared, context, query, **recall) -> list[str]:  # type: ignore[no-untyped-def]
    engine = await make_engine(tmp_root, chroma_port, recall=recall)
    engine.vectors = shared.vectors
    return texts(await engine.memories.recall(context, query, now=NOW, use_mmr=False))


async def test_recency_lifts_a_recent_fact_but_never_filters(tmp_root, chroma_port) -> None:
    bot = new_bot()
    scope = Scope("group", "20001")
    shared = await make_engine(tmp_root, chroma_port)
    old, recent = "小明在杭州跑马拉松。", "小明最近去跑了一次马拉松比赛，地点在杭州。"
    await remember(shared, bot, scope, old, when=days_ago(900))
    await remember(shared, bot, scope, recent, when=days_ago(2))
    # a realistic pool: relevance is relative to the other candidates (z-score fusion)
    await remember(shared, bot, scope, *FILLER, when=days_ago(30))
    context, query = group(bot, "20001", "10009"), ["小明在杭州跑马拉松"]
    flat = await _ordering(tmp_root, chroma_port, shared, context, query, recency_floor=1.0)
    steep = await _ordering(
        tmp_root, chroma_port, shared, context, query, recency_floor=0.3, recency_min_similarity=-1.0
    )
    assert flat[:2] == [old, recent]
    assert steep[:2] == [recent, old]
    assert len(steep) == len(flat) == 2 + len(FILLER)  # lifted or not, nothing is filtered


async def test_vector_and_keyword_sides_each_contribute(tmp_root, chroma_port) -> None:
    bot = new_bot()
    scope = Scope("group", "20001")
    shared = await make_engine(tmp_root, chroma_port)
    literal, semantic = "小明周末去吃了重庆火锅。", "小明很喜欢麻辣的川菜和串串香。"
    await remember(shared, bot, scope, literal, semantic, "小红在学习弹钢琴。")
    context, query = group(bot, "20001", "10009"), ["火锅"]
    keyword_only = await _ordering(tmp_root, chroma_port, shared, context, query, vector_weight=0.0)
    vector_only = await _ordering(tmp_root, chroma_port, shared, context, query, keyword_weight=0.0)
    assert keyword_only == [literal]
    assert semantic in vector_only and len(vector_only) == 3


async def test_scope_boost_prefers_the_current_chat(tmp_root, chroma_port) -> None:
    bot = new_bot()
    shared = await make_engine(tmp_root, chroma_port)
    in_group, in_private = "QQ号10001（昵称小明）说他最喜欢的水果是榴莲。", "我平时也吃芒果。"
    await remember(shared, bot, Scope("group", "20001"), in_group, *FILLER[:3])
    await remember(shared, bot, Scope("private", "10001"), in_private, *FILLER[3:])
    context, query = private(bot, "10001"), ["小明最喜欢的水果是榴莲还是芒果"]
    plain = await _ordering(tmp_root, chroma_port, shared, context, query, current_private_boost=1.0, recency_floor=1.0)
    boosted = await _ordering(
        tmp_root, chroma_port, shared, context, query, current_private_boost=3.0, recency_floor=1.0
    )
    assert plain[0] == in_group
    assert boosted[0] == in_private


async def test_feedback_lifts_what_belongs_with_the_best_hit(tmp_root, chroma_port) -> None:
    bot = new_bot()
    scope = Scope("group", "20001")
    shared = await make_engine(tmp_root, chroma_port)
    best, related, literal = (
        "小明周末去吃了重庆火锅，锅底特别辣。",
        "重庆的麻辣锅底辣得人直流眼泪。",
        "小明家楼下那家火锅店的停车场晚上十点关门。",
    )
    await remember(shared, bot, scope, best, related, literal, *FILLER)
    context, query = group(bot, "20001", "10009"), ["小明吃火锅"]
    plain = await _ordering(tmp_root, chroma_port, shared, context, query, feedback_weight=0.0, recency_floor=1.0)
    lifted = await _ordering(
        tmp_root, chroma_port, shared, context, query, feedback_weight=5.0, feedback_docs=1, recency_floor=1.0
    )
    assert plain[0] == lifted[0] == best
    assert plain.index(literal) < plain.index(related)
    assert lifted.index(related) < lifted.index(literal)
    assert sorted(plain) == sorted(lifted)  # it reorders, never filters


async def test_mmr_moves_a_near_duplicate_down(tmp_root, chroma_port) -> None:
    bot = new_bot()
    scope = Scope("group", "20001")
    engine = await make_engine(tmp_root, chroma_port)
    first, twin, other = (
        "小明喜欢吃四川火锅，尤其是麻辣锅底。",
        "小明喜欢吃四川火锅，尤其是麻辣的锅底。",
        "小明也喜欢吃火锅店里的甜点冰粉。",
    )
    await remember(engine, bot, scope, first, twin, other)
    context, query = group(bot, "20001", "10009"), ["小明喜欢吃四川火锅"]
    plain = texts(await engine.memories.recall(context, query, now=NOW, use_mmr=False))
    assert plain.index(twin) < plain.index(other)
    diverse_engine = await make_engine(tmp_root, chroma_port, recall={"mmr_lambda": 0.3})
    diverse_engine.vectors = engine.vectors
    diverse = texts(await diverse_engine.memories.recall(context, query, now=NOW))
    assert diverse.index(other) < diverse.index(twin)


async def test_filters_and_time_range(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    scope = Scope("group", "20001")
    await remember(engine, bot, scope, "小明去年春天去了云南旅游。", when=days_ago(300))
    await remember(engine, bot, scope, "小明上周去了海南旅游。", when=days_ago(7), importance=Importance.HIGH)
    context = group(bot, "20001", "10001")
    recent = await engine.memories.recall(context, ["小明旅游"], now=NOW, filters=RecallFilters(time_from=days_ago(30)))
    assert texts(recent) == ["小明上周去了海南旅游。"]
    important = await engine.memories.recall(
        context, ["小明旅游"], now=NOW, filters=RecallFilters(importance=Importance.HIGH)
    )
    assert texts(important) == ["小明上周去了海南旅游。"]


async def test_duplicates_are_stored_once(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    scope = Scope("group", "20001")
    first = await remember(engine, bot, scope, "QQ号10001（小明）养了一只橘猫。", "QQ号10001（小明）养了一只橘猫。")
    assert len(first.written) == 1 and first.record_ids[0] == first.record_ids[1]
    again = await remember(engine, bot, scope, "  QQ号10001(小明)养了一只橘猫。 ")
    assert again.written == [] and again.record_ids[0] == first.record_ids[0]


async def test_backup_and_restore_keep_ids_and_never_resurrect(tmp_root, chroma_port) -> None:
    from amrita_plugin_cognition.engine import backup, notes

    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    context = group(bot, "20001", "10001")
    kept = await engine.memories.write(context, "group", "群20001每周日晚上有读书会。", now=NOW)
    doomed = await engine.memories.write(context, "group", "群20001的旧群号是123456。", now=NOW)
    admin = group(bot, "20001", "10002", role="admin")
    await notes.update_memo(engine, admin, "本群是读书群。")
    await notes.add_pin(engine, context, "周日提醒大家读书会")
    await engine.index.drain()
    info = await backup.create_backup(engine)
    assert info.path.exists() and info.counts["memory"] >= 2
    assert any(item.path == info.path for item in await backup.list_backups(engine))
    await engine.governance.forget(context, doomed.id)  # after the backup: must stay forgotten
    await notes.update_memo(engine, admin, "备忘录被改掉了。")
    await engine.index.drain()
    report = await backup.restore_backup(engine, info.path)
    assert report["skipped_forgotten"] >= 1
    records, _ = await engine.memories.list(context, "group")
    assert [record.id for record in records] == [kept.id]
    assert await notes.read_memo(engine, context) == "本群是读书群。"
    assert [pin.content for pin in await notes.list_pins(engine, context)] == ["周日提醒大家读书会"]
    hits = await engine.memories.recall(context, ["读书会"], now=NOW)
    assert hits.mode == "full" and [hit.record.id for hit in hits.hits] == [kept.id]
    assert (await engine.index.status())["index"]["missing"] == 0
    again = await engine.memories.write(context, "group", "群20001新增了一个周三的读书会。", now=NOW)
    assert again.id > doomed.id


def _card(bot: str, entity_type: str, entity_id: str, evaluation: str, sources: list[int], part: str = "group"):  # type: ignore[no-untyped-def]
    from amrita_plugin_cognition.domain.profiles import Card

    return Card(bot, entity_type, entity_id, part, evaluation=evaluation, body="正文。", source_ids=sources)


async def _cards_of(engine, bot):  # type: ignore[no-untyped-def]
    """Every card part of ``bot`` (entity, part, evaluation, sources) and its revisions'
    (entity, part, evaluation, sources), oldest first."""
    from sqlalchemy import select

    from amrita_plugin_cognition.store.models import ProfileRevisionRow, ProfileRow

    async with engine.session() as session:
        cards = await session.execute(select(ProfileRow).where(ProfileRow.bot_id == bot).order_by(ProfileRow.id))
        kept = await session.execute(
            select(ProfileRevisionRow).where(ProfileRevisionRow.bot_id == bot).order_by(ProfileRevisionRow.id)
        )
        return (
            [(row.entity_id, row.part, row.evaluation, row.source_ids) for row in cards.scalars()],
            [(row.entity_id, row.part, row.evaluation, row.source_ids) for row in kept.scalars()],
        )


async def test_backup_carries_cards_and_revisions_and_restore_replaces_them(tmp_root, chroma_port) -> None:
    from amrita_plugin_cognition.engine import backup, profiles

    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    context = group(bot, "20001", "10001")
    fact = await engine.memories.write(context, "user", "群友小明喜欢打羽毛球。", now=NOW)
    await profiles.save(engine, _card(bot, "user", "10001", "第一版。", [fact.id]), now=NOW)
    await profiles.save(engine, _card(bot, "user", "10001", "第二版。", [fact.id]), now=NOW + timedelta(hours=1))
    await profiles.save(engine, _card(bot, "group", "20001", "读书群。", []), now=NOW)
    before = await _cards_of(engine, bot)
    assert [card[2] for card in before[0]] == ["第二版。", "读书群。"] and [r[2] for r in before[1]] == ["第一版。"]
    info = await backup.create_backup(engine)
    assert info.counts["profile"] >= 2 and info.counts["profile_revision"] >= 1
    listed = next(item for item in await backup.list_backups(engine) if item.path == info.path)
    assert listed.counts["profile"] == info.counts["profile"]

    # changed after the backup: a new version (so a new revision), a new card, a card deleted
    await profiles.save(engine, _card(bot, "user", "10001", "第三版。", [fact.id]), now=NOW + timedelta(hours=2))
    await profiles.save(engine, _card(bot, "user", "10002", "新来的。", []), now=NOW + timedelta(hours=2))
    async with engine.unit_of_work() as uow:
        from sqlalchemy import delete

        from amrita_plugin_cognition.store.models import ProfileRow

        await uow.session.execute(delete(ProfileRow).where(ProfileRow.bot_id == bot, ProfileRow.entity_type == "group"))
        await uow.commit()
    assert await _cards_of(engine, bot) != before
    report = await backup.restore_backup(engine, info.path)
    assert report["profile"] == info.counts["profile"] and report["profile_revision"] == info.counts["profile_revision"]
    assert await _cards_of(engine, bot) == before
    restored = await profiles.get(engine, bot, "user", "10001")
    assert restored is not None and restored.evaluation == "第二版。" and restored.source_ids == [fact.id]
    assert [item.card.evaluation for item in await profiles.revisions(engine, bot, "user", "10001")] == ["第一版。"]

    # wiped entirely, then restored: cards and revisions are back
    async with engine.unit_of_work() as uow:
        from sqlalchemy import delete

        from amrita_plugin_cognition.store.models import ProfileRevisionRow, ProfileRow

        await uow.session.execute(delete(ProfileRevisionRow))
        await uow.session.execute(delete(ProfileRow))
        await uow.commit()
    assert await _cards_of(engine, bot) == ([], [])
    await backup.restore_backup(engine, info.path)
    assert await _cards_of(engine, bot) == before
    # the id sequences moved past the restored rows: saving again works
    saved = await profiles.save(engine, _card(bot, "user", "10001", "第四版。", [fact.id]), now=NOW + timedelta(days=1))
    assert saved.changed and saved.revision_id is not None


async def test_restore_leaves_out_cards_built_only_from_facts_forgotten_since(tmp_root, chroma_port) -> None:
    from amrita_plugin_cognition.engine import backup, profiles

    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    context = group(bot, "20001", "10001")
    kept = await engine.memories.write(context, "user", "群友小明喜欢打羽毛球。", now=NOW)
    doomed = await engine.memories.write(context, "user", "群友小明欠了房东三个月房租。", now=NOW)
    await profiles.save(engine, _card(bot, "user", "10001", "欠房租的人。", [doomed.id]), now=NOW)
    await profiles.save(engine, _card(bot, "user", "10001", "打球。", [kept.id, doomed.id]), now=NOW + timedelta(1))
    await profiles.save(engine, _card(bot, "user", "10002", "只打球。", [kept.id]), now=NOW)
    await profiles.save(engine, _card(bot, "user", "10003", "也欠房租。", [doomed.id]), now=NOW)
    info = await backup.create_backup(engine)
    await engine.governance.forget(context, doomed.id, now=NOW)
    await engine.index.drain()
    report = await backup.restore_backup(engine, info.path)
    assert report["cards_dropped"] >= 2 and report["cards_trimmed"] >= 1
    cards, revisions = await _cards_of(engine, bot)
    # 10001 keeps its part without the forgotten source, and its rebuild is asked for (its text
    # may still say what the forgotten fact said); its revision built from the forgotten fact
    # alone, and 10003's card, do not come back
    assert cards == [("10001", "group", "打球。", f"[{kept.id}]"), ("10002", "group", "只打球。", f"[{kept.id}]")]
    assert revisions == []
    from amrita_plugin_cognition.engine.profile_queue import MERGE_JOB, payload_of, rebuild_parts
    from amrita_plugin_cognition.store import jobs

    async with engine.unit_of_work() as uow:
        pending = await jobs.pending_of(uow.session, MERGE_JOB, bot, Scope("private", "10001"))
        assert pending is not None and rebuild_parts(payload_of(pending.payload)) == ["group"]
        assert await jobs.pending_of(uow.session, MERGE_JOB, bot, Scope("private", "10002")) is None
    records, _ = await engine.memories.list(context, "user")
    assert [record.id for record in records] == [kept.id]


async def test_a_backup_without_card_lines_restores_to_no_cards(tmp_root, chroma_port) -> None:
    """A backup made before cards existed: the restore replaces the store, so no cards."""
    import gzip
    import json

    from amrita_plugin_cognition.engine import backup, profiles

    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    context = group(bot, "20001", "10001")
    fact = await engine.memories.write(context, "group", "群20001每周日晚上有读书会。", now=NOW)
    await profiles.save(engine, _card(bot, "group", "20001", "读书群。", [fact.id]), now=NOW)
    info = await backup.create_backup(engine)
    old = info.path.with_name("cognition-19990101-000000.jsonl.gz")
    with gzip.open(info.path, "rt", encoding="utf-8") as source, gzip.open(old, "wt", encoding="utf-8") as target:
        for line in source:
            item = json.loads(line)
            if item.get("table") in ("profile", "profile_revision"):
                continue
            if "end" in item:
                item = {"end": {key: value for key, value in item["end"].items() if not key.startswith("profile")}}
            target.write(json.dumps(item, ensure_ascii=False) + "\n")
    listed = next(item for item in await backup.list_backups(engine) if item.path == old)
    assert "profile" not in listed.counts and listed.counts["memory"] == info.counts["memory"]
    await profiles.save(engine, _card(bot, "group", "20001", "改过了。", [fact.id]), now=NOW + timedelta(hours=1))
    report = await backup.restore_backup(engine, old)
    assert report["profile"] == 0 and report["profile_revision"] == 0
    assert await _cards_of(engine, bot) == ([], [])
    records, _ = await engine.memories.list(context, "group")
    assert [record.id for record in records] == [fact.id]
    old.unlink()


async def test_writes_during_a_reindex_are_not_lost(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    scope = Scope("group", "20001")
    await remember(engine, bot, scope, *[f"群20001第{index}位成员喜欢第{index}种颜色。" for index in range(40)])
    context = group(bot, "20001", "10001")

    async def writer() -> list[int]:
        written = []
        for index in range(6):
            await asyncio.sleep(0)
            record = await engine.memories.write(
                context, "group", f"重建期间写入的第{index}条：团建定在周{index + 1}。"
            )
            written.append(record.id)
        return written

    report, written = await asyncio.gather(engine.index.reindex(page_size=5), writer())
    await engine.index.drain()
    _, total = await engine.memories.list(context, "group", limit=1)
    assert total == 46
    assert engine.vectors.count(engine.generation, bot, scope) == total
    assert report.generation_after == report.generation_before + 1
    found = await engine.memories.recall(context, ["重建期间写入的第3条 团建"], now=NOW)
    assert found.mode == "full" and found.hits[0].record.id == written[3]


async def test_common_terms_are_pruned_from_large_keyword_queries(tmp_root, chroma_port, monkeypatch, backend) -> None:
    """SQLite counts from the FTS5 vocabulary, PostgreSQL from the keyword table's statistics
    (``ANALYZE``, which autovacuum runs as the table grows)."""
    from amrita_plugin_cognition.store import keyword, keyword_prune

    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    await remember(engine, bot, Scope("group", "20001"), *[f"小李第{index}次去小区门口取快递。" for index in range(30)])
    await remember(engine, bot, Scope("group", "20001"), "小李家的猫叫团子。")
    monkeypatch.setattr(keyword_prune, "PRUNE_MIN_DOCUMENTS", 10)
    monkeypatch.setattr(keyword_prune, "_document_count", {})
    monkeypatch.setattr(keyword_prune, "_frequencies", {})
    monkeypatch.setattr(keyword_prune, "_statistics", {})
    monkeypatch.setattr(keyword_prune, "PRUNE_KEEP_RAREST", 1)
    tables = (keyword.FTS_TABLE, keyword.VOCAB_TABLE, keyword.PG_TABLE)
    async with engine.session() as session:
        if backend == "server":
            await session.execute(sql_text(f"ANALYZE {keyword.PG_TABLE}"))
            total, _ = await keyword_prune._pg_statistics(session, keyword.PG_TABLE)
        else:
            total = await keyword_prune._indexed_documents(session, keyword.FTS_TABLE)
        # "小" and "小李" are in at least 31 facts, "猫" and "团子" in a handful
        monkeypatch.setattr(keyword_prune, "PRUNE_TERM_SHARE", 20 / total)
        prune = keyword_prune.prune_common_terms
        assert await prune(session, ["小", "猫", "小李", "团子"], *tables) == ["猫", "团子"]
        # however common, the rarest known term stays; an unknown term costs nothing and stays
        assert await prune(session, ["小", "区门"], *tables) == ["区门"]
        assert await prune(session, ["小", "无此词"], *tables) == ["小", "无此词"]
    result = await engine.memories.recall(group(bot, "20001", "10001"), ["小猫叫什么"], now=NOW)
    assert texts(result)[0] == "小李家的猫叫团子。"


async def test_the_housekeeping_keeps_the_planner_statistics_on_postgresql(
    tmp_root, chroma_port, monkeypatch, backend
) -> None:
    """Recall's plans and the keyword pruning read PostgreSQL's statistics, and autovacuum may be
    off: the historian's housekeeping analyses each of the plugin's tables that changed enough
    (``store/planner_stats.py``); SQLite needs nothing."""
    from amrita_plugin_cognition.store import keyword, keyword_prune, planner_stats

    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    await remember(engine, bot, Scope("group", "20002"), *[f"阿强第{index}次去公园跑步。" for index in range(60)])

    async def analyse() -> list[str]:
        async with engine.unit_of_work() as uow:
            analysed = await planner_stats.analyse_stale(uow.session)
            await uow.commit()
        return analysed

    if backend != "server":
        assert await analyse() == []
        return
    # the server's counters of the inserts reach pg_stat_user_tables within a second or so
    wanted, analysed = {"cognition_memory", keyword.PG_TABLE}, set()
    for _ in range(40):
        analysed |= set(await analyse())
        if wanted <= analysed:
            break
        await asyncio.sleep(0.25)
    else:
        pytest.fail(f"not analysed: {wanted - analysed}")
    assert not wanted & set(await analyse())  # nothing changed since
    monkeypatch.setattr(keyword_prune, "_statistics", {})  # what another test read this minute is cached
    async with engine.session() as session:
        total, common = await keyword_prune._pg_statistics(session, keyword.PG_TABLE)
    assert total >= 60 and common  # the lexemes' shares are there to read (other tests' rows share the table)


async def test_an_empty_bank_costs_no_database_and_any_write_ends_that(tmp_root, chroma_port, monkeypatch) -> None:
    from amrita_plugin_cognition.engine import notes
    from amrita_plugin_cognition.engine.context import build_context
    from amrita_plugin_cognition.store import notes as repository

    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    chat = group(bot, "20001", "10001")
    assert not engine.bank_known_empty(bot)  # unknown yet: the turn takes the slow path, a probe starts
    while engine.caches.probing:
        await asyncio.sleep(0.01)
    assert engine.bank_known_empty(bot)

    statements = 0
    real_turn_documents = repository.turn_documents

    async def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        nonlocal statements
        statements += 1
        return await real_turn_documents(*args, **kwargs)

    monkeypatch.setattr(repository, "turn_documents", counting)
    for index in range(3):
        built = await build_context(engine, group(bot, str(30000 + index), "10001"), ["今天吃什么"], now=NOW)
        assert built.text == ""
    assert statements == 0

    await notes.add_pin(engine, chat, "群规：周五晚上不聊工作")
    assert not engine.bank_known_empty(bot)
    built = await build_context(engine, chat, ["周五"], now=NOW)
    assert "群规：周五晚上不聊工作" in built.text and statements == 1

    other = new_bot()
    engine.bank_known_empty(other)
    while engine.caches.probing:
        await asyncio.sleep(0.01)
    await remember(engine, other, Scope("group", "20001"), "小明下周去成都出差。")
    assert not engine.bank_known_empty(other)
    built = await build_context(engine, group(other, "20001", "10001"), ["小明要去哪出差"], now=NOW)
    assert "成都" in built.text


async def test_a_forgotten_or_corrected_turn_leaves_no_words_in_its_neighbours(tmp_root, chroma_port) -> None:
    from datetime import timedelta

    from amrita_plugin_cognition.domain.visibility import visibility_for
    from amrita_plugin_cognition.engine.recall import keyword_filter as make_keyword_filter
    from amrita_plugin_cognition.store import keyword

    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    scope = Scope("group", "20001")
    lines = [("10001", "小明", "小明：周末大家一起去爬山吧"), ("10002", "小红", "小红：我下周要去医院做胃镜"),
             ("10003", "小刚", "小刚：我也去，带上帐篷")]  # fmt: skip
    ids = []
    for minute, (speaker, name, line) in enumerate(lines):
        when = days_ago(3) + timedelta(minutes=minute)
        ids.append((await remember(engine, bot, scope, line, speaker=speaker, name=name, when=when)).record_ids[0])
    keyword_filter = make_keyword_filter(visibility_for(group(bot, "20001", "10009"), "strict"))

    async def keyword_ids(term: str) -> set[int]:
        async with engine.session() as session:
            return {memory_id for memory_id, _ in await keyword.search(session, keyword_filter, [term], 10)}

    embedded: list[str] = []
    real_embed = engine.embedder.embed

    async def recording_embed(texts):  # type: ignore[no-untyped-def]
        embedded.extend(texts)
        return await real_embed(texts)

    engine.embedder.embed = recording_embed  # type: ignore[method-assign]
    assert await keyword_ids("胃镜") == set(ids)  # the turn itself, and both neighbours by context

    await engine.governance.forget(group(bot, "20001", "10002"), ids[1], now=NOW)
    await engine.index.drain()
    assert await keyword_ids("胃镜") == set()
    assert await keyword_ids("周末") == {ids[0], ids[2]}  # the remaining two are neighbours now
    assert len(embedded) == 2 and not any("胃镜" in text for text in embedded)  # both re-embedded

    corrected = await engine.memories.update(
        group(bot, "20001", "10001"), ids[0], "小明：周六大家一起去钓鱼吧", now=NOW
    )
    await engine.index.drain()
    assert await keyword_ids("周末") == set()
    assert await keyword_ids("钓鱼") == {corrected.id, ids[2]}
    assert not any("周末" in text for text in embedded[2:])


async def test_a_hung_embedded_index_is_given_up_and_used_again_when_it_returns(tmp_root, chroma_port) -> None:
    if chroma_port:
        pytest.skip("the deadline guards the embedded client; a server is reached over HTTP")
    engine = await make_engine(
        tmp_root,
        chroma_port,
        chroma={"mode": "embedded", "call_timeout_seconds": 1},
        recall={"exact_search_max_vectors": 0},  # the index answers even a small chat here
    )
    bot = new_bot()
    context = group(bot, "20011", "10001")
    await remember(engine, bot, context.scope, "群友小明下个月去成都出差。")
    released = threading.Event()
    real_collection = engine.vectors._collection

    def hangs(name, create):  # type: ignore[no-untyped-def]
        released.wait(30)  # e.g. the embedded client's deadlock (chroma-core/chroma#4038)
        return real_collection(name, create)

    engine.vectors._collection = hangs  # type: ignore[method-assign]
    started = time.monotonic()
    degraded = await engine.memories.recall(context, ["成都出差"], now=NOW)
    assert time.monotonic() - started < 5
    assert degraded.mode == "keyword_only" and texts(degraded) == ["群友小明下个月去成都出差。"]
    # Later calls fail at once instead of queueing behind the stuck one; writes wait in the outbox.
    await engine.memories.write(context, "group", "群友小明的出差改到了重庆。", now=NOW)
    started = time.monotonic()
    assert await engine.index.drain() == 0
    assert time.monotonic() - started < 0.5
    status = await engine.index.status()
    assert status["index"]["healthy"] is False and "has not returned" in status["index"]["detail"]
    assert status["outbox"]["pending"] >= 1
    # The stuck call returns: the index is used again, and the outbox catches up.
    engine.vectors._collection = real_collection  # type: ignore[method-assign]
    released.set()
    for _ in range(50):
        if engine.vectors.embedded_calls.stalled is None:
            break
        await asyncio.sleep(0.1)
    assert await engine.index.drain(now=datetime.now(UTC) + timedelta(hours=2)) >= 1
    assert (await engine.index.status())["outbox"]["pending"] == 0
    healthy = await engine.memories.recall(context, ["重庆出差"], now=NOW)
    assert healthy.mode == "full" and "群友小明的出差改到了重庆。" in texts(healthy)


async def test_a_small_chat_does_not_pile_up_in_chromas_write_log(tmp_root, chroma_port) -> None:
    """Chroma keeps writes in one log table (no index by collection) until a collection's HNSW
    index is saved; by default after 1,000 writes, so a small chat's writes would stay there for
    good and every first load of any collection would scan them all (index/vector.py)."""
    if chroma_port:
        pytest.skip("reads the embedded store's own files")
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    context = group(bot, "20021", "10001")
    for start in range(0, 25, 5):  # a few at a time, as a chat writes
        await remember(
            engine, bot, context.scope, *[f"群友{i}号喜欢第{i}种口味的冰淇淋。" for i in range(start, start + 5)]
        )
    log = engine.vectors._path() / "chroma.sqlite3"
    with contextlib.closing(sqlite3.connect(log)) as connection:
        (pending,) = connection.execute("SELECT count(*) FROM embeddings_queue").fetchone()
    assert pending < SYNC_EVERY
    result = await engine.memories.recall(context, ["第7种口味"], now=NOW)
    assert result.mode == "full" and "群友7号喜欢第7种口味的冰淇淋。" in texts(result)
