"""Recall searches a small chat in its vectors' copy in SQL (``engine/exact_search.py``): the same
hits as the index, no index call, and the copy follows every write, forget, erasure, repair and
reindex. Both backends (SQLite + embedded Chroma; PostgreSQL + a Chroma server)."""

from __future__ import annotations

from typing import Any

import numpy as np
from engine_helpers import NOW, group, make_engine, new_bot, private
from sqlalchemy import select

from amrita_plugin_cognition.domain.erasure import ErasureTarget
from amrita_plugin_cognition.domain.permissions import Operator
from amrita_plugin_cognition.domain.records import Importance, MemoryDraft, Scope
from amrita_plugin_cognition.engine.service import CognitionEngine
from amrita_plugin_cognition.store import meta, vector_copy
from amrita_plugin_cognition.store.models import MemoryRow, MemoryVectorRow

FACTS = [
    "小明周末和同事去吃了重庆火锅。",
    "小红周末去图书馆看书。",
    "小刚昨天修好了自行车的刹车。",
    "小丽在读一本关于宋朝历史的书。",
    "阿强的电脑换了一块新硬盘。",
    "老王每天早上六点起床跑步。",
    "小美最近在学做广式早茶。",
    "阿杰下个月要参加驾照考试。",
]
QUERIES = ["谁喜欢吃辣的", "最近在看什么书", "电脑坏了吗", "早上几点起床", "考试", "自行车"]


async def _remember(
    engine: CognitionEngine, bot: str, scope: Scope, facts: list[str], speaker: str = "10001"
) -> list[int]:
    drafts = [
        MemoryDraft(text=fact, scope=scope, speaker_id=speaker, speaker_name="小明", importance=Importance.MEDIUM)
        for fact in facts
    ]
    result = await engine.memories.remember(bot, drafts, now=NOW)
    await engine.index.drain()
    return [record.id for record in result.written]


def _count_index_queries(engine: CognitionEngine) -> list[Any]:
    calls: list[Any] = []
    query = engine.vectors.query

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[2])  # the chat
        return query(*args, **kwargs)

    engine.vectors.query = counted  # type: ignore[method-assign]
    return calls


async def _copied(engine: CognitionEngine, ids: list[int]) -> set[int]:
    async with engine.session() as session:
        rows = await session.execute(select(MemoryVectorRow.memory_id).where(MemoryVectorRow.memory_id.in_(ids)))
        return {int(memory_id) for memory_id in rows.scalars()}


async def _ranked(engine: CognitionEngine, bot: str, query: str) -> list[tuple[int, float]]:
    result = await engine.memories.recall(group(bot, "30001", "10001"), [query], now=NOW, use_mmr=False)
    assert result.mode == "full"
    return [(hit.record.id, round(hit.score, 3)) for hit in result.hits]


async def test_a_small_chat_is_ranked_from_its_copy_as_the_index_ranks_it(tmp_root, chroma_port, monkeypatch) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    ids = await _remember(engine, bot, Scope("group", "30001"), FACTS)
    assert await _copied(engine, ids) == set(ids)
    calls = _count_index_queries(engine)
    exact = [await _ranked(engine, bot, query) for query in QUERIES]
    assert calls == []  # no index round trip for a chat of 8 facts
    monkeypatch.setattr(engine.config.recall, "exact_search_max_vectors", 0)
    indexed = [await _ranked(engine, bot, query) for query in QUERIES]
    assert len(calls) == len(QUERIES)
    # the same facts in the same order with the same scores (half precision moves a cosine by ~1e-3)
    assert [[memory_id for memory_id, _ in ranked] for ranked in exact] == [
        [memory_id for memory_id, _ in ranked] for ranked in indexed
    ]
    for mine, theirs in zip(exact, indexed, strict=True):
        for (_, score), (_, other) in zip(mine, theirs, strict=True):
            assert abs(score - other) < 0.01


async def test_a_chat_over_the_limit_is_asked_of_the_index(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port, recall={"exact_search_max_vectors": 5})
    bot = new_bot()
    await _remember(engine, bot, Scope("group", "30001"), FACTS)
    await _remember(engine, bot, Scope("group", "30002"), FACTS[:3])
    calls = _count_index_queries(engine)
    await engine.memories.recall(group(bot, "30001", "10001"), ["火锅"], now=NOW)
    await engine.memories.recall(group(bot, "30002", "10001"), ["火锅"], now=NOW)
    assert calls == [Scope("group", "30001")]


async def test_a_private_chat_reads_its_users_group_facts_from_the_copy_however_large_the_group(
    tmp_root, chroma_port, monkeypatch
) -> None:
    """Under the strict policy a private chat also sees its user's group facts (said by them or
    about them), searched per group with a filter on the person: from the copy, through the
    person's rows, even in a group larger than the limit; the same hits as the index's filter, and
    never another member's fact."""
    engine = await make_engine(tmp_root, chroma_port, recall={"exact_search_max_vectors": 4})
    bot = new_bot()
    big, small = Scope("group", "30010"), Scope("group", "30011")
    others = await _remember(engine, bot, big, FACTS, speaker="10002")  # 8 facts: over the limit
    mine = await _remember(engine, bot, big, ["我周六要去医院复查膝盖。", "我最喜欢吃辣的川菜。"], speaker="10001")
    about = await engine.memories.remember(
        bot,
        [MemoryDraft(text="小红说小明借了她的自行车。", scope=big, speaker_id="10002", subject_id="10001")],
        now=NOW,
    )
    mine += [record.id for record in about.written]
    mine += await _remember(engine, bot, small, ["我每天早上六点起床跑步。"], speaker="10001")
    await engine.index.drain()
    context = private(bot, "10001")
    questions = ["谁喜欢吃辣的", "自行车", "早上几点起床", "膝盖", "电脑坏了吗"]

    async def ranked(question: str) -> list[tuple[int, float]]:
        result = await engine.memories.recall(context, [question], now=NOW, use_mmr=False)
        assert result.mode == "full"
        return [(hit.record.id, round(hit.score, 3)) for hit in result.hits]

    calls = _count_index_queries(engine)
    exact = [await ranked(question) for question in questions]
    assert [call for call in calls if call != Scope("private", "10001")] == []  # no group asked of the index
    assert {memory_id for hits in exact for memory_id, _ in hits} <= set(mine)
    assert not {memory_id for hits in exact for memory_id, _ in hits} & set(others)
    assert any(hits for hits in exact)
    monkeypatch.setattr(engine.config.recall, "exact_search_max_vectors", 0)
    calls.clear()
    indexed = [await ranked(question) for question in questions]
    assert {big, small} <= set(calls)  # the index's filtered search, for comparison
    assert [[memory_id for memory_id, _ in hits] for hits in exact] == [
        [memory_id for memory_id, _ in hits] for hits in indexed
    ]
    for ours, theirs in zip(exact, indexed, strict=True):
        for (_, score), (_, other) in zip(ours, theirs, strict=True):
            assert abs(score - other) < 0.01

    # one more of the person's group facts puts them over the limit: their groups go to the index
    monkeypatch.setattr(engine.config.recall, "exact_search_max_vectors", 4)
    await _remember(engine, bot, Scope("group", "30012"), ["我下个月要参加驾照考试。"], speaker="10001")
    calls.clear()
    assert await ranked("考试")
    assert {big, small, Scope("group", "30012")} <= set(calls)


async def test_the_copy_leaves_with_a_forget_and_a_delete_all_in_their_own_transaction(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    context = private(bot, "10001")
    record = await engine.memories.write(context, "user", "QQ号10001（昵称小明）的前任叫小丽。", now=NOW)
    other = await engine.memories.write(context, "user", "QQ号10001（昵称小明）最爱吃重庆火锅。", now=NOW)
    await engine.index.drain()
    assert await _copied(engine, [record.id, other.id]) == {record.id, other.id}
    await engine.governance.forget(context, record.id)
    assert await _copied(engine, [record.id]) == set()  # before any drain
    recalled = await engine.memories.recall(context, ["前任 小丽"], now=NOW)
    assert record.id not in [hit.record.id for hit in recalled.hits]
    target = ErasureTarget.user(bot, "10001")
    await engine.governance.delete_all(target, Operator(), now=NOW)
    assert await _copied(engine, [other.id]) == set()
    await engine.index.drain()
    assert (await engine.memories.recall(context, ["火锅"], now=NOW)).hits == []


async def test_a_drain_that_read_a_fact_before_its_forget_writes_no_copy_of_it(tmp_root, chroma_port) -> None:
    """The drain reads its rows, calls the index, then writes the copy in a transaction of its
    own: a forget or an erasure that commits in between has removed the copy already, and the
    drain must not write it back (the erased fact's vector and chat would stay in SQL)."""
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    context = private(bot, "10001")
    kept = await engine.memories.write(context, "user", "QQ号10001（昵称小明）最爱吃重庆火锅。", now=NOW)
    gone = await engine.memories.write(context, "user", "QQ号10001（昵称小明）的前任叫小丽。", now=NOW)
    async with engine.session() as session:
        rows = list((await session.execute(select(MemoryRow).where(MemoryRow.id.in_([kept.id, gone.id])))).scalars())
    await engine.governance.forget(context, gone.id)  # commits between the drain's read and its copy
    generation = await engine.index_sync.current_generation(force=True)
    await engine.index_sync.upsert_rows({(bot, context.scope): rows}, generation)
    assert await _copied(engine, [kept.id, gone.id]) == {kept.id}


async def test_the_repair_fills_a_copy_from_the_index_without_embedding_again(tmp_root, chroma_port) -> None:
    """A bank made before the copy existed: the startup repair copies what the index stores, marks
    the generation complete, and recall then uses it; the embedder is not called for it."""
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    ids = await _remember(engine, bot, Scope("group", "30001"), FACTS)
    generation = await engine.index_sync.current_generation(force=True)
    async with engine.unit_of_work() as uow:
        await vector_copy.remove(uow.session, None, ids)
        await uow.commit()
    report = await engine.index.repair()
    chat = (bot, Scope("group", "30001"))
    assert report.copy_missing[chat] == sorted(ids)
    assert f"{bot}|group:30001" not in report.missing  # nothing of this chat queued to be embedded again
    assert await _copied(engine, ids) == set(ids)
    async with engine.unit_of_work() as uow:
        assert await vector_copy.is_complete(uow.session, generation)
        copied_ids, copied = await vector_copy.chat(uow.session, generation, bot, chat[1], 100)
    stored_ids, stored = engine.vectors.stored_vectors(generation, bot, chat[1])
    order = [stored_ids.index(memory_id) for memory_id in copied_ids]
    assert np.allclose(copied, stored[order], atol=1e-3)  # the index's own vectors, in half precision
    calls = _count_index_queries(engine)
    result = await engine.memories.recall(group(bot, "30001", "10001"), ["火锅"], now=NOW)
    assert result.hits[0].record.text == FACTS[0] and calls == []


async def test_an_incomplete_copy_is_not_read(tmp_root, chroma_port, monkeypatch) -> None:
    """Until the repair marks a generation's copy complete, recall asks the index; having found the
    mark missing once, it neither reads the copy nor the generation again for a few seconds."""
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    await _remember(engine, bot, Scope("group", "30001"), FACTS)
    generation = await engine.index_sync.current_generation()
    async with engine.unit_of_work() as uow:
        await meta.remove(uow.session, vector_copy.complete_key(generation))
        await uow.commit()
    forced: list[bool] = []
    current_generation = engine.index_sync.current_generation

    async def counted(force: bool = False) -> int:
        forced.append(force)
        return await current_generation(force)

    monkeypatch.setattr(engine.index_sync, "current_generation", counted)
    calls = _count_index_queries(engine)
    try:
        for _ in range(3):
            result = await engine.memories.recall(group(bot, "30001", "10001"), ["火锅"], now=NOW)
            assert result.hits[0].record.text == FACTS[0]
        assert calls == [Scope("group", "30001")] * 3
        assert forced.count(True) == 1  # the first search re-read the generation; the next two did not
    finally:
        async with engine.unit_of_work() as uow:  # the worker's database is shared by its tests
            await vector_copy.mark_complete(uow.session, generation)
            await uow.commit()


async def test_a_reindex_leaves_one_complete_copy_of_the_new_generation(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    ids = await _remember(engine, bot, Scope("group", "30001"), FACTS)
    report = await engine.index.reindex()
    async with engine.unit_of_work() as uow:
        generations = set(
            (await uow.session.execute(select(MemoryVectorRow.generation).where(MemoryVectorRow.memory_id.in_(ids))))
            .scalars()
            .all()
        )
        assert await vector_copy.is_complete(uow.session, report.generation_after)
        assert not await vector_copy.is_complete(uow.session, report.generation_before)
    assert generations == {report.generation_after}
    calls = _count_index_queries(engine)
    result = await engine.memories.recall(group(bot, "30001", "10001"), ["火锅"], now=NOW)
    assert result.hits[0].record.text == FACTS[0] and calls == []


async def test_a_small_chat_keeps_its_vector_side_while_the_index_is_down(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    await _remember(engine, bot, Scope("group", "30001"), FACTS)

    def down(*_args: Any, **_kwargs: Any) -> Any:
        from amrita_plugin_cognition.errors import IndexUnavailable

        raise IndexUnavailable(en="connection refused")

    engine.vectors.query = down  # type: ignore[method-assign]
    result = await engine.memories.recall(group(bot, "30001", "10001"), ["谁喜欢吃辣的"], now=NOW)
    assert result.mode == "full" and result.hits[0].record.text == FACTS[0]


async def test_the_copy_never_answers_another_chat(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    await _remember(engine, bot, Scope("group", "30001"), FACTS[:1])
    await _remember(engine, bot, Scope("group", "30002"), FACTS[1:])
    await _remember(engine, new_bot(), Scope("group", "30002"), FACTS[:1])
    result = await engine.memories.recall(group(bot, "30002", "10001"), ["谁喜欢吃辣的 重庆火锅"], now=NOW)
    assert FACTS[0] not in [hit.record.text for hit in result.hits]


async def test_writing_a_fact_s_copy_twice_replaces_it(tmp_root, chroma_port) -> None:
    """A drain and the repair may write one fact's copy at once: the second write replaces the first."""
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    (memory_id,) = await _remember(engine, bot, Scope("group", "30001"), FACTS[:1])
    generation = await engine.index_sync.current_generation(force=True)
    replacement = np.full((1, 512), 0.5, dtype=np.float32)
    async with engine.unit_of_work() as uow:
        await vector_copy.put(uow.session, generation, bot, Scope("group", "30001"), [memory_id], replacement)
        await uow.commit()
    async with engine.unit_of_work() as uow:
        ids, matrix = await vector_copy.chat(uow.session, generation, bot, Scope("group", "30001"), 10)
    assert ids == [memory_id] and np.allclose(matrix, replacement)
