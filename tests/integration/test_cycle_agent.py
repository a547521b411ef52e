"""The consolidation cycle's agent driver (``llm/agent.py``) against the fake OpenAI-compatible
server: scripted tool calls run through amrita_core's ReAct tool loop, one request per round; the
arguments are validated here; the budgets end the run after a wind-down round that offers only the
stop tool; nothing of a run reaches Amrita's global tools or the bot's matchers."""

from __future__ import annotations

import asyncio
import importlib
import json
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any

import pytest
from amrita_core.builtins.agent.events import StepToolCallEvent, StepToolReturnEvent
from amrita_core.hook.event import FallbackContext
from fake_openai import FakeOpenAI, chat_preset, tool_call
from pydantic import BaseModel, Field

from amrita_plugin_cognition.errors import LLMUnavailable
from amrita_plugin_cognition.llm import LLMGateway, LLMSettings, PurposeCounters, core_version
from amrita_plugin_cognition.llm.agent_types import (
    STOP_TOOL,
    AgentBudget,
    AgentOutcome,
    AgentRunner,
    AgentTool,
    ToolCallRecord,
)

PRESET = "cognition-agent-test"
BACKUP_PRESET = "cognition-agent-backup"
PURPOSE = "cycle_judgement"
SYSTEM = "你在整理一个群聊的记忆。每一步调用一个工具；做完后调用 cycle_stop 写下总结。"
KICKOFF = "群 30001 有 3 条可能重复的记忆：#11、#12、#13。"
ROOMY = AgentBudget(max_iterations=10, max_tokens=1_000_000)


class NoteArguments(BaseModel):
    """给一条记忆写备注。"""

    memory_id: int = Field(description="记忆编号")
    note: str = Field(max_length=20, description="备注")


class TagArguments(BaseModel):
    """给一条记忆加标签。"""

    memory_id: int = Field(description="记忆编号")
    tags: list[str] = Field(min_length=1, description="标签")


class Handlers:
    """The run's two tools; what each handler was given, and the order handlers entered and left."""

    def __init__(self, note_error: Exception | None = None, note_delay: float = 0.0) -> None:
        self.received: list[BaseModel] = []
        self.trace: list[str] = []
        self.note_error = note_error
        self.note_delay = note_delay

    async def note(self, arguments: BaseModel) -> str:
        assert isinstance(arguments, NoteArguments)
        self.trace.append(f"enter {arguments.memory_id}")
        if self.note_delay:
            await asyncio.sleep(self.note_delay)
        self.trace.append(f"leave {arguments.memory_id}")
        self.received.append(arguments)
        if self.note_error is not None:
            raise self.note_error
        return f"已给 #{arguments.memory_id} 写备注"

    async def tag(self, arguments: BaseModel) -> str:
        assert isinstance(arguments, TagArguments)
        self.received.append(arguments)
        return f"#{arguments.memory_id} 加了 {len(arguments.tags)} 个标签"

    def tools(self) -> list[AgentTool]:
        return [
            AgentTool("cognition_test_note", "给一条记忆写备注。", NoteArguments, self.note),
            AgentTool("cognition_test_tag", "给一条记忆加标签。", TagArguments, self.tag),
        ]


class Sink:
    def __init__(self) -> None:
        self.reported: list[tuple[str, PurposeCounters]] = []

    async def __call__(self, purpose: str, counters: PurposeCounters) -> None:
        self.reported.append((purpose, counters))


def gateway(sink: Sink | None = None, **settings: object) -> LLMGateway:
    values: dict[str, object] = {"preset": PRESET, "timeout_seconds": 5.0, "max_retries": 0}
    values.update(settings)
    return LLMGateway(LLMSettings.model_validate(values), usage_sink=sink)


def usage(prompt: int, completion: int) -> dict[str, int]:
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def reply(name: str, arguments: dict[str, Any], tokens: tuple[int, int] = (0, 0), call_id: str = "call_1") -> dict:
    return {**tool_call(name, arguments, call_id), "__usage__": usage(*tokens)}


def calls(*pairs: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """One response calling several tools at once."""
    made = [
        tool_call(name, arguments, f"call_{index}")["tool_calls"][0] for index, (name, arguments) in enumerate(pairs)
    ]
    return {"role": "assistant", "content": None, "tool_calls": made}


def stop(summary: str = "合并了 #11 和 #12，#13 留着。", tokens: tuple[int, int] = (0, 0)) -> dict[str, Any]:
    return reply(STOP_TOOL, {"summary": summary}, tokens, call_id="call_stop")


def offered(body: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in body.get("tools") or []]


def tool_answers(body: dict[str, Any]) -> list[str]:
    return [message["content"] for message in body["messages"] if message["role"] == "tool"]


async def run(
    handlers: Handlers,
    budget: AgentBudget = ROOMY,
    should_stop: Callable[[], Awaitable[bool]] | None = None,
    llm: LLMGateway | None = None,
    tools: Sequence[AgentTool] | None = None,
    kickoff: str = KICKOFF,
) -> AgentOutcome:
    runner: AgentRunner = (llm or gateway()).run_agent
    return await runner(PURPOSE, SYSTEM, kickoff, tools or handlers.tools(), budget, should_stop)


# ---------------------------------------------------------------------------------- a run


async def test_two_tools_then_stop(model: FakeOpenAI) -> None:
    model.script.extend(
        [
            reply("cognition_test_note", {"memory_id": 11, "note": "和 #12 重复"}, (100, 10)),
            reply("cognition_test_tag", {"memory_id": 12, "tags": ["出行", "成都"]}, (150, 12)),
            stop(tokens=(200, 8)),
        ]
    )
    handlers, sink = Handlers(), Sink()
    llm = gateway(sink)

    outcome = await run(handlers, llm=llm)

    assert outcome.ended == "stopped" and outcome.error == ""
    assert outcome.summary == "合并了 #11 和 #12，#13 留着。"
    assert (outcome.rounds, outcome.prompt_tokens, outcome.completion_tokens, outcome.tokens) == (3, 450, 30, 480)
    assert outcome.calls == [
        ToolCallRecord(
            1,
            "cognition_test_note",
            True,
            len("已给 #11 写备注"),
            '{"memory_id": 11, "note": "和 #12 重复"}',
            "已给 #11 写备注",
        ),
        ToolCallRecord(
            2,
            "cognition_test_tag",
            True,
            len("#12 加了 2 个标签"),
            '{"memory_id": 12, "tags": ["出行", "成都"]}',
            "#12 加了 2 个标签",
        ),
        ToolCallRecord(3, STOP_TOOL, True, len("已结束。"), '{"summary": "合并了 #11 和 #12，#13 留着。"}', "已结束。"),
    ]
    assert handlers.received == [
        NoteArguments(memory_id=11, note="和 #12 重复"),
        TagArguments(memory_id=12, tags=["出行", "成都"]),
    ]
    # one request per round: no decomposition, no reasoning, no closing completion
    first, second, third = model.chat_requests
    for body in model.chat_requests:
        assert offered(body) == ["cognition_test_note", "cognition_test_tag", STOP_TOOL]  # no agent_stop
        assert body["tool_choice"] == "required" and body["model"] == "historian-model"
    assert [message["role"] for message in first["messages"]] == ["system", "user"]
    assert first["messages"][0]["content"] == SYSTEM and first["messages"][1]["content"] == KICKOFF
    assert tool_answers(second) == ["已给 #11 写备注"]
    assert tool_answers(third) == ["已给 #11 写备注", "#12 加了 2 个标签"]
    stop_schema = next(tool for tool in first["tools"] if tool["function"]["name"] == STOP_TOOL)["function"]
    assert stop_schema["parameters"]["required"] == ["summary"]
    assert stop_schema["parameters"]["properties"]["summary"]["maxLength"] == 500
    counters = llm.snapshot()["purposes"][PURPOSE]
    assert (counters["calls"], counters["failures"], counters["prompt_tokens"], counters["completion_tokens"]) == (
        3,
        0,
        450,
        30,
    )
    [(purpose, reported)] = sink.reported  # once, at the end of the run
    assert purpose == PURPOSE and (reported.calls, reported.prompt_tokens, reported.completion_tokens) == (3, 450, 30)


async def test_the_tools_go_out_without_filler_and_keep_what_the_model_needs(model: FakeOpenAI) -> None:
    """``llm/lean_schema.py`` on the wire: no auto description, no ``uniqueItems``/``strict``
    false; the real descriptions, types, bounds and required stay."""
    model.script.append(stop())
    await run(Handlers())
    (body,) = model.chat_requests
    text = json.dumps(body["tools"], ensure_ascii=False)
    for filler in ('"Field ', '"List item"', '"uniqueItems"', '"strict"'):
        assert filler not in text
    tag = next(tool for tool in body["tools"] if tool["function"]["name"] == "cognition_test_tag")["function"]
    assert tag["description"] == "给一条记忆加标签。"
    assert tag["parameters"] == {
        "type": "object",
        "properties": {
            "memory_id": {"type": "integer", "description": "记忆编号"},
            "tags": {"type": "array", "description": "标签", "items": {"type": "string"}, "minItems": 1},
        },
        "required": ["memory_id", "tags"],
    }


async def test_invalid_arguments_are_answered_and_the_handler_is_not_called(model: FakeOpenAI) -> None:
    model.script.extend(
        [
            reply("cognition_test_note", {"memory_id": "第十一条", "note": "备" * 30}),
            reply("cognition_test_tag", {"memory_id": 12}),
            stop(),
        ]
    )
    handlers = Handlers()

    outcome = await run(handlers)

    assert outcome.ended == "stopped" and handlers.received == []
    assert [(call.name, call.ok) for call in outcome.calls] == [
        ("cognition_test_note", False),
        ("cognition_test_tag", False),
        (STOP_TOOL, True),
    ]
    note_answer, tag_answer = tool_answers(model.chat_requests[2])
    assert note_answer.startswith("参数不符合要求，没有执行：")
    assert "- memory_id：" in note_answer and "- note：" in note_answer
    assert tag_answer.startswith("参数不符合要求") and "- tags：" in tag_answer
    # the record keeps what the model sent and what it read back
    assert json.loads(outcome.calls[0].arguments) == {"memory_id": "第十一条", "note": "备" * 30}
    assert (outcome.calls[0].answer, outcome.calls[1].answer) == (note_answer, tag_answer)


async def test_a_summary_over_500_characters_is_refused_and_the_run_goes_on(model: FakeOpenAI) -> None:
    model.script.extend([stop("长" * 501), stop("短的总结")])

    outcome = await run(Handlers())

    assert outcome.ended == "stopped" and outcome.summary == "短的总结" and outcome.rounds == 2
    assert [call.ok for call in outcome.calls] == [False, True]
    assert "- summary：" in tool_answers(model.chat_requests[1])[0]


async def test_a_handler_that_raises_is_answered_and_the_run_goes_on(model: FakeOpenAI) -> None:
    model.script.extend([reply("cognition_test_note", {"memory_id": 11, "note": "重复"}), stop()])
    handlers = Handlers(note_error=RuntimeError("数据库忙"))

    outcome = await run(handlers)

    assert outcome.ended == "stopped" and outcome.rounds == 2
    failed = "工具出错：RuntimeError: 数据库忙"
    assert outcome.calls[0] == ToolCallRecord(
        1, "cognition_test_note", False, len(failed), '{"memory_id": 11, "note": "重复"}', failed
    )
    assert tool_answers(model.chat_requests[1]) == ["工具出错：RuntimeError: 数据库忙"]


async def test_a_refusal_is_recorded_as_not_ok(model: FakeOpenAI) -> None:
    async def refuse(arguments: BaseModel) -> str:
        return "拒绝：这条记忆已经被合并了"

    tools = [AgentTool("cognition_test_note", "给一条记忆写备注。", NoteArguments, refuse)]
    model.script.extend([reply("cognition_test_note", {"memory_id": 11, "note": "重复"}), stop()])

    outcome = await run(Handlers(), tools=tools)

    assert [(call.name, call.ok) for call in outcome.calls] == [("cognition_test_note", False), (STOP_TOOL, True)]


# ---------------------------------------------------------------------------------- budgets


async def test_the_last_allowed_round_offers_only_the_stop_tool(model: FakeOpenAI) -> None:
    model.script.extend(
        [
            reply("cognition_test_note", {"memory_id": 11, "note": "一"}),
            reply("cognition_test_note", {"memory_id": 12, "note": "二"}),
            reply("cognition_test_note", {"memory_id": 13, "note": "三"}),  # the model ignores the wind-down
        ]
    )
    handlers = Handlers()

    outcome = await run(handlers, AgentBudget(max_iterations=3, max_tokens=1_000_000))

    assert outcome.ended == "iterations" and outcome.rounds == 3 and outcome.summary == ""
    assert len(model.chat_requests) == 3
    first, second, last = model.chat_requests
    assert offered(first) == offered(second) == ["cognition_test_note", "cognition_test_tag", STOP_TOOL]
    assert offered(last) == [STOP_TOOL]
    told = last["messages"][-1]
    assert told["role"] == "user" and STOP_TOOL in told["content"] and "\n" not in told["content"]
    assert not any(STOP_TOOL in str(message.get("content")) for message in second["messages"][1:])
    assert [arguments.memory_id for arguments in handlers.received] == [11, 12]  # not the third call
    assert outcome.calls[-1].round == 3 and not outcome.calls[-1].ok


async def test_a_one_round_budget_winds_down_at_once_and_stops(model: FakeOpenAI) -> None:
    model.script.append(stop("什么也没改"))

    outcome = await run(Handlers(), AgentBudget(max_iterations=1, max_tokens=1_000_000))

    assert outcome.ended == "stopped" and outcome.summary == "什么也没改"
    [body] = model.chat_requests
    assert offered(body) == [STOP_TOOL]


async def test_the_token_budget_winds_down_then_ends_the_run(model: FakeOpenAI) -> None:
    model.script.extend(
        [
            reply("cognition_test_note", {"memory_id": 11, "note": "一"}, (300, 20)),  # 320: 680 left
            reply("cognition_test_note", {"memory_id": 12, "note": "二"}, (500, 30)),  # 850: 530 > 150 left
            reply("cognition_test_note", {"memory_id": 13, "note": "三"}, (600, 20)),  # offered only the stop tool
            reply("cognition_test_note", {"memory_id": 14, "note": "四"}, (700, 20)),  # never asked for
        ]
    )
    handlers = Handlers()

    outcome = await run(handlers, AgentBudget(max_iterations=10, max_tokens=1000))

    assert outcome.ended == "tokens" and outcome.rounds == 3
    assert (outcome.prompt_tokens, outcome.completion_tokens) == (1400, 70)
    assert [offered(body) for body in model.chat_requests] == [
        ["cognition_test_note", "cognition_test_tag", STOP_TOOL],
        ["cognition_test_note", "cognition_test_tag", STOP_TOOL],
        [STOP_TOOL],
    ]
    assert [arguments.memory_id for arguments in handlers.received] == [11, 12]


async def test_should_stop_is_asked_between_rounds_and_yields(model: FakeOpenAI) -> None:
    model.script.extend([reply("cognition_test_note", {"memory_id": 11, "note": "一"}), stop()])
    asked: list[int] = []

    async def chat_talked() -> bool:
        asked.append(len(model.chat_requests))
        return True

    outcome = await run(Handlers(), should_stop=chat_talked)

    assert outcome.ended == "yielded" and outcome.rounds == 1 and len(model.chat_requests) == 1
    assert asked == [1]  # not before the first round
    assert [call.name for call in outcome.calls] == ["cognition_test_note"]  # what the tools did stays


async def test_a_should_stop_that_raises_ends_the_run_and_its_rounds_are_counted(model: FakeOpenAI) -> None:
    model.script.extend([reply("cognition_test_note", {"memory_id": 11, "note": "一"}, (40, 2)), stop()])
    sink = Sink()

    async def broken() -> bool:
        raise ConnectionError("activity table unreachable")

    with pytest.raises(ConnectionError):
        await run(Handlers(), should_stop=broken, llm=gateway(sink))

    [(_, reported)] = sink.reported
    assert (reported.calls, reported.failures, reported.prompt_tokens) == (1, 1, 40)
    assert reported.last_error == "interrupted after round 1: ConnectionError"


async def test_tools_that_share_a_name_are_refused_before_any_request(model: FakeOpenAI) -> None:
    handlers = Handlers()
    clash = [*handlers.tools(), AgentTool(STOP_TOOL, "同名", NoteArguments, handlers.note)]

    with pytest.raises(ValueError, match=STOP_TOOL):
        await run(handlers, tools=clash)

    assert model.chat_requests == []


async def test_a_provider_error_fails_the_run_without_retrying_the_round(model: FakeOpenAI) -> None:
    # the OpenAI SDK retries a 500 twice inside the one request (amrita_core's call_tools sets no
    # retry count); the round itself is not run again
    model.script.extend([{"__status__": 500}] * 3 + [stop()])
    sink = Sink()
    llm = gateway(sink)

    outcome = await run(Handlers(), llm=llm)

    assert outcome.ended == "failed" and outcome.rounds == 1 and outcome.calls == []
    assert outcome.error.startswith("round 1: ") and "500" in outcome.error
    assert len(model.chat_requests) == 3 and len(model.script) == 1
    counters = llm.snapshot()["purposes"][PURPOSE]
    assert (counters["calls"], counters["failures"], counters["timeouts"]) == (1, 1, 0)
    assert counters["last_error"] == outcome.error
    assert [counters.failures for _, counters in sink.reported] == [1]


async def test_a_round_without_an_answer_in_time_fails_the_run(model: FakeOpenAI) -> None:
    model.chat_delays.append(3.0)
    model.script.append(stop())
    llm = gateway(timeout_seconds=0.3)

    outcome = await run(Handlers(), llm=llm)

    assert outcome.ended == "failed" and "timeout" in outcome.error
    assert llm.snapshot()["purposes"][PURPOSE]["timeouts"] == 1


async def test_an_answer_without_a_tool_call_ends_the_run(model: FakeOpenAI) -> None:
    model.script.append({"role": "assistant", "content": "这些记忆都不用改。"})

    outcome = await run(Handlers())

    assert outcome.ended == "no_tool_call" and outcome.rounds == 1 and outcome.summary == ""


# ---------------------------------------------------------------------------------- isolation

STEP_EVENTS: list[str] = []
FALLBACK = {"active": False, "seen": 0}


def _register_matchers() -> None:
    """Matchers a plugin of the bot could register: step events and a preset fallback that switches
    to a backup preset (as the Amrita chat does with its backup list). Registered once per process."""
    from amrita_core import ModelPreset, PresetManager
    from amrita_core.hook.on import on_preset_fallback
    from amrita_sense.hook.on import on_event

    @on_event("agent.tool_call", 10, False).handle()
    async def _called(event: StepToolCallEvent) -> None:
        STEP_EVENTS.append(event.event_type)

    @on_event("agent.tool_return", 10, False).handle()
    async def _returned(event: StepToolReturnEvent) -> None:
        STEP_EVENTS.append(event.event_type)

    @on_preset_fallback(priority=1, block=True).handle()
    async def _fallback(context: FallbackContext) -> None:
        if FALLBACK["active"]:
            FALLBACK["seen"] += 1
            context.preset = PresetManager().get_preset(BACKUP_PRESET)

    manager = PresetManager()
    if BACKUP_PRESET not in {preset.name for preset in manager.get_all_presets()}:
        data = chat_preset(BACKUP_PRESET, "backup-model", FakeOpenAIHolder.base_url, "sk", stream=False)
        manager.add_preset(ModelPreset.model_validate(data))


class FakeOpenAIHolder:
    base_url = ""


@pytest.fixture
def matchers(model: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    """The matchers registered, and a global Amrita config as in the bot (the chat plugin sets one;
    with the server backend it is not loaded)."""
    from amrita_core import AmritaConfig

    config_module = importlib.import_module("amrita_core.config")
    if not getattr(config_module, "__inited"):
        monkeypatch.setattr(config_module, "__config", AmritaConfig())
        monkeypatch.setattr(config_module, "__inited", True)
    if not FakeOpenAIHolder.base_url:
        FakeOpenAIHolder.base_url = model.base_url
        _register_matchers()
    STEP_EVENTS.clear()
    FALLBACK.update(active=False, seen=0)
    yield model
    FALLBACK["active"] = False


def _plain_strategy() -> Any:
    """amrita_core's own ReAct strategy on a fresh context (what a chat turn would build)."""
    from amrita_core import AmritaConfig
    from amrita_core.agent.context import build_strategy_context
    from amrita_core.builtins.agent import ReActAgentStrategy
    from amrita_core.tools.manager import MultiToolsManager
    from amrita_core.types import Message, SendMessageWrap

    context = build_strategy_context(
        user_input="x",
        original_context=SendMessageWrap(Message(role="system", content="s"), [], Message(role="user", content="x")),
        config=AmritaConfig(),
        tools_manager=MultiToolsManager(),
        train_content="s",
    )
    return ReActAgentStrategy(context)


async def test_nothing_of_a_run_is_global(matchers: FakeOpenAI) -> None:
    from amrita_core import ToolsManager
    from amrita_core.types import Function, ToolCall

    global_tools = ToolsManager()
    before = (set(global_tools.tools_meta()), set(global_tools.get_disabled_tools()))
    matchers.script.extend(
        [
            reply("cognition_test_note", {"memory_id": 11, "note": "一"}),
            reply("cognition_test_note", {"memory_id": 12, "note": "二"}),  # the wind-down round
        ]
    )

    outcome = await run(Handlers(), AgentBudget(max_iterations=2, max_tokens=1_000_000))

    assert outcome.ended == "iterations"
    assert (set(global_tools.tools_meta()), set(global_tools.get_disabled_tools())) == before
    assert not {"cognition_test_note", "cognition_test_tag", STOP_TOOL} & set(global_tools.tools_meta())
    plain = _plain_strategy()
    assert "agent_stop" in [tool.function.name for tool in plain.tools]  # taken out of the run's rounds only
    assert STEP_EVENTS == []  # the bot's step matchers saw none of the run's calls
    # the control: amrita_core's own strategy announces a call to the same matchers
    await plain._trigger_tool_call_event(ToolCall(id="c", function=Function(name="t", arguments="{}")))
    assert STEP_EVENTS == ["agent.tool_call"]


async def test_a_failed_round_is_not_retried_on_the_bots_fallback_preset(matchers: FakeOpenAI) -> None:
    from amrita_core import get_config, set_config, tools_caller
    from amrita_core.types import Message

    bot_config = get_config()
    generous = bot_config.model_copy(update={"llm": bot_config.llm.model_copy(update={"max_fallbacks": 3})})
    set_config(generous)  # a bot whose chat falls back to backup presets
    FALLBACK["active"] = True
    try:
        matchers.script.extend([{"__status__": 400}, stop()])
        outcome = await run(Handlers())
        assert outcome.ended == "failed" and outcome.rounds == 1
        assert [body["model"] for body in matchers.chat_requests] == ["historian-model"]
        assert len(matchers.script) == 1
        # the control: a call made with the bot's configuration goes on to the backup preset
        matchers.chat_requests.clear()
        matchers.script.appendleft({"__status__": 400})
        preset = await gateway().preset()
        await tools_caller([Message(role="user", content="x")], [], preset=preset)
        assert [body["model"] for body in matchers.chat_requests] == ["historian-model", "backup-model"]
    finally:
        set_config(bot_config)


async def test_two_runs_send_byte_identical_first_requests(model: FakeOpenAI) -> None:
    firsts: list[str] = []
    for _ in range(2):
        model.reset()
        model.script.append(stop())
        await run(Handlers())
        [body] = model.chat_requests
        firsts.append(json.dumps({key: body[key] for key in ("messages", "tools", "tool_choice")}, ensure_ascii=False))
    assert firsts[0] == firsts[1]
    assert SYSTEM in firsts[0] and KICKOFF in firsts[0]


async def test_the_calls_of_one_response_run_one_at_a_time(model: FakeOpenAI) -> None:
    model.script.extend(
        [
            calls(
                ("cognition_test_note", {"memory_id": 11, "note": "一"}),
                ("cognition_test_note", {"memory_id": 12, "note": "二"}),
                ("cognition_test_note", {"memory_id": 13, "note": "三"}),
            ),
            stop(),
        ]
    )
    handlers = Handlers(note_delay=0.05)

    outcome = await run(handlers)

    assert outcome.ended == "stopped" and outcome.rounds == 2
    assert handlers.trace == ["enter 11", "leave 11", "enter 12", "leave 12", "enter 13", "leave 13"]
    assert tool_answers(model.chat_requests[1]) == ["已给 #11 写备注", "已给 #12 写备注", "已给 #13 写备注"]


async def test_five_identical_calls_in_one_response_do_not_break_the_run(model: FakeOpenAI) -> None:
    same = ("cognition_test_note", {"memory_id": 11, "note": "一"})
    model.script.extend([calls(*[same] * 5), stop()])
    handlers = Handlers()

    outcome = await run(handlers)

    assert outcome.ended == "stopped"
    assert len(handlers.received) == 4  # amrita_core's stall detector cancels the fifth
    answers = tool_answers(model.chat_requests[1])
    assert len(answers) == 5 and answers[-1].startswith("Cancelled")


async def test_a_run_needs_no_global_amrita_config(model: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    config_module = importlib.import_module("amrita_core.config")
    monkeypatch.setattr(config_module, "__inited", False)  # as in the CLI: no bot set one
    model.script.extend([reply("cognition_test_note", {"memory_id": 11, "note": "一"}), stop()])

    outcome = await run(Handlers())

    assert outcome.ended == "stopped" and outcome.rounds == 2


# ---------------------------------------------------------------------------------- the version


@pytest.mark.parametrize("version", ["1.4.0", "1.1.9", None])
async def test_an_amrita_core_outside_the_range_runs_nothing(
    model: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, version: str | None
) -> None:
    monkeypatch.setattr(core_version, "installed_version", lambda: version)
    model.script.append(stop())
    llm = gateway()

    with pytest.raises(LLMUnavailable) as raised:
        await run(Handlers(), llm=llm)

    assert model.chat_requests == []
    assert "不在本插件适配的范围 >=1.2.0,<1.4" in raised.value.zh
    assert "outside the range >=1.2.0,<1.4" in raised.value.en and (version or "(unknown)") in raised.value.en
    assert llm.snapshot()["purposes"][PURPOSE]["failures"] == 1


async def test_a_missing_preset_runs_nothing(model: FakeOpenAI) -> None:
    with pytest.raises(LLMUnavailable):
        await run(Handlers(), llm=gateway(preset="no-such-agent-preset"))
    assert model.chat_requests == []
