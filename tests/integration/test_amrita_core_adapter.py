"""The one module touching amrita_core's internals (``bot/amrita_core_adapter.py``): against the
installed release, and switched off with one warning on a release outside the range it was
written for. The real call path through Amrita's tool layer is ``tests/integration/test_tool_arguments.py``."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from amrita_core.types import Function, ToolCall

from amrita_plugin_cognition.bot import amrita_core_adapter as adapter


@pytest.fixture(autouse=True)
def _checked_again() -> Iterator[None]:
    yield
    adapter.check()  # the installed version's verdict back for the other tests


def _call(name: str, arguments: str) -> ToolCall:
    return ToolCall(id="call-1", function=Function(name=name, arguments=arguments))


async def _inner(name: str) -> tuple[ToolCall, Any] | None:
    return adapter.executing_tool_call(name)


class Strategy:
    """What ``call_tool`` looks like from the frames: its ``self`` and its ``tool_call``."""

    async def call_tool(self, tool_call: ToolCall) -> tuple[ToolCall, Any] | None:
        return await _inner("end")


def test_the_installed_amrita_core_is_in_the_supported_range() -> None:
    internals = adapter.check()
    assert internals.version is not None and adapter.supported(internals.version)
    assert internals.enabled


def test_the_strategy_has_the_internals_the_adapter_sets() -> None:
    from amrita_core.builtins.agent.react_base import BaseReActAgentStrategy  # type: ignore[attr-defined]

    for name in ("_suggested_stop", "agent_last_step", "reasoning_pc"):
        assert hasattr(BaseReActAgentStrategy, name), name


def test_the_legacy_loop_still_ends_on_an_empty_tool_list() -> None:
    """``stop_agent_loop`` rebinds the strategy's tools to an empty list because the legacy loop's
    ``single_execute`` returns before any model call when it has none."""
    import inspect

    from amrita_core.builtins.agent.react_comm import ReActAgentStrategy  # type: ignore[attr-defined]

    body = inspect.getsource(ReActAgentStrategy.single_execute)
    assert "if not self.tools:\n            return False" in body
    model_call = min(body.find(name) for name in ("_model_round(", "tools_caller(") if name in body)
    assert body.index("if not self.tools") < model_call


def test_call_tool_still_names_its_call_tool_call() -> None:
    import inspect

    from amrita_core.agent.strategy import _StrategyBase  # type: ignore[attr-defined]

    assert "tool_call" in inspect.signature(_StrategyBase.call_tool).parameters


async def test_the_executing_call_and_its_strategy_are_found() -> None:
    strategy = Strategy()
    found = await strategy.call_tool(_call("end", '{"memo": "x"}'))
    assert found is not None
    call, owner = found
    assert call.function.arguments == '{"memo": "x"}' and owner is strategy
    assert await _inner("end") is None  # no call on the chain


def test_the_agent_loop_is_stopped_as_agent_stop_does() -> None:
    offered = ["end", "agent_stop"]
    strategy = SimpleNamespace(_suggested_stop=False, agent_last_step="Thinking", reasoning_pc=4, tools=offered)
    assert adapter.stop_agent_loop(strategy)
    assert (strategy._suggested_stop, strategy.agent_last_step, strategy.reasoning_pc) == (True, "Stopped", 0)
    assert strategy.tools == [] and offered == ["end", "agent_stop"]  # rebound: the running round's copy kept
    assert not adapter.stop_agent_loop(None) and not adapter.stop_agent_loop(object())


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("1.2.0", True),
        ("1.3.1", True),
        ("1.3.9.post1", True),
        ("1.1.9", False),
        ("1.4.0", False),
        ("1.4.0rc1", False),
        ("2.0.0", False),
        ("", False),
        ("unknown", False),
    ],
)
def test_the_range(version: str, expected: bool) -> None:
    assert adapter.supported(version) is expected


@pytest.mark.parametrize("version", ["1.4.0", "1.1.0", None])
async def test_a_version_outside_the_range_turns_the_internals_off_with_one_warning(
    version: str | None, monkeypatch, caplog
) -> None:
    monkeypatch.setattr(adapter, "installed_version", lambda: version)
    with caplog.at_level(logging.WARNING, logger="cognition"):
        internals = adapter.check()
    assert not internals.enabled and not adapter.INTERNALS.enabled
    said = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert len(said) == 1
    assert "internals=off" in said[0] and "不在本插件适配的范围" in said[0] and "outside the range" in said[0]

    assert await Strategy().call_tool(_call("end", "{}")) is None  # no raw arguments
    strategy = SimpleNamespace(_suggested_stop=False, agent_last_step="Thinking", reasoning_pc=4)
    assert not adapter.stop_agent_loop(strategy)  # no stop hint, the strategy untouched
    assert (strategy._suggested_stop, strategy.agent_last_step, strategy.reasoning_pc) == (False, "Thinking", 4)


def test_an_id_tool_refuses_without_raw_arguments_while_amrita_validates(monkeypatch) -> None:
    from amrita_plugin_cognition.bot.tools import registry

    monkeypatch.setattr(adapter, "installed_version", lambda: "9.0.0")
    adapter.check()
    validating = SimpleNamespace(data={"memory_id": 1}, ctx=SimpleNamespace(config=None))
    raw = registry._raw_arguments("cognition_memory_delete", validating)  # type: ignore[arg-type]
    assert not raw.verified and raw.value == {"memory_id": 1}
    assert registry.TOOLS["cognition_memory_delete"].takes_ids
