"""No cache outlives a change made by another process: two engines on one database stand for the
bot and the CLI. Engine B erases a user; engine A's next ``end`` job, its next turn and its
historian's prompts hold nothing of them."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from engine_helpers import NOW, group, historian_llm, make_engine, new_bot
from fake_openai import FakeOpenAI, tool_call
from sqlalchemy import select

from amrita_plugin_cognition.domain.erasure import ErasureTarget
from amrita_plugin_cognition.domain.permissions import Operator
from amrita_plugin_cognition.engine import erasure
from amrita_plugin_cognition.engine.context import build_context
from amrita_plugin_cognition.engine.freshness import POLL_SECONDS
from amrita_plugin_cognition.engine.historian import TOOL_NAME
from amrita_plugin_cognition.engine.turns import InputMessage
from amrita_plugin_cognition.store.models import JobRow

PRESET = "cognition-freshness-test"
SECRET = "蓝色海豚"


#: The job queue and the transcript are one table each for every bot: empty before and after.
pytestmark = pytest.mark.usefixtures("clean_job_queue")


async def _payloads(engine, bot: str) -> list[str]:  # type: ignore[no-untyped-def]
    async with engine.session() as session:
        rows = await session.execute(select(JobRow.payload).where(JobRow.bot_id == bot).order_by(JobRow.id))
        return list(rows.scalars())


def _prompts(model: FakeOpenAI) -> str:
    return "\n".join(str(message.get("content")) for body in model.chat_requests for message in body["messages"])


async def _turn(engine, chat, message_id: str, text: str, reply: str, memo: str, observation: str) -> None:  # type: ignore[no-untyped-def]
    message = InputMessage(message_id, chat.user_id, chat.user_name, text, NOW)
    await engine.turns.end(chat, memo, [observation], batch=[message], now=NOW)
    await engine.turns.record(chat, message, reply, ended=True)


async def test_an_erasure_in_another_process_reaches_the_caches_and_the_historian(tmp_root, chroma_port, model) -> None:
    llm: dict[str, Any] = historian_llm(PRESET)
    bot_process = await make_engine(tmp_root, chroma_port, llm=llm, profiles={"merge": False})
    cli_process = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    erased, other = group(bot, "30301", "10301", "阿U"), group(bot, "30301", "10302", "小V")
    await _turn(bot_process, erased, "m1", f"我们的暗号是{SECRET}", f"记住了，暗号{SECRET}", f"阿U说暗号是{SECRET}",
                f"QQ号10301（昵称阿U）和朋友的暗号是{SECRET}")  # fmt: skip
    await _turn(bot_process, other, "m2", "明天我去游泳", "游泳好", "小V说明天去游泳", "QQ号10302（昵称小V）明天去游泳")
    # the bot's caches hold the user now: the chat's notes (the turn's block) and its recent turns
    assert SECRET in (await build_context(bot_process, other, ["暗号"], now=NOW)).text
    assert any(SECRET in payload for payload in await _payloads(bot_process, bot))

    await erasure.delete_all(cli_process, ErasureTarget.user(bot, "10301"), actor=Operator(), now=NOW)

    # past the bound (the caches' own lifetime is 10 s; the recent turns had none): the bot's next
    # end job and its next turn hold nothing of them
    await asyncio.sleep(POLL_SECONDS + 0.2)
    await bot_process.turns.end(other, "", ["QQ号10302（昵称小V）后天也去游泳"], batch=[], now=NOW)
    assert SECRET not in (await _payloads(bot_process, bot))[-1]
    assert SECRET not in (await build_context(bot_process, other, ["暗号"], now=NOW)).text

    # the historian's model reads nothing of them: the job queued before the erasure still carried
    # the bot's reply to them, whose transcript turn is gone
    model.reset()
    model.responder = lambda body: tool_call(TOOL_NAME, {"facts": []})
    try:
        await bot_process.historian.run_until_idle(NOW)
    finally:
        model.responder = None
    assert model.chat_requests, "the other user's jobs reach the model"
    assert SECRET not in _prompts(model) and "游泳" in _prompts(model)


async def test_the_hooks_last_inputs_follow_another_processes_change(tmp_root, chroma_port) -> None:
    """A short query is recalled with the chat's previous input: kept in the engine's turn caches,
    it goes with the rest of what is cached of the bot when another process changes it."""
    bot_process = await make_engine(tmp_root, chroma_port)
    cli_process = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    erased, other = group(bot, "30303", "10304", "阿U"), group(bot, "30303", "10305", "小V")
    await bot_process.memories.write(other, "group", "群30303每周五晚上打羽毛球。", now=NOW)
    assert bot_process.caches.recall_queries(bot, erased.scope, f"我们的暗号是{SECRET}", 8) == [f"我们的暗号是{SECRET}"]
    assert bot_process.caches.recall_queries(bot, other.scope, "谁呢", 8) == [f"我们的暗号是{SECRET}\n谁呢"]

    await erasure.delete_all(cli_process, ErasureTarget.user(bot, "10304"), actor=Operator(), now=NOW)
    await asyncio.sleep(POLL_SECONDS + 0.2)
    await bot_process.refresh_caches(bot)
    assert bot_process.changes.foreign_changes >= 1
    assert bot_process.caches.recall_queries(bot, other.scope, "谁呢", 8) == ["谁呢"]


async def test_a_restore_in_another_process_drops_every_bots_caches(tmp_root, chroma_port) -> None:
    """A restore replaces every bot account's data at once (``StoreReplaced``: the counter of all
    of them). Here the other process replaces one chat's memo the way a restore does."""
    from amrita_plugin_cognition.domain.events import StoreReplaced
    from amrita_plugin_cognition.engine import notes
    from amrita_plugin_cognition.store import notes as notes_store

    bot_process = await make_engine(tmp_root, chroma_port)
    cli_process = await make_engine(tmp_root, chroma_port)
    chat = group(new_bot(), "30304", "10306", "小X")
    await notes.append_memo(bot_process, chat, f"群暗号：{SECRET}", now=NOW)
    assert SECRET in (await build_context(bot_process, chat, ["暗号"], now=NOW)).text

    async with cli_process.unit_of_work() as uow:
        await notes_store.write_memo(uow.session, chat.bot_id, chat.scope, "群规：友善发言", "cli", NOW, 5)
        uow.record(StoreReplaced())
        await uow.commit()
    await asyncio.sleep(POLL_SECONDS + 0.2)
    block = (await build_context(bot_process, chat, ["暗号"], now=NOW)).text
    assert SECRET not in block and "友善发言" in block


async def test_this_processes_own_changes_do_not_drop_its_caches(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    chat = group(bot, "30302", "10303", "小W")
    engine.changes.poll_seconds = 0.0  # read the counters on every turn
    await engine.memories.write(chat, "group", "群30302每周五晚上打羽毛球。", now=NOW)
    await build_context(engine, chat, ["羽毛球"], now=NOW)
    before = engine.changes.foreign_changes
    for index in range(3):
        await engine.memories.write(chat, "group", f"群30302第{index}次活动定在周六。", now=NOW)
        await build_context(engine, chat, ["活动"], now=NOW)
    assert engine.changes.foreign_changes == before


async def test_end_and_capture_see_another_processes_opt_out_and_switch(tmp_root, chroma_port) -> None:
    """The bot reads the chat switch and the opt-outs from its cache; an opt-out or a switch-off
    made by the CLI reaches its next ``end`` and its next captured turn within ``POLL_SECONDS``,
    not only after some other cached read happened to refresh (each is checked first in its chat)."""
    bot_process = await make_engine(tmp_root, chroma_port)
    cli_process = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    quiet, other = group(bot, "38741", "10877", "阿槐"), group(bot, "38742", "10878", "阿楠")

    def said(chat, message_id: str) -> InputMessage:  # type: ignore[no-untyped-def]
        return InputMessage(message_id, chat.user_id, chat.user_name, "周末我去爬山", NOW)

    async def end(chat, message_id: str) -> bool:  # type: ignore[no-untyped-def]
        result = await bot_process.turns.end(
            chat, "说周末去爬山", ["周末去爬山"], batch=[said(chat, message_id)], now=NOW
        )
        return result.note_written

    async def capture(chat, message_id: str) -> bool:  # type: ignore[no-untyped-def]
        return await bot_process.turns.record(chat, said(chat, message_id), "好呀", ended=False)

    for chat in (quiet, other):  # both chats' switches cached as on
        assert await end(chat, f"g{chat.user_id}") and await capture(chat, f"h{chat.user_id}")
    await cli_process.governance.set_opt_out(bot, "10877", True, actor=Operator(), now=NOW)
    await asyncio.sleep(POLL_SECONDS + 0.2)
    assert not await end(quiet, "g3")  # end first: nothing else has refreshed the caches
    assert not await capture(quiet, "h3")
    assert await capture(other, "h5")  # still on (and its state read again since)
    await cli_process.governance.set_chat_memory(bot, other.scope, False, actor=Operator(), now=NOW)
    await asyncio.sleep(POLL_SECONDS + 0.2)
    assert not await capture(other, "h4")  # capture first
    assert not await end(other, "g4")
