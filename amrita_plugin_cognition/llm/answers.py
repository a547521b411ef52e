"""The two kinds of answer a gateway call asks for, one attempt each: plain text
(``answer_text``) and one call of one function whose arguments a pydantic model validates
(``answer_structured``; the next attempt carries what was wrong, ``prompt/structured_retry.jinja``).
``Call`` is a call in progress, which the gateway retries and counts (``gateway.py``).
Every failure is an ``AttemptFailed``; amrita_core is imported when an attempt runs."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from .counters import PurposeCounters
from .failures import AttemptFailed, validation_lines
from .prompts import RenderedPrompt

if TYPE_CHECKING:
    from amrita_core import AmritaConfig, ModelPreset, ToolFunctionSchema, UniResponseUsage
    from amrita_core.types import CONTENT_LIST_TYPE

StructuredT = TypeVar("StructuredT", bound=BaseModel)
#: Renders a template with a context (``LLMGateway.render``).
Render = Callable[[str, Mapping[str, Any] | None], RenderedPrompt]

RETRY_TEMPLATE = "structured_retry.jinja"
MAX_FEEDBACK_ARGUMENT_CHARS = 2000
MAX_FEEDBACK_ERRORS = 8


@dataclass(slots=True)
class Call:
    """One gateway call in progress: where it runs, what it has used, what went wrong last."""

    purpose: str
    prompt: RenderedPrompt
    preset: ModelPreset
    config: AmritaConfig
    counters: PurposeCounters
    #: This call's own counters (what ``usage_sink`` receives).
    own: PurposeCounters
    prompt_tokens: int = 0
    completion_tokens: int = 0
    last_failure: AttemptFailed | None = None

    def record_usage(self, usage: UniResponseUsage | None) -> None:
        if usage is None:
            return
        prompt_tokens = int(usage.prompt_tokens or 0)
        completion_tokens = int(usage.completion_tokens or 0)
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        for counters in (self.counters, self.own):
            counters.prompt_tokens += prompt_tokens
            counters.completion_tokens += completion_tokens


def _messages(prompt: RenderedPrompt, extra_user: str | None = None) -> CONTENT_LIST_TYPE:
    from amrita_core.types import Message

    messages: CONTENT_LIST_TYPE = []
    if prompt.system:
        messages.append(Message(role="system", content=prompt.system))
    messages.append(Message(role="user", content=prompt.user))
    if extra_user:
        messages.append(Message(role="user", content=extra_user))
    return messages


async def answer_text(call: Call) -> str:
    """The model's text answer (its thinking tags removed); an empty one is a failed attempt."""
    from amrita_core import call_completion, get_last_response
    from amrita_core.utils import remove_think_tag

    messages = _messages(call.prompt)
    response = await get_last_response(call_completion(messages, preset=call.preset, config=call.config))
    call.record_usage(response.usage)
    text = response.content or ""
    if call.preset.config.cot_model:
        text = remove_think_tag(text)
    text = text.strip()
    if not text:
        raise AttemptFailed("empty", "the model answered with no text")
    return text


def _retry_feedback(call: Call, tool_name: str, render: Render) -> str | None:
    failure = call.last_failure
    if failure is None or failure.kind != "invalid_output":
        return None
    return render(
        RETRY_TEMPLATE, {"tool_name": tool_name, "problem": failure.problem, "arguments": failure.arguments}
    ).user


async def answer_structured(
    call: Call, tool: ToolFunctionSchema, output: type[StructuredT], render: Render
) -> StructuredT:
    """The arguments of the model's call of ``tool``, validated by ``output``; no call, another
    function or invalid arguments are a failed attempt whose problem the next attempt is told."""
    from amrita_core import tools_caller

    tool_name = tool.function.name
    messages = _messages(call.prompt, _retry_feedback(call, tool_name, render))
    response = await tools_caller(
        messages, [tool], preset=call.preset, tool_choice=_tool_choice(call.preset, tool), config=call.config
    )
    call.record_usage(response.usage)
    matching = [item for item in response.tool_calls or [] if item.function.name == tool_name]
    if not matching:
        called = ", ".join(item.function.name for item in response.tool_calls or []) or "nothing"
        raise AttemptFailed(
            "invalid_output",
            f"expected a call to {tool_name}, the model called {called}",
            problem=f"没有调用函数 `{tool_name}`（实际调用：{called}）。",
        )
    arguments = matching[0].function.arguments or ""
    try:
        return output.model_validate_json(arguments)
    except ValidationError as error:
        details = validation_lines(error, MAX_FEEDBACK_ERRORS)
        raise AttemptFailed(
            "invalid_output",
            f"invalid arguments for {tool_name}: {error.error_count()} error(s): "
            + "; ".join(line[2:] for line in details),
            problem="参数不符合要求：\n" + "\n".join(details),
            arguments=arguments[:MAX_FEEDBACK_ARGUMENT_CHARS],
        ) from error


def _tool_choice(preset: ModelPreset, tool: ToolFunctionSchema) -> Any:
    """Force the one function, except on native-thinking presets, whose providers reject a forced
    choice (the same downgrade amrita_core's agent makes); the prompt asks for it then."""
    thinking = preset.thinking_config
    if thinking is not None and (thinking.thinking_type == "enabled" or bool(thinking.enable_thinking)):
        return "auto"
    return tool
