"""The LLM gateway against the fake OpenAI-compatible server on 127.0.0.1: the preset it runs on,
the prompt it sends, structured output validated into a pydantic model, retries with feedback,
timeouts, and the counters ``status`` shows."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import jinja2
import pytest
from fake_openai import FakeOpenAI, chat_preset, tool_call
from pydantic import BaseModel, Field

from amrita_plugin_cognition.errors import LLMUnavailable
from amrita_plugin_cognition.llm import LLMGateway, LLMSettings, default_templates

TEMPLATE = "historian_rewrite.jinja"
TOOL = "cognition_historian_facts"
CORE_PRESET = "cognition-gateway-test"
CORE_MODEL = "gateway-model"
OBSERVATION = "我下周三去成都出差，大概待三天"


class RewrittenFact(BaseModel):
    text: str = Field(description="改写后的事实：脱离上下文可懂，时间写成绝对日期")
    observation_ids: list[int] = Field(description="这条事实来自哪些观察（编号）")
    is_absolute: bool = Field(description="时间和指代是否都已写成绝对的")


class HistorianRewrite(BaseModel):
    """提交改写后的全部事实。"""

    facts: list[RewrittenFact] = Field(description="改写后的事实；没有值得保存的就给空列表")


VALID = {
    "facts": [
        {
            "text": "小明（10001）计划2025年5月7日（星期三）去成都出差，预计待三天。",
            "observation_ids": [1],
            "is_absolute": True,
        }
    ]
}


def context() -> dict[str, object]:
    return {
        "now": "2025-05-01 14:30 星期四 (Asia/Shanghai)",
        "chat": "QQ群 30001",
        "observations": [
            {"id": 1, "when": "2025-05-01 14:20", "speaker": "小明(10001)", "text": OBSERVATION, "hints": [], "ids": []}
        ],
        "messages": [{"when": "2025-05-01 14:19", "speaker": "小红(10002)", "text": "你最近忙啥呢？"}],
        "perspective": "",
        "feedback": [],
        "previous": [],
    }


def settings(preset: str = CORE_PRESET, **overrides: object) -> LLMSettings:
    values: dict[str, object] = {
        "preset": preset,
        "timeout_seconds": 5.0,
        "max_retries": 2,
        "backoff_initial_seconds": 0.01,
        "backoff_max_seconds": 0.02,
    }
    values.update(overrides)
    return LLMSettings.model_validate(values)


@pytest.fixture
def core_preset(fake_openai: FakeOpenAI) -> FakeOpenAI:
    """A preset known only to amrita_core's PresetManager (the path outside the chat plugin)."""
    from amrita_core import ModelPreset, PresetManager

    manager = PresetManager()
    if CORE_PRESET not in {preset.name for preset in manager.get_all_presets()}:
        data = chat_preset(CORE_PRESET, CORE_MODEL, fake_openai.base_url, "sk-test", stream=False)
        manager.add_preset(ModelPreset.model_validate(data))
    return fake_openai


def messages_of(body: dict[str, Any]) -> dict[str, list[str]]:
    by_role: dict[str, list[str]] = {}
    for message in body["messages"]:
        content = message["content"]
        text = content if isinstance(content, str) else "".join(part.get("text", "") for part in content)
        by_role.setdefault(message["role"], []).append(text)
    return by_role


async def test_text_call_sends_the_template_and_counts_tokens(core_preset: FakeOpenAI) -> None:
    fake = core_preset
    fake.chat_usage = {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}
    fake.script.append({"role": "assistant", "content": "  小明下周三去成都出差。  "})
    gateway = LLMGateway(settings())

    answer = await gateway.complete_text("transcript", TEMPLATE, {"tool_name": TOOL, **context()})

    assert answer == "小明下周三去成都出差。"
    [body] = fake.chat_requests
    assert body["model"] == CORE_MODEL
    sent = messages_of(body)
    assert "时间绝对化" in sent["system"][0]
    assert OBSERVATION in sent["user"][0] and "你最近忙啥呢？" in sent["user"][0]
    counters = gateway.snapshot()["purposes"]["transcript"]
    assert counters["calls"] == 1 and counters["failures"] == 0 and counters["retries"] == 0
    assert (counters["prompt_tokens"], counters["completion_tokens"]) == (120, 30)
    assert counters["latency_seconds"] > 0
    json.dumps(gateway.snapshot())  # plain data for `status --json`


async def test_structured_call_is_validated_into_the_model(core_preset: FakeOpenAI) -> None:
    fake = core_preset
    fake.chat_usage = {"prompt_tokens": 200, "completion_tokens": 40, "total_tokens": 240}
    fake.script.append(tool_call(TOOL, VALID))
    gateway = LLMGateway(settings())

    result = await gateway.complete_structured(
        "historian", TEMPLATE, context(), output=HistorianRewrite, tool_name=TOOL
    )

    assert isinstance(result, HistorianRewrite)
    assert result.facts[0].observation_ids == [1] and result.facts[0].is_absolute
    assert "2025年5月7日" in result.facts[0].text
    [body] = fake.chat_requests
    assert body["model"] == CORE_MODEL
    assert body["tool_choice"] == {"type": "function", "function": {"name": TOOL}}
    [tool] = body["tools"]
    assert tool["function"]["name"] == TOOL
    assert tool["function"]["description"] == "提交改写后的全部事实。"
    parameters = tool["function"]["parameters"]
    assert parameters["required"] == ["facts"]
    item = parameters["properties"]["facts"]["items"]
    assert set(item["properties"]) == {"text", "observation_ids", "is_absolute"}
    assert f"`{TOOL}`" in messages_of(body)["system"][0]  # the template names the function
    counters = gateway.snapshot()["purposes"]["historian"]
    assert (counters["calls"], counters["retries"], counters["invalid_outputs"]) == (1, 0, 0)
    assert (counters["prompt_tokens"], counters["completion_tokens"]) == (200, 40)


async def test_malformed_tool_output_is_retried_with_the_problem_fed_back(core_preset: FakeOpenAI) -> None:
    fake = core_preset
    fake.chat_usage = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
    fake.script.extend(
        [
            tool_call(TOOL, {"facts": [{"text": "小明要出差"}]}),  # required fields missing
            {"role": "assistant", "content": "我已经改写好了。"},  # no tool call at all
            tool_call(TOOL, VALID),
        ]
    )
    gateway = LLMGateway(settings(max_retries=2))

    result = await gateway.complete_structured(
        "historian", TEMPLATE, context(), output=HistorianRewrite, tool_name=TOOL
    )

    assert result == HistorianRewrite.model_validate(VALID)
    first, second, third = fake.chat_requests
    assert len(messages_of(first)["user"]) == 1
    feedback = messages_of(second)["user"][-1]
    assert "参数不符合要求" in feedback and "facts.0.observation_ids" in feedback and "小明要出差" in feedback
    assert "没有调用函数" in messages_of(third)["user"][-1]
    counters = gateway.snapshot()["purposes"]["historian"]
    assert counters["calls"] == 1 and counters["failures"] == 0
    assert counters["retries"] == 2 and counters["invalid_outputs"] == 2
    assert counters["prompt_tokens"] == 300  # every answered attempt costs tokens


async def test_invalid_output_on_every_attempt_is_unavailable(core_preset: FakeOpenAI) -> None:
    fake = core_preset
    gateway = LLMGateway(settings(max_retries=1))  # the fake answers without calling the tool

    with pytest.raises(LLMUnavailable) as raised:
        await gateway.complete_structured("historian", TEMPLATE, context(), output=HistorianRewrite, tool_name=TOOL)

    assert len(fake.chat_requests) == 2
    assert "格式不对" in raised.value.zh and "invalid_output" in str(raised.value)
    counters = gateway.snapshot()["purposes"]["historian"]
    assert (counters["failures"], counters["invalid_outputs"], counters["retries"]) == (1, 2, 1)


async def test_timeouts_are_retried_then_unavailable(core_preset: FakeOpenAI) -> None:
    fake = core_preset
    fake.chat_delays.extend([3.0, 3.0])
    gateway = LLMGateway(settings(timeout_seconds=0.3, max_retries=1))

    with pytest.raises(LLMUnavailable) as raised:
        await gateway.complete_text("profile_merge", TEMPLATE, {"tool_name": TOOL, **context()})

    assert len(fake.chat_requests) == 2  # one per attempt: the SDK does not retry behind our back
    assert "超时" in raised.value.zh and "timeout" in str(raised.value)
    snapshot = gateway.snapshot()
    counters = snapshot["purposes"]["profile_merge"]
    assert (counters["calls"], counters["failures"], counters["retries"], counters["timeouts"]) == (1, 1, 1, 2)
    assert counters["last_error"].startswith("timeout")
    assert 0.6 <= counters["latency_seconds"] < 3.0
    assert snapshot["total"]["failures"] == 1


async def test_an_unreachable_endpoint_is_retried_then_unavailable(fake_openai: FakeOpenAI) -> None:
    from amrita_core import ModelPreset, PresetManager

    with socket.socket() as probe:  # a 127.0.0.1 port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    name = f"cognition-gateway-down-{port}"
    data = chat_preset(name, "down-model", f"http://127.0.0.1:{port}/v1", "sk-test", stream=False)
    PresetManager().add_preset(ModelPreset.model_validate(data))
    gateway = LLMGateway(settings(name, max_retries=1))

    with pytest.raises(LLMUnavailable) as raised:
        await gateway.complete_text("historian", TEMPLATE, {"tool_name": TOOL, **context()})

    assert "Connection" in str(raised.value)  # the provider's error, not amrita's fallback wrapper
    counters = gateway.snapshot()["purposes"]["historian"]
    assert (counters["failures"], counters["retries"], counters["timeouts"]) == (1, 1, 0)


@pytest.mark.chatflow
async def test_the_configured_preset_is_the_one_used(fake_openai: FakeOpenAI, tmp_root: Path) -> None:
    """Named presets and the default come from the Amrita chat's model presets."""
    models = tmp_root / "config" / "chat" / "models"
    preset_file = models / "cognition-historian.json"
    data = chat_preset("cognition-historian", "historian-model", fake_openai.base_url, "sk-test", stream=False)
    preset_file.write_text(json.dumps(data), encoding="utf-8")
    try:
        fake_openai.script.append({"role": "assistant", "content": "好"})
        await LLMGateway(settings("cognition-historian")).complete_text(
            "historian", TEMPLATE, {"tool_name": TOOL, **context()}
        )
        fake_openai.script.append({"role": "assistant", "content": "好"})
        await LLMGateway(settings("")).complete_text("historian", TEMPLATE, {"tool_name": TOOL, **context()})
    finally:
        preset_file.unlink()
    assert [body["model"] for body in fake_openai.chat_requests] == ["historian-model", "fake-model"]


async def test_a_missing_preset_fails_without_a_request(fake_openai: FakeOpenAI) -> None:
    gateway = LLMGateway(settings("no-such-preset"))

    with pytest.raises(LLMUnavailable) as raised:
        await gateway.complete_text("historian", TEMPLATE, {"tool_name": TOOL, **context()})

    assert "no-such-preset" in raised.value.zh and "not found" in str(raised.value)
    assert fake_openai.chat_requests == []
    assert gateway.snapshot()["purposes"]["historian"]["failures"] == 1


def test_prompts_are_strict_and_shipped_in_the_package() -> None:
    templates = default_templates()
    assert {"historian_rewrite.jinja", "structured_retry.jinja"} <= set(templates.names())
    incomplete = {key: value for key, value in context().items() if key != "observations"}
    with pytest.raises(jinja2.UndefinedError):
        templates.render(TEMPLATE, {"tool_name": TOOL, **incomplete})
    with pytest.raises(jinja2.TemplateNotFound):
        templates.render("no_such_prompt.jinja")
