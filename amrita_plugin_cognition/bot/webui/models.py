"""What the page's routes accept: path parameters checked by pattern, bodies by strict pydantic
models (no extra keys, bounded strings and ids)."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Literal

from fastapi import HTTPException, Path
from pydantic import BaseModel, ConfigDict, Field

from ...api import Scope, parse_chat_key

#: Ids are positive and fit a JavaScript number.
ID_MAX = 2**53 - 1
BotId = Annotated[str, Path(pattern=r"^[A-Za-z0-9_.\-]{1,32}$", description="机器人账号")]
ChatKey = Annotated[str, Path(pattern=r"^(group|private):\d{5,12}$", max_length=24, description="会话")]
UserId = Annotated[str, Path(pattern=r"^\d{5,12}$", description="QQ 号")]
EntityType = Annotated[str, Path(pattern=r"^(user|group)$")]
RowId = Annotated[int, Path(ge=1, le=ID_MAX)]

TEXT_MAX = 2_000
SEARCH_MAX = 100
PAGE_SIZES = (10, 20, 50, 100)


def chat_scope(key: str) -> Scope:
    try:
        return parse_chat_key(key)
    except ValueError:
        raise HTTPException(status_code=422, detail="会话写作 group:<群号> 或 private:<QQ号>") from None


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class MemoryQuery(Strict):
    q: str = Field("", max_length=SEARCH_MAX)
    speaker: str = Field("", pattern=r"^(\d{5,12})?$")
    status: Literal["", "active", "expired", "superseded"] = ""
    since: date | None = None
    until: date | None = None
    page: int = Field(1, ge=1, le=100_000)
    size: int = Field(20, ge=1, le=100)


class ForgetBody(Strict):
    #: The page asked and the user agreed (the chat's 确认).
    confirm: Literal[True]


class CorrectBody(Strict):
    text: str = Field(min_length=1, max_length=TEXT_MAX)


class EmptyBody(Strict):
    pass


class RevisionBody(Strict):
    revision_id: int = Field(ge=1, le=ID_MAX)
    part: str | None = Field(None, pattern=r"^(group|private|group:\d{5,12})$")


class SwitchBody(Strict):
    on: bool


class JobsBody(Strict):
    ids: list[Annotated[int, Field(ge=1, le=ID_MAX)]] = Field(min_length=1, max_length=500)


class DeleteAllBody(Strict):
    #: The user's QQ number typed again: what the chat's 确认 is for a delete-all.
    confirm_user: str = Field(pattern=r"^\d{5,12}$")
