"""The consolidation cycle's tools over what a chat shares beyond its memories, on a real engine,
called as the agent's driver calls them: profile cards (only what this chat may see, only the
part this chat grows, with the revision check), the pinned memo (at the version read, revisions
kept), the knowledge base (refused from a private chat, naming a person, carrying a secret or a
forgotten fact; this chat's stale entries re-derived or deleted), suggestions (accepted into an
entry, or rejected with the reason) and the one message to a private chat's user.

Runs on SQLite + embedded Chroma by default and on PostgreSQL + a Chroma server with
COGNITION_TEST_BACKEND=server.
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from cycle_helpers import Tools, desk_of, write
from engine_helpers import NOW, group, make_engine, new_bot, private
from pydantic import ValidationError

from amrita_plugin_cognition.domain.permissions import Operator
from amrita_plugin_cognition.domain.profiles import Card
from amrita_plugin_cognition.domain.records import Scope

CHAT = Scope("group", "20001")
OTHER = Scope("group", "20002")
U, V = "10001", "10002"
RULE = "群20001每周五晚上八点组织开黑。"
LATE = "群20001约定迟到十分钟以上的人请全队喝奶茶。"
SECRET_BODY = "管理后台的登录密码是 Hunter2Hunter2!，大家别外传。"


@pytest.fixture
async def engine(tmp_root, chroma_port):  # type: ignore[no-untyped-def]
    return await make_engine(tmp_root, chroma_port)


def _version(answer: str) -> str:
    found = re.search(r"版本 ([^）)]+)", answer)
    assert found, answer
    return found.group(1)


async def _card(engine, bot: str, entity_type: str, entity_id: str, part: str, body: str, name: str = "") -> Card:  # type: ignore[no-untyped-def]
    card = Card(bot, entity_type, entity_id, part, name=name, body=body)
    return (await engine.profiles.save(card, now=NOW - timedelta(days=1))).card


async def test_cards_only_what_this_chat_sees_and_only_its_own_part(engine) -> None:  # type: ignore[no-untyped-def]
    bot = new_bot()
    hike = await write(engine, bot, CHAT, "小明每周六上午去香山爬山。", speaker=U)
    await _card(engine, bot, "group", CHAT.id, "group", "一个爱开黑的游戏群。")
    await _card(engine, bot, "group", OTHER.id, "group", "另一个群的秘密计划。")
    await _card(engine, bot, "user", U, f"group:{CHAT.id}", "周末爱爬山。", name="小明")
    await _card(engine, bot, "user", U, f"group:{OTHER.id}", "在二群说过要换工作。", name="小明")
    desk = desk_of(bot, CHAT, last_cycle_at=NOW - timedelta(days=2))
    tools = Tools(engine, desk)
    own = await tools("cycle_card_read", entity_type="group", entity_id=CHAT.id)
    assert "一个爱开黑的游戏群" in own
    assert (await tools("cycle_card_read", entity_type="group", entity_id=OTHER.id)) == "拒绝：只能查看本群的画像"
    member = await tools("cycle_card_read", entity_type="user", entity_id=U)
    assert "周末爱爬山" in member and "换工作" not in member  # under strict: this group's part only
    stranger = await tools("cycle_card_read", entity_type="user", entity_id="10009")
    assert stranger.startswith("拒绝：只能查看本群成员的画像")
    assert "上次整理后更新的画像：群 20001 的画像" in await tools("cycle_context")

    version = _version(member)
    with pytest.raises(ValidationError):  # a card change names the facts it draws on
        await tools("cycle_card_update", entity_type="user", entity_id=U, expected_version=version, body="x")
    foreign = await write(engine, bot, OTHER, "小明在二群说过要换工作。", speaker=U)
    elsewhere = await tools(
        "cycle_card_update", entity_type="user", entity_id=U, expected_version=version, body="x", source_ids=[foreign]
    )
    assert elsewhere.startswith("拒绝：找不到")
    updated = await tools(
        "cycle_card_update",
        entity_type="user",
        entity_id=U,
        expected_version=version,
        body="周末爱去香山爬山。",
        source_ids=[hike],
    )
    assert updated.startswith("已更新用户 10001 在群 20001 的画像")
    stored = await engine.profiles.get(bot, "user", U, f"group:{CHAT.id}")
    assert stored.body == "周末爱去香山爬山。" and stored.name == "小明" and desk.changes["cards"] == 1
    assert hike in stored.source_ids
    assert len(await engine.profiles.revisions(bot, "user", U, f"group:{CHAT.id}")) == 1
    stale = await tools(
        "cycle_card_update", entity_type="user", entity_id=U, expected_version=version, body="x", source_ids=[hike]
    )
    assert stale == "拒绝：画像在读取后已被修改，请重新读取"
    fresh = _version(await tools("cycle_card_read", entity_type="user", entity_id=U))
    secret = await tools(
        "cycle_card_update",
        entity_type="user",
        entity_id=U,
        expected_version=fresh,
        body=SECRET_BODY,
        source_ids=[hike],
    )
    assert secret.startswith("拒绝：含敏感内容")
    other_part = await tools(
        "cycle_card_update",
        entity_type="group",
        entity_id=OTHER.id,
        expected_version="none",
        body="改别的群",
        source_ids=[hike],
    )
    assert other_part.startswith("拒绝：")
    assert (await engine.profiles.get(bot, "group", OTHER.id)).body == "另一个群的秘密计划。"
    assert desk.changes["cards"] == 1
    # forgetting a fact the refinement drew on takes it out of the card's sources and asks for a rebuild
    await engine.governance.forget(group(bot, CHAT.id, U), hike, now=NOW)
    assert hike not in (await engine.profiles.get(bot, "user", U, f"group:{CHAT.id}")).source_ids


async def test_an_opted_out_users_card_and_a_forgotten_fact_stay_out(engine) -> None:  # type: ignore[no-untyped-def]
    bot = new_bot()
    hike = await write(engine, bot, CHAT, "小明每周六上午去香山爬山。", speaker=U)
    games = await write(engine, bot, CHAT, "群里每周五晚上开黑。", speaker=U)
    sleep = await write(engine, bot, CHAT, "小红每天晚上十点睡觉。", speaker=V)
    await _card(engine, bot, "user", V, f"group:{CHAT.id}", "作息规律。", name="小红")
    group_card = await _card(engine, bot, "group", CHAT.id, "group", "一个爱开黑的游戏群。")
    await engine.governance.set_opt_out(bot, V, True, Operator(), now=NOW)
    await engine.governance.forget(group(bot, CHAT.id, U), hike, now=NOW)
    tools = Tools(engine, desk_of(bot, CHAT))
    assert (await tools("cycle_card_read", entity_type="user", entity_id=V)).startswith("拒绝：该用户已选择不被记忆")
    refused = await tools(
        "cycle_card_update", entity_type="user", entity_id=V, expected_version="none", body="x", source_ids=[games]
    )
    assert refused.startswith("拒绝：该用户已选择不被记忆")
    by_opted_out = await tools(
        "cycle_card_update",
        entity_type="group",
        entity_id=CHAT.id,
        expected_version=group_card.updated_at.isoformat(),
        body="作息规律的群。",
        source_ids=[sleep],
    )
    assert by_opted_out.startswith("拒绝：这段内容涉及已选择不被记忆的用户")
    gone = await tools(
        "cycle_card_update",
        entity_type="group",
        entity_id=CHAT.id,
        expected_version=group_card.updated_at.isoformat(),
        body="爱爬山的群。",
        source_ids=[hike],
    )
    assert gone == f"拒绝：找不到 #{hike}"  # a forgotten fact is no source
    version = group_card.updated_at.isoformat()
    forgotten = await tools(
        "cycle_card_update",
        entity_type="group",
        entity_id=CHAT.id,
        expected_version=version,
        body="小明每周六上午去香山爬山。",
        source_ids=[games],
    )
    assert forgotten == "拒绝：画像包含此前被要求遗忘的内容，不能写入"
    naming = await tools(
        "cycle_card_update",
        entity_type="group",
        entity_id=CHAT.id,
        expected_version=version,
        body="QQ号10002的小红很活跃。",
        source_ids=[games],
    )
    assert naming.startswith("拒绝：这段内容涉及已选择不被记忆的用户")


async def test_the_memo_is_replaced_at_the_version_read(engine) -> None:  # type: ignore[no-untyped-def]
    bot = new_bot()
    member = group(bot, CHAT.id, U, role="admin")
    await engine.notes.update_memo(member, "周五开黑，八点集合。\n" + "细节" * 420, now=NOW - timedelta(days=1))
    desk = desk_of(bot, CHAT)
    tools = Tools(engine, desk)
    read = await tools("cycle_memo_read")
    assert "851/1000 字（接近上限" in read and "周五开黑" in read
    assert "接近上限" in await tools("cycle_context")
    version = re.search(r"版本 ([0-9a-f]+)", read).group(1)
    answer = await tools("cycle_memo_update", content="周五开黑，八点集合（细节见记忆）。", expected_version=version)
    assert answer.startswith("已更新备忘录：17/1000 字") and desk.changes["memo"] == 1
    assert await engine.notes.memo_of(bot, CHAT) == "周五开黑，八点集合（细节见记忆）。"
    (revision,) = await engine.notes.memo_revisions(bot, CHAT)
    assert revision.content.startswith("周五开黑") and revision.replaced_by == "consolidation"
    assert (await tools("cycle_memo_update", content="x", expected_version=version)).startswith(
        "拒绝：备忘录在读取后已被修改"
    )
    fresh = engine.notes.memo_version(await engine.notes.memo_of(bot, CHAT))
    assert (await tools("cycle_memo_update", content=SECRET_BODY, expected_version=fresh)).startswith(
        "拒绝：含敏感内容"
    )
    hike = await write(engine, bot, CHAT, "小明每周六上午去香山爬山。")
    await engine.governance.forget(member, hike, now=NOW)
    barred = await tools("cycle_memo_update", content="周五开黑。\n小明每周六上午去香山爬山", expected_version=fresh)
    assert barred == "拒绝：备忘录包含此前被要求遗忘的内容，不能写入" and desk.changes["memo"] == 1


async def test_knowledge_written_by_the_cycle_keeps_the_policy(engine) -> None:  # type: ignore[no-untyped-def]
    bot = new_bot()
    rule, late = await write(engine, bot, CHAT, RULE), await write(engine, bot, CHAT, LATE)
    elsewhere = await write(engine, bot, OTHER, "群20002每周五聚餐。")
    desk = desk_of(bot, CHAT)
    tools = Tools(engine, desk)
    body = "本群每周五晚上八点组织开黑，迟到十分钟以上的人请全队喝奶茶。"
    created = await tools(
        "cycle_knowledge_write", title="群规：周五开黑", summary="周五八点", body=body, source_ids=[rule, late]
    )
    entry_id = int(re.search(r"#(\d+)", created).group(1))
    assert created == f"已写入知识条目 #{entry_id}（第 1 版）" and desk.changes["knowledge"] == 1
    assert f"#{entry_id} 群规：周五开黑" in await tools("cycle_knowledge_search", query="开黑")
    assert "本会话可修改" in await tools("cycle_knowledge_get", entry_id=entry_id)

    refusals = {
        "person": dict(title="联系人", body="有事找群主，QQ号12345678。", source_ids=[rule]),
        "secret": dict(title="后台", body=SECRET_BODY, source_ids=[rule]),
        "other chat": dict(title="聚餐", body="每周五聚餐。", source_ids=[elsewhere]),
    }
    for why, arguments in refusals.items():
        answer = await tools("cycle_knowledge_write", **arguments)
        assert answer.startswith("拒绝："), (why, answer)
    assert (await tools("cycle_knowledge_write", **refusals["other chat"])) == f"拒绝：找不到 #{elsewhere}"

    private_tools = Tools(engine, desk_of(bot, Scope("private", U)))
    mine = await write(engine, bot, Scope("private", U), "我每天早上跑步。", speaker=U)
    refused = await private_tools(
        "cycle_knowledge_write", title="跑步", body="每天早上跑步有益健康。", source_ids=[mine]
    )
    assert refused.startswith("拒绝：私聊的内容不能进入知识库")

    # a forget of a source hides the entry; the cycle sees it, cannot write the forgotten words back, re-derives it
    await engine.governance.forget(group(bot, CHAT.id, U, role="admin"), late, now=NOW)
    context = await tools("cycle_context")
    assert "需重新整理的知识条目（来源被遗忘或更正）：1 条" in context and f"#{entry_id} 群规：周五开黑" in context
    hidden = await tools("cycle_knowledge_get", entry_id=entry_id)
    assert "已隐藏" in hidden and f"剩余来源 #{rule}" in hidden and "奶茶" not in hidden  # the old text is not shown
    back = await tools(
        "cycle_knowledge_write",
        entry_id=entry_id,
        expected_version=1,
        title="群规：周五开黑",
        body=f"{RULE}{LATE}",
        source_ids=[rule],
    )
    assert back == "拒绝：条目包含此前被要求遗忘的内容，不能写入"
    redone = await tools(
        "cycle_knowledge_write",
        entry_id=entry_id,
        expected_version=1,
        title="群规：周五开黑",
        body="本群每周五晚上八点组织开黑。",
        source_ids=[rule],
    )
    assert redone == f"已写入知识条目 #{entry_id}（第 2 版）"
    assert (await engine.knowledge.get(bot, entry_id)).shown
    stale_version = await tools(
        "cycle_knowledge_write",
        entry_id=entry_id,
        expected_version=1,
        title="t",
        body="本群周五开黑。",
        source_ids=[rule],
    )
    assert stale_version.startswith("拒绝：知识条目")
    foreign = await engine.knowledge.create(bot, "其他群的条目", "", "每周五聚餐。", [elsewhere], now=NOW)
    assert (await tools("cycle_knowledge_delete", entry_id=foreign.id, reason="x")).startswith("拒绝：")
    assert await tools("cycle_knowledge_delete", entry_id=entry_id, reason="过时") == f"已删除知识条目 #{entry_id}"
    assert desk.changes["knowledge"] == 3


async def test_suggestions_are_reviewed_by_their_chats_cycle(engine) -> None:  # type: ignore[no-untyped-def]
    bot = new_bot()
    rule = await write(engine, bot, CHAT, RULE)
    await engine.knowledge.suggest(group(bot, CHAT.id, U), "建议把周五开黑写进群规。", now=NOW)
    await engine.knowledge.suggest(group(bot, CHAT.id, V), "建议写一条新手教程的位置。", now=NOW)
    await engine.knowledge.suggest(group(bot, OTHER.id, U), "建议二群周五聚餐。", now=NOW)
    desk = desk_of(bot, CHAT)
    tools = Tools(engine, desk)
    listed = await tools("cycle_suggestions")
    ids = [int(found) for found in re.findall(r"\[建议#(\d+)\]", listed)]
    assert len(ids) == 2 and "周五开黑" in listed and "二群" not in listed
    assert "待审知识库建议：2 条" in await tools("cycle_context")
    accepted = await tools(
        "cycle_suggestion_review",
        suggestion_id=ids[0],
        accept=True,
        reason="群规值得收录",
        title="群规：周五开黑",
        body="本群每周五晚上八点组织开黑。",
        source_ids=[rule],
    )
    assert accepted.startswith(f"建议 #{ids[0]} 已采纳")
    (entry,) = [item.entry for item in await engine.knowledge.list(bot)]
    assert entry.title == "群规：周五开黑" and entry.source_ids == (rule,)
    rejected = await tools("cycle_suggestion_review", suggestion_id=ids[1], accept=False, reason="内容不具体")
    assert rejected == f"建议 #{ids[1]} 已拒绝"
    closed = await engine.knowledge.suggestions(bot, None)
    assert {item.state for item in closed if item.chat == CHAT.key} == {"accepted", "rejected"}
    assert desk.changes["suggestions"] == 2 and desk.changes["knowledge"] == 1
    (foreign,) = [item.id for item in closed if item.chat == OTHER.key]
    refused = await tools("cycle_suggestion_review", suggestion_id=foreign, accept=False, reason="x")
    assert refused == f"拒绝：找不到待审阅的建议 #{foreign}"


async def test_one_message_to_a_private_chats_user(engine) -> None:  # type: ignore[no-untyped-def]
    bot = new_bot()
    chat = Scope("private", U)
    desk = desk_of(bot, chat, allow_send_to_user=True)
    tools = Tools(engine, desk)
    assert (await tools("cycle_send_to_user", text="长" * 201)).startswith("拒绝：消息最多 200 字")
    assert (await tools("cycle_send_to_user", text=SECRET_BODY)).startswith("拒绝：含敏感内容")
    assert desk.message_to_user is None
    sent = await tools("cycle_send_to_user", text="我整理了一下你的记忆：合并了两条重复的跑步记录。")
    assert sent == "消息已排队，将在本私聊中发给用户"
    assert desk.message_to_user == "我整理了一下你的记忆：合并了两条重复的跑步记录。"
    assert (await tools("cycle_send_to_user", text="再说一句")).startswith("拒绝：本次整理已经留过一条消息")
    assert desk.message_to_user == "我整理了一下你的记忆：合并了两条重复的跑步记录。"
    # the private chat's card part is the only one its cycle refines
    run = await write(engine, bot, chat, "我每天早上跑步。", speaker=U)
    context = private(bot, U)
    assert await engine.profiles.visible_parts(context, "user", U) == ["private", "group"]
    created = await tools(
        "cycle_card_update", entity_type="user", entity_id=U, expected_version="none", body="爱跑步。", source_ids=[run]
    )
    assert created.startswith("已更新用户 10001 的仅私聊画像")
    assert (await tools("cycle_card_read", entity_type="user", entity_id=V)).startswith(
        "拒绝：私聊里只能查看说话人本人"
    )
    # a suggestion filed in a private chat is shown to its cycle, which may only reject it
    filed = await engine.knowledge.suggest(context, "建议写一条跑步的注意事项。", now=NOW)
    assert "待审知识库建议：1 条（私聊的内容不能进入知识库" in await tools("cycle_context")
    accept = await tools(
        "cycle_suggestion_review",
        suggestion_id=filed.suggestion.id,
        accept=True,
        reason="好",
        title="跑步",
        body="先热身。",
    )
    assert accept.startswith("拒绝：私聊的内容不能进入知识库")
    reject = await tools("cycle_suggestion_review", suggestion_id=filed.suggestion.id, accept=False, reason="私聊内容")
    assert reject == f"建议 #{filed.suggestion.id} 已拒绝" and desk.changes["suggestions"] == 1
