"""One user of one bot account: everything kept about them (export), and delete-all."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from ....api import ErasureTarget, InvalidInput
from ..models import BotId, DeleteAllBody, EmptyBody, UserId
from .common import Memory, PageActor, answer

router = APIRouter()


@router.post("/bots/{bot}/users/{user}/export")
async def export_user(
    bot: BotId,
    user: UserId,
    body: EmptyBody,
    actor: PageActor,
    memory: Memory,
) -> JSONResponse:
    """Everything kept about the user in this bot account, as the CLI's export writes it (JSON
    documents; the page saves them as JSON lines). A POST: it is audited."""

    async def work() -> list[dict[str, Any]]:
        documents = await memory.governance.export_user(user, bot)
        await memory.governance.record_action(bot, "export", actor, f"user:{user}", len(documents) - 1)
        return documents

    return await answer(work())


@router.post("/bots/{bot}/users/{user}/delete-all")
async def delete_all(
    bot: BotId,
    user: UserId,
    body: DeleteAllBody,
    actor: PageActor,
    memory: Memory,
) -> JSONResponse:
    """Delete everything of the user in this bot account (audited by the engine, as the CLI's)."""

    async def work() -> dict[str, Any]:
        if body.confirm_user != user:
            raise InvalidInput("确认的 QQ 号与要删除的用户不一致，已取消")
        report = await memory.governance.delete_all(ErasureTarget.user(bot, user), actor)
        return {"target": report.target, "counts": report.counts, "kept": report.kept()}

    return await answer(work(), "已删除该用户的全部数据")
