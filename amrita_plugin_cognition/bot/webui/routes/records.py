"""Cards with their revisions (restore one), the historian's jobs (retry, drop) and the
knowledge base (entries, revisions, delete), all of one bot account."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from ....api import NotFound, ProfileFilter
from .. import views
from ..models import BotId, EntityType, ForgetBody, JobsBody, RevisionBody, RowId, UserId
from .common import Memory, PageActor, answer

router = APIRouter()
JOBS_MAX = 500


@router.get("/bots/{bot}/cards")
async def cards(
    bot: BotId,
    memory: Memory,
    entity_type: Annotated[Literal["", "user", "group"], Query()] = "",
    page: Annotated[int, Query(ge=1, le=100_000)] = 1,
) -> JSONResponse:
    async def work() -> dict[str, Any]:
        wanted = ProfileFilter(bot_id=bot, entity_type=entity_type or None)
        listed, total = await memory.profiles.list(wanted, 50, (page - 1) * 50)
        return {"items": [views.listed_card(item) for item in listed], "total": total, "page": page, "size": 50}

    return await answer(work())


@router.get("/bots/{bot}/cards/{entity_type}/{entity_id}")
async def card_detail(bot: BotId, entity_type: EntityType, entity_id: UserId, memory: Memory) -> JSONResponse:
    """Every part of a card with its kept revisions, newest first."""

    async def work() -> dict[str, Any]:
        parts = await memory.profiles.get_parts(bot, entity_type, entity_id)
        revisions = await memory.profiles.revisions(bot, entity_type, entity_id)
        if not parts and not revisions:
            raise NotFound("没有这张画像")
        return {
            "parts": [views.card(part) for part in parts],
            "revisions": [views.card_revision(item) for item in revisions],
        }

    return await answer(work())


@router.post("/bots/{bot}/cards/{entity_type}/{entity_id}/restore")
async def card_restore(
    bot: BotId,
    entity_type: EntityType,
    entity_id: UserId,
    body: RevisionBody,
    actor: PageActor,
    memory: Memory,
) -> JSONResponse:
    async def work() -> dict[str, Any]:
        saved = await memory.profiles.restore(bot, entity_type, entity_id, body.revision_id, body.part, by=actor.name)
        await memory.governance.record_action(bot, "card_restore", actor, f"{entity_type}:{entity_id}")
        return views.card(saved.card)

    return await answer(work(), "已恢复画像的旧版本")


@router.get("/bots/{bot}/jobs")
async def jobs(
    bot: BotId,
    memory: Memory,
    state: Annotated[Literal["", "pending", "processing", "dead"], Query()] = "",
) -> JSONResponse:
    async def work() -> list[dict[str, Any]]:
        return await memory.jobs.list(state or None, JOBS_MAX, bot_id=bot)

    return await answer(work())


@router.post("/bots/{bot}/jobs/{action}")
async def jobs_change(
    bot: BotId, action: Literal["retry", "drop"], body: JobsBody, actor: PageActor, memory: Memory
) -> JSONResponse:
    """Retry dead jobs or drop jobs, of this bot account only (another's ids change nothing)."""

    async def work() -> dict[str, int]:
        if action == "retry":
            count = await memory.jobs.retry(body.ids, bot_id=bot)
        else:
            count = await memory.jobs.drop(body.ids, bot_id=bot)
        await memory.governance.record_action(bot, f"jobs_{action}", actor, "jobs", count)
        return {"count": count}

    return await answer(work(), "已放回队列" if action == "retry" else "已删除任务")


@router.get("/bots/{bot}/knowledge")
async def knowledge(
    bot: BotId,
    memory: Memory,
    state: Annotated[Literal["", "active", "stale"], Query()] = "",
) -> JSONResponse:
    async def work() -> list[dict[str, Any]]:
        listed = await memory.knowledge.list(bot, state or None)
        return [{**views.knowledge(item.entry), "revisions": item.revisions} for item in listed]

    return await answer(work())


@router.get("/bots/{bot}/knowledge/{entry_id}")
async def knowledge_entry(bot: BotId, entry_id: RowId, memory: Memory) -> JSONResponse:
    async def work() -> dict[str, Any]:
        entry = await memory.knowledge.get(bot, entry_id)
        revisions = await memory.knowledge.revisions(bot, entry_id)
        return {**views.knowledge(entry), "history": [views.knowledge(item) for item in revisions]}

    return await answer(work())


@router.post("/bots/{bot}/knowledge/{entry_id}/delete")
async def knowledge_delete(
    bot: BotId,
    entry_id: RowId,
    body: ForgetBody,
    actor: PageActor,
    memory: Memory,
) -> JSONResponse:
    async def work() -> dict[str, int]:
        await memory.knowledge.delete(bot, entry_id, by=actor.name)
        await memory.governance.record_action(bot, "knowledge_delete", actor, "knowledge")
        return {"id": entry_id}

    return await answer(work(), "已删除知识条目")
