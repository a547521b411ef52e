"""An owner's overview of one bot account (the WebUI's page): the bot accounts that hold facts,
and each chat's facts counted by status, read from the scope index alone."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from .models import ChatSwitchRow, MemoryRow


async def bot_accounts(session: AsyncSession) -> dict[str, int]:
    """Bot account → how many facts it holds (any status)."""
    rows = await session.execute(select(MemoryRow.bot_id, func.count()).group_by(MemoryRow.bot_id))
    return {str(bot): int(count) for bot, count in rows.all()}


async def chat_status_counts(session: AsyncSession, bot_id: str) -> dict[tuple[str, str], dict[str, int]]:
    """(scope kind, scope id) → status → count, for every chat of one bot account with a fact."""
    rows = await session.execute(
        select(MemoryRow.scope_kind, MemoryRow.scope_id, MemoryRow.status, func.count())
        .where(MemoryRow.bot_id == bot_id)
        .group_by(MemoryRow.scope_kind, MemoryRow.scope_id, MemoryRow.status)
    )
    found: dict[tuple[str, str], dict[str, int]] = {}
    for kind, scope_id, status, count in rows.all():
        found.setdefault((str(kind), str(scope_id)), {})[str(status)] = int(count)
    return found


async def switched_chats(session: AsyncSession, bot_id: str) -> list[tuple[str, str]]:
    """The chats of one bot account with a switch row (on or off), so a chat switched off before
    it held a fact is listed too."""
    rows = await session.execute(
        select(ChatSwitchRow.scope_kind, ChatSwitchRow.scope_id).where(ChatSwitchRow.bot_id == bot_id)
    )
    return [(str(kind), str(scope_id)) for kind, scope_id in rows.all()]
