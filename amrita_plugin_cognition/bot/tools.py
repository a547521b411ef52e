"""LLM tools. Scope, identity and the time of the turn come from the event, never from the arguments.

Every tool answers one short JSON object: ``{"ok": true, ...}`` or ``{"ok": false, "error": …}``
with a Chinese message the model can act on. Tool results stay in chat history, so they are
kept short and carry no more than the caller asked for.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime, time
from typing import Any
from zoneinfo import ZoneInfo

from amrita_core import (
    FunctionDefinitionSchema,
    FunctionParametersSchema,
    FunctionPropertySchema,
    ToolContext,
    on_tools,
)

from ..domain.records import ChatContext, Importance
from ..engine import notes
from ..engine.service import CognitionEngine, RecallFilters
from ..errors import CognitionError, InvalidInput
from ..runtime import get_engine
from .context import chat_context, message_time
from .jobs import schedule_outbox_drain

logger = logging.getLogger("cognition")

#: ``handler(engine, context, arguments, now)``; ``now`` is the time of the message being answered.
ToolHandler = Callable[[CognitionEngine, ChatContext, dict[str, Any], datetime], Awaitable[dict[str, Any]]]

IMPORTANCE_VALUES = [item.value for item in Importance]


def _ok(**fields: Any) -> str:
    return json.dumps({"ok": True, **fields}, ensure_ascii=False, default=str)


def _error(message: str) -> str:
    return json.dumps({"ok": False, "error": message}, ensure_ascii=False)


def text_arg(args: dict[str, Any], key: str, *, required: bool = True, max_chars: int | None = None) -> str:
    value = args.get(key)
    if value is None or value == "":
        if required:
            raise InvalidInput(f"缺少参数 {key}")
        return ""
    if not isinstance(value, str):
        raise InvalidInput(f"参数 {key} 必须是字符串")
    value = value.strip()
    if required and not value:
        raise InvalidInput(f"参数 {key} 不能为空")
    if max_chars is not None and len(value) > max_chars:
        raise InvalidInput(f"参数 {key} 过长：{len(value)} 字，上限 {max_chars} 字")
    return value


def int_arg(args: dict[str, Any], key: str, *, default: int | None = None, low: int, high: int) -> int:
    value = args.get(key, default)
    if value is None:
        raise InvalidInput(f"缺少参数 {key}")
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise InvalidInput(f"参数 {key} 必须是整数")
    try:
        number = int(value)
    except ValueError as error:
        raise InvalidInput(f"参数 {key} 必须是整数") from error
    if not low <= number <= high:
        raise InvalidInput(f"参数 {key} 必须在 {low} 到 {high} 之间")
    return number


def enum_arg(args: dict[str, Any], key: str, allowed: list[str], default: str | None = None) -> str:
    value = args.get(key, default)
    if value not in allowed:
        raise InvalidInput(f"参数 {key} 只能是 {' / '.join(allowed)}")
    return str(value)


def tags_arg(args: dict[str, Any]) -> list[str]:
    value = args.get("tags") or []
    if not isinstance(value, list) or not all(isinstance(tag, str) for tag in value):
        raise InvalidInput("参数 tags 必须是字符串数组")
    if len(value) > 10 or any(len(tag) > 20 for tag in value):
        raise InvalidInput("tags 最多 10 个，每个不超过 20 字")
    return [tag.strip() for tag in value if tag.strip()]


def time_arg(args: dict[str, Any], key: str, zone: ZoneInfo, end_of_day: bool) -> datetime | None:
    value = args.get(key)
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"参数 {key} 必须是日期字符串，如 2026-11-30")
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError as error:
        raise InvalidInput(f"参数 {key} 不是有效日期：{value}（示例 2026-11-30 或 2026-11-30T20:00）") from error
    if len(value.strip()) == 10:  # a bare date covers the whole day
        moment = datetime.combine(moment.date(), time.max if end_of_day else time.min)
    return moment.replace(tzinfo=zone) if moment.tzinfo is None else moment


def _prop(kind: str, description: str, **extra: Any) -> FunctionPropertySchema:
    return FunctionPropertySchema(type=kind, description=description, **extra)  # type: ignore[arg-type]


def cognition_tool(
    name: str, description: str, properties: dict[str, FunctionPropertySchema], required: list[str]
) -> Callable[[ToolHandler], ToolHandler]:
    """Register ``handler`` as an Amrita tool with the uniform context, validation and errors."""

    def register(handler: ToolHandler) -> ToolHandler:
        async def run(tool_context: ToolContext) -> str:
            from amrita.plugins.chat.runtime import try_get_amrita_ctx

            chat_object = tool_context.ctx.chat_object
            amrita_context = try_get_amrita_ctx(chat_object) if chat_object else None
            if not amrita_context:
                return _error("记忆工具只能在聊天中使用")
            try:
                engine = await get_engine()
                if not engine.config.enable:
                    return _error("记忆功能已被管理员关闭")
                event = amrita_context["event"]
                context = await chat_context(amrita_context["bot"], event)
                if context.scope.key in engine.config.disabled_scopes:
                    return _error("本会话已关闭记忆功能")
                result = await handler(engine, context, dict(tool_context.data or {}), message_time(event))
                return _ok(**result)
            except CognitionError as error:
                return _error(error.zh)
            except Exception:
                logger.exception("[cognition] stage=tool tool=%s failed", name)
                return _error("记忆服务内部错误，已记录日志；本次操作未完成")

        on_tools(
            FunctionDefinitionSchema(
                name=name,
                description=description,
                parameters=FunctionParametersSchema(type="object", properties=properties, required=required),
            ),
            custom_run=True,
        )(run)
        return handler

    return register


CONTENT = _prop("string", "内容（保持原语言，人名和数字原样保留）")


@cognition_tool("cognition_memo_read", "读取本会话的置顶备忘录（身份、稳定偏好、长期要求）。", {}, [])
async def memo_read(
    engine: CognitionEngine, context: ChatContext, args: dict[str, Any], now: datetime
) -> dict[str, Any]:
    memo = await notes.read_memo(engine, context)
    return {"memo": memo, "length": len(memo), "max_length": engine.config.memo_max_chars}


@cognition_tool(
    "cognition_memo_append",
    "在本会话置顶备忘录末尾追加一行。只记长期有效的信息；超出字数上限会被拒绝。",
    {"content": CONTENT},
    ["content"],
)
async def memo_append(
    engine: CognitionEngine, context: ChatContext, args: dict[str, Any], now: datetime
) -> dict[str, Any]:
    memo = await notes.append_memo(
        engine, context, text_arg(args, "content", max_chars=engine.config.memo_max_chars), now=now
    )
    return {"length": len(memo), "max_length": engine.config.memo_max_chars}


@cognition_tool(
    "cognition_memo_update",
    "用新内容整体替换本会话置顶备忘录（先读取再改写）。超过字数上限会被拒绝并告知当前长度。",
    {"content": _prop("string", "完整的新备忘录内容")},
    ["content"],
)
async def memo_update(
    engine: CognitionEngine, context: ChatContext, args: dict[str, Any], now: datetime
) -> dict[str, Any]:
    value = args.get("content")
    if not isinstance(value, str):
        raise InvalidInput("参数 content 必须是字符串")
    memo = await notes.update_memo(engine, context, value, now=now)
    return {"length": len(memo), "max_length": engine.config.memo_max_chars}


@cognition_tool("cognition_pin_add", "给自己添加一条提醒或待办（本会话可见）。", {"content": CONTENT}, ["content"])
async def pin_add(engine: CognitionEngine, context: ChatContext, args: dict[str, Any], now: datetime) -> dict[str, Any]:
    pin = await notes.add_pin(engine, context, text_arg(args, "content", max_chars=notes.PIN_MAX_CHARS), now=now)
    return {"pin_id": pin.id}


@cognition_tool("cognition_pin_list", "列出本会话的全部提醒（带编号）。", {}, [])
async def pin_list(
    engine: CognitionEngine, context: ChatContext, args: dict[str, Any], now: datetime
) -> dict[str, Any]:
    pins = await notes.list_pins(engine, context)
    return {"pins": [{"pin_id": pin.id, "content": pin.content} for pin in pins]}


PIN_ID = _prop("integer", "提醒编号", minimum=1)


@cognition_tool(
    "cognition_pin_update", "修改一条提醒的内容。", {"pin_id": PIN_ID, "content": CONTENT}, ["pin_id", "content"]
)
async def pin_update(
    engine: CognitionEngine, context: ChatContext, args: dict[str, Any], now: datetime
) -> dict[str, Any]:
    pin_id = int_arg(args, "pin_id", low=1, high=2**62)
    pin = await notes.update_pin(
        engine, context, pin_id, text_arg(args, "content", max_chars=notes.PIN_MAX_CHARS), now=now
    )
    return {"pin_id": pin.id}


@cognition_tool("cognition_pin_delete", "删除一条已完成或不再需要的提醒。", {"pin_id": PIN_ID}, ["pin_id"])
async def pin_delete(
    engine: CognitionEngine, context: ChatContext, args: dict[str, Any], now: datetime
) -> dict[str, Any]:
    pin_id = int_arg(args, "pin_id", low=1, high=2**62)
    await notes.delete_pin(engine, context, pin_id)
    return {"deleted": pin_id}


SCOPE = _prop("string", "user：关于说话人本人的事实；group：关于本群的事实（仅群聊可用）", enum=["user", "group"])
IMPORTANCE = _prop("string", "重要程度", enum=IMPORTANCE_VALUES)
TAGS = _prop("array", "标签（可选，最多 10 个）", items=_prop("string", "标签"))


@cognition_tool(
    "cognition_memory_write",
    "写入一条长期记忆。内容必须是完整、绝对的事实：写明是谁（昵称与QQ号）、具体日期，不用“他/昨天/这里”等相对说法。"
    "不要记录密码、验证码、密钥、证件号等敏感信息；对方要求不要记住的内容不要写。",
    {"content": CONTENT, "scope": SCOPE, "importance": IMPORTANCE, "tags": TAGS},
    ["content", "scope"],
)
async def memory_write(
    engine: CognitionEngine, context: ChatContext, args: dict[str, Any], now: datetime
) -> dict[str, Any]:
    content = text_arg(args, "content", max_chars=engine.config.memory_max_chars)
    target = enum_arg(args, "scope", ["user", "group"])
    importance = Importance(enum_arg(args, "importance", IMPORTANCE_VALUES, default="medium"))
    record = await engine.write_memory(context, target, content, importance, tags_arg(args), now=now)  # type: ignore[arg-type]
    schedule_outbox_drain(engine)
    return {"memory_id": record.id}


@cognition_tool(
    "cognition_memory_read",
    "按语义与关键词检索本会话可见的长期记忆。",
    {
        "query": _prop("string", "要查找的内容"),
        "scope": _prop(
            "string", "user：只看说话人本人的；group：只看本群的；all：全部可见（默认）", enum=["user", "group", "all"]
        ),
        "top_k": _prop("integer", "返回条数 1-50，默认 8", minimum=1, maximum=50),
        "importance": IMPORTANCE,
        "tags": TAGS,
        "time_from": _prop("string", "起始日期（可选），如 2026-11-01"),
        "time_to": _prop("string", "结束日期（可选），如 2026-11-30"),
    },
    ["query"],
)
async def memory_read(
    engine: CognitionEngine, context: ChatContext, args: dict[str, Any], now: datetime
) -> dict[str, Any]:
    query = text_arg(args, "query", max_chars=500)
    target = enum_arg(args, "scope", ["user", "group", "all"], default="all")
    if target == "group" and not context.scope.is_group:
        raise InvalidInput("当前是私聊，没有群记忆；请使用 scope=user 或 all")
    top_k = int_arg(args, "top_k", default=engine.config.recall.top_k, low=1, high=50)
    zone = ZoneInfo(engine.config.timezone)
    time_from = time_arg(args, "time_from", zone, end_of_day=False)
    time_to = time_arg(args, "time_to", zone, end_of_day=True)
    warning = ""
    if time_from and time_to and time_from > time_to:
        time_from, time_to = time_to, time_from
        warning = "time_from 晚于 time_to，已自动交换"
        logger.warning("[cognition] stage=tool tool=cognition_memory_read swapped_time_range=1")
    importance_value = args.get("importance")
    filters = RecallFilters(
        importance=Importance(enum_arg(args, "importance", IMPORTANCE_VALUES)) if importance_value else None,
        tags=tuple(tags_arg(args)),
        time_from=time_from,
        time_to=time_to,
    )
    result = await engine.recall(context, [query], now=now, top_k=top_k if target == "all" else 50, filters=filters)
    hits = result.hits
    if target == "user":
        hits = [hit for hit in hits if context.user_id in (hit.record.speaker_id, hit.record.subject_id)]
    elif target == "group":
        hits = [hit for hit in hits if hit.record.scope == context.scope]
    zone_name = engine.config.timezone
    memories = [
        {
            "memory_id": hit.record.id,
            "content": hit.record.text,
            "time": hit.record.when.astimezone(ZoneInfo(zone_name)).strftime("%Y-%m-%d %H:%M"),
            "speaker": hit.record.speaker_name or hit.record.speaker_id,
            "importance": hit.record.importance.value,
        }
        for hit in hits[:top_k]
    ]
    answer: dict[str, Any] = {"memories": memories}
    if warning:
        answer["warning"] = warning
    if result.mode != "full":
        answer["note"] = "向量检索暂不可用，本次仅按关键词检索"
    return answer


MEMORY_ID = _prop("integer", "记忆编号", minimum=1)


@cognition_tool(
    "cognition_memory_update",
    "更正一条记忆：写入新内容并将旧内容标记为已被取代（历史可查）。群聊中普通成员只能改自己的记忆。",
    {"memory_id": MEMORY_ID, "content": CONTENT, "importance": IMPORTANCE, "tags": TAGS},
    ["memory_id", "content"],
)
async def memory_update(
    engine: CognitionEngine, context: ChatContext, args: dict[str, Any], now: datetime
) -> dict[str, Any]:
    memory_id = int_arg(args, "memory_id", low=1, high=2**62)
    content = text_arg(args, "content", max_chars=engine.config.memory_max_chars)
    importance = Importance(args["importance"]) if args.get("importance") in IMPORTANCE_VALUES else None
    if args.get("importance") and importance is None:
        raise InvalidInput(f"参数 importance 只能是 {' / '.join(IMPORTANCE_VALUES)}")
    tags = tags_arg(args) if "tags" in args else None
    record = await engine.update_memory(context, memory_id, content, importance, tags, now=now)
    schedule_outbox_drain(engine)
    return {"memory_id": record.id, "supersedes": memory_id}


@cognition_tool(
    "cognition_memory_delete",
    "永久删除（遗忘）一条记忆，之后不会再被记起。群聊中普通成员只能删除自己的记忆。",
    {"memory_id": MEMORY_ID},
    ["memory_id"],
)
async def memory_delete(
    engine: CognitionEngine, context: ChatContext, args: dict[str, Any], now: datetime
) -> dict[str, Any]:
    memory_id = int_arg(args, "memory_id", low=1, high=2**62)
    await engine.forget_memory(context, memory_id, now=now)
    schedule_outbox_drain(engine)
    return {"deleted": memory_id}


@cognition_tool(
    "cognition_memory_list",
    "按时间倒序列出记忆。user：说话人本人的；group：本群的（仅群聊）。",
    {
        "scope": SCOPE,
        "limit": _prop("integer", "条数 1-50，默认 10", minimum=1, maximum=50),
        "offset": _prop("integer", "跳过条数，默认 0", minimum=0),
    },
    ["scope"],
)
async def memory_list(
    engine: CognitionEngine, context: ChatContext, args: dict[str, Any], now: datetime
) -> dict[str, Any]:
    target = enum_arg(args, "scope", ["user", "group"])
    limit = int_arg(args, "limit", default=10, low=1, high=50)
    offset = int_arg(args, "offset", default=0, low=0, high=10**9)
    records, total = await engine.list_memories(context, target, offset, limit)  # type: ignore[arg-type]
    return {
        "total": total,
        "memories": [{"memory_id": record.id, "content": record.text} for record in records],
    }
