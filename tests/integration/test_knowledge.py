"""The knowledge base on a real engine (issue 22): entries written with their sources are
searchable by words and by meaning (keyword row with the write, vector through the outbox), an
update keeps the replaced version, a forget of a source hides the entry from search until it is
re-derived (or deletes it when no source is left), a delete-all covers entries, revisions and
suggestions, and a reindex or a repair brings the vectors back. Real SQL and Chroma on both
backends."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from engine_helpers import NOW, group, make_engine, new_bot, private

from amrita_plugin_cognition.domain.erasure import ErasureTarget
from amrita_plugin_cognition.domain.permissions import Operator
from amrita_plugin_cognition.domain.records import MemoryDraft, Scope
from amrita_plugin_cognition.engine import corrections, erasure
from amrita_plugin_cognition.errors import ConcurrentChange, InvalidInput, LimitExceeded, NotFound
from amrita_plugin_cognition.store import knowledge_index

GROUP = "30401"
RULE_TITLE = "群规：周五开黑"
RULE_BODY = "本群每周五晚上八点组织开黑，迟到十分钟以上的人下次要请全队喝奶茶。"
FAQ_TITLE = "服务器维护时间"
FAQ_BODY = "游戏服务器每周二凌晨两点到六点维护，期间无法登录。"


async def _fact(engine, bot: str, text: str, scope: Scope, speaker: str = "10401") -> int:  # type: ignore[no-untyped-def]
    result = await engine.memories.remember(bot, [MemoryDraft(text=text, scope=scope, speaker_id=speaker)], now=NOW)
    return result.written[0].id


async def _seed(engine, bot: str) -> tuple[int, int, int]:  # type: ignore[no-untyped-def]
    """Two group facts behind the rule (one of them also behind the FAQ), one behind the FAQ."""
    scope = Scope("group", GROUP)
    first = await _fact(engine, bot, "群30401每周五晚上八点组织开黑。", scope)
    second = await _fact(engine, bot, "群30401约定迟到十分钟以上的人请全队喝奶茶。", scope)
    third = await _fact(engine, bot, "游戏服务器每周二凌晨维护。", scope)
    return first, second, third


async def _titles(engine, bot: str, query: str) -> list[str]:  # type: ignore[no-untyped-def]
    return [hit.entry.title for hit in (await engine.knowledge.search(bot, query)).hits]


async def _vectors(engine, bot: str) -> set[int]:  # type: ignore[no-untyped-def]
    listing = await asyncio.to_thread(engine.vectors.stored_ids, engine.generation)
    return listing.knowledge.get(bot, set())


async def _keyword_ids(engine) -> set[int]:  # type: ignore[no-untyped-def]
    async with engine.unit_of_work() as uow:
        return await knowledge_index.indexed_ids(uow.session)


async def test_write_search_update_and_delete(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot, other_bot = new_bot(), new_bot()
    first, second, third = await _seed(engine, bot)
    rule = await engine.knowledge.create(bot, RULE_TITLE, "每周五开黑，迟到请奶茶", RULE_BODY, [first, second], now=NOW)
    faq = await engine.knowledge.create(bot, FAQ_TITLE, "", FAQ_BODY, [third], now=NOW)
    # another bot account's entry with the same words is never found from this one
    other_facts = await _seed(engine, other_bot)
    await engine.knowledge.create(other_bot, RULE_TITLE, "", RULE_BODY, other_facts[:1], now=NOW)
    assert rule.version == 1 and rule.source_ids == (first, second) and rule.shown
    # the keyword side works before the outbox is drained
    assert await _titles(engine, bot, "开黑") == [RULE_TITLE]
    await engine.index.drain()
    assert await _vectors(engine, bot) == {rule.id, faq.id}
    # meaning alone (no shared significant word with the FAQ): the vector side finds it
    keyword_only = await engine.knowledge.search(bot, "什么时候不能上线")
    assert keyword_only.mode == "full"
    assert FAQ_TITLE in [hit.entry.title for hit in keyword_only.hits if hit.similarity > 0]
    assert await _titles(engine, bot, "奶茶") == [RULE_TITLE]

    saved = await engine.knowledge.update(
        bot, rule.id, RULE_TITLE, "改到周六", RULE_BODY.replace("周五", "周六"), [first, second],
        now=NOW + timedelta(hours=1), expected_version=1,
    )  # fmt: skip
    assert saved.entry.version == 2 and saved.revision_id is not None
    kept = await engine.knowledge.revisions(bot, rule.id)
    assert [item.version for item in kept] == [1] and "周五" in kept[0].body  # nothing overwritten silently
    assert "周六" in (await engine.knowledge.get(bot, rule.id)).body
    with pytest.raises(ConcurrentChange):  # a writer that read version 1 cannot overwrite version 2
        await engine.knowledge.update(bot, rule.id, RULE_TITLE, "", "旧的内容", [first], expected_version=1)
    assert (await _titles(engine, bot, "周六开黑"))[0] == RULE_TITLE

    await engine.knowledge.delete(bot, faq.id, by="test")
    await engine.index.drain()
    assert await _vectors(engine, bot) == {rule.id}
    assert faq.id not in await _keyword_ids(engine)
    assert FAQ_TITLE not in await _titles(engine, bot, "服务器维护")
    with pytest.raises(NotFound):
        await engine.knowledge.get(bot, faq.id)
    with pytest.raises(NotFound):  # another bot account's entry is no entry of this one
        await engine.knowledge.get(other_bot, rule.id)


async def test_the_policy_refuses_and_writes_nothing(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    first, _, _ = await _seed(engine, bot)
    private_fact = await _fact(engine, bot, "用户私下说每周五要加班。", Scope("private", "10402"), "10402")
    await _fact(engine, bot, "群30401里小葵是管理员。", Scope("group", GROUP), "10403")  # a known person
    await engine.memories.remember(
        bot, [MemoryDraft(text="小葵喜欢奶茶。", scope=Scope("group", GROUP), speaker_id="10403", speaker_name="小葵")]
    )
    refused = {
        "private_source": ("周五加班", "", "周五通常要加班。", [first, private_fact]),
        "unknown_source": ("周五开黑", "", RULE_BODY, [first, 999_999_999]),
        "known_nickname": ("管理员", "", "有问题找小葵处理。", [first]),
        "known_number": ("管理员", "", "有问题找 10403 处理。", [first]),
        "secret": ("服务器", "", "服务器 root 密码是 Xk9#pw2027，别外传。", [first]),
        "too_long": ("开黑", "", "开黑" * 1001, [first]),
    }
    for name, (title, summary, body, sources) in refused.items():
        with pytest.raises(InvalidInput) as caught:
            await engine.knowledge.create(bot, title, summary, body, sources, now=NOW)
        assert caught.value.zh, name
    assert await engine.knowledge.list(bot) == []
    # the same entry without what was refused is written
    entry = await engine.knowledge.create(bot, "周五开黑", "", RULE_BODY, [first], now=NOW)
    # and an update to content the policy refuses leaves the entry as it was
    with pytest.raises(InvalidInput):
        await engine.knowledge.update(bot, entry.id, "周五开黑", "", "联系 QQ 12345678 报名。", [first])
    current = await engine.knowledge.get(bot, entry.id)
    assert current.version == 1 and current.body == RULE_BODY


async def test_a_forget_hides_the_entry_until_rederived_or_deletes_it(tmp_root, chroma_port) -> None:
    """A forget of one of two sources hides the entry (keyword row and vector gone, search and get
    for chat say nothing) and drops the revisions citing it; the cycle's update shows it again and
    keeps no revision of the stale text; a forget of the last source deletes the entry."""
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    first, second, third = await _seed(engine, bot)
    rule = await engine.knowledge.create(bot, RULE_TITLE, "", RULE_BODY, [first, second], now=NOW)
    await engine.knowledge.update(bot, rule.id, RULE_TITLE, "补充", RULE_BODY + "（补充）", [first, second], now=NOW)
    faq = await engine.knowledge.create(bot, FAQ_TITLE, "", FAQ_BODY, [third], now=NOW)
    await engine.index.drain()
    assert await _vectors(engine, bot) == {rule.id, faq.id}

    admin = group(bot, GROUP, "10409", role="admin")
    await corrections.forget_memory(engine, admin, second, now=NOW)
    stale = await engine.knowledge.get(bot, rule.id)
    assert stale.state == "stale" and stale.source_ids == (first,) and not stale.shown
    assert await engine.knowledge.revisions(bot, rule.id) == []  # they cited the forgotten fact
    assert rule.id not in await _keyword_ids(engine)
    assert RULE_TITLE not in await _titles(engine, bot, "奶茶")
    await engine.index.drain()
    assert await _vectors(engine, bot) == {faq.id}
    assert [listed.entry.id for listed in await engine.knowledge.list(bot, state="stale")] == [rule.id]

    rederived = await engine.knowledge.update(bot, rule.id, RULE_TITLE, "", "本群每周五晚上八点组织开黑。", [first])
    assert rederived.entry.shown and rederived.revision_id is None  # the stale text is not kept
    assert await engine.knowledge.revisions(bot, rule.id) == []
    await engine.index.drain()
    assert (await _titles(engine, bot, "开黑"))[0] == RULE_TITLE and await _vectors(engine, bot) == {rule.id, faq.id}

    await corrections.forget_memory(engine, admin, third, now=NOW)  # the FAQ's only source
    with pytest.raises(NotFound):
        await engine.knowledge.get(bot, faq.id)
    await engine.index.drain()
    assert await _vectors(engine, bot) == {rule.id}


async def test_a_correction_of_a_source_hides_the_entry_citing_the_correction(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    first, second, _ = await _seed(engine, bot)
    rule = await engine.knowledge.create(bot, RULE_TITLE, "", RULE_BODY, [first, second], now=NOW)
    admin = group(bot, GROUP, "10409", role="admin")
    corrected = await corrections.update_memory(engine, admin, first, "群30401每周六晚上八点组织开黑。", now=NOW)
    entry = await engine.knowledge.get(bot, rule.id)
    assert entry.state == "stale" and entry.source_ids == tuple(sorted((corrected.id, second)))
    assert RULE_TITLE not in await _titles(engine, bot, "开黑")
    # the cycle re-derives it from the correction (a source the policy accepts: an active fact)
    rederived = await engine.knowledge.update(
        bot, rule.id, "群规：周六开黑", "", RULE_BODY.replace("周五", "周六"), entry.source_ids, now=NOW
    )
    assert rederived.entry.shown and (await _titles(engine, bot, "周六开黑"))[0] == "群规：周六开黑"


async def test_delete_all_covers_entries_revisions_and_suggestions(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    first, second, third = await _seed(engine, bot)
    speaker_fact = await _fact(engine, bot, "群30401的阿福说周三打羽毛球。", Scope("group", GROUP), "10404")
    rule = await engine.knowledge.create(bot, RULE_TITLE, "", RULE_BODY, [first, second], now=NOW)
    sport = await engine.knowledge.create(bot, "羽毛球", "", "每周三晚上打羽毛球。", [speaker_fact], now=NOW)
    member, other = group(bot, GROUP, "10404", "阿福"), group(bot, GROUP, "10405", "阿禄")
    await engine.knowledge.suggest(member, "建议把周五开黑写进群规。", now=NOW)
    await engine.knowledge.suggest(other, "建议加一条：群文件里有新手教程。", now=NOW)
    await engine.knowledge.suggest(other, "建议写明10404负责组织羽毛球。", now=NOW)  # names the erased user

    exported = await engine.governance.export_user("10404", bot)
    assert [doc["text"] for doc in exported if doc["type"] == "knowledge_suggestion"] == ["建议把周五开黑写进群规。"]
    # a user's delete-all: the entry built only from their fact goes, their suggestions and those naming them
    await erasure.delete_all(engine, ErasureTarget.user(bot, "10404"), Operator("test"), now=NOW)
    assert [item.content for item in await engine.knowledge.suggestions(bot)] == ["建议加一条：群文件里有新手教程。"]
    with pytest.raises(NotFound):
        await engine.knowledge.get(bot, sport.id)
    assert (await engine.knowledge.get(bot, rule.id)).shown  # built from other people's facts

    await engine.knowledge.update(bot, rule.id, RULE_TITLE, "", RULE_BODY + "！", [first, second, third], now=NOW)
    await engine.index.drain()
    report = await erasure.delete_all(engine, ErasureTarget.bot(bot), Operator("test"), now=NOW)
    assert report.counts["knowledge"] == 2  # the entry and the suggestion left
    assert await engine.knowledge.list(bot) == [] and await engine.knowledge.suggestions(bot, state=None) == []
    assert await engine.knowledge.revisions(bot, rule.id) == []
    assert rule.id not in await _keyword_ids(engine)
    await engine.index.drain()
    assert await _vectors(engine, bot) == set()


async def test_suggestions_are_checked_and_rate_limited(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    asker = private(bot, "10406", "阿寿")
    with pytest.raises(InvalidInput):
        await engine.knowledge.suggest(asker, "建议记下：WiFi 密码是 qwe12345asd。", now=NOW)
    with pytest.raises(InvalidInput):
        await engine.knowledge.suggest(asker, "建" * 501, now=NOW)
    assert await engine.knowledge.suggestions(bot) == []  # nothing stored of either
    limit = engine.config.consolidation.knowledge_suggestions_per_day
    for index in range(limit):
        filed = await engine.knowledge.suggest(asker, f"建议第{index + 1}条：新人先看群公告。", now=NOW)
        assert filed.left == limit - index - 1
    with pytest.raises(LimitExceeded) as caught:
        await engine.knowledge.suggest(asker, "再建议一条。", now=NOW + timedelta(hours=23))
    assert "24 小时" in caught.value.zh
    # another user is not held by this one's limit, and the window moves on
    await engine.knowledge.suggest(private(bot, "10407"), "建议补充群公告的链接。", now=NOW)
    await engine.knowledge.suggest(asker, "一天后的建议。", now=NOW + timedelta(hours=24, minutes=1))
    pending = await engine.knowledge.suggestions(bot)
    assert len(pending) == limit + 2 and pending[0].chat == "private:10406"
    await engine.knowledge.review(bot, pending[0].id, "accepted", "写进了条目")
    with pytest.raises(NotFound):  # closed once
        await engine.knowledge.review(bot, pending[0].id, "rejected")
    with pytest.raises(InvalidInput):
        await engine.knowledge.review(bot, pending[1].id, "maybe")
    assert len(await engine.knowledge.suggestions(bot)) == limit + 1


async def test_reindex_and_repair_bring_the_vectors_back(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    first, second, third = await _seed(engine, bot)
    rule = await engine.knowledge.create(bot, RULE_TITLE, "", RULE_BODY, [first, second], now=NOW)
    faq = await engine.knowledge.create(bot, FAQ_TITLE, "", FAQ_BODY, [third], now=NOW)
    await engine.index.drain()
    await asyncio.to_thread(engine.vectors.delete_knowledge, engine.generation, bot, [faq.id])
    report = await engine.index.repair()
    assert report.missing.get(f"{bot}|knowledge") == [faq.id]
    await engine.index.drain()
    assert await _vectors(engine, bot) == {rule.id, faq.id}
    await engine.index.reindex()
    assert await _vectors(engine, bot) == {rule.id, faq.id}
    assert {rule.id, faq.id} <= await _keyword_ids(engine)
    assert (await _titles(engine, bot, "服务器维护"))[0] == FAQ_TITLE


async def test_a_backup_restores_the_knowledge_base_as_a_forget_left_it(tmp_root, chroma_port, tmp_path) -> None:
    """Entries, versions and suggestions travel in backups; a restore keeps what was forgotten
    since out: an entry that lost one of two sources comes back hidden, one that lost its only
    source and the versions citing a forgotten fact do not come back; a delete-all since is
    replayed on the suggestions."""
    from amrita_plugin_cognition.engine import backup

    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    first, second, third = await _seed(engine, bot)
    rule = await engine.knowledge.create(bot, RULE_TITLE, "", RULE_BODY, [first, second], now=NOW)
    await engine.knowledge.update(bot, rule.id, RULE_TITLE, "", RULE_BODY + "！", [first, second], now=NOW)
    faq = await engine.knowledge.create(bot, FAQ_TITLE, "", FAQ_BODY, [third], now=NOW)
    await engine.knowledge.suggest(group(bot, GROUP, "10410"), "建议写明新人教程在群文件。", now=NOW)
    await engine.knowledge.suggest(group(bot, GROUP, "10411"), "建议补充服务器维护公告。", now=NOW)
    info = await backup.create_backup(engine, tmp_path / "knowledge.jsonl.gz")
    # the file holds every bot account of the store (other tests' too): this one's are checked by reading them back
    assert info.counts["knowledge"] >= 2 and info.counts["knowledge_revision"] >= 1
    assert info.counts["knowledge_suggestion"] >= 2

    admin = group(bot, GROUP, "10409", role="admin")
    await corrections.forget_memory(engine, admin, second, now=NOW)
    await corrections.forget_memory(engine, admin, third, now=NOW)
    # recorded at the real time: a restore replays the delete-alls made after its file was written
    await erasure.delete_all(engine, ErasureTarget.user(bot, "10410"), Operator("test"))
    later = await engine.knowledge.create(bot, "后来的条目", "", "备份之后写的内容。", [first], now=NOW)

    report = await backup.restore_backup(engine, info.path)
    assert report["knowledge_hidden"] >= 1 and report["knowledge_dropped"] >= 2  # the FAQ, the version citing it
    restored = await engine.knowledge.get(bot, rule.id)
    assert restored.state == "stale" and restored.source_ids == (first,)
    assert await engine.knowledge.revisions(bot, rule.id) == []
    for gone in (faq.id, later.id):
        with pytest.raises(NotFound):
            await engine.knowledge.get(bot, gone)
    assert [item.user_id for item in await engine.knowledge.suggestions(bot)] == ["10411"]
    assert RULE_TITLE not in await _titles(engine, bot, "开黑") and await _vectors(engine, bot) == set()
    await engine.knowledge.update(bot, rule.id, RULE_TITLE, "", RULE_BODY, [first], now=NOW)
    await engine.index.drain()
    assert (await _titles(engine, bot, "开黑"))[0] == RULE_TITLE and await _vectors(engine, bot) == {rule.id}
