"""The consolidation pre-pass's near-duplicate clusters on a real engine: facts written through the
real path, vectors read back from the vector index as stored (nothing embedded again), one chat
at a time, active facts only.

Runs on SQLite + embedded Chroma by default and on PostgreSQL + a Chroma server with
COGNITION_TEST_BACKEND=server.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from engine_helpers import NOW, make_engine, new_bot, shared_local_embedder

from amrita_plugin_cognition.domain.records import MemoryDraft, Scope
from amrita_plugin_cognition.errors import IndexUnavailable
from amrita_plugin_cognition.store import meta, vector_copy

HOTPOT = "QQ号10001（昵称小明）于2026-11-29在成都吃了火锅。"
REWORDED = "小明（QQ号10001）2026年11月29日在成都吃火锅。"
OTHER_DAY = "QQ号10001（昵称小明）于2026-11-30在成都吃了火锅。"
OTHER_PLACE = "QQ号10001（昵称小明）于2026-11-29在重庆吃了火锅。"
GYM = "QQ号10005（昵称阿杰）每周三晚上去健身房。"
GYM_REWORDED = "阿杰（QQ号10005）每个星期三晚上去健身房。"
GYM_OTHER_DAY = "QQ号10005（昵称阿杰）每周五晚上去健身房。"
CATS = "QQ号10002（昵称小红）于2026-11-20领养了一只橘猫。"
CATS_AGAIN = "QQ号10002（昵称小红）于2026-11-20领养了一只橘猫！"
FILLER = [
    "QQ号10003（昵称阿强）于2026-11-21把电脑换了一块新硬盘。",
    "QQ号10004（昵称老王）每天早上六点起床跑步。",
    "QQ号10006（昵称小美）于2026-11-22开始学做广式早茶。",
]


class CountingEmbedder:
    """The bundled local model, counting the texts it is asked to embed."""

    def __init__(self) -> None:
        self.inner = shared_local_embedder()
        self.fingerprint = self.inner.fingerprint
        self.texts = 0

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts += len(texts)
        return await self.inner.embed(texts)

    async def embed_queries(self, texts: Sequence[str], timeout: float | None = None) -> np.ndarray:
        self.texts += len(texts)
        return await self.inner.embed_queries(texts, timeout)


async def _remember(engine, bot: str, scope: Scope, *texts: str) -> list[int]:  # type: ignore[no-untyped-def]
    drafts = [MemoryDraft(text=text, scope=scope, speaker_id="10001", speaker_name="小明") for text in texts]
    result = await engine.memories.remember(bot, drafts, now=NOW)
    await engine.index.drain()
    return [result.record_ids[index] for index in range(len(drafts))]


async def test_clusters_of_one_chat_from_its_stored_vectors(tmp_root, chroma_port) -> None:
    embedder = CountingEmbedder()
    engine = await make_engine(tmp_root, chroma_port, embedder=embedder)
    bot = new_bot()
    chat, elsewhere = Scope("group", "20001"), Scope("group", "20002")
    ids = dict(
        zip(
            ["hotpot", "reworded", "other_day", "other_place", "gym", "gym_reworded", "gym_other_day"],
            await _remember(
                engine, bot, chat, HOTPOT, REWORDED, OTHER_DAY, OTHER_PLACE, GYM, GYM_REWORDED, GYM_OTHER_DAY
            ),
            strict=True,
        )
    )
    ids["cats"], ids["cats_again"] = await _remember(engine, bot, chat, CATS, CATS_AGAIN)
    await _remember(engine, bot, chat, *FILLER)
    (copy_elsewhere,) = await _remember(engine, bot, elsewhere, REWORDED)
    embedded = embedder.texts
    assert embedded == 13

    found = await engine.memories.duplicate_clusters(bot, chat)
    assert embedder.texts == embedded  # the stored vectors were read, nothing embedded again

    assert found.memories == 12 and found.without_vector == 0
    members = [cluster.member_ids for cluster in found.clusters]
    assert members == sorted(
        [
            (ids["hotpot"], ids["reworded"]),
            (ids["gym"], ids["gym_reworded"]),
            (ids["cats"], ids["cats_again"]),
        ]
    )
    assert copy_elsewhere not in {member for cluster in found.clusters for member in cluster.member_ids}
    by_first = {cluster.member_ids[0]: cluster for cluster in found.clusters}
    assert by_first[ids["cats"]].exact and by_first[ids["cats"]].links[0].reason == "exact"
    hotpot = by_first[ids["hotpot"]]
    assert not hotpot.exact
    (link,) = hotpot.links
    assert link.reason == "same_parts" and {"who", "when"} <= set(link.matched)
    assert link.similarity is not None and link.similarity >= 0.7  # the stored vectors' cosine
    assert found.candidates >= found.checked >= 2 and found.elapsed_ms > 0
    assert [cluster.member_ids for cluster in found.near] == [
        (ids["hotpot"], ids["reworded"]),
        (ids["gym"], ids["gym_reworded"]),
    ]

    # the other chat is clustered on its own: its one fact has no duplicate there
    assert (await engine.memories.duplicate_clusters(bot, elsewhere)).clusters == ()


async def test_only_active_facts_are_clustered(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    chat = Scope("private", "10001")
    first, second, newer = await _remember(engine, bot, chat, HOTPOT, REWORDED, OTHER_PLACE)
    assert [cluster.member_ids for cluster in (await engine.memories.duplicate_clusters(bot, chat)).clusters] == [
        (first, second)
    ]
    await engine.memories.supersede(bot, second, newer, now=NOW)
    await engine.index.drain()
    after = await engine.memories.duplicate_clusters(bot, chat)
    assert after.memories == 2 and after.clusters == ()


async def test_a_complete_copy_gives_the_vectors_without_the_index(tmp_root, chroma_port, monkeypatch) -> None:
    """The vectors come from the copy in SQL once its generation is marked complete: the index is not
    read, and the clusters are those the index's vectors give."""
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    chat = Scope("group", "20004")
    hotpot, reworded, _other = await _remember(engine, bot, chat, HOTPOT, REWORDED, OTHER_PLACE)
    from_index = await engine.memories.duplicate_clusters(bot, chat)

    def unavailable(*_args: object) -> None:
        raise IndexUnavailable(en="chroma is down (test)")

    monkeypatch.setattr(engine.vectors, "stored_vectors", unavailable)
    found = await engine.memories.duplicate_clusters(bot, chat)
    assert found.without_vector == 0 and found.memories == 3
    assert [cluster.member_ids for cluster in found.clusters] == [(hotpot, reworded)]
    assert [link.similarity for link in found.clusters[0].links] == pytest.approx(
        [link.similarity for link in from_index.clusters[0].links], abs=2e-3
    )


async def test_without_the_vector_index_the_same_words_still_cluster(tmp_root, chroma_port, monkeypatch) -> None:
    """A copy not marked complete is not read, and the index is down: no vectors at all."""
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    chat = Scope("group", "20003")
    likes = "QQ号10002（昵称小红）喜欢猫，也喜欢狗。"
    reordered = "QQ号10002（昵称小红）喜欢狗，也喜欢猫。"
    first, second, _reworded, _other = await _remember(engine, bot, chat, likes, reordered, HOTPOT, REWORDED)

    def unavailable(*_args: object) -> None:
        raise IndexUnavailable(en="chroma is down (test)")

    monkeypatch.setattr(engine.vectors, "stored_vectors", unavailable)
    generation = await engine.index_sync.current_generation()
    async with engine.unit_of_work() as uow:
        await meta.remove(uow.session, vector_copy.complete_key(generation))
        await uow.commit()
    try:
        found = await engine.memories.duplicate_clusters(bot, chat)
    finally:
        async with engine.unit_of_work() as uow:  # the worker's database is shared by its tests
            await vector_copy.mark_complete(uow.session, generation)
            await uow.commit()
    assert found.without_vector == found.memories == 4
    # the same words reordered are still found; a rewording needs the vectors, and waits for them
    assert [cluster.member_ids for cluster in found.clusters] == [(first, second)]
