"""Inputs that used to crash instead of answering: very long words, NUL bytes, lone surrogates,
non-ASCII digits and ids beyond 64 bits. Each is answered clearly or normalised, and the same
way on SQLite and on PostgreSQL (COGNITION_TEST_BACKEND=server)."""

from __future__ import annotations

import asyncio

import pytest
from chat_helpers import SELF_ID, attach, deliver, group_message, private_message
from engine_helpers import NOW, group, make_engine, new_bot, private
from nonebug import App

from amrita_plugin_cognition.bot.tools import parse_arguments
from amrita_plugin_cognition.bot.tools.arguments import MemoryReadArguments, MemoUpdateArguments
from amrita_plugin_cognition.domain.records import MemoryDraft, Scope, clean_text, normalise_text
from amrita_plugin_cognition.domain.tokenize import MAX_TOKEN_BYTES, keyword_tokens, query_terms
from amrita_plugin_cognition.engine import notes

LONG_WORD = "supercalifragilistic" * 150  # 3,000 bytes, one token
BROKEN = "小明\x00（QQ号10001）喜欢\ud800吃\x07火锅\udfff。"
REPAIRED = "小明（QQ号10001）喜欢\ufffd吃火锅\ufffd。"


def texts(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [hit.record.text for hit in result.hits]


# ------------------------------------------------------------------------------ pure functions


def test_keyword_tokens_are_capped_the_same_way_for_documents_and_queries() -> None:
    (token,) = keyword_tokens(LONG_WORD)
    assert len(token.encode()) == MAX_TOKEN_BYTES
    assert token in query_terms(f"{LONG_WORD} 火锅")  # the query side cuts it identically
    (number,) = keyword_tokens("9" * 2500)
    assert number == "9" * MAX_TOKEN_BYTES
    assert keyword_tokens("火锅 hotpot") == ["火", "锅", "火锅", "hotpot"]  # ordinary words unchanged


def test_clean_text_keeps_lines_and_drops_what_no_database_stores() -> None:
    assert clean_text("一\r\n二\r三\t四\x00\x1b[0m") == "一\n二\n三\t四[0m"
    assert clean_text("a\ud83d\ude00b\ud800") == "a😀b\ufffd"  # a split pair joined, a lone one replaced
    assert clean_text(BROKEN).encode("utf-8")  # valid UTF-8
    assert normalise_text(BROKEN) == REPAIRED
    assert normalise_text("  QQ号10001（小明）\n 去了成都 ") == "QQ号10001（小明） 去了成都"  # unchanged


# ------------------------------------------------------------------------ both databases


async def test_a_3000_byte_word_is_stored_and_searched(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port, memory_max_chars=5000)
    bot = new_bot()
    scope = Scope("group", "40001")
    fact = f"小明（QQ号10001）最喜欢的长单词是 {LONG_WORD}。"
    other = "小红（QQ号10002）周末去吃了重庆火锅。"
    result = await engine.memories.remember(
        bot, [MemoryDraft(text=text, scope=scope, speaker_id="10001") for text in (fact, other)], now=NOW
    )
    assert len(result.written) == 2
    await engine.index.drain()
    here = group(bot, "40001", "10001")
    assert fact in texts(await engine.memories.recall(here, [f"那个单词 {LONG_WORD}"], now=NOW))
    assert other in texts(
        await engine.memories.recall(here, [f"{LONG_WORD} 火锅"], now=NOW)
    )  # the turn keeps its memory
    corrected = await engine.memories.update(
        here, result.written[0].id, f"小明（QQ号10001）改口说：{LONG_WORD}", now=NOW
    )
    assert corrected.text.endswith(LONG_WORD)
    # the session's database is shared: a fact past the default limit would make every later backup
    # of it one that a restore under that limit refuses
    await engine.governance.forget(here, corrected.id)


async def test_nul_and_lone_surrogates_are_normalised(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    here = group(bot, "40002", "10001")
    written = await engine.memories.write(here, "group", BROKEN, now=NOW)
    assert written.text == REPAIRED
    await engine.index.drain()
    records, total = await engine.memories.list(here, "group")
    assert total == 1 and records[0].text == REPAIRED
    for raw_query in ("火锅\x00", "火锅\udc00", "小明\ud800喜欢吃什么\x00"):
        query = parse_arguments(MemoryReadArguments, {"query": raw_query}, engine.config).query
        assert texts(await engine.memories.recall(here, [query], now=NOW)) == [REPAIRED]
    updated = await engine.memories.update(here, written.id, "小明\x00（QQ号10001）改吃素了\ud800", now=NOW)
    assert updated.text == "小明（QQ号10001）改吃素了\ufffd"
    pin = await notes.add_pin(engine, here, "周五\x00提醒\udc00小明")
    assert pin.content == "周五提醒\ufffd小明"
    memo = parse_arguments(MemoUpdateArguments, {"content": "称呼\x00他\ud800“明哥”\r\n他吃素"}, engine.config)
    assert await notes.update_memo(engine, private(bot, "10001"), memo.content) == "称呼他\ufffd“明哥”\n他吃素"


# --------------------------------------------------------------------------------- commands

BOT = str(SELF_ID)


async def _bot(ctx, monkeypatch):  # type: ignore[no-untyped-def]
    from nonebot.adapters.onebot.v11 import Adapter, Bot

    adapter = ctx.create_adapter(base=Adapter)
    bot = ctx.create_bot(base=Bot, adapter=adapter, self_id=BOT)
    return bot, attach(bot, monkeypatch)


async def _engine():  # type: ignore[no-untyped-def]
    from amrita_plugin_cognition.runtime import get_engine

    return await get_engine()


@pytest.mark.chatflow
async def test_every_command_answers(app: App, fake_openai, monkeypatch) -> None:
    engine = await _engine()
    user = "10091"
    stored = await engine.memories.remember(
        BOT, [MemoryDraft(text="小周（QQ号10091）喜欢吃火锅。", scope=Scope("private", user), speaker_id=user)]
    )
    await engine.index.drain()
    memory_id = stored.record_ids[0]
    cases = [
        ("/memory user delete ²", "记忆编号必须是正整数"),
        ("/memory user delete ١٢", "记忆编号必须是正整数"),
        ("/memory user delete 12345678901234567890", "记忆编号必须在 1 到 9223372036854775807 之间"),
        ("/memory user delete 0", "记忆编号必须在 1 到"),
        ("/memory user delete", "请提供记忆编号"),
        ("/memory user delete 9223372036854775807", "没有找到编号为 9223372036854775807 的记忆"),
        ("/memory user list ²", "页码必须是正整数"),
        ("/memory user list 99999999999999999999", "页码必须在 1 到"),
        ("/memory user list 3", "只有 1 页"),
        ("/memory user search 火锅\x00\ud800", "小周"),
        (f"/memory user search 火锅 {LONG_WORD[:190]}", "小周"),
        (f"/memory user search {LONG_WORD}", "关键词过长"),
    ]
    async with app.test_api() as ctx:
        bot, qq = await _bot(ctx, monkeypatch)
        for command, expected in cases:
            before = len(qq.sent)
            await deliver(bot, private_message(command, int(user), "小周"))
            assert len(qq.sent) == before + 1, f"no answer to {command[:60]!r}"
            assert expected in qq.sent[-1], (command[:60], qq.sent[-1])
        await deliver(bot, group_message("/memory group delete ³", 40003, 10092, "群主", role="owner", to_me=False))
        assert "记忆编号必须是正整数" in qq.sent[-1]
    records, _ = await engine.memories.list(private(BOT, user), "user")
    assert [record.id for record in records] == [memory_id]
    assert not fake_openai.chat_requests


@pytest.mark.chatflow
async def test_a_stuck_command_answers_within_its_time_limit(app: App, fake_openai, monkeypatch) -> None:
    engine = await _engine()
    monkeypatch.setattr(engine, "config", engine.config.model_copy(update={"tool_timeout_seconds": 0.3}))

    async def stuck(*args, **kwargs):  # type: ignore[no-untyped-def]
        await asyncio.sleep(30)  # e.g. a database that never answers

    monkeypatch.setattr(engine.memories, "list", stuck)
    async with app.test_api() as ctx:
        bot, qq = await _bot(ctx, monkeypatch)
        started = asyncio.get_running_loop().time()
        await deliver(bot, private_message("/memory user list", 10093, "小吴"))
        assert asyncio.get_running_loop().time() - started < 10
        assert qq.sent[-1] == "记忆服务响应超时，本次操作未完成"
