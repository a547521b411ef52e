"""Registering the LLM tools: schema from the argument model, one validation path, a time limit.

Raw arguments. Amrita validates a tool call's arguments with lax pydantic before a ``custom_run``
tool runs: ``true``, ``1.0`` and ``"1"`` all reach the tool as the integer 1. The tool therefore
reads the arguments the model actually wrote, through ``amrita_core_adapter`` (the one module that
touches amrita_core's internals, on the versions it was written for), and validates them strictly
with its own model. If they cannot be read while Amrita's validation is on, a tool that takes a
database id refuses to run rather than trust coerced values.

What Amrita's own check refuses (a missing required field, a value outside the schema's
``minimum``/``maximum`` or ``enum``, a type it cannot coerce) never reaches the tool: Amrita
answers the model with its ``ERR:`` result, and nothing is changed.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any, Generic, TypeVar

from amrita_core import (
    FunctionDefinitionSchema,
    FunctionParametersSchema,
    FunctionPropertySchema,
    ToolContext,
    on_tools,
)
from pydantic import ValidationError

from ...api import ChatContext, CognitionEngine, clean_text
from ...config import CognitionConfig
from ...errors import TIMEOUTS, CognitionError, InvalidInput
from ...runtime import get_engine
from .. import amrita_core_adapter
from ..context import chat_context, message_time
from .arguments import COGNITION_ERROR, DATABASE_ID_MAX, TAGS_MAX, ToolArguments

logger = logging.getLogger("cognition")

ArgumentsT = TypeVar("ArgumentsT", bound=ToolArguments)
#: ``handler(engine, context, arguments, now)``; ``now`` is the time of the message being answered.
ToolHandler = Callable[[CognitionEngine, ChatContext, ArgumentsT, datetime], Awaitable[dict[str, Any]]]

TIMEOUT_MESSAGE = "记忆服务响应超时，本次操作未完成"
INTERNAL_ERROR_MESSAGE = "记忆服务内部错误，已记录日志；本次操作未完成"
UNVERIFIED_MESSAGE = "无法核对本次调用的原始参数，已拒绝执行（编号类操作需要原始参数）"
#: Fields holding database ids: a tool with one refuses to run on arguments it cannot verify.
ID_FIELDS = frozenset({"memory_id", "pin_id", "entry_id"})
#: JSON Schema numbers beyond this are not exact in a double; such bounds are not declared.
_EXACT_NUMBER = 2**53


def ok(**fields: Any) -> str:
    return json.dumps({"ok": True, **fields}, ensure_ascii=False, default=str)


def error(message: str) -> str:
    return json.dumps({"ok": False, "error": message}, ensure_ascii=False)


# ---------------------------------------------------------------------------- schema generation


def _property(schema: dict[str, Any], description: str | None = None) -> FunctionPropertySchema:
    """One JSON Schema property of a pydantic model as Amrita's ``FunctionPropertySchema``."""
    branches = [branch for branch in schema.get("anyOf", ()) if branch.get("type") != "null"]
    body = branches[0] if len(branches) == 1 else schema
    fields: dict[str, Any] = {
        "type": body.get("type", "string"),
        "description": description or schema.get("description") or body.get("description") or "",
    }
    if "enum" in body:
        fields["enum"] = list(body["enum"])
    for keyword in ("minimum", "maximum"):
        value = body.get(keyword)
        if value is not None and abs(value) <= _EXACT_NUMBER:
            fields[keyword] = value
    if body.get("type") == "array":
        fields["items"] = _property(body.get("items", {"type": "string"}))
        if body.get("maxItems") is not None:
            fields["maxItems"] = body["maxItems"]
    if schema.get("default") is not None:
        fields["default"] = schema["default"]
    return FunctionPropertySchema(**fields)


def function_parameters(model: type[ToolArguments]) -> FunctionParametersSchema:
    """The tool's parameter schema, generated from its argument model."""
    schema = model.model_json_schema()
    properties = {name: _property(prop) for name, prop in schema.get("properties", {}).items()}
    return FunctionParametersSchema(type="object", properties=properties, required=list(schema.get("required", [])))


# ------------------------------------------------------------------------------- validation


@cache
def _bounds(model: type[ToolArguments], field: str) -> tuple[int | None, int | None]:
    prop = model.model_json_schema().get("properties", {}).get(field, {})
    branches = [branch for branch in prop.get("anyOf", [prop]) if branch.get("type") == "integer"]
    if not branches:
        return None, None
    return branches[0].get("minimum"), branches[0].get("maximum")


def _shown(value: Any) -> str:
    """The received value as JSON, short, and safe to send back (no lone surrogate, no NUL)."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    text = clean_text(text)
    return text if len(text) <= 40 else f"{text[:37]}..."


def _integer_message(field: str, value: Any, kind: str, low: int | None, high: int | None) -> str:
    received = f"（收到 {_shown(value)}）"
    if high == DATABASE_ID_MAX:  # a database id
        if kind == "less_than_equal":
            return f"参数 {field} 超出范围：最大 {DATABASE_ID_MAX}{received}"
        return f"参数 {field} 必须是正整数{received}"
    if low is not None and high is not None:
        return f"参数 {field} 必须是 {low} 到 {high} 之间的整数{received}"
    return f"参数 {field} 必须是整数{received}"


def _message(model: type[ToolArguments], item: Any) -> str:
    location = [str(part) for part in item.get("loc", ())]
    field = location[0] if location else ""
    kind = item.get("type", "")
    value = item.get("input")
    received = f"（收到 {_shown(value)}）"
    if kind == COGNITION_ERROR:
        return str(item.get("msg"))
    if not field:
        return f"参数必须是 JSON 对象{received}"
    if kind == "missing":
        return f"缺少参数 {field}"
    low, high = _bounds(model, field)
    if kind.startswith("int_") or (kind in ("greater_than_equal", "less_than_equal") and (low, high) != (None, None)):
        return _integer_message(field, value, kind, low, high)
    if kind == "literal_error":
        expected = item.get("ctx", {}).get("expected", "")
        allowed = " / ".join(part.strip(" '") for part in str(expected).replace(" or ", ",").split(","))
        return f"参数 {field} 只能是 {allowed}{received}"
    if field == "tags":
        if kind == "too_long":
            return f"参数 tags 最多 {TAGS_MAX} 个（收到 {item.get('ctx', {}).get('actual_length', '?')} 个）"
        return f"参数 tags 必须是字符串数组{received}"
    if kind == "string_type":
        return f"参数 {field} 必须是字符串{received}"
    return f"参数 {field} 无效：{item.get('msg', '')}"


def _cleaned(value: Any) -> Any:
    """Every string in decoded JSON through ``clean_text`` (pydantic refuses lone surrogates)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list):
        return [_cleaned(item) for item in value]
    if isinstance(value, dict):
        return {clean_text(str(key)): _cleaned(item) for key, item in value.items()}
    return value


def parse_arguments(model: type[ArgumentsT], raw: Any, config: CognitionConfig | None) -> ArgumentsT:
    """Strictly validate the raw arguments; ``InvalidInput`` names each bad field and why."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except ValueError as failure:
            raise InvalidInput("参数不是有效的 JSON 对象", en=f"tool arguments are not JSON: {failure}") from None
    if raw is None:
        raw = {}
    try:
        return model.model_validate(_cleaned(raw), strict=True, context={"config": config})
    except ValidationError as failure:
        messages = list(dict.fromkeys(_message(model, item) for item in failure.errors()))
        problems = ", ".join(
            f"{'.'.join(map(str, item['loc'])) or '<root>'}={item['type']}" for item in failure.errors()
        )
        raise InvalidInput("；".join(messages[:3]), en=f"invalid tool arguments: {problems}") from None


# ----------------------------------------------------------------------------- raw arguments


@dataclass(frozen=True, slots=True)
class RawArguments:
    value: Any
    #: False when only Amrita's (possibly coerced) arguments were available.
    verified: bool
    #: The agent strategy running the call (``call_tool``'s ``self``), when it was found.
    strategy: Any = None


@dataclass(frozen=True, slots=True)
class ToolCallContext:
    """What a handler may need beyond its arguments: the OneBot event being answered and the
    agent strategy that runs the call (the ``end`` tool stops its loop)."""

    event: Any
    strategy: Any


#: Set around each handler call (inside the call's own task).
CURRENT_CALL: ContextVar[ToolCallContext | None] = ContextVar("cognition_tool_call", default=None)


_warned_unverified = False


def _raw_arguments(name: str, tool_context: ToolContext) -> RawArguments:
    global _warned_unverified
    found = amrita_core_adapter.executing_tool_call(name)
    if found is not None:
        call, strategy = found
        return RawArguments(call.function.arguments, verified=True, strategy=strategy)
    verified = not amrita_core_adapter.validates_arguments(tool_context)
    if not verified and not _warned_unverified:
        _warned_unverified = True
        logger.warning("[cognition] stage=tool raw_arguments=missing; using the framework's validated arguments")
    return RawArguments(dict(tool_context.data or {}), verified=verified)


# ------------------------------------------------------------------------------ registration


@dataclass(frozen=True, slots=True)
class RegisteredTool(Generic[ArgumentsT]):
    name: str
    description: str
    arguments: type[ArgumentsT]
    handler: ToolHandler[ArgumentsT]

    @property
    def definition(self) -> FunctionDefinitionSchema:
        return FunctionDefinitionSchema(
            name=self.name, description=self.description, parameters=function_parameters(self.arguments)
        )

    @property
    def takes_ids(self) -> bool:
        return bool(ID_FIELDS & set(self.arguments.model_fields))

    async def run(self, tool_context: ToolContext) -> str:
        raw = _raw_arguments(self.name, tool_context)  # first: before anything leaves this task
        from amrita.plugins.chat.runtime import try_get_amrita_ctx

        chat_object = tool_context.ctx.chat_object
        amrita_context = try_get_amrita_ctx(chat_object) if chat_object else None
        if not amrita_context:
            return error("记忆工具只能在聊天中使用")
        started = time.perf_counter()
        timeout = None
        try:
            engine = await get_engine()
            if not engine.config.enable:
                return error("记忆功能已被管理员关闭")
            timeout = engine.config.tool_timeout_seconds
            return await asyncio.wait_for(self._serve(engine, amrita_context, raw), timeout=timeout)
        except TIMEOUTS:
            logger.warning(
                "[cognition] stage=tool tool=%s timeout_s=%.1f elapsed_ms=%.1f; the call did not finish",
                self.name,
                timeout or 0.0,
                (time.perf_counter() - started) * 1000,
            )
            return error(TIMEOUT_MESSAGE)
        except CognitionError as failure:
            logger.info("[cognition] stage=tool tool=%s refused=%s", self.name, str(failure)[:300])
            return error(failure.zh)
        except Exception:
            logger.exception("[cognition] stage=tool tool=%s failed", self.name)
            return error(INTERNAL_ERROR_MESSAGE)

    async def _serve(self, engine: CognitionEngine, amrita_context: Any, raw: RawArguments) -> str:
        event = amrita_context["event"]
        context = await chat_context(amrita_context["bot"], event)
        if not await engine.governance.memory_on(context.bot_id, context.scope):  # configured off, or /memory off
            return error("本会话已关闭记忆功能")
        if not raw.verified and self.takes_ids:
            raise InvalidInput(UNVERIFIED_MESSAGE, en="raw tool arguments unavailable; refusing an id operation")
        arguments = parse_arguments(self.arguments, raw.value, engine.config)
        CURRENT_CALL.set(ToolCallContext(event, raw.strategy))
        result = await self.handler(engine, context, arguments, message_time(event))
        return ok(**result)


#: Every registered tool by name (for tests and docs).
TOOLS: dict[str, RegisteredTool[Any]] = {}


def cognition_tool(
    name: str, description: str, arguments: type[ArgumentsT]
) -> Callable[[ToolHandler[ArgumentsT]], ToolHandler[ArgumentsT]]:
    """Register ``handler`` as an Amrita tool whose parameters are ``arguments``."""

    def register(handler: ToolHandler[ArgumentsT]) -> ToolHandler[ArgumentsT]:
        tool = RegisteredTool(name, description, arguments, handler)
        TOOLS[name] = tool

        async def run(tool_context: ToolContext) -> str:
            return await tool.run(tool_context)

        on_tools(tool.definition, custom_run=True)(run)
        return handler

    return register
