"""The arguments of every LLM tool, one pydantic model per tool.

The models are strict: a JSON ``true``, ``1.0`` or ``"1"`` is not an id, and no value is coerced
into another type. Text is cleaned (``clean_text``: valid UTF-8, no NUL or other control
characters) and stripped as it is validated. Limits that depend on the configuration (memory and
memo lengths) read it from the validation context (``{"config": CognitionConfig}``).

Messages are Simplified Chinese and name the field and the limit; ``registry.parse_arguments``
turns a ``ValidationError`` into one ``InvalidInput``. The tool schemas the model sees are
generated from these models (``registry.function_parameters``), so what the model is told and
what is checked cannot drift apart. Length limits are checked here and stated in descriptions,
not declared in the schema: Amrita would refuse a long text with its own English message
before the tool runs.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo
from pydantic_core import PydanticCustomError

from ...api import PIN_MAX_CHARS, ImportanceLevel, clean_text
from ...config import CognitionConfig

#: Largest id the databases hold (SQLite INTEGER and PostgreSQL BIGINT are signed 64-bit).
DATABASE_ID_MAX = 2**63 - 1
QUERY_MAX_CHARS = 500
TAG_MAX_CHARS = 20
TAGS_MAX = 10
OFFSET_MAX = 10**9

#: Error type of the messages written here (already Chinese, already naming the field).
COGNITION_ERROR = "cognition"


def refuse(message: str, **context: Any) -> PydanticCustomError:
    """A validation error whose message is shown as it is (``{name}`` placeholders filled)."""
    return PydanticCustomError(COGNITION_ERROR, message, context or None)


def _config(info: ValidationInfo) -> CognitionConfig | None:
    context = info.context if isinstance(info.context, dict) else {}
    config = context.get("config")
    return config if isinstance(config, CognitionConfig) else None


def _text_check(
    *, required: bool, max_chars: int | Callable[[CognitionConfig], int] | None, keep_lines: bool = False
) -> Callable[[str, ValidationInfo], str]:
    def check(value: str, info: ValidationInfo) -> str:
        value = clean_text(value)
        value = value.strip() if keep_lines else " ".join(value.split())
        field = info.field_name
        if required and not value:
            raise refuse("参数 {field} 不能为空", field=field)
        limit = max_chars
        if callable(limit):
            config = _config(info)
            limit = limit(config) if config is not None else None
        if limit is not None and len(value) > limit:
            raise refuse("参数 {field} 过长：{length} 字，上限 {limit} 字", field=field, length=len(value), limit=limit)
        return value

    return check


def _tag_check(value: str) -> str:
    value = " ".join(clean_text(value).split())
    if len(value) > TAG_MAX_CHARS:
        raise refuse(
            "参数 tags 中的标签过长：{length} 字，每个标签上限 {limit} 字", length=len(value), limit=TAG_MAX_CHARS
        )
    return value


def _tags_check(value: list[str] | None) -> list[str] | None:
    return None if value is None else [tag for tag in value if tag]


def _date_check(value: str | None, info: ValidationInfo) -> str | None:
    if value is None:
        return None
    value = clean_text(value).strip()
    if not value:
        return None
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise refuse(
            "参数 {field} 不是有效日期：{value}（示例 2026-11-30 或 2026-11-30T20:00）",
            field=info.field_name,
            value=value[:40],
        ) from None
    return value


def _memory_chars(config: CognitionConfig) -> int:
    return config.memory_max_chars


def _memo_chars(config: CognitionConfig) -> int:
    return config.memo_max_chars


CONTENT_DESCRIPTION = "内容（保持原语言，人名和数字原样保留）"

MemoryContent = Annotated[
    str,
    Field(description=f"{CONTENT_DESCRIPTION}；单条记忆有字数上限"),
    AfterValidator(_text_check(required=True, max_chars=_memory_chars)),
]
PinContent = Annotated[
    str,
    Field(description=f"{CONTENT_DESCRIPTION}；最多 {PIN_MAX_CHARS} 字"),
    AfterValidator(_text_check(required=True, max_chars=PIN_MAX_CHARS)),
]
MemoLine = Annotated[
    str,
    Field(description=f"{CONTENT_DESCRIPTION}；追加后备忘录不能超过字数上限"),
    AfterValidator(_text_check(required=True, max_chars=_memo_chars, keep_lines=True)),
]
#: The memo's whole new text; its length is checked by the memo itself (the refusal tells the
#: current length), and an empty text clears the memo.
MemoText = Annotated[
    str,
    Field(description="完整的新备忘录内容"),
    AfterValidator(_text_check(required=False, max_chars=None, keep_lines=True)),
]
MemoryId = Annotated[int, Field(ge=1, le=DATABASE_ID_MAX, description="记忆编号（正整数）")]
PinId = Annotated[int, Field(ge=1, le=DATABASE_ID_MAX, description="提醒编号（正整数）")]
Tag = Annotated[str, Field(description="标签"), AfterValidator(_tag_check)]
Tags = Annotated[
    list[Tag] | None,
    Field(max_length=TAGS_MAX, description=f"标签（可选，最多 {TAGS_MAX} 个，每个不超过 {TAG_MAX_CHARS} 字）"),
    AfterValidator(_tags_check),
]
DateText = Annotated[str | None, AfterValidator(_date_check)]


class ToolArguments(BaseModel):
    """Base of the argument models: strict types, unknown keys ignored, immutable."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


class NoArguments(ToolArguments):
    pass


class MemoAppendArguments(ToolArguments):
    content: MemoLine


class MemoUpdateArguments(ToolArguments):
    content: MemoText


class PinAddArguments(ToolArguments):
    content: PinContent


class PinUpdateArguments(ToolArguments):
    pin_id: PinId
    content: PinContent


class PinDeleteArguments(ToolArguments):
    pin_id: PinId


class MemoryWriteArguments(ToolArguments):
    content: MemoryContent
    scope: Literal["user", "group"] = Field(
        description="user：关于说话人本人的事实；group：关于本群的事实（仅群聊可用）"
    )
    importance: ImportanceLevel = Field("medium", description="重要程度")
    tags: Tags = None


def _account_check(value: str | None, info: ValidationInfo) -> str | None:
    if value is None:
        return None
    value = clean_text(value).strip()
    if not value:
        return None
    if not value.isascii() or not value.isdigit() or not 5 <= len(value) <= 12:
        raise refuse(
            "参数 {field} 必须是 5 到 12 位数字的 QQ 号或群号（收到 {value}）", field=info.field_name, value=value[:20]
        )
    return value


AccountId = Annotated[str | None, AfterValidator(_account_check)]


#: A search query: required, at most ``QUERY_MAX_CHARS`` characters.
QueryText = Annotated[str, AfterValidator(_text_check(required=True, max_chars=QUERY_MAX_CHARS))]


class MemoryReadArguments(ToolArguments):
    query: QueryText = Field(description=f"要查找的内容（最多 {QUERY_MAX_CHARS} 字）")
    scope: Literal["user", "group", "all"] = Field(
        "all", description="user：只看说话人本人的；group：只看本群的；all：全部可见（默认）"
    )
    top_k: Annotated[int, Field(ge=1, le=50)] | None = Field(None, description="返回条数 1-50，默认 8")
    importance: ImportanceLevel | None = Field(None, description="只看这一重要程度（可选）")
    tags: Tags = None
    time_from: DateText = Field(None, description="起始日期（可选），如 2026-11-01")
    time_to: DateText = Field(None, description="结束日期（可选），如 2026-11-30")
    user_id: AccountId = Field(None, description="只看由这个 QQ 号说的或关于他的记忆（可选）")
    group_id: AccountId = Field(None, description="只看这个群的记忆（可选；只能查本会话可见的群）")


class MemoryUpdateArguments(ToolArguments):
    memory_id: MemoryId
    content: MemoryContent
    importance: ImportanceLevel | None = Field(None, description="新的重要程度（可选，默认不变）")
    tags: Tags = None


class MemoryDeleteArguments(ToolArguments):
    memory_id: MemoryId
    confirmed: bool = Field(
        False,
        description=(
            "用户已在之后的消息里明确同意删除这一条时才设为 true；第一次调用不要设置，先把返回的记忆内容告诉用户并询问"
        ),
    )


class MemoryListArguments(ToolArguments):
    scope: Literal["user", "group"] = Field(
        description="user：关于说话人本人的事实；group：关于本群的事实（仅群聊可用）"
    )
    limit: int = Field(10, ge=1, le=50, description="条数 1-50，默认 10")
    offset: int = Field(0, ge=0, le=OFFSET_MAX, description="跳过条数，默认 0")


def _entity_id_check(value: str) -> str:
    text = clean_text(value).strip()
    if not text.isascii() or not text.isdigit() or len(text) > 20:
        raise refuse("参数 entity_id 应为 QQ 号或群号（纯数字的字符串），不是 {value}", value=text[:40])
    return text


class ProfileGetArguments(ToolArguments):
    entity_type: Literal["user", "group"] = Field(description="user：一个用户（QQ号）；group：一个群（群号）")
    entity_id: Annotated[str, AfterValidator(_entity_id_check)] = Field(description="QQ 号或群号（纯数字的字符串）")


#: At most this many cards per profile search.
PROFILE_SEARCH_MAX = 10


class ProfileSearchArguments(ToolArguments):
    query: QueryText = Field(description=f"要找的内容（最多 {QUERY_MAX_CHARS} 字），如“谁喜欢爬山”“组织桌游的人”")
    entity_type: Literal["user", "group", "any"] = Field(
        "any", description="user：只找用户的画像；group：只找群的画像；any：都找（默认）"
    )
    top_k: int = Field(5, ge=1, le=PROFILE_SEARCH_MAX, description=f"返回条数 1-{PROFILE_SEARCH_MAX}，默认 5")


#: A turn's note and each observation are short; a turn carries at most this many observations.
NOTE_MAX_CHARS = 300
OBSERVATIONS_MAX = 20
PERSPECTIVE_MAX_CHARS = 100

Observation = Annotated[
    str,
    Field(description="一条观察：一个新的、稳定的事实"),
    AfterValidator(_text_check(required=False, max_chars=_memory_chars)),
]


def _observations_check(value: list[str]) -> list[str]:
    return [item for item in value if item]


class EndArguments(ToolArguments):
    memo: Annotated[
        str,
        Field(description=f"本轮的简短笔记（一句话，最多 {NOTE_MAX_CHARS} 字）；多条输入消息时概括整批"),
        AfterValidator(_text_check(required=False, max_chars=NOTE_MAX_CHARS)),
    ] = ""
    observations: Annotated[
        list[Observation],
        Field(
            max_length=OBSERVATIONS_MAX,
            description=f"本轮观察到的新事实（0 到 {OBSERVATIONS_MAX} 条，每条一个事实，"
            "人写成“QQ号<号码>（昵称<昵称>）”）",
        ),
        AfterValidator(_observations_check),
    ] = Field(default_factory=list)
    perspective: Annotated[
        str,
        Field(description=f"观察是以谁的视角写的（可选，最多 {PERSPECTIVE_MAX_CHARS} 字），如“机器人自己”"),
        AfterValidator(_text_check(required=False, max_chars=PERSPECTIVE_MAX_CHARS)),
    ] = ""
    force: bool = Field(False, description="仅当观察里只是含有形似代词或相对时间的普通词（如书名、引语）时设为 true")


KNOWLEDGE_SEARCH_MAX = 10
#: A suggestion's own limit is the domain's (``SUGGESTION_MAX_CHARS``: checked by the use case,
#: whose refusal names it); here only that it is text.
SuggestionText = Annotated[str, AfterValidator(_text_check(required=True, max_chars=None, keep_lines=True))]


class KnowledgeSearchArguments(ToolArguments):
    query: QueryText = Field(description=f"要找的内容（最多 {QUERY_MAX_CHARS} 字），如“群规”“服务器维护时间”")
    top_k: int = Field(5, ge=1, le=KNOWLEDGE_SEARCH_MAX, description=f"返回条数 1-{KNOWLEDGE_SEARCH_MAX}，默认 5")


class KnowledgeGetArguments(ToolArguments):
    entry_id: int = Field(ge=1, le=DATABASE_ID_MAX, description="知识条目编号（正整数，来自搜索结果）")


class KnowledgeSuggestArguments(ToolArguments):
    content: SuggestionText = Field(
        description="建议加入或修改知识库的内容（通用的规则、常见问题、做法；不要包含个人信息或密码等敏感内容）"
    )
