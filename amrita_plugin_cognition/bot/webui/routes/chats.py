"""Bot accounts, their chats (counts and switch state), a chat's memo, revisions and pins."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from ....api import InspectFilter
from ....config_location import PLUGIN_NAME
from .. import views
from ..auth import webui_user
from ..models import BotId, ChatKey, ForgetBody, RevisionBody, RowId, SwitchBody, chat_scope
from .common import Memory, PageActor, answer

router = APIRouter()
CONFIG_URL = f"/system/confedit/{PLUGIN_NAME}"
#: Memories on a page when the page opens (the page's default size).
FIRST_PAGE = 20


@router.get("/meta")
async def meta(user: Annotated[str, Depends(webui_user)]) -> JSONResponse:
    async def work() -> dict[str, Any]:
        return {"user": user, "config_url": CONFIG_URL}

    return await answer(work())


@router.get("/start")
async def start(user: Annotated[str, Depends(webui_user)], memory: Memory) -> JSONResponse:
    """The first screen in one answer: who is logged in, the bot accounts, the first account's
    chats and the first page of its first chat (a page load waits for one round trip, not four)."""

    async def work() -> dict[str, Any]:
        accounts = await memory.governance.bot_accounts()
        bots = [{"bot_id": bot, "memories": count} for bot, count in sorted(accounts.items())]
        first: dict[str, Any] = {"bot": None, "chats": [], "page": None}
        if accounts:
            bot = min(accounts)
            summaries = await memory.governance.chats(bot)
            first = {"bot": bot, "chats": [views.chat(summary) for summary in summaries], "page": None}
            if summaries:
                wanted = InspectFilter(bot_id=bot, scope=summaries[0].scope)
                items, total = await memory.governance.inspect(wanted, 0, FIRST_PAGE)
                page = {"items": [views.memory(item) for item in items], "total": total, "page": 1, "size": FIRST_PAGE}
                first["page"] = {"chat": summaries[0].scope.key, **page}
        meta = {"user": user, "config_url": CONFIG_URL, "timezone": memory.config.timezone}
        return {"meta": meta, "bots": bots, "first": first}

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


@router.post("/bots/{bot}/chats/{chat}/pins/{pin_id}/delete")
async def delete_pin(
    bot: BotId, chat: ChatKey, pin_id: RowId, body: ForgetBody, actor: PageActor, memory: Memory
) -> JSONResponse:
    scope = chat_scope(chat)

    async def work() -> dict[str, int]:
        await memory.notes.delete_pin_in_chat(actor, bot, scope, pin_id)
        await memory.governance.record_action(bot, "pin_delete", actor, scope.key)
        return {"id": pin_id}

    return await answer(work(), "已删除提醒")


@router.post("/bots/{bot}/chats/{chat}/switch")
async def switch(bot: BotId, chat: ChatKey, body: SwitchBody, actor: PageActor, memory: Memory) -> JSONResponse:
    """Switch a chat's memory on or off, as ``/memory on|off`` does (the engine audits it)."""
    scope = chat_scope(chat)

    async def work() -> dict[str, Any]:
        change = await memory.governance.set_chat_memory(bot, scope, body.on, actor)
        return {
            "chat": scope.key,
            "memory_on": await memory.governance.memory_on(bot, scope),
            "changed": change.changed,
        }

    return await answer(work(), "已开启本会话的记忆" if body.on else "已关闭本会话的记忆")
