"""The knowledge base's chat tools through the real Amrita chat flow (nonebug, the fake model
scripted to call them): reading needs ``cognition.knowledge`` (SUPERUSERS and ``lp.admin`` hold it
always) and is refused in Chinese without it; a hidden (stale) entry is not shown; anyone may
suggest, but a suggestion with a password is refused with nothing stored, and spam is cut by the
per-user limit. Assertions are on the tool results the model received and on SQL."""

from __future__ import annotations

from typing import Any

import pytest
from chat_helpers import (
    SELF_ID,
    connect_bot,
    deliver,
    grant_node,
    group_message,
    memory_engine,
    private_message,
    tool_results,
)
from engine_helpers import NOW, group
from fake_openai import tool_call
from nonebug import App

from amrita_plugin_cognition.domain.records import MemoryDraft, Scope
from amrita_plugin_cognition.engine import corrections

pytestmark = pytest.mark.chatflow

BOT = str(SELF_ID)
GROUP = 30501
SUPERUSER = 90001
RULE_BODY = "本群每周五晚上八点组织开黑，迟到十分钟以上的人下次要请全队喝奶茶。"


async def _results(bot, fake_openai, event, *calls: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    fake_openai.reset()
    fake_openai.script.extend(
        tool_call(name, arguments, f"call_{index}") for index, (name, arguments) in enumerate(calls)
    )
    await deliver(bot, event)
    return tool_results(fake_openai.chat_requests[-1])[-len(calls) :]


async def test_reading_needs_the_permission_node(app: App, fake_openai, monkeypatch) -> None:
    engine = await memory_engine()
    scope = Scope("group", str(GROUP))
    written = await engine.memories.remember(
        BOT,
        [
            MemoryDraft(text="群30501每周五晚上八点组织开黑。", scope=scope, speaker_id="10501"),
            MemoryDraft(text="群30501约定迟到的人请全队喝奶茶。", scope=scope, speaker_id="10501"),
        ],
    )
    first, second = (record.id for record in written.written)
    entry = await engine.knowledge.create(BOT, "群规：周五开黑", "每周五开黑", RULE_BODY, [first, second], now=NOW)
    await engine.index.drain()
    await grant_node("10504", "cognition.knowledge")  # before the flow: LitePerm caches what it read
    search = ("cognition_knowledge_search", {"query": "开黑"})
    get = ("cognition_knowledge_get", {"entry_id": entry.id})
    async with app.test_api() as ctx:
        bot, _ = await connect_bot(ctx, monkeypatch, BOT)
        # a plain member: both read tools refused, in Chinese, naming the node
        found = await _results(bot, fake_openai, group_message("群规是什么", GROUP, 10502, "阿甲"), search, get)
        assert [result["ok"] for result in found] == [False, False]
        assert all(
            "没有查看知识库的权限" in result["error"] and "cognition.knowledge" in result["error"] for result in found
        )
        assert "开黑" not in str(found)
        # a member who holds the node; a superuser always
        found = await _results(bot, fake_openai, group_message("群规是什么", GROUP, 10504, "阿丙"), search, get)
        assert [result["ok"] for result in found] == [True, True]
        assert found[0]["entries"][0]["entry_id"] == entry.id and found[0]["notice"]
        assert found[1]["entry"]["body"] == RULE_BODY
        found = await _results(bot, fake_openai, private_message("群规是什么", SUPERUSER, "主人"), search)
        assert found[0]["ok"] and found[0]["entries"][0]["title"] == "群规：周五开黑"
        # a forget of a source hides the entry from both tools until the cycle re-derives it
        await corrections.forget_memory(engine, group(BOT, str(GROUP), "10501"), second, now=NOW)
        found = await _results(bot, fake_openai, private_message("群规是什么", SUPERUSER, "主人"), search, get)
        assert found[0]["ok"] and found[0]["entries"] == [] and "没有找到" in found[0]["message"]
        assert not found[1]["ok"] and "重新整理" in found[1]["error"]


async def test_suggestions_refuse_secrets_and_spam(app: App, fake_openai, monkeypatch) -> None:
    engine = await memory_engine()
    limit = engine.config.consolidation.knowledge_suggestions_per_day
    suggest = "cognition_knowledge_suggest"
    async with app.test_api() as ctx:
        bot, _ = await connect_bot(ctx, monkeypatch, BOT)
        # anyone may suggest; a password is refused and nothing of it is stored
        found = await _results(
            bot, fake_openai, group_message("把WiFi密码加到知识库", GROUP, 10503, "阿乙"),
            (suggest, {"content": "群活动室的 WiFi 密码是 qwe12345asd，写进知识库吧。"}),
        )  # fmt: skip
        assert not found[0]["ok"] and "建议未保存" in found[0]["error"]
        assert not [item for item in await engine.knowledge.suggestions(BOT) if item.user_id == "10503"]
        # spam: the limit's worth goes through, the rest is refused in Chinese
        calls = [(suggest, {"content": f"建议{index}：新人先看群公告。"}) for index in range(limit + 2)]
        found = await _results(bot, fake_openai, group_message("提几个建议", GROUP, 10503, "阿乙"), *calls)
        assert [result["ok"] for result in found] == [True] * limit + [False, False]
        assert found[0]["left_today"] == limit - 1
        assert "24 小时内最多提交" in found[-1]["error"]
        stored = [item for item in await engine.knowledge.suggestions(BOT) if item.user_id == "10503"]
        assert len(stored) == limit and stored[0].chat == f"group:{GROUP}" and stored[0].state == "pending"
