"""Audit records of governance actions: who did what to which chat or user, when, and how many
rows it touched. The record never holds what was removed (no text, no ids of facts)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.clock import as_utc
from .models import AuditRow


@dataclass(frozen=True, slots=True)
class AuditEntry:
    id: int
    bot_id: str
    action: str
    actor: str
    target: str
    count: int
    at: datetime


def record(session: AsyncSession, bot_id: str, action: str, actor: str, target: str, count: int, at: datetime) -> None:
    """Add one audit record to the caller's transaction (it commits with the change it describes)."""
    session.add(AuditRow(bot_id=bot_id, action=action, actor=actor, target=target, count=count, at=at))


async def entries(session: AsyncSession, bot_id: str | None = None, limit: int = 100) -> list[AuditEntry]:
    """The newest audit records first (of one bot account, or of all)."""
    query = select(AuditRow).order_by(AuditRow.id.desc()).limit(limit)
    if bot_id is not None:
        query = query.where(AuditRow.bot_id == bot_id)
    rows = (await session.execute(query)).scalars().all()
    return [
        AuditEntry(row.id, row.bot_id, row.action, row.actor, row.target, row.count, as_utc(row.at) or row.at)
        for row in rows
    ]
