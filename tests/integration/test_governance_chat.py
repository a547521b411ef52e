"""Forget and delete-all from chat, in the real Amrita chat flow (nonebug): every removal waits for
the same user's own yes in a later message in the same chat (``test_consent_chat.py`` tries every
way around it), ``取消`` calls it off, ``show`` tells where a memory came from and what corrected it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from chat_helpers import SELF_ID, connect_bot, deliver, group_message, memory_engine, private_message, tool_results
from engine_helpers import empty_job_queue
from fake_openai import tool_call
from nonebug import App
from sqlalchemy import func, select

from amrita_plugin_cognition.domain.records import ChatContext, MemoryDraft, Scope
from amrita_plugin_cognition.engine.historian import TOOL_NAME
from amrita_plugin_cognition.store import audit
from amrita_plugin_cognition.store.models import MemoryRow

pytestmark = pytest.mark.chatflow

BOT = str(SELF_ID)
_engine = memory_engine


async def _seed(scope: Scope, text: str, speaker: str, name: str = "用户") -> int:
    engine = await _engine()
    result = await engine.memories.remember(
        BOT, [MemoryDraft(text=text, scope=scope, speaker_id=speaker, speaker_name=name)]
    )
    await engine.index.drain()
    return result.record_ids[0]


async def _active(memory_id: int) -> bool:
    engine = await _engine()
    async with engine.session() as session:
        row = await session.get(MemoryRow, memory_id)
    return row is not None and row.status == "active"


async def _count_of(user_id: str) -> int:
    engine = await _engine()
    async with engine.session() as session:
        query = (
            select(func.count()).select_from(MemoryRow).where(MemoryRow.bot_id == BOT, MemoryRow.speaker_id == user_id)
        )
        return int((await session.execute(query)).scalar_one())


async def test_forgetting_waits_for_the_same_users_confirmation(app: App, fake_openai, monkeypatch) -> None:
    fact = await _seed(Scope("group", "30301"), "群30301每周三晚上打羽毛球。", speaker="10301", name="阿明")
    async with app.test_api() as ctx:
        bot, qq = await connect_bot(ctx, monkeypatch, BOT)
        await deliver(bot, group_message(f"/memory group delete {fact}", 30301, 10301, "阿明", to_me=False))
        assert f"将删除记忆 #{fact}「群30301每周三晚上打羽毛球。」" in qq.sent[-1] and "确认" in qq.sent[-1]
        sent = len(qq.sent)
        # someone else's 确认, or the same user's in another chat, confirms nothing (and is left to the chat)
        await deliver(bot, group_message("确认", 30301, 10302, "路人", to_me=False))
        await deliver(bot, private_message("确认", 10301, "阿明"))
        assert await _active(fact) and all("已删除" not in text for text in qq.sent[sent:])
        await deliver(bot, group_message("取消", 30301, 10301, "阿明", to_me=False))
        assert qq.sent[-1] == "已取消，没有删除任何内容" and await _active(fact)
        await deliver(bot, group_message("确认", 30301, 10301, "阿明", to_me=False))  # nothing waits any more
        assert await _active(fact)
        await deliver(bot, group_message(f"/memory group delete {fact}", 30301, 10301, "阿明", to_me=False))
        await deliver(bot, group_message("确认", 30301, 10301, "阿明", to_me=False))
        assert qq.sent[-1] == f"已删除记忆 #{fact}，之后不会再被记起"
        assert not await _active(fact)


async def test_a_member_may_not_ask_to_forget_someone_elses_group_memory(app: App, fake_openai, monkeypatch) -> None:
    fact = await _seed(Scope("group", "30302"), "群30302的群规是不许发广告。", speaker="10303", name="群主")
    async with app.test_api() as ctx:
        bot, qq = await connect_bot(ctx, monkeypatch, BOT)
        await deliver(bot, group_message(f"/memory group delete {fact}", 30302, 10304, "成员", to_me=False))
        assert "管理员" in qq.sent[-1] and "确认" not in qq.sent[-1]  # refused before anything waits
        await deliver(bot, group_message("确认", 30302, 10304, "成员", to_me=False))
        assert await _active(fact)


async def test_the_tool_forgets_only_after_a_later_message_agrees(app: App, fake_openai, monkeypatch) -> None:
    fact = await _seed(Scope("private", "10305"), "阿杰在准备考公。", speaker="10305", name="阿杰")
    async with app.test_api() as ctx:
        bot, _ = await connect_bot(ctx, monkeypatch, BOT)
        # the model tries to confirm in the same turn it asked: refused
        fake_openai.script.extend(
            [
                tool_call("cognition_memory_delete", {"memory_id": fact}, "call_1"),
                tool_call("cognition_memory_delete", {"memory_id": fact, "confirmed": True}, "call_2"),
            ]
        )
        await deliver(bot, private_message("把考公那条忘了吧", 10305, "阿杰"))
        first, second = tool_results(fake_openai.chat_requests[-1])[-2:]
        assert first["ok"] is True and first["needs_confirmation"] is True and "考公" in first["text"]
        assert second["ok"] is False and "询问之后" in second["error"]
        assert await _active(fact)
        # confirming a fact nobody asked about is refused too
        fake_openai.reset()
        fake_openai.script.append(
            tool_call("cognition_memory_delete", {"memory_id": fact + 1000, "confirmed": True}, "c3")
        )
        await deliver(bot, private_message("我再想想", 10305, "阿杰"))
        assert tool_results(fake_openai.chat_requests[-1])[-1]["ok"] is False
        # the user agrees (with more to say, so the model hears it and confirms)
        fake_openai.reset()
        fake_openai.script.append(tool_call("cognition_memory_delete", {"memory_id": fact, "confirmed": True}, "c5"))
        await deliver(bot, private_message("对，删吧，反正我已经考上了", 10305, "阿杰"))
        assert tool_results(fake_openai.chat_requests[-1])[-1] == {"ok": True, "deleted": fact}
        assert not await _active(fact)


async def test_show_tells_the_source_and_the_corrections(app: App, fake_openai, monkeypatch) -> None:
    engine = await _engine()
    chat = ChatContext(BOT, Scope("private", "10306"), "10306", "阿伟")
    first = await engine.memories.write(chat, "user", "阿伟住在杭州。")
    second = await engine.memories.update(chat, first.id, "阿伟住在上海。")
    async with app.test_api() as ctx:
        bot, qq = await connect_bot(ctx, monkeypatch, BOT)
        await deliver(bot, private_message(f"/memory user show {second.id}", 10306, "阿伟"))
        assert f"记忆 #{second.id}（有效）：阿伟住在上海。" in qq.sent[-1]
        assert f"更正自 #{first.id}" in qq.sent[-1]
        await deliver(bot, private_message(f"/memory user show {first.id}", 10306, "阿伟"))
        assert "已被更正取代" in qq.sent[-1] and f"已被 #{second.id} 取代" in qq.sent[-1]
        await deliver(bot, private_message(f"/memory user show {first.id}", 10307, "别人"))
        assert qq.sent[-1] == f"没有找到编号为 {first.id} 的记忆"


async def test_clearing_everything_asks_first_and_leaves_an_audit_record(app: App, fake_openai, monkeypatch) -> None:
    await _seed(Scope("private", "10308"), "阿芳在学吉他。", speaker="10308", name="阿芳")
    await _seed(Scope("group", "30303"), "阿芳说她周末去爬山。", speaker="10308", name="阿芳")
    group_fact = await _seed(Scope("group", "30303"), "群30303周五聚餐。", speaker="10309", name="阿东")
    async with app.test_api() as ctx:
        bot, qq = await connect_bot(ctx, monkeypatch, BOT)
        await deliver(bot, private_message("/memory user clear", 10308, "阿芳"))
        assert "你在所有会话中的全部记忆" in qq.sent[-1] and "确认" in qq.sent[-1]
        assert "提到你" in qq.sent[-1]  # the question says what the answer will: others' rows naming you too
        assert await _count_of("10308") == 2
        await deliver(bot, private_message("确认", 10308, "阿芳"))
        assert qq.sent[-1].startswith("已删除你在所有会话中的全部记忆") and "记忆 2" in qq.sent[-1]
        assert await _count_of("10308") == 0 and await _active(group_fact)
        # a group's everything: its admins only, and never the bot's everything from a group
        await deliver(bot, group_message("/memory group clear", 30303, 10310, "成员", to_me=False))
        assert "管理员" in qq.sent[-1]
        await deliver(bot, group_message("/memory bot clear", 30303, 10311, "群主", role="owner", to_me=False))
        assert "机器人管理员" in qq.sent[-1]
        await deliver(bot, group_message("/memory group clear", 30303, 10311, "群主", role="owner", to_me=False))
        await deliver(bot, group_message("确认", 30303, 10311, "群主", role="owner", to_me=False))
        assert qq.sent[-1].startswith("已删除本群的全部记忆") and not await _active(group_fact)
    engine = await _engine()
    async with engine.session() as session:
        entries = await audit.entries(session, BOT, 10)
    recorded = [(entry.action, entry.actor, entry.target) for entry in entries]
    assert ("delete_all_user", "10308", "user:10308") in recorded
    assert ("delete_all_chat", "10311", "group:30303") in recorded


def _historian_answers(body: dict[str, Any]) -> dict[str, Any] | None:
    """The historian's model: one fact from whichever source the job holds (the chat model gets
    the default answer)."""
    if not any(tool.get("function", {}).get("name") == TOOL_NAME for tool in body.get("tools") or []):
        return None
    said = json.dumps(body.get("messages"), ensure_ascii=False)
    for cue, text in (
        ("北京", "QQ号10320（昵称小周）计划于2026-12-09去北京出差。"),
        ("豆豆", "QQ号10320（昵称小周）养了一只名叫豆豆的猫。"),
    ):
        if cue in said:
            return tool_call(TOOL_NAME, {"facts": [{"text": text, "sources": [1], "kind": "fact"}]})
    return None


async def test_show_tells_where_each_memory_made_in_chat_came_from(app: App, fake_openai, monkeypatch) -> None:
    """Facts the historian wrote from an ``end`` call and from a transcript batch, one the memory
    tool wrote and its correction: ``show`` names each one's source (it answered 记忆服务内部错误
    for every memory made in chat)."""
    await empty_job_queue()
    engine = await _engine()
    async with app.test_api() as ctx:
        bot, qq = await connect_bot(ctx, monkeypatch, BOT)
        fake_openai.responder = _historian_answers
        fake_openai.script.append(
            tool_call("end", {"memo": "小周下周三去北京", "observations": ["QQ号10320（昵称小周）下周三去北京出差"]})
        )
        await deliver(bot, group_message("我下周三要去北京出差", 30306, 10320, "小周"))
        await deliver(bot, group_message("我养了一只叫豆豆的猫", 30306, 10320, "小周"))  # no end: the transcript
        await engine.historian.run_until_idle()
        fake_openai.script.append(
            tool_call("cognition_memory_write", {"content": "QQ号10320（昵称小周）的工位在三楼。", "scope": "group"})
        )
        await deliver(bot, group_message("记一下，我的工位在三楼", 30306, 10320, "小周"))
        written = tool_results(fake_openai.chat_requests[-1])[-1]["memory_id"]
        fake_openai.script.append(
            tool_call(
                "cognition_memory_update", {"memory_id": written, "content": "QQ号10320（昵称小周）的工位在四楼。"}
            )
        )
        await deliver(bot, group_message("说错了，工位在四楼", 30306, 10320, "小周"))
        corrected = tool_results(fake_openai.chat_requests[-1])[-1]["memory_id"]
        query = select(MemoryRow).where(MemoryRow.bot_id == BOT, MemoryRow.scope_id == "30306")
        async with engine.session() as session:
            made = {row.text: (row.id, json.loads(row.source)) for row in (await session.execute(query)).scalars()}
        trip, trip_source = made["QQ号10320（昵称小周）计划于2026-12-09去北京出差。"]
        cat, cat_source = made["QQ号10320（昵称小周）养了一只名叫豆豆的猫。"]
        expected = {
            trip: ("有效", f"来源：推断，由史官整理（任务 #{trip_source['job']}，读的是本轮观察），来自 1 条消息"),
            cat: ("有效", f"来源：推断，由史官整理（任务 #{cat_source['job']}，读的是聊天记录），来自 1 条消息"),
            written: ("已被更正取代", "来源：对话中说的，由记忆工具写入，来自 1 条消息"),
            corrected: ("有效", "来源：对话中说的，"),  # what a correction's source holds is its own matter
        }
        for memory_id, (status, source) in expected.items():
            for event in (
                group_message(f"/memory group show {memory_id}", 30306, 10320, "小周", to_me=False),
                group_message(f"/memory user show {memory_id}", 30306, 10320, "小周", to_me=False),
                private_message(f"/memory user show {memory_id}", 10320, "小周"),
            ):
                await deliver(bot, event)
                shown = qq.sent[-1]
                assert shown.startswith(f"记忆 #{memory_id}（{status}）：") and source in shown, shown
        assert f"更正自 #{written}" in shown
