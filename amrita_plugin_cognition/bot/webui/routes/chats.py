"""Bot accounts, their chats (counts and switch state), a chat's memo, revisions and pins."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from ....config_location import PLUGIN_NAME
from .. import views
from ..auth import webui_user
from ..models import BotId, ChatKey, RevisionBody, chat_scope
from .common import Memory, PageActor, answer

router = APIRouter()
CONFIG_URL = f"/system/confedit/{PLUGIN_NAME}"


@router.get("/meta")
async def meta(user: Annotated[str, Depends(webui_user)]) -> JSONResponse:
    async def work() -> dict[str, Any]:
        return {"user": user, "config_url": CONFIG_URL}

    return await answer(work())


@router.get("/bots")
async def bots(memory: Memory) -> JSONResponse:
    async def work() -> list[dict[str, Any]]:
        accounts = await memory.governance.bot_accounts()
        return [{"bot_id": bot, "memories": count} for bot, count in sorted(accounts.items())]

    return await answer(work())


@router.get("/bots/{bot}/chats")
async def chats(bot: BotId, memory: Memory) -> JSONResponse:
    async def work() -> list[dict[str, Any]]:
        return [views.chat(summary) for summary in await memory.governance.chats(bot)]

    return await answer(work())


@router.get("/bots/{bot}/chats/{chat}/notes")
async def notes(bot: BotId, chat: ChatKey, memory: Memory) -> JSONResponse:
    scope = chat_scope(chat)

    async def work() -> dict[str, Any]:
        return {
            "memo": await memory.notes.memo_of(bot, scope),
            "revisions": [views.memo_revision(item) for item in await memory.notes.memo_revisions(bot, scope)],
            "pins": [views.pin(item) for item in await memory.notes.pins_of(bot, scope)],
        }

    return await answer(work())


@router.post("/bots/{bot}/chats/{chat}/memo/restore")
async def restore_memo(
    bot: BotId,
    chat: ChatKey,
    body: RevisionBody,
    actor: PageActor,
    memory: Memory,
) -> JSONResponse:
    scope = chat_scope(chat)

    async def work() -> dict[str, Any]:
        content = await memory.notes.restore_memo(bot, scope, body.revision_id, by=actor.name)
        await memory.governance.record_action(bot, "memo_restore", actor, scope.key)
        return {"memo": content}

    return await answer(work(), "已恢复备忘录的旧版本")
