"""Tool arguments: strict pydantic models, schemas generated from them, and the raw arguments the
model wrote (not Amrita's coerced ones) deciding what a tool does."""

from __future__ import annotations

import asyncio
import json

import pytest
from chat_helpers import SELF_ID, attach, deliver, private_message, tool_results
from fake_openai import tool_call
from nonebug import App

from amrita_plugin_cognition.bot.tools import TOOLS, function_parameters, parse_arguments
from amrita_plugin_cognition.bot.tools.arguments import (
    DATABASE_ID_MAX,
    MemoryDeleteArguments,
    MemoryListArguments,
    MemoryReadArguments,
    MemoryWriteArguments,
    MemoUpdateArguments,
    PinUpdateArguments,
)
from amrita_plugin_cognition.config import CognitionConfig
from amrita_plugin_cognition.domain.records import ChatContext, MemoryDraft, Scope
from amrita_plugin_cognition.errors import InvalidInput

BOT = str(SELF_ID)
CONFIG = CognitionConfig()


def refusal(model, raw) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidInput) as caught:
        parse_arguments(model, raw, CONFIG)
    return caught.value.zh


# ------------------------------------------------------------------------------ the models


@pytest.mark.parametrize(
    ("value", "shown"),
    [(True, "true"), (False, "false"), (1.0, "1.0"), (2.5, "2.5"), ("1", '"1"'), ("12", '"12"'), (None, "null")],
)
def test_an_id_is_a_json_integer_and_nothing_else(value, shown) -> None:
    assert refusal(MemoryDeleteArguments, {"memory_id": value}) == f"参数 memory_id 必须是正整数（收到 {shown}）"
    assert refusal(PinUpdateArguments, {"pin_id": value, "content": "x"}).startswith("参数 pin_id 必须是正整数")


def test_an_id_must_fit_the_database() -> None:
    assert parse_arguments(MemoryDeleteArguments, {"memory_id": DATABASE_ID_MAX}, CONFIG).memory_id == DATABASE_ID_MAX
    assert "超出范围" in refusal(MemoryDeleteArguments, {"memory_id": DATABASE_ID_MAX + 1})
    assert refusal(MemoryDeleteArguments, {"memory_id": 0}) == "参数 memory_id 必须是正整数（收到 0）"
    assert "memory_id" in refusal(MemoryDeleteArguments, {"memory_id": -3})
    assert refusal(MemoryDeleteArguments, {}) == "缺少参数 memory_id"


def test_counts_are_strict_too() -> None:
    for value in (True, 5.0, "5"):
        assert refusal(MemoryListArguments, {"scope": "user", "limit": value}).startswith(
            "参数 limit 必须是 1 到 50 之间的整数"
        )
        assert refusal(MemoryListArguments, {"scope": "user", "offset": value}).startswith("参数 offset 必须是")
        assert refusal(MemoryReadArguments, {"query": "火锅", "top_k": value}).startswith("参数 top_k 必须是")
    assert "51" in refusal(MemoryListArguments, {"scope": "user", "limit": 51})
    listed = parse_arguments(MemoryListArguments, {"scope": "group"}, CONFIG)
    assert (listed.limit, listed.offset) == (10, 0)


def test_raw_json_is_validated_as_the_model_wrote_it() -> None:
    assert "收到 true" in refusal(MemoryDeleteArguments, '{"memory_id": true}')
    assert "收到 1.0" in refusal(MemoryDeleteArguments, '{"memory_id": 1.0}')
    assert parse_arguments(MemoryDeleteArguments, '{"memory_id": 7}', CONFIG).memory_id == 7
    assert refusal(MemoryDeleteArguments, "[1]").startswith("参数必须是 JSON 对象")
    assert refusal(MemoryDeleteArguments, "{oops") == "参数不是有效的 JSON 对象"


def test_text_limits_name_the_field_and_the_limit() -> None:
    assert refusal(MemoryWriteArguments, {"content": "长" * 612, "scope": "user"}) == (
        "参数 content 过长：612 字，上限 500 字"
    )
    larger = CognitionConfig(memory_max_chars=1000)
    assert parse_arguments(MemoryWriteArguments, {"content": "长" * 612, "scope": "user"}, larger).content
    assert refusal(MemoryWriteArguments, {"content": "   ", "scope": "user"}) == "参数 content 不能为空"
    assert refusal(MemoryWriteArguments, {"content": 5, "scope": "user"}) == "参数 content 必须是字符串（收到 5）"
    assert refusal(MemoryWriteArguments, {"content": "x", "scope": "world"}) == (
        '参数 scope 只能是 user / group（收到 "world"）'
    )
    assert refusal(MemoryReadArguments, {"query": "x", "time_from": "下周"}).startswith("参数 time_from 不是有效日期")
    assert refusal(MemoryWriteArguments, {"content": "x", "scope": "\ud800\x00"}) == (
        '参数 scope 只能是 user / group（收到 "\ufffd"）'
    )
    assert "最多 10 个" in refusal(MemoryWriteArguments, {"content": "x", "scope": "user", "tags": ["t"] * 11})
    assert "tags" in refusal(MemoryWriteArguments, {"content": "x", "scope": "user", "tags": [1]})


def test_text_is_cleaned_as_it_is_validated() -> None:
    written = parse_arguments(
        MemoryWriteArguments, '{"content": " 小明\\u0000喜欢\\ud800火锅\\r\\n ", "scope": "user"}', CONFIG
    )
    assert written.content == "小明喜欢\ufffd火锅"
    memo = parse_arguments(MemoUpdateArguments, {"content": "第一行\r\n第二行\x00"}, CONFIG)
    assert memo.content == "第一行\n第二行"  # the memo keeps its lines
    assert parse_arguments(MemoUpdateArguments, {"content": ""}, CONFIG).content == ""  # clears the memo


# ------------------------------------------------------------------------------ the schemas


def test_schemas_are_generated_from_the_models() -> None:
    read = function_parameters(MemoryReadArguments).model_dump(exclude_none=True)
    assert read["required"] == ["query"]
    props = read["properties"]
    assert props["scope"]["enum"] == ["user", "group", "all"] and props["scope"]["default"] == "all"
    assert (props["top_k"]["type"], props["top_k"]["minimum"], props["top_k"]["maximum"]) == ("integer", 1, 50)
    assert props["importance"]["enum"] == ["low", "medium", "high"]
    assert props["tags"]["type"] == "array" and props["tags"]["items"]["type"] == "string"
    assert props["tags"]["maxItems"] == 10
    assert all(prop["description"] for prop in props.values())
    delete = function_parameters(MemoryDeleteArguments).model_dump(exclude_none=True)
    assert delete["required"] == ["memory_id"]
    assert delete["properties"]["memory_id"]["type"] == "integer" and delete["properties"]["memory_id"]["minimum"] == 1
    assert "maximum" not in delete["properties"]["memory_id"]  # 2**63-1 is not exact as a JSON number


# ------------------------------------------------------------------------- the real chat flow


async def _engine():  # type: ignore[no-untyped-def]
    from amrita_plugin_cognition.runtime import get_engine

    return await get_engine()


async def _bot(ctx, monkeypatch):  # type: ignore[no-untyped-def]
    from nonebot.adapters.onebot.v11 import Adapter, Bot

    adapter = ctx.create_adapter(base=Adapter)
    bot = ctx.create_bot(base=Bot, adapter=adapter, self_id=BOT)
    return bot, attach(bot, monkeypatch)


async def _seed(user: str, text: str) -> int:
    engine = await _engine()
    scope = Scope("private", user)
    result = await engine.memories.remember(
        BOT, [MemoryDraft(text=text, scope=scope, speaker_id=user, speaker_name="小赵")]
    )
    await engine.index.drain()
    return result.record_ids[0]


async def _active_ids(user: str) -> set[int]:
    engine = await _engine()
    records, _ = await engine.memories.list(ChatContext(BOT, Scope("private", user), user), "user", 0, 50)
    return {record.id for record in records}


def _raw_call(name: str, arguments: str, call_id: str) -> dict:  # type: ignore[type-arg]
    """A tool call whose arguments are exactly ``arguments`` (the JSON text the model wrote)."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}],
    }


@pytest.mark.chatflow
async def test_coercible_ids_never_delete(app: App, fake_openai, monkeypatch) -> None:
    user = "10081"
    memory_id = await _seed(user, "小赵（QQ号10081）的生日是三月五日。")
    fake_openai.script.extend(
        [
            _raw_call("cognition_memory_delete", '{"memory_id": true}', "call_bool"),
            _raw_call("cognition_memory_delete", json.dumps({"memory_id": float(memory_id)}), "call_float"),
            _raw_call("cognition_memory_delete", json.dumps({"memory_id": str(memory_id)}), "call_text"),
            _raw_call("cognition_memory_update", json.dumps({"memory_id": f"{memory_id}", "content": "改"}), "call_u"),
        ]
    )
    async with app.test_api() as ctx:
        bot, _ = await _bot(ctx, monkeypatch)
        await deliver(bot, private_message("把我的生日那条删掉", int(user), "小赵"))
    results = tool_results(fake_openai.chat_requests[-1])
    assert [result["ok"] for result in results] == [False, False, False, False]
    assert results[0]["error"] == "参数 memory_id 必须是正整数（收到 true）"
    assert results[1]["error"] == f"参数 memory_id 必须是正整数（收到 {float(memory_id)}）"
    assert results[2]["error"] == f'参数 memory_id 必须是正整数（收到 "{memory_id}"）'
    assert results[3]["error"].startswith("参数 memory_id 必须是正整数")
    assert memory_id in await _active_ids(user)

    fake_openai.reset()
    fake_openai.script.append(tool_call("cognition_memory_delete", {"memory_id": memory_id}, "call_int"))
    async with app.test_api() as ctx:
        bot, _ = await _bot(ctx, monkeypatch)
        await deliver(bot, private_message("还是删掉吧", int(user), "小赵"))
        asked = tool_results(fake_openai.chat_requests[-1])[-1]
        assert asked["ok"] is True and asked["needs_confirmation"] is True and memory_id in await _active_ids(user)
        fake_openai.reset()
        # a confirmation is a real boolean: "true" as text is refused, not coerced
        fake_openai.script.append(
            _raw_call("cognition_memory_delete", json.dumps({"memory_id": memory_id, "confirmed": "true"}), "c_t")
        )
        fake_openai.script.append(tool_call("cognition_memory_delete", {"memory_id": memory_id, "confirmed": True}))
        await deliver(bot, private_message("对，删，这事已经过去了", int(user), "小赵"))
    text_flag, confirmed = tool_results(fake_openai.chat_requests[-1])[-2:]
    assert text_flag["ok"] is False and "confirmed" in text_flag["error"]
    assert confirmed == {"ok": True, "deleted": memory_id}
    assert memory_id not in await _active_ids(user)


@pytest.mark.chatflow
async def test_the_model_receives_the_generated_schemas(app: App, fake_openai, monkeypatch) -> None:
    async with app.test_api() as ctx:
        bot, _ = await _bot(ctx, monkeypatch)
        await deliver(bot, private_message("你好", 10082, "小钱"))
    offered = {
        tool["function"]["name"]: tool["function"]
        for body in fake_openai.chat_requests
        for tool in body.get("tools") or []
    }
    for name, tool in TOOLS.items():
        assert name in offered, name
        expected = function_parameters(tool.arguments).model_dump(exclude_none=True)
        assert offered[name]["parameters"]["properties"].keys() == expected["properties"].keys()
        assert offered[name]["parameters"]["required"] == expected["required"]
    delete_id = offered["cognition_memory_delete"]["parameters"]["properties"]["memory_id"]
    assert delete_id["type"] == "integer" and delete_id["minimum"] == 1
    listing = offered["cognition_memory_list"]["parameters"]["properties"]
    assert listing["limit"]["maximum"] == 50 and listing["scope"]["enum"] == ["user", "group"]


@pytest.mark.chatflow
async def test_broken_text_in_tool_arguments_is_normalised(app: App, fake_openai, monkeypatch) -> None:
    user = "10083"
    fake_openai.script.append(
        _raw_call(
            "cognition_memory_write",
            '{"content": "小孙\\u0000（QQ号10083）喜欢\\ud800打羽毛球。", "scope": "user"}',
            "call_w",
        )
    )
    fake_openai.script.append(_raw_call("cognition_memory_read", '{"query": "羽毛球\\u0000\\udc00"}', "call_r"))
    async with app.test_api() as ctx:
        bot, _ = await _bot(ctx, monkeypatch)
        await deliver(bot, private_message("记住我喜欢打羽毛球", int(user), "小孙"))
    results = tool_results(fake_openai.chat_requests[-1])
    assert results[0]["ok"] is True, results
    assert results[1]["ok"] is True, results
    assert [memory["content"] for memory in results[1]["memories"]] == ["小孙（QQ号10083）喜欢\ufffd打羽毛球。"]


@pytest.mark.chatflow
async def test_a_stuck_tool_answers_within_its_time_limit(app: App, fake_openai, monkeypatch) -> None:
    user = "10084"
    memory_id = await _seed(user, "小李（QQ号10084）养了一只叫豆豆的猫。")
    engine = await _engine()
    monkeypatch.setattr(engine, "config", engine.config.model_copy(update={"tool_timeout_seconds": 0.3}))

    async def stuck(*args, **kwargs):  # type: ignore[no-untyped-def]
        await asyncio.sleep(30)  # e.g. a database that never answers

    monkeypatch.setattr(engine.governance, "forgettable", stuck)
    fake_openai.script.append(tool_call("cognition_memory_delete", {"memory_id": memory_id}, "call_slow"))
    async with app.test_api() as ctx:
        bot, _ = await _bot(ctx, monkeypatch)
        started = asyncio.get_running_loop().time()
        await deliver(bot, private_message("删掉猫那条", int(user), "小李"))
        assert asyncio.get_running_loop().time() - started < 10
    assert tool_results(fake_openai.chat_requests[-1])[-1] == {"ok": False, "error": "记忆服务响应超时，本次操作未完成"}
    monkeypatch.undo()
    assert memory_id in await _active_ids(user)
