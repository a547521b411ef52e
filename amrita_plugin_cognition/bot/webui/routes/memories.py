"""A chat's memories (search, filters, pages), one memory with its chain, and the changes an
owner makes to one: forget (after the page's confirmation), correct, restore an expired one."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from typing import Annotated, Any
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from ....api import InspectFilter, MemoryStatus
from .. import views
from ..models import BotId, ChatKey, CorrectBody, EmptyBody, ForgetBody, MemoryQuery, RowId, chat_scope
from .common import Memory, PageActor, answer

router = APIRouter()


def _day_start(day: Any, zone: ZoneInfo) -> datetime:
    return datetime.combine(day, time.min, tzinfo=zone)


@router.get("/bots/{bot}/chats/{chat}/memories")
async def chat_memories(
    bot: BotId, chat: ChatKey, query: Annotated[MemoryQuery, Query()], memory: Memory
) -> JSONResponse:
    """One page of a chat's memories, newest first: text search, speaker, status, recorded dates."""
    scope = chat_scope(chat)
    zone = ZoneInfo(memory.config.timezone)
    wanted = InspectFilter(
        bot_id=bot,
        scope=scope,
        status=MemoryStatus(query.status) if query.status else None,
        speaker_id=query.speaker or None,
        text=query.q or None,
        recorded_from=_day_start(query.since, zone) if query.since else None,
        recorded_before=_day_start(query.until, zone) + timedelta(days=1) if query.until else None,
    )

    async def work() -> dict[str, Any]:
        items, total = await memory.governance.inspect(wanted, (query.page - 1) * query.size, query.size)
        return {"items": [views.memory(item) for item in items], "total": total, "page": query.page, "size": query.size}

    return await answer(work())


@router.get("/bots/{bot}/memories/{memory_id}")
async def one_memory(bot: BotId, memory_id: RowId, memory: Memory) -> JSONResponse:
    async def work() -> dict[str, Any]:
        return views.memory(await memory.governance.inspect_one(bot, memory_id))

    return await answer(work())


@router.get("/bots/{bot}/memories/{memory_id}/why")
async def why(bot: BotId, memory_id: RowId, memory: Memory) -> JSONResponse:
    """Why the bot remembers this: the message, the note, the observation, the rewrite, the gate,
    corrections and merges, from what the store keeps."""

    async def work() -> dict[str, Any]:
        return views.why(await memory.governance.why(bot, memory_id))

    return await answer(work())


@router.post("/bots/{bot}/memories/{memory_id}/forget")
async def forget(
    bot: BotId,
    memory_id: RowId,
    body: ForgetBody,
    actor: PageActor,
    memory: Memory,
) -> JSONResponse:
    """Forget a memory with every version it replaced (barriers kept), as the chat's forget does."""

    async def work() -> dict[str, Any]:
        current = await memory.governance.inspect_one(bot, memory_id)  # this bot account's, or NotFound
        scope = current.record.scope
        record = await memory.governance.forget_in_chat(actor, bot, scope, memory_id)
        await memory.governance.record_action(bot, "forget", actor, scope.key, 1 + len(current.supersedes))
        return {"id": record.id, "chat": scope.key}

    return await answer(work(), "已删除这条记忆")


@router.post("/bots/{bot}/memories/{memory_id}/correct")
async def correct(
    bot: BotId,
    memory_id: RowId,
    body: CorrectBody,
    actor: PageActor,
    memory: Memory,
) -> JSONResponse:
    """Correct a memory: a new one supersedes it (admission, gate, barriers as in chat)."""

    async def work() -> dict[str, Any]:
        scope = (await memory.governance.inspect_one(bot, memory_id)).record.scope
        record = await memory.memories.correct_in_chat(actor, bot, scope, memory_id, body.text)
        await memory.governance.record_action(bot, "correct", actor, scope.key)
        return views.memory(await memory.governance.inspect_one(bot, record.id))

    return await answer(work(), "已更正")


@router.post("/bots/{bot}/memories/{memory_id}/restore")
async def restore(
    bot: BotId,
    memory_id: RowId,
    body: EmptyBody,
    actor: PageActor,
    memory: Memory,
) -> JSONResponse:
    """Bring an expired memory back (refused under a forget barrier)."""

    async def work() -> dict[str, Any]:
        record = await memory.decay.restore(actor, bot, memory_id)
        await memory.governance.record_action(bot, "restore", actor, record.scope.key)
        return views.memory(await memory.governance.inspect_one(bot, record.id))

    return await answer(work(), "已恢复")
