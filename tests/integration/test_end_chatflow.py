"""The ``end`` tool and transcript capture inside the real Amrita chat flow (nonebug), with the
fake OpenAI-compatible server as the chat model and as the historian's model."""

from __future__ import annotations

import asyncio
import json

import pytest
from chat_helpers import (
    connect_bot,
    deliver,
    group_message,
    memory_engine,
    private_message,
    system_text,
    tool_results,
)
from engine_helpers import empty_job_queue, group
from fake_openai import FINAL_TEXT, tool_call
from nonebug import App
from sqlalchemy import select

from amrita_plugin_cognition.engine.historian import TOOL_NAME
from amrita_plugin_cognition.engine.inspection import export_user
from amrita_plugin_cognition.store.models import JobRow, MemoRow, MemoryRow, NoteRow, PinRow, ProfileRow, TranscriptRow

pytestmark = pytest.mark.chatflow

BOT = "42"


_engine = memory_engine


@pytest.fixture(autouse=True)
async def _empty_queue():  # type: ignore[no-untyped-def]
    await empty_job_queue()


async def _bot(ctx, monkeypatch):  # type: ignore[no-untyped-def]
    return await connect_bot(ctx, monkeypatch, BOT)


async def _rows(model, *where):  # type: ignore[no-untyped-def]
    engine = await _engine()
    async with engine.session() as session:
        return list((await session.execute(select(model).where(*where).order_by(model.id))).scalars())


async def test_end_notes_the_turn_queues_its_observations_and_the_historian_writes_them(
    app: App, fake_openai, monkeypatch
) -> None:
    fake_openai.script.append(
        tool_call(
            "end",
            {"memo": "小明说明天去杭州出差", "observations": ["QQ号10001（昵称小明）明天要去杭州出差"]},
        )
    )
    async with app.test_api() as ctx:
        bot, qq = await _bot(ctx, monkeypatch)
        await deliver(bot, group_message("我明天要去杭州出差啦", 30101, 10001, "小明"))
        assert FINAL_TEXT in qq.sent  # the reply follows as usual
        result = tool_results(fake_openai.chat_requests[-1])[-1]
        assert result["ok"] is True and result["noted"] is True and result["observations"] == 1
        assert "不要再调用任何工具" in result["next"]  # the agent loop was told to stop, as agent_stop does
        (job,) = await _rows(JobRow, JobRow.scope_id == "30101")
        payload = json.loads(job.payload)
        assert payload["batch"][0]["text"] == "我明天要去杭州出差啦" and payload["speaker"]["id"] == "10001"
        # the turn is in the transcript, but it will not be extracted a second time
        (turn,) = await _rows(TranscriptRow, TranscriptRow.scope_id == "30101")
        assert turn.pending is False and turn.reply_text == FINAL_TEXT

        fake_openai.reset()
        engine = await _engine()
        planned = {"text": "QQ号10001（昵称小明）计划于2026-12-02去杭州出差。", "sources": [1], "kind": "plan"}
        fake_openai.script.append(tool_call(TOOL_NAME, {"facts": [planned]}))
        await engine.historian.run_until_idle()
        (fact,) = await _rows(MemoryRow, MemoryRow.bot_id == BOT, MemoryRow.scope_id == "30101")
        assert fact.provenance == "inferred" and fact.text.startswith("QQ号10001")

        # the next turn sees the note (with its time) and the fact
        fake_openai.reset()
        await deliver(bot, group_message("出差要带什么", 30101, 10001, "小明"))
        system = system_text(fake_openai.chat_requests[0])
        assert "小明说明天去杭州出差" in system and "计划于2026-12-02去杭州出差" in system


async def test_a_turn_that_calls_end_costs_no_more_model_rounds_than_one_without(
    app: App, fake_openai, monkeypatch
) -> None:
    """Amrita's default tool loop asks the model again after any tool; after ``end`` it does not:
    the tool round, then the completion that answers (with ``end``'s result in its context)."""
    fake_openai.script.append(tool_call("end", {"memo": "小明说明天去杭州出差", "observations": []}))
    async with app.test_api() as ctx:
        bot, qq = await _bot(ctx, monkeypatch)
        await deliver(bot, group_message("我明天要去杭州出差啦", 30101, 10001, "小明"))
        assert FINAL_TEXT in qq.sent
        ended = list(fake_openai.chat_requests)
        fake_openai.reset()
        await deliver(bot, group_message("今天天气不错", 30101, 10001, "小明"))
        plain = list(fake_openai.chat_requests)
    assert len(ended) == len(plain) == 2
    tool_round, completion = ended
    assert "end" in {tool["function"]["name"] for tool in tool_round.get("tools") or []}
    assert not completion.get("tools")  # the answer, not another tool round
    assert tool_results(completion)[-1]["noted"] is True


async def test_a_turn_without_end_waits_in_the_transcript(app: App, fake_openai, monkeypatch) -> None:
    async with app.test_api() as ctx:
        bot, _ = await _bot(ctx, monkeypatch)
        await deliver(bot, private_message("我养了一只叫豆豆的猫", 10102, "小红"))
    (turn,) = await _rows(TranscriptRow, TranscriptRow.scope_id == "10102")
    assert turn.pending is True and turn.input_text == "我养了一只叫豆豆的猫"


async def test_end_with_nothing_writes_nothing(app: App, fake_openai, monkeypatch) -> None:
    fake_openai.script.append(tool_call("end", {"memo": "", "observations": []}))
    async with app.test_api() as ctx:
        bot, _ = await _bot(ctx, monkeypatch)
        await deliver(bot, group_message("哈哈哈", 30103, 10001, "小明"))
    result = tool_results(fake_openai.chat_requests[-1])[-1]
    assert result["ok"] is True and result["noted"] is False and result["observations"] == 0
    assert await _rows(JobRow, JobRow.scope_id == "30103") == []


async def test_a_message_that_asks_not_to_be_remembered_keeps_everything_of_its_turn_out(
    app: App, fake_openai, monkeypatch
) -> None:
    """The model ignores the request: it writes the plan with the write tool, the memo and a pin,
    and puts it into ``end``'s memo and observations anyway. The message's own words refuse all
    of it."""
    said = "这个别记啊：我下周二要去面试，紧张死了"
    engine = await _engine()
    earlier = await engine.memories.write(
        group(BOT, "30111", "10111", "阿强"), "user", "QQ号10111（昵称阿强）在找工作。"
    )
    fake_openai.script.extend(
        [
            tool_call(
                "cognition_memory_write", {"scope": "user", "content": "QQ号10111（昵称阿强）计划下周二去面试。"}
            ),
            tool_call("cognition_memo_append", {"content": "阿强下周二要去面试"}, "call_m"),
            tool_call("cognition_pin_add", {"content": "提醒阿强下周二面试"}, "call_p"),
            tool_call(
                "cognition_memory_update",
                {"memory_id": earlier.id, "content": "QQ号10111（昵称阿强）在找工作，下周二去面试。"},
                "call_u",
            ),
            tool_call(
                "end",
                {"memo": "阿强说他下周二要去面试", "observations": ["QQ号10111（昵称阿强）下周二要去面试"]},
                "call_2",
            ),
        ]
    )
    async with app.test_api() as ctx:
        bot, qq = await _bot(ctx, monkeypatch)
        await deliver(bot, group_message(said, 30111, 10111, "阿强"))
        assert FINAL_TEXT in qq.sent  # the reply goes on
        written, memo, pin, corrected, ended = tool_results(fake_openai.chat_requests[-1])[-5:]
        for refused in (written, memo, pin, corrected):
            assert refused["ok"] is False and "不要记住" in refused["error"], refused
        assert await _rows(MemoRow, MemoRow.bot_id == BOT, MemoRow.scope_id == "30111") == []
        assert await _rows(PinRow, PinRow.bot_id == BOT, PinRow.scope_id == "30111") == []
        assert ended["ok"] is True and ended["noted"] is False and ended["observations"] == 0
        assert "没有记录" in ended["note"] and not ended["next"].startswith("已记下")
        # no note, no job, no transcript turn, no fact
        assert await _rows(NoteRow, NoteRow.bot_id == BOT, NoteRow.scope_id == "30111") == []
        assert await _rows(JobRow) == []
        assert await _rows(TranscriptRow, TranscriptRow.scope_id == "30111") == []
        # the historian has nothing to do: no model call, no fact, no card merged
        fake_openai.reset()
        await (await _engine()).historian.run_until_idle()
        assert fake_openai.chat_requests == []
        assert await _rows(MemoryRow, MemoryRow.bot_id == BOT, MemoryRow.text.contains("面试")) == []
        (kept,) = await _rows(MemoryRow, MemoryRow.id == earlier.id)  # the correction did not supersede it
        assert kept.status == "active" and kept.superseded_by is None
        assert await _rows(ProfileRow, ProfileRow.bot_id == BOT, ProfileRow.body.contains("面试")) == []
        # someone else's next turn in the group is told nothing of it
        fake_openai.reset()
        await deliver(bot, group_message("周二大家都有什么安排", 30111, 10112, "小李"))
        system = system_text(fake_openai.chat_requests[0])
        assert "面试" not in system


async def test_forgetting_a_fact_takes_the_note_and_the_message_it_came_from(
    app: App, fake_openai, monkeypatch
) -> None:
    said = "我最近在备考雅思，压力好大"
    fake_openai.script.append(
        tool_call("end", {"memo": "阿花说她在备考雅思", "observations": ["QQ号10121（昵称阿花）在备考雅思"]})
    )
    async with app.test_api() as ctx:
        bot, qq = await _bot(ctx, monkeypatch)
        await deliver(bot, group_message(said, 30121, 10121, "阿花"))
        fake_openai.script.append(
            tool_call("end", {"memo": "小王说周末去爬山", "observations": ["QQ号10122（昵称小王）周末去爬山"]})
        )
        await deliver(bot, group_message("周末我去爬山", 30121, 10122, "小王"))
        fake_openai.reset()
        fake_openai.script.extend(
            [
                tool_call(TOOL_NAME, {"facts": [{"text": "QQ号10121（昵称阿花）在备考雅思。", "sources": [1]}]}),
                tool_call(TOOL_NAME, {"facts": [{"text": "QQ号10122（昵称小王）周末去爬山。", "sources": [1]}]}),
            ]
        )
        engine = await _engine()
        await engine.historian.run_until_idle()
        (fact,) = await _rows(
            MemoryRow, MemoryRow.bot_id == BOT, MemoryRow.scope_id == "30121", MemoryRow.text.contains("雅思")
        )
        assert said in json.dumps(await export_user(engine, "10121", BOT), ensure_ascii=False)

        await deliver(bot, group_message(f"/memory user delete {fact.id}", 30121, 10121, "阿花", to_me=False))
        await deliver(bot, group_message("确认", 30121, 10121, "阿花", to_me=False))
        assert "已删除" in qq.sent[-1]

        # the next turn (anyone's) is not told of it: neither the fact nor the turn's note
        fake_openai.reset()
        await deliver(bot, group_message("周末谁有空", 30121, 10122, "小王"))
        system = system_text(fake_openai.chat_requests[0])
        assert "雅思" not in system and "小王说周末去爬山" in system
        exported = json.dumps(await export_user(engine, "10121", BOT), ensure_ascii=False)
        assert "雅思" not in exported and said not in exported


async def _deliver_batch(bot, *events) -> None:  # type: ignore[no-untyped-def]
    """Messages a moment apart: Amrita's debounce window makes them one turn."""

    async def after(delay: float, event) -> None:  # type: ignore[no-untyped-def]
        await asyncio.sleep(delay)
        await deliver(bot, event)

    await asyncio.gather(*(after(0.2 * index, event) for index, event in enumerate(events)))


@pytest.mark.parametrize("asked_in", [0, 1], ids=["first-message", "second-message"])
async def test_a_request_not_to_remember_anywhere_in_a_batched_turn_withholds_it(
    app: App, fake_openai, monkeypatch, asked_in: int
) -> None:
    from amrita.plugins.chat.config import config_manager

    monkeypatch.setattr(config_manager.config.function, "chat_debounce_window", 0.8)
    chat = str(38721 + asked_in)
    texts = ["周末我去爬山", "刚才那句别记啊"] if asked_in else ["这个别记啊：", "我下周二要去面试"]
    fake_openai.script.extend(
        [
            tool_call("cognition_memory_write", {"scope": "user", "content": "QQ号10872（昵称阿苗）有个安排。"}),
            tool_call("end", {"memo": "阿苗说了安排", "observations": ["QQ号10872（昵称阿苗）有个安排"]}, "call_e"),
        ]
    )
    async with app.test_api() as ctx:
        bot, qq = await _bot(ctx, monkeypatch)
        await _deliver_batch(bot, *(group_message(text, int(chat), 10872, "阿苗") for text in texts))
        assert qq.sent.count(FINAL_TEXT) == 1  # one reply for the batch
        assert all(texts[1] in str(request["messages"]) for request in fake_openai.chat_requests)  # one turn
        written, ended = tool_results(fake_openai.chat_requests[-1])[-2:]
        assert written["ok"] is False and "不要记住" in written["error"], written
        assert ended["ok"] is True and ended["noted"] is False and "没有记录" in ended["note"]
        assert await _rows(NoteRow, NoteRow.scope_id == chat) == []
        assert await _rows(TranscriptRow, TranscriptRow.scope_id == chat) == []
        assert await _rows(MemoryRow, MemoryRow.scope_id == chat) == []
    assert await _rows(JobRow) == []


async def test_every_message_of_a_batched_turn_reaches_end_and_the_transcript(
    app: App, fake_openai, monkeypatch
) -> None:
    from amrita.plugins.chat.config import config_manager

    monkeypatch.setattr(config_manager.config.function, "chat_debounce_window", 0.8)
    texts = ["我下个月要搬去杭州了", "新公司在西湖区"]
    async with app.test_api() as ctx:
        bot, _ = await _bot(ctx, monkeypatch)
        # a turn without end: its transcript turn holds every message of the batch
        await _deliver_batch(bot, *(group_message(text, 38723, 10873, "阿岳") for text in texts))
        (turn,) = await _rows(TranscriptRow, TranscriptRow.scope_id == "38723")
        assert all(text in turn.input_text for text in texts) and turn.input_text.index(texts[1]) > 0
        # a turn with end: its job carries every message of the batch and all their ids
        fake_openai.script.append(
            tool_call("end", {"memo": "阿岳说了新住处", "observations": ["QQ号10874（昵称阿川）要搬去杭州"]})
        )
        events = [group_message(text, 38724, 10874, "阿川") for text in texts]
        await _deliver_batch(bot, *events)
        (job,) = await _rows(JobRow, JobRow.scope_id == "38724")
        payload = json.loads(job.payload)
        assert [message["text"] for message in payload["batch"]] == texts
        assert payload["message_ids"] == [str(event.message_id) for event in events]
