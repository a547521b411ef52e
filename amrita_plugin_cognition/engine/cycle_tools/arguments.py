"""The arguments of the cycle's tools, one strict pydantic model per tool: the driver validates
the model's raw arguments with it (nothing is coerced), and amrita_core builds the schema the
model is offered from it, which takes plain list items only (ids and tags are checked by
validators). Descriptions are short and Chinese: the schemas are sent with every round. Limits
that depend on the configuration (a fact's length, the memo's) are the use cases' to check,
answered as refusals."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from ...domain.records import ImportanceLevel

#: Largest id the databases hold (SQLite INTEGER and PostgreSQL BIGINT are signed 64-bit).
ID_MAX = 2**63 - 1
PAGE_MAX = 50

Id = Annotated[int, Field(ge=1, le=ID_MAX)]
TAG_MAX_CHARS = 20


def _ids(value: list[int]) -> list[int]:
    """List items are plain types in the schema amrita_core builds: each id is checked here."""
    for item in value:
        if not 1 <= item <= ID_MAX:
            raise ValueError(f"编号应为正整数，不是 {item}")
    return value


def _tags(value: list[str] | None) -> list[str] | None:
    if value is None:
        return None
    for item in value:
        if not item.strip() or len(item) > TAG_MAX_CHARS:
            raise ValueError(f"每个标签 1-{TAG_MAX_CHARS} 字")
    return value


Ids = Annotated[list[int], AfterValidator(_ids)]
Tags = Annotated[list[str], AfterValidator(_tags)]
KindName = Literal["fact", "event", "preference", "plan", "decision"]
EntityType = Literal["user", "group"]
QQ = Annotated[str, Field(pattern=r"^[0-9]{5,20}$", description="QQ 号或群号")]
TEXT_MAX = 5000


class _Args(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


class NoArguments(_Args):
    pass


class PageArguments(_Args):
    offset: int = Field(0, ge=0, le=10**9, description="从第几条开始（0 起）")
    limit: int = Field(20, ge=1, le=PAGE_MAX, description="本页条数")


class MemoryListArguments(PageArguments):
    importance: ImportanceLevel | None = Field(None, description="只看这一重要性")
    tag: str | None = Field(None, max_length=20, description="只看带这个标签的")
    new_only: bool = Field(False, description="只看上次整理后新增的")


class MemoryReadArguments(_Args):
    ids: Ids = Field(min_length=1, max_length=20, description="记忆编号")


class MemoryWriteArguments(_Args):
    text: str = Field(min_length=1, max_length=TEXT_MAX, description="一条独立、时间明确的事实")
    importance: ImportanceLevel = "medium"
    tags: Tags = Field(default_factory=list, max_length=10)
    about_user_id: str = Field("", max_length=20, description="这条事实关于谁（QQ 号，可空）")
    kind: KindName = "fact"


class MemoryUpdateArguments(_Args):
    id: Id
    text: str | None = Field(
        None, min_length=1, max_length=TEXT_MAX, description="新文字（改文字会生成新记忆取代旧的）"
    )
    importance: ImportanceLevel | None = None
    tags: Annotated[list[str] | None, AfterValidator(_tags)] = Field(
        None, max_length=10, description="新的完整标签列表"
    )


class MemoryMergeArguments(_Args):
    ids: Ids = Field(min_length=2, max_length=20, description="同一件事的记忆编号")
    text: str = Field(min_length=1, max_length=TEXT_MAX, description="合并后的文字，保留所有来源的信息")
    importance: ImportanceLevel
    tags: Tags = Field(default_factory=list, max_length=10)


class MemoryForgetArguments(_Args):
    id: Id
    reason: str = Field(min_length=1, max_length=100, description="为什么删（错误、无价值…）")


class ClusterArguments(_Args):
    offset: int = Field(0, ge=0, le=10**9)
    limit: int = Field(5, ge=1, le=20, description="本页组数")


class RecentArguments(_Args):
    limit: int = Field(20, ge=1, le=PAGE_MAX, description="最近几轮对话")


class CardReadArguments(_Args):
    entity_type: EntityType
    entity_id: QQ


class CardUpdateArguments(_Args):
    entity_type: EntityType
    entity_id: QQ
    expected_version: str = Field(min_length=1, max_length=64, description="读取画像时给出的版本")
    name: str | None = Field(None, max_length=64)
    tags: Annotated[list[str] | None, AfterValidator(_tags)] = Field(None, max_length=16)
    evaluation: str | None = Field(None, max_length=TEXT_MAX)
    body: str | None = Field(None, max_length=TEXT_MAX)
    roast: str | None = Field(None, max_length=TEXT_MAX)
    source_ids: Ids = Field(
        min_length=1, max_length=50, description="这次改动依据的本会话记忆编号（只改写措辞时给画像原有的来源）"
    )


class MemoUpdateArguments(_Args):
    content: str = Field(max_length=20000, description="完整的新备忘录")
    expected_version: str = Field(min_length=1, max_length=64, description="读取备忘录时给出的版本")


class KnowledgeSearchArguments(_Args):
    query: str = Field(min_length=1, max_length=200)
    top_k: int = Field(5, ge=1, le=10)


class KnowledgeGetArguments(_Args):
    entry_id: Id


class KnowledgeWriteArguments(_Args):
    entry_id: int | None = Field(None, ge=1, le=ID_MAX, description="更新已有条目时给出；新建时不填")
    expected_version: int | None = Field(None, ge=1, description="更新时：读取到的版本")
    title: str = Field(min_length=1, max_length=100)
    summary: str = Field("", max_length=400)
    body: str = Field(min_length=1, max_length=20000)
    source_ids: Ids = Field(min_length=1, max_length=50, description="依据的本会话记忆编号")


class KnowledgeDeleteArguments(_Args):
    entry_id: Id
    reason: str = Field(min_length=1, max_length=100)


class SuggestionReviewArguments(_Args):
    suggestion_id: Id
    accept: bool
    reason: str = Field(min_length=1, max_length=200, description="审阅理由（拒绝时必填）")
    entry_id: int | None = Field(None, ge=1, le=ID_MAX, description="采纳并更新已有条目时给出")
    expected_version: int | None = Field(None, ge=1)
    title: str = Field("", max_length=100)
    summary: str = Field("", max_length=400)
    body: str = Field("", max_length=20000)
    source_ids: Ids = Field(default_factory=list, max_length=50, description="依据的本会话记忆编号")


class SendArguments(_Args):
    text: str = Field(min_length=1, max_length=1000, description="给用户的一条简短私聊消息（不超过 200 字）")
