"""What one turn leaves behind (its ``end`` note, its transcript turn, the jobs made from it) and
what keeps it out or takes it away: a message that asks not to be remembered, a forget of a fact
drawn from that message."""

from __future__ import annotations

import json

import pytest
from engine_helpers import NOW, group, make_engine, new_bot
from sqlalchemy import select

from amrita_plugin_cognition.engine.context import build_context
from amrita_plugin_cognition.engine.inspection import export_user
from amrita_plugin_cognition.engine.turns import InputMessage
from amrita_plugin_cognition.errors import InvalidInput
from amrita_plugin_cognition.store.models import JobRow, NoteRow, TranscriptRow

#: The job queue and the transcript are one table each for every bot: empty before and after.
pytestmark = pytest.mark.usefixtures("clean_job_queue")


async def _rows(engine, model, bot: str) -> list:  # type: ignore[no-untyped-def]
    async with engine.session() as session:
        result = await session.execute(select(model).where(model.bot_id == bot).order_by(model.id))
        return list(result.scalars())


async def test_a_request_in_one_message_of_a_batch_withholds_the_whole_turn(tmp_root, chroma_port) -> None:
    """The memo and observations of ``end`` are not tied to messages: when one person of a batch
    asked not to be remembered, nothing of the turn is written, whoever else spoke in it."""
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    chat = group(bot, "30112", "10113", "小周")
    batch = [
        InputMessage("m1", "10113", "小周", "周末我去爬山", NOW),
        InputMessage("m2", "10114", "小吴", "我下周二面试的事你别记", NOW),
    ]
    memo, observations = "小周要去爬山，小吴下周二面试", ["QQ号10113（昵称小周）周末去爬山"]
    result = await engine.turns.end(chat, memo, observations, batch=batch, now=NOW)
    assert not result.note_written and result.queued == 0
    assert await _rows(engine, NoteRow, bot) == [] and await _rows(engine, JobRow, bot) == []
    assert result.withheld
    # the same turn without the request is remembered as usual
    result = await engine.turns.end(chat, "小周要去爬山", observations, batch=batch[:1], now=NOW)
    assert result.note_written and result.queued == 1


async def test_the_write_tool_refuses_what_the_message_asked_not_to_remember(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    chat = group(new_bot(), "30113", "10115", "阿强")
    with pytest.raises(InvalidInput) as refused:
        await engine.memories.write(
            chat, "user", "QQ号10115（昵称阿强）计划下周二去面试。", now=NOW, message_id="m9",
            said=["这个别记啊：我下周二要去面试"],
        )  # fmt: skip
    assert "不要记住" in refused.value.zh
    record = await engine.memories.write(
        chat, "user", "QQ号10115（昵称阿强）计划下周二去面试。", now=NOW, message_id="m10", said=["我下周二要去面试"]
    )
    assert record.source["messages"] == ["m10"]


async def _turn(engine, chat, message_id: str, text: str, reply: str, memo: str, observation: str) -> None:  # type: ignore[no-untyped-def]
    message = InputMessage(message_id, chat.user_id, chat.user_name, text, NOW)
    await engine.turns.end(chat, memo, [observation], batch=[message], now=NOW)
    await engine.turns.record(chat, message, reply, ended=True)


async def test_forgetting_a_fact_takes_the_note_turn_and_jobs_of_its_message(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    flower, wang = group(bot, "30201", "10201", "阿花"), group(bot, "30201", "10202", "小王")
    await _turn(engine, flower, "m1", "我最近在备考雅思，压力好大", "雅思加油！", "阿花说她在备考雅思",
                "QQ号10201（昵称阿花）在备考雅思")  # fmt: skip
    await _turn(
        engine, wang, "m2", "周末我去爬山", "爬山注意安全", "小王说周末去爬山", "QQ号10202（昵称小王）周末去爬山"
    )
    fact = await engine.memories.write(flower, "user", "QQ号10201（昵称阿花）在备考雅思。", now=NOW, message_id="m1")
    before = json.dumps(await export_user(engine, "10201", bot), ensure_ascii=False)
    assert before.count("雅思") >= 3  # the fact, the note and the transcript turn

    await engine.governance.forget(flower, fact.id, now=NOW)

    assert [note.content for note in await _rows(engine, NoteRow, bot)] == ["小王说周末去爬山"]
    assert [turn.message_id for turn in await _rows(engine, TranscriptRow, bot)] == ["m2"]
    (job,) = await _rows(engine, JobRow, bot)  # the end job of m1 went with it
    assert "雅思" not in job.payload and "爬山" in job.payload  # m2's job lost m1's turn from its context
    assert "雅思" not in json.dumps(await export_user(engine, "10201", bot), ensure_ascii=False)
    block = (await build_context(engine, wang, ["周末"], now=NOW)).text
    assert "雅思" not in block and "小王说周末去爬山" in block
    # the next job of the chat is not told of it either (the recent turns were read again)
    await engine.turns.end(wang, "", ["QQ号10202（昵称小王）周日去爬山"], batch=[], now=NOW)
    assert all("雅思" not in row.payload for row in await _rows(engine, JobRow, bot))


async def test_a_name_longer_than_its_column_is_cut_to_fit_on_every_backend(tmp_root, chroma_port) -> None:
    """A QQ group card may be longer than a name column (128): the note and the transcript turn
    are stored with the name cut to fit, where PostgreSQL refused the whole write before."""
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    name = "超长群名片" * 40  # 200 characters
    chat = group(bot, "30114", "10116", name)
    batch = [InputMessage("m1", "10116", name, "周末我去爬山", NOW)]
    result = await engine.turns.end(chat, "说周末去爬山", ["QQ号10116 周末去爬山"], batch=batch, now=NOW)
    assert result.note_written
    await engine.turns.record(chat, batch[0], "好呀", ended=True)
    (note,) = await _rows(engine, NoteRow, bot)
    (turn,) = await _rows(engine, TranscriptRow, bot)
    assert note.user_name == turn.user_name == name[:128]
