"""What one turn leaves behind (its ``end`` note, the jobs made from it) and what keeps it out: a
message that asks not to be remembered."""

from __future__ import annotations

import pytest
from engine_helpers import NOW, empty_job_queue, group, make_engine, new_bot
from sqlalchemy import select

from amrita_plugin_cognition.engine.turns import InputMessage
from amrita_plugin_cognition.errors import InvalidInput
from amrita_plugin_cognition.store.models import JobRow, NoteRow


@pytest.fixture(autouse=True)
async def _clean_queue():  # type: ignore[no-untyped-def]
    await empty_job_queue()
    yield
    await empty_job_queue()


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
    result = await engine.end_turn(chat, memo, observations, batch=batch, now=NOW)
    assert not result.note_written and result.queued == 0
    assert await _rows(engine, NoteRow, bot) == [] and await _rows(engine, JobRow, bot) == []
    assert result.withheld
    # the same turn without the request is remembered as usual
    result = await engine.end_turn(chat, "小周要去爬山", observations, batch=batch[:1], now=NOW)
    assert result.note_written and result.queued == 1


async def test_the_write_tool_refuses_what_the_message_asked_not_to_remember(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    chat = group(new_bot(), "30113", "10115", "阿强")
    with pytest.raises(InvalidInput) as refused:
        await engine.write_memory(
            chat, "user", "QQ号10115（昵称阿强）计划下周二去面试。", now=NOW, message_id="m9",
            said=["这个别记啊：我下周二要去面试"],
        )  # fmt: skip
    assert "不要记住" in refused.value.zh
    record = await engine.write_memory(
        chat, "user", "QQ号10115（昵称阿强）计划下周二去面试。", now=NOW, message_id="m10", said=["我下周二要去面试"]
    )
    assert record.source["messages"] == ["m10"]
