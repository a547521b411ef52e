"""The consolidation cycle's tools over one chat's memories on a real engine, called as the agent's
driver calls them (arguments validated by each tool's model, no model needed): the context, the
list and read, write, update, merge and forget with their refusals (another chat's id, a
forgotten fact written back, a secret, an opted-out user's fact, a switched-off chat), lineage
through a forget of a merge's source, the clusters, the figures and the recent turns.

Cards, the memo, the knowledge base and the message to the user: ``test_cycle_tools_shared.py``.
Runs on SQLite + embedded Chroma by default and on PostgreSQL + a Chroma server with
COGNITION_TEST_BACKEND=server.
"""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from cycle_helpers import Tools, desk_of, row, write
from engine_helpers import NOW, group, keyword_rows, make_engine, new_bot
from fake_openai import tool_call
from pydantic import ValidationError
from sqlalchemy import select

from amrita_plugin_cognition.domain.governance import CHAT_OFF_MESSAGE
from amrita_plugin_cognition.domain.permissions import Operator
from amrita_plugin_cognition.domain.records import Importance, MemoryKind, MemoryStatus, Provenance, Scope
from amrita_plugin_cognition.engine.turns import InputMessage
from amrita_plugin_cognition.llm import LLMGateway, LLMSettings
from amrita_plugin_cognition.llm.agent_types import STOP_TOOL, AgentBudget
from amrita_plugin_cognition.store import memory_sources
from amrita_plugin_cognition.store.models import BarrierRow

#: The fake model's preset for the driver's run (``model`` registers it).
PRESET = "cognition-cycle-tools-test"
CHAT = Scope("group", "20001")
OTHER = Scope("group", "20002")
U, V = "10001", "10002"
GYM = "QQ号10005（昵称阿杰）每周三晚上去健身房。"
GYM_REWORDED = "阿杰（QQ号10005）每个星期三晚上去健身房。"
HIKE = "小明每周六上午去香山爬山。"
CAT = "小红在2026-11-20领养了一只橘猫。"
SECRET = "小明的邮箱密码是 Hunter2Hunter2!"


@pytest.fixture
async def engine(tmp_root, chroma_port):  # type: ignore[no-untyped-def]
    return await make_engine(tmp_root, chroma_port)


def _ids(answer: str) -> list[int]:
    return [int(found) for found in re.findall(r"#(\d+)", answer)]


async def test_the_tools_of_a_run(engine) -> None:  # type: ignore[no-untyped-def]
    bot = new_bot()
    in_group = Tools(engine, desk_of(bot, CHAT, allow_send_to_user=True))
    assert all(name.startswith("cycle_") for name in in_group.by_name)
    assert "cycle_stop" not in in_group.by_name  # the driver's
    assert "cycle_send_to_user" not in in_group.by_name  # never offered in a group
    for tool in in_group.by_name.values():
        assert re.search(r"[\u4e00-\u9fff]", tool.description), tool.name
        LLMGateway.tool_schema(tool.arguments, tool.name, tool.description)  # what the driver offers the model
    merge = in_group.by_name["cycle_memory_merge"].arguments
    assert merge.model_validate(json.loads('{"ids": [3, 5], "text": "x", "importance": "low"}')).ids == [3, 5]
    for raw in (
        '{"ids": [3], "text": "x", "importance": "low"}',
        '{"ids": [0, 5], "text": "x", "importance": "low"}',
        '{"ids": ["3", 5], "text": "x", "importance": "low"}',
        '{"ids": [3, 5], "text": "x", "importance": "top"}',
    ):
        with pytest.raises(ValidationError):
            merge.model_validate(json.loads(raw))
    private = Scope("private", U)
    assert "cycle_send_to_user" in Tools(engine, desk_of(bot, private, allow_send_to_user=True)).by_name
    assert "cycle_send_to_user" not in Tools(engine, desk_of(bot, private)).by_name


async def test_the_context_names_what_the_run_needs(engine) -> None:  # type: ignore[no-untyped-def]
    bot = new_bot()
    last = NOW - timedelta(days=3, hours=4)
    await write(engine, bot, CHAT, HIKE, at=last - timedelta(days=1), importance=Importance.HIGH)
    await write(engine, bot, CHAT, CAT, at=NOW - timedelta(hours=2), importance=Importance.LOW)
    gym = await write(engine, bot, CHAT, GYM, at=NOW - timedelta(hours=1))
    gym_again = await write(engine, bot, CHAT, GYM_REWORDED, at=NOW - timedelta(hours=1))
    await engine.index.drain()
    report = await engine.consolidation.run_now(Operator(), bot, CHAT, now=NOW)
    assert report.near == [(gym, gym_again)]
    tools = Tools(
        engine, desk_of(bot, CHAT, prepass=report, last_cycle_at=last, last_summary="合并了两条重复的爬山记录")
    )
    answer = await tools("cycle_context")
    assert "现在：2026-11-30 20:00 周一（Asia/Shanghai）" in answer
    assert "距今 3 天 4 小时" in answer and "合并了两条重复的爬山记录" in answer
    assert "有效 4 条（高 1 / 中 2 / 低 1），上次整理后新增 3 条" in answer
    assert f"#{gym} " in answer and f"#{gym_again} " in answer and "待判断的近似重复 1 组" in answer
    assert "备忘录：0/1000 字" in answer
    first = await Tools(engine, desk_of(bot, CHAT))("cycle_context")
    assert "第一次整理" in first and "首次整理" in first


async def test_list_and_read_only_this_chats_memories(engine) -> None:  # type: ignore[no-untyped-def]
    bot = new_bot()
    last = NOW - timedelta(days=1)
    old = await write(engine, bot, CHAT, HIKE, at=NOW - timedelta(days=2), importance=Importance.HIGH, tags=["爱好"])
    new = await write(engine, bot, CHAT, CAT, importance=Importance.LOW, tags=["宠物"])
    elsewhere = await write(engine, bot, OTHER, "群20002每周五聚餐。")
    tools = Tools(engine, desk_of(bot, CHAT, last_cycle_at=last))
    listed = await tools("cycle_memory_list")
    assert f"#{old} [高] {HIKE} (标签: 爱好; 2026-11-28)" in listed and f"#{new} [低]" in listed
    assert f"#{elsewhere}" not in listed and "共 2 条" in listed
    assert _ids(await tools("cycle_memory_list", new_only=True)) == [new]
    assert _ids(await tools("cycle_memory_list", importance="high")) == [old]
    assert _ids(await tools("cycle_memory_list", tag="宠物")) == [new]
    paged = await tools("cycle_memory_list", limit=1)
    assert _ids(paged)[0] == new and "下一页 offset=1" in paged
    read = await tools("cycle_memory_read", ids=[old, elsewhere, 99999999])
    assert HIKE in read and "说话人 用户10001(10001)" in read and "来源 user_stated" in read
    assert f"#{elsewhere} 找不到" in read and "#99999999 找不到" in read and "聚餐" not in read


async def test_write_goes_through_the_write_path(engine) -> None:  # type: ignore[no-untyped-def]
    bot = new_bot()
    desk = desk_of(bot, CHAT)
    tools = Tools(engine, desk)
    answer = await tools("cycle_memory_write", text="群20001每周日晚上九点开例会。", importance="high", tags=["群规"])
    (written,) = _ids(answer)
    stored = await row(engine, written)
    assert stored.provenance == Provenance.CONSOLIDATED.value and stored.importance == "high"
    assert json.loads(stored.source)["via"] == "consolidation" and desk.changes["written"] == 1
    assert await keyword_rows(engine, [written]) == {written}
    again = await tools("cycle_memory_write", text="群20001每周日晚上九点开例会。")
    assert again == f"拒绝：已有一条相同的有效记忆 #{written}"
    assert (await tools("cycle_memory_write", text=SECRET)).startswith("拒绝：含敏感内容")
    assert desk.changes["written"] == 1


async def test_a_forgotten_fact_is_not_written_back(engine) -> None:  # type: ignore[no-untyped-def]
    bot = new_bot()
    forgotten = await write(engine, bot, CHAT, HIKE)
    first, second = await write(engine, bot, CHAT, CAT), await write(engine, bot, CHAT, GYM)
    await engine.governance.forget(group(bot, CHAT.id, U), forgotten, now=NOW)
    desk = desk_of(bot, CHAT)
    tools = Tools(engine, desk)
    for text in (HIKE, HIKE.rstrip("。"), f"小红养猫。{HIKE}", f"{HIKE.rstrip('。')}，风雨无阻。"):
        answer = await tools("cycle_memory_write", text=text)
        assert answer.startswith("拒绝：") and "遗忘" in answer, (text, answer)
        answer = await tools("cycle_memory_update", id=first, text=text)
        assert answer.startswith("拒绝：") and "遗忘" in answer, (text, answer)
        answer = await tools("cycle_memory_merge", ids=[first, second], text=text, importance="medium")
        assert answer.startswith("拒绝：") and "遗忘" in answer, (text, answer)
    assert not desk.changes and (await row(engine, first)).status == MemoryStatus.ACTIVE.value


async def test_update_labels_in_place_and_rewords_by_superseding(engine) -> None:  # type: ignore[no-untyped-def]
    bot = new_bot()
    fact = await write(engine, bot, CHAT, HIKE, tags=["运动"])
    desk = desk_of(bot, CHAT)
    tools = Tools(engine, desk)
    labelled = await tools("cycle_memory_update", id=fact, importance="high", tags=["爱好", "运动"])
    assert labelled == f"已更新 #{fact}：重要性 高，标签 爱好、运动"
    stored = await row(engine, fact)
    assert stored.status == MemoryStatus.ACTIVE.value and stored.importance == "high"
    assert json.loads(stored.tags) == ["爱好", "运动"]
    reworded = await tools("cycle_memory_update", id=fact, text="小明每周六上午去北京香山爬山。")
    new_id = _ids(reworded)[-1]
    old, new = await row(engine, fact), await row(engine, new_id)
    assert old.status == MemoryStatus.SUPERSEDED.value and old.superseded_by == new_id
    assert new.provenance == Provenance.CONSOLIDATED.value and new.importance == "high"
    assert json.loads(new.source)["edited_by"] == "consolidation" and json.loads(new.tags) == ["爱好", "运动"]
    assert desk.changes["updated"] == 2
    assert (await tools("cycle_memory_update", id=fact, importance="low")).startswith(f"拒绝：#{fact} 已不是有效记忆")
    assert (await tools("cycle_memory_update", id=new_id, text=SECRET)).startswith("拒绝：含敏感内容")
    elsewhere = await write(engine, bot, OTHER, "群20002每周五聚餐。")
    assert await tools("cycle_memory_update", id=elsewhere, importance="low") == f"拒绝：找不到 #{elsewhere}"


async def test_merge_writes_a_new_memory_with_lineage(engine) -> None:  # type: ignore[no-untyped-def]
    bot = new_bot()
    gym = await write(engine, bot, CHAT, GYM, at=NOW - timedelta(days=2), tags=["运动"])
    gym_again = await write(engine, bot, CHAT, GYM_REWORDED, speaker=V, importance=Importance.HIGH)
    desk = desk_of(bot, CHAT)
    tools = Tools(engine, desk)
    text = "阿杰（QQ号10005）每周三晚上去健身房。"
    answer = await tools(
        "cycle_memory_merge", ids=[gym_again, gym], text=text, importance="high", tags=["运动", "健身"]
    )
    merged_id = _ids(answer)[-1]
    merged = await row(engine, merged_id)
    assert merged.text == text and merged.provenance == Provenance.CONSOLIDATED.value
    source = json.loads(merged.source)
    assert source["sources"] == [gym, gym_again] and source["judged"] is True
    assert json.loads(merged.tags) == ["运动", "健身"] and merged.importance == "high"
    for source_id in (gym, gym_again):
        old = await row(engine, source_id)
        assert old.status == MemoryStatus.SUPERSEDED.value and old.superseded_by == merged_id
    async with engine.session() as session:
        assert await memory_sources.sources_of(session, [merged_id]) == {merged_id: [gym, gym_again]}
    assert desk.changes["merged"] == 1
    again = await tools("cycle_memory_merge", ids=[gym, merged_id], text=text, importance="high")
    assert again.startswith(f"拒绝：#{gym} 已不是有效记忆")
    third = await write(engine, bot, CHAT, CAT)
    assert (await tools("cycle_memory_merge", ids=[third, third], text=CAT, importance="low")).startswith(
        "拒绝：合并至少需要两条"
    )
    elsewhere = await write(engine, bot, OTHER, "群20002每周五聚餐。")
    refused = await tools("cycle_memory_merge", ids=[third, elsewhere], text=CAT, importance="low")
    assert refused == f"拒绝：找不到 #{elsewhere}"
    hike = await write(engine, bot, CHAT, HIKE)
    assert (await tools("cycle_memory_merge", ids=[third, hike], text=SECRET, importance="low")).startswith(
        "拒绝：含敏感内容"
    )
    assert desk.changes["merged"] == 1


async def test_a_forget_of_a_merges_source_forgets_the_merge(engine) -> None:  # type: ignore[no-untyped-def]
    bot = new_bot()
    gym, gym_again = await write(engine, bot, CHAT, GYM), await write(engine, bot, CHAT, GYM_REWORDED)
    desk = desk_of(bot, CHAT)
    tools = Tools(engine, desk)
    merged_id = _ids(await tools("cycle_memory_merge", ids=[gym, gym_again], text=GYM, importance="medium"))[-1]
    answer = await tools("cycle_memory_forget", id=gym_again, reason="错误")
    assert answer.startswith(f"已遗忘 #{merged_id}")
    for memory_id in (gym, gym_again, merged_id):
        assert await row(engine, memory_id) is None
    async with engine.session() as session:
        barriers = (await session.execute(select(BarrierRow).where(BarrierRow.memory_id == merged_id))).scalars().all()
        assert barriers and all(barrier.reason == "by:consolidation" for barrier in barriers)
        assert await memory_sources.sources_of(session, [merged_id]) == {}
    assert desk.changes["forgotten"] == 1
    # the merge cannot be written back from its forgotten words either
    assert (await tools("cycle_memory_write", text=GYM)).startswith("拒绝：")
    # a user's forget of a source takes the cycle's merge too
    hike, hike_again = (
        await write(engine, bot, CHAT, HIKE),
        await write(engine, bot, CHAT, "小明每个周六上午去香山爬山。"),
    )
    merged = _ids(await tools("cycle_memory_merge", ids=[hike, hike_again], text=HIKE, importance="low"))[-1]
    await engine.governance.forget(group(bot, CHAT.id, U, role="admin"), hike, now=NOW)
    assert await row(engine, merged) is None and await row(engine, hike_again) is None


async def test_an_opted_out_users_fact_is_shown_without_its_text_and_never_changed(engine) -> None:  # type: ignore[no-untyped-def]
    bot = new_bot()
    theirs = await write(engine, bot, CHAT, "小红每天晚上十点睡觉。", speaker=V)
    mine = await write(engine, bot, CHAT, HIKE)
    await engine.governance.set_opt_out(bot, V, True, Operator(), now=NOW)
    desk = desk_of(bot, CHAT)
    tools = Tools(engine, desk)
    listed = await tools("cycle_memory_list")
    assert "十点睡觉" not in listed and f"#{theirs} [中] （涉及已选择不被记忆的用户" in listed
    assert "十点睡觉" not in await tools("cycle_memory_read", ids=[theirs])
    assert (await tools("cycle_memory_update", id=theirs, importance="low")).startswith(
        "拒绝：这段内容涉及已选择不被记忆"
    )
    assert (await tools("cycle_memory_forget", id=theirs, reason="无价值")).startswith("拒绝：")
    merge = await tools("cycle_memory_merge", ids=[theirs, mine], text=HIKE, importance="low")
    assert merge.startswith("拒绝：这段内容涉及已选择不被记忆的用户")
    about = await tools("cycle_memory_write", text="小红喜欢喝奶茶。", about_user_id=V)
    assert about.startswith("拒绝：这段内容涉及已选择不被记忆的用户")
    naming = await tools("cycle_memory_write", text="QQ号10002的用户喜欢喝奶茶。")
    assert naming.startswith("拒绝：")
    assert not desk.changes and (await row(engine, theirs)).status == MemoryStatus.ACTIVE.value


async def test_a_switched_off_chat_refuses_every_tool(engine) -> None:  # type: ignore[no-untyped-def]
    bot = new_bot()
    fact = await write(engine, bot, CHAT, HIKE)
    other = await write(engine, bot, CHAT, CAT)
    await engine.governance.set_chat_memory(bot, CHAT, False, Operator(), now=NOW)
    desk = desk_of(bot, CHAT)
    tools = Tools(engine, desk)
    arguments = {
        "cycle_memory_read": {"ids": [fact]},
        "cycle_memory_write": {"text": CAT},
        "cycle_memory_update": {"id": fact, "importance": "low"},
        "cycle_memory_merge": {"ids": [fact, other], "text": HIKE, "importance": "low"},
        "cycle_memory_forget": {"id": fact, "reason": "x"},
        "cycle_card_read": {"entity_type": "group", "entity_id": CHAT.id},
        "cycle_card_update": {
            "entity_type": "group",
            "entity_id": CHAT.id,
            "expected_version": "none",
            "body": "x",
            "source_ids": [fact],
        },
        "cycle_memo_update": {"content": "x", "expected_version": "x"},
        "cycle_knowledge_search": {"query": "爬山"},
        "cycle_knowledge_get": {"entry_id": 1},
        "cycle_knowledge_write": {"title": "t", "body": "b", "source_ids": [fact]},
        "cycle_knowledge_delete": {"entry_id": 1, "reason": "x"},
        "cycle_suggestion_review": {"suggestion_id": 1, "accept": False, "reason": "x"},
    }
    for name in tools.by_name:
        answer = await tools(name, **arguments.get(name, {}))
        assert answer == f"拒绝：{CHAT_OFF_MESSAGE}", (name, answer)
    assert not desk.changes and (await row(engine, fact)).status == MemoryStatus.ACTIVE.value


async def test_clusters_stats_and_recent_turns(engine) -> None:  # type: ignore[no-untyped-def]
    bot = new_bot()
    gym, gym_again = await write(engine, bot, CHAT, GYM), await write(engine, bot, CHAT, GYM_REWORDED)
    await write(engine, bot, CHAT, HIKE, tags=["爱好"], kind=MemoryKind.EVENT)
    await engine.index.drain()
    report = await engine.consolidation.dry_run(Operator(), bot, CHAT, now=NOW)
    tools = Tools(engine, desk_of(bot, CHAT, prepass=report))
    clusters = await tools("cycle_clusters")
    assert "组1：" in clusters and f"#{gym} " in clusters and f"#{gym_again} " in clusters and "共 1 组" in clusters
    stats = await tools("cycle_stats")
    assert "有效 3 条" in stats and "event 1" in stats and "爱好 1" in stats and "无标签 2 条" in stats
    speaker, leaver = group(bot, CHAT.id, U, "小明"), group(bot, CHAT.id, V, "小红")
    said = NOW - timedelta(minutes=30)
    await engine.turns.record(speaker, InputMessage("m1", U, "小明", "周六一起去爬山吗", said), "好呀", ended=True)
    await engine.turns.record(leaver, InputMessage("m2", V, "小红", "我家猫今天生病了", said), "早日康复", ended=True)
    await engine.turns.record(
        speaker, InputMessage("m3", U, "小明", "我的卡号是6222020200112233445，别外传", said), "收到", ended=True
    )
    await engine.governance.set_opt_out(bot, V, True, Operator(), now=NOW)
    recent = await tools("cycle_recent")
    assert "小明：周六一起去爬山吗" in recent and "机器人：好呀" in recent
    assert "猫" not in recent and "早日康复" not in recent  # an opted-out user's words and the reply to them
    assert "6222020200112233445" not in recent


async def test_the_agent_driver_runs_the_tools(engine, model) -> None:  # type: ignore[no-untyped-def]
    """The tools through the real driver (``llm/agent.py``) and the fake model: the schemas are
    offered, the raw arguments validated by the tools' models, a refusal recorded as not ok."""
    bot = new_bot()
    gym, gym_again = await write(engine, bot, CHAT, GYM), await write(engine, bot, CHAT, GYM_REWORDED)
    elsewhere = await write(engine, bot, OTHER, "群20002每周五聚餐。")
    model.script.extend(
        [
            tool_call("cycle_context", {}, "call_1"),
            tool_call("cycle_memory_merge", {"ids": [gym, gym_again], "text": GYM, "importance": "medium"}, "call_2"),
            tool_call("cycle_memory_forget", {"id": elsewhere, "reason": "无价值"}, "call_3"),
            tool_call(STOP_TOOL, {"summary": "合并了阿杰健身的两条记忆。"}, "call_4"),
        ]
    )
    llm = LLMGateway(LLMSettings.model_validate({"preset": PRESET, "timeout_seconds": 5.0, "max_retries": 0}))
    desk = desk_of(bot, CHAT)
    tools = Tools(engine, desk)
    outcome = await llm.run_agent(
        "cycle_judgement", "整理本会话的记忆。", "开始。", list(tools.by_name.values()), AgentBudget(10, 10**6)
    )
    assert outcome.ended == "stopped" and outcome.summary == "合并了阿杰健身的两条记忆。"
    assert [(call.name, call.ok) for call in outcome.calls] == [
        ("cycle_context", True),
        ("cycle_memory_merge", True),
        ("cycle_memory_forget", False),
        (STOP_TOOL, True),
    ]
    assert dict(desk.changes) == {"merged": 1}
    assert (await row(engine, gym)).status == MemoryStatus.SUPERSEDED.value
    assert (await row(engine, elsewhere)).status == MemoryStatus.ACTIVE.value
    first = model.chat_requests[0]
    assert {tool["function"]["name"] for tool in first["tools"]} == {*tools.by_name, STOP_TOOL}
