"""A deletion from chat runs only on the same user's own yes in a later message, judged by the
plugin from the message text, never on the model's ``confirmed=true`` alone. Driven through the
real Amrita chat flow (nonebug), the model scripted to confirm anyway: after ``/memory group
delete N`` (a command asked) and after the delete tool's ``needs_confirmation`` (the model asked)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from chat_helpers import SELF_ID, connect_bot, deliver, group_message, memory_engine, private_message, tool_results
from fake_openai import tool_call
from nonebug import App
from sqlalchemy import func, select

from amrita_plugin_cognition.domain.records import MemoryDraft, Scope
from amrita_plugin_cognition.store.models import MemoryRow

pytestmark = pytest.mark.chatflow

BOT = str(SELF_ID)
CANCELLED = "已取消，没有删除任何内容"
DELETE = "cognition_memory_delete"


async def _seed(scope: Scope, text: str, speaker: str, name: str = "用户") -> int:
    engine = await memory_engine()
    result = await engine.memories.remember(
        BOT, [MemoryDraft(text=text, scope=scope, speaker_id=speaker, speaker_name=name)]
    )
    await engine.index.drain()
    return result.record_ids[0]


async def _active(memory_id: int) -> bool:
    engine = await memory_engine()
    async with engine.session() as session:
        row = await session.get(MemoryRow, memory_id)
    return row is not None and row.status == "active"


async def _count_of(user_id: str) -> int:
    engine = await memory_engine()
    async with engine.session() as session:
        query = (
            select(func.count()).select_from(MemoryRow).where(MemoryRow.bot_id == BOT, MemoryRow.speaker_id == user_id)
        )
        return int((await session.execute(query)).scalar_one())


def _confirm_anyway(fake_openai: Any, memory_id: int) -> None:
    """The model calls ``confirmed=true`` whatever the user wrote (if it is asked at all)."""
    fake_openai.reset()
    fake_openai.script.append(tool_call(DELETE, {"memory_id": memory_id, "confirmed": True}, "confirm"))


def _model_was_asked(fake_openai: Any) -> bool:
    return bool(fake_openai.chat_requests)


def _last_tool_result(fake_openai: Any) -> dict[str, Any]:
    return tool_results(fake_openai.chat_requests[-1])[-1]


def _waits(user_id: int, group_id: int | None = None) -> bool:
    from amrita_plugin_cognition.bot.confirmations import CONFIRMATIONS

    scope = f"group:{group_id}" if group_id is not None else f"private:{user_id}"
    return CONFIRMATIONS.waiting(f"{BOT}|{scope}|{user_id}") is not None


@pytest.fixture
def later(monkeypatch):  # type: ignore[no-untyped-def]
    """Moves the confirmations' clock forward instead of waiting out the time limit."""
    from amrita_plugin_cognition.bot.confirmations import CONFIRMATIONS

    offset = [0.0]
    monkeypatch.setattr(CONFIRMATIONS, "clock", lambda: time.monotonic() + offset[0], raising=False)

    def advance(seconds: float) -> None:
        offset[0] += seconds

    return advance


# ------------------------------------------------------------------------------ a command asked


async def _command_asks(bot, qq, fact: int, group: int, user: int, name: str) -> None:  # type: ignore[no-untyped-def]
    await deliver(bot, group_message(f"/memory group delete {fact}", group, user, name, to_me=False))
    assert f"将删除记忆 #{fact}" in qq.sent[-1] and "确认" in qq.sent[-1]


async def test_a_no_cancels_a_commands_forget(app: App, fake_openai, monkeypatch) -> None:
    fact = await _seed(Scope("group", "30401"), "群30401每周五晚上打羽毛球。", speaker="10401", name="阿明")
    async with app.test_api() as ctx:
        bot, qq = await connect_bot(ctx, monkeypatch, BOT)
        await _command_asks(bot, qq, fact, 30401, 10401, "阿明")
        _confirm_anyway(fake_openai, fact)
        await deliver(bot, group_message("不不不，别删", 30401, 10401, "阿明"))
        assert await _active(fact) and qq.sent[-1] == CANCELLED
        assert not _model_was_asked(fake_openai)  # the answer was all the message said
        # nothing waits any more: a yes now confirms nothing, and the model's flag is refused
        _confirm_anyway(fake_openai, fact)
        await deliver(bot, group_message("确认", 30401, 10401, "阿明"))
        refused = _last_tool_result(fake_openai)
        assert refused["ok"] is False and "拒绝" in refused["error"]
        assert await _active(fact)
        # a no with other talk cancels too, and the rest goes on to the chat
        await _command_asks(bot, qq, fact, 30401, 10401, "阿明")
        _confirm_anyway(fake_openai, fact)
        await deliver(bot, group_message("别删，我还得靠它记时间呢", 30401, 10401, "阿明"))
        assert CANCELLED in qq.sent and _model_was_asked(fake_openai)
        assert _last_tool_result(fake_openai)["ok"] is False and await _active(fact)


async def test_other_words_keep_a_commands_forget_waiting_until_it_expires(
    app: App, fake_openai, monkeypatch, later
) -> None:
    fact = await _seed(Scope("group", "30402"), "群30402的群费每月二十元。", speaker="10403", name="阿强")
    async with app.test_api() as ctx:
        bot, qq = await connect_bot(ctx, monkeypatch, BOT)
        await _command_asks(bot, qq, fact, 30402, 10403, "阿强")
        for words in ("今天中午吃了牛肉面", "删了能恢复吗", "嗯"):
            _confirm_anyway(fake_openai, fact)
            await deliver(bot, group_message(words, 30402, 10403, "阿强"))
            refused = _last_tool_result(fake_openai)
            assert await _active(fact) and _waits(10403, 30402), words
            assert refused["ok"] is False and "没有明确同意" in refused["error"], words
        later(61)
        assert not _waits(10403, 30402)
        _confirm_anyway(fake_openai, fact)
        await deliver(bot, group_message("确认", 30402, 10403, "阿强"))
        assert await _active(fact)
        assert "超时" in qq.sent[-1] and not _model_was_asked(fake_openai)


async def test_a_yes_from_another_user_confirms_nothing(app: App, fake_openai, monkeypatch) -> None:
    fact = await _seed(Scope("group", "30403"), "群30403的群主是阿花。", speaker="10405", name="阿花")
    async with app.test_api() as ctx:
        bot, qq = await connect_bot(ctx, monkeypatch, BOT)
        await _command_asks(bot, qq, fact, 30403, 10405, "阿花")
        for words in ("确认", "好的删吧"):
            _confirm_anyway(fake_openai, fact)
            await deliver(bot, group_message(words, 30403, 10406, "路人"))
            assert _last_tool_result(fake_openai)["ok"] is False and await _active(fact)
        # the asker's own yes in a later message deletes, answered by the plugin itself
        _confirm_anyway(fake_openai, fact)
        await deliver(bot, group_message("好的，删吧", 30403, 10405, "阿花"))
        assert qq.sent[-1] == f"已删除记忆 #{fact}，之后不会再被记起"
        assert not await _active(fact) and not _model_was_asked(fake_openai)


async def test_a_yes_with_other_talk_runs_a_commands_forget_and_the_rest_reaches_the_chat(
    app: App, fake_openai, monkeypatch
) -> None:
    fact = await _seed(Scope("group", "30404"), "群30404每周日爬山。", speaker="10407", name="阿亮")
    async with app.test_api() as ctx:
        bot, qq = await connect_bot(ctx, monkeypatch, BOT)
        await _command_asks(bot, qq, fact, 30404, 10407, "阿亮")
        _confirm_anyway(fake_openai, fact)
        await deliver(bot, group_message("确认删除，另外我下周三请假", 30404, 10407, "阿亮"))
        assert f"已删除记忆 #{fact}，之后不会再被记起" in qq.sent and not await _active(fact)
        assert "下周三请假" in str(fake_openai.chat_requests[0]["messages"])  # the chat answers the rest
        done = _last_tool_result(fake_openai)
        assert done["ok"] is True and done["deleted"] == fact  # told what the plugin did, not an error


async def test_a_no_cancels_a_delete_all(app: App, fake_openai, monkeypatch) -> None:
    await _seed(Scope("private", "10409"), "阿芬在学钢琴。", speaker="10409", name="阿芬")
    await _seed(Scope("group", "30405"), "阿芬说她周末去爬山。", speaker="10409", name="阿芬")
    async with app.test_api() as ctx:
        bot, qq = await connect_bot(ctx, monkeypatch, BOT)
        await deliver(bot, private_message("/memory user clear", 10409, "阿芬"))
        assert "全部记忆" in qq.sent[-1]
        await deliver(bot, private_message("不要", 10409, "阿芬"))
        fake_openai.reset()
        await deliver(bot, private_message("确认", 10409, "阿芬"))  # nothing waits: an ordinary message
        assert await _count_of("10409") == 2 and _model_was_asked(fake_openai)
        assert qq.sent[-2] == CANCELLED
        # and a yes still clears, on the user's own word
        await deliver(bot, private_message("/memory user clear", 10409, "阿芬"))
        await deliver(bot, private_message("确认删除", 10409, "阿芬"))
        assert qq.sent[-1].startswith("已删除你在所有会话中的全部记忆") and await _count_of("10409") == 0


# --------------------------------------------------------------------------------- the model asked


async def _tool_asks(bot, fake_openai, fact: int, event) -> None:  # type: ignore[no-untyped-def]
    fake_openai.reset()
    fake_openai.script.append(tool_call(DELETE, {"memory_id": fact}, "ask"))
    await deliver(bot, event)
    asked = _last_tool_result(fake_openai)
    assert asked["ok"] is True and asked["needs_confirmation"] is True
    assert await _active(fact)


async def test_a_no_cancels_the_tools_forget(app: App, fake_openai, monkeypatch) -> None:
    fact = await _seed(Scope("group", "30411"), "阿杰在准备考公。", speaker="10411", name="阿杰")
    async with app.test_api() as ctx:
        bot, qq = await connect_bot(ctx, monkeypatch, BOT)
        await _tool_asks(bot, fake_openai, fact, group_message("把考公那条忘了吧", 30411, 10411, "阿杰"))
        _confirm_anyway(fake_openai, fact)
        await deliver(bot, group_message("不不不，别删", 30411, 10411, "阿杰"))
        assert await _active(fact) and qq.sent[-1] == CANCELLED and not _model_was_asked(fake_openai)
        # with other talk: cancelled at once, and the model's confirmation that follows is refused
        await _tool_asks(bot, fake_openai, fact, group_message("还是把考公那条删了吧", 30411, 10411, "阿杰"))
        _confirm_anyway(fake_openai, fact)
        await deliver(bot, group_message("算了别删，我还要拿它提醒自己", 30411, 10411, "阿杰"))
        assert CANCELLED in qq.sent
        refused = _last_tool_result(fake_openai)
        assert refused["ok"] is False and "拒绝" in refused["error"] and await _active(fact)


async def test_other_words_keep_the_tools_forget_waiting_until_it_expires(
    app: App, fake_openai, monkeypatch, later
) -> None:
    fact = await _seed(Scope("private", "10413"), "阿伟在学日语。", speaker="10413", name="阿伟")
    async with app.test_api() as ctx:
        bot, qq = await connect_bot(ctx, monkeypatch, BOT)
        await _tool_asks(bot, fake_openai, fact, private_message("把学日语那条删掉", 10413, "阿伟"))
        for words in ("我今天去图书馆了", "删了还能找回来吗？", "我再想想"):
            _confirm_anyway(fake_openai, fact)
            await deliver(bot, private_message(words, 10413, "阿伟"))
            refused = _last_tool_result(fake_openai)
            assert await _active(fact) and _waits(10413), words
            assert refused["ok"] is False and "没有明确同意" in refused["error"], words
        later(61)
        # too late: a bare yes is told so by the plugin, a yes with other talk also goes on to the model
        _confirm_anyway(fake_openai, fact)
        await deliver(bot, private_message("删吧", 10413, "阿伟"))
        assert "超时" in qq.sent[-1] and not _model_was_asked(fake_openai) and await _active(fact)
        _confirm_anyway(fake_openai, fact)
        await deliver(bot, private_message("好的删吧，刚才在忙", 10413, "阿伟"))
        refused = _last_tool_result(fake_openai)
        assert refused["ok"] is False and "超时" in refused["error"] and await _active(fact)


async def test_a_yes_after_the_time_limit_deletes_nothing(app: App, fake_openai, monkeypatch, later) -> None:
    fact = await _seed(Scope("group", "30412"), "阿雪下个月搬家。", speaker="10414", name="阿雪")
    async with app.test_api() as ctx:
        bot, qq = await connect_bot(ctx, monkeypatch, BOT)
        await _tool_asks(bot, fake_openai, fact, group_message("搬家那条别记了，删掉", 30412, 10414, "阿雪"))
        later(50)
        assert _waits(10414, 30412)  # still within the limit
        later(11)
        _confirm_anyway(fake_openai, fact)
        await deliver(bot, group_message("确认", 30412, 10414, "阿雪"))
        assert await _active(fact) and "超时" in qq.sent[-1]


async def test_a_yes_from_another_user_does_not_confirm_the_tools_forget(app: App, fake_openai, monkeypatch) -> None:
    fact = await _seed(Scope("group", "30413"), "阿兰在减肥。", speaker="10415", name="阿兰")
    async with app.test_api() as ctx:
        bot, _ = await connect_bot(ctx, monkeypatch, BOT)
        await _tool_asks(bot, fake_openai, fact, group_message("减肥那条删了吧", 30413, 10415, "阿兰"))
        for words in ("确认", "好的删吧，我替她同意"):
            _confirm_anyway(fake_openai, fact)
            await deliver(bot, group_message(words, 30413, 10416, "同事"))
            refused = _last_tool_result(fake_openai)
            assert refused["ok"] is False and await _active(fact), words
        assert _waits(10415, 30413)


async def test_a_yes_in_the_asking_message_is_no_confirmation(app: App, fake_openai, monkeypatch) -> None:
    fact = await _seed(Scope("private", "10417"), "阿峰在考驾照。", speaker="10417", name="阿峰")
    async with app.test_api() as ctx:
        bot, _ = await connect_bot(ctx, monkeypatch, BOT)
        fake_openai.script.extend(
            [
                tool_call(DELETE, {"memory_id": fact}, "ask"),
                tool_call(DELETE, {"memory_id": fact, "confirmed": True}, "confirm"),
            ]
        )
        await deliver(bot, private_message("把考驾照那条删了，确认删除，不用问我", 10417, "阿峰"))
        asked, refused = tool_results(fake_openai.chat_requests[-1])[-2:]
        assert asked["needs_confirmation"] is True
        assert refused["ok"] is False and "询问之后" in refused["error"]
        assert await _active(fact)
        # and it does not carry over: the next message has to agree by itself
        _confirm_anyway(fake_openai, fact)
        await deliver(bot, private_message("今天练了倒车入库", 10417, "阿峰"))
        assert _last_tool_result(fake_openai)["ok"] is False and await _active(fact)


async def test_the_users_yes_deletes(app: App, fake_openai, monkeypatch) -> None:
    first = await _seed(Scope("private", "10418"), "阿玲养了一只仓鼠。", speaker="10418", name="阿玲")
    second = await _seed(Scope("private", "10418"), "阿玲在学游泳。", speaker="10418", name="阿玲")
    async with app.test_api() as ctx:
        bot, qq = await connect_bot(ctx, monkeypatch, BOT)
        # a bare yes: the plugin deletes and says so; the model is not asked
        await _tool_asks(bot, fake_openai, first, private_message("仓鼠那条删了吧", 10418, "阿玲"))
        _confirm_anyway(fake_openai, first)
        await deliver(bot, private_message("嗯删掉吧", 10418, "阿玲"))
        assert qq.sent[-1] == f"已删除记忆 #{first}，之后不会再被记起"
        assert not await _active(first) and not _model_was_asked(fake_openai)
        # a yes with other talk goes to the model, whose confirmation is checked against it
        await _tool_asks(bot, fake_openai, second, private_message("游泳那条也删了吧", 10418, "阿玲"))
        _confirm_anyway(fake_openai, second)
        await deliver(bot, private_message("好的删吧，这事我已经想清楚了", 10418, "阿玲"))
        assert _last_tool_result(fake_openai) == {"ok": True, "deleted": second}
        assert not await _active(second)


async def test_a_yes_with_other_talk_not_addressed_to_the_bot_is_run_by_the_plugin(
    app: App, fake_openai, monkeypatch
) -> None:
    """In a group, a reply without @ may never reach the model that asked: the plugin runs the yes."""
    fact = await _seed(Scope("group", "30414"), "阿凯周末去钓鱼。", speaker="10420", name="阿凯")
    async with app.test_api() as ctx:
        bot, qq = await connect_bot(ctx, monkeypatch, BOT)
        await _tool_asks(bot, fake_openai, fact, group_message("钓鱼那条删了吧", 30414, 10420, "阿凯"))
        fake_openai.reset()
        await deliver(bot, group_message("好的删吧，这事已经过去了", 30414, 10420, "阿凯", to_me=False))
        assert qq.sent[-1] == f"已删除记忆 #{fact}，之后不会再被记起" and not await _active(fact)


# ------------------------------------------------------------------- Amrita batches a turn's messages


async def _deliver_batch(bot, first, second) -> None:  # type: ignore[no-untyped-def]
    async def after_a_moment() -> None:
        await asyncio.sleep(0.2)
        await deliver(bot, second)

    await asyncio.gather(deliver(bot, first), after_a_moment())


async def test_every_message_of_a_batched_turn_is_judged(app: App, fake_openai, monkeypatch) -> None:
    """With Amrita's debounce window the turn's event is the batch's first message; each message
    was judged on arrival, and the tool reads the user's words from that first message on."""
    from amrita.plugins.chat.config import config_manager

    # the second message comes 0.2 s after the first: a wide margin on a busy machine
    monkeypatch.setattr(config_manager.config.function, "chat_debounce_window", 2.0)
    facts = [
        await _seed(Scope("private", "10419"), text, speaker="10419", name="阿敏")
        for text in ("阿敏在学吉他。", "阿敏每周三加班。", "阿敏喜欢喝奶茶。")
    ]
    async with app.test_api() as ctx:
        bot, qq = await connect_bot(ctx, monkeypatch, BOT)

        def said(text: str):  # type: ignore[no-untyped-def]
            return private_message(text, 10419, "阿敏")

        # a no in the second message of the batch cancels at once; the model's flag is refused
        await _tool_asks(bot, fake_openai, facts[0], said("吉他那条删了吧"))
        _confirm_anyway(fake_openai, facts[0])
        await _deliver_batch(bot, said("等一下"), said("不不不别删，我还要用它"))
        # one turn for both messages: every request of it holds the second one too
        assert all("不不不别删" in str(request["messages"]) for request in fake_openai.chat_requests)
        assert await _active(facts[0])
        assert CANCELLED in qq.sent and _last_tool_result(fake_openai)["ok"] is False
        # a yes in the second message counts (it was said after the question, by the same user)
        await _tool_asks(bot, fake_openai, facts[1], said("加班那条删了吧"))
        _confirm_anyway(fake_openai, facts[1])
        await _deliver_batch(bot, said("嗯…"), said("好的删吧，我想清楚了"))
        assert _last_tool_result(fake_openai) == {"ok": True, "deleted": facts[1]}
        assert not await _active(facts[1])
        # a question after the yes holds it back
        await _tool_asks(bot, fake_openai, facts[2], said("奶茶那条删了吧"))
        _confirm_anyway(fake_openai, facts[2])
        await _deliver_batch(bot, said("好的删吧，我想清楚了"), said("等等，删了还能恢复吗"))
        refused = _last_tool_result(fake_openai)
        assert refused["ok"] is False and "没有明确同意" in refused["error"]
        assert await _active(facts[2]) and _waits(10419)
