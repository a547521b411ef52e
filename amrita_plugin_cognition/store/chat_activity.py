"""Each chat's heat maps and penalty in SQL (``cognition_chat_activity``): read as
``domain.chat_activity.ChatActivity`` values, written back whole. Every function works in the
caller's transaction; the caller holds the chats' write locks (``UnitOfWork.lock_scope``), so the
activity flush and a cycle's reset never lose each other's change."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import and_, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.chat_activity import CELLS, SLOTS_PER_DAY, ChatActivity
from ..domain.clock import as_utc
from ..domain.records import Scope
from .models import ChatActivityRow


def _counts(text: str, size: int) -> tuple[float, ...]:
    values = [float(value) for value in json.loads(text)]
    return tuple(values) if len(values) == size else (0.0,) * size  # a damaged row starts afresh


def _activity(row: ChatActivityRow) -> ChatActivity:
    return ChatActivity(
        fine=_counts(row.fine_counts, CELLS),
        coarse=_counts(row.coarse_counts, SLOTS_PER_DAY),
        decayed_at=as_utc(row.decayed_at),
        first_observed_at=as_utc(row.first_observed_at),
        last_observed_at=as_utc(row.last_observed_at),
        messages_since_cycle=row.messages_since_cycle,
        last_cycle_at=as_utc(row.last_cycle_at),
    )


async def load(session: AsyncSession, bot_id: str, scopes: Sequence[Scope]) -> dict[str, ChatActivity]:
    """The stored activity of these chats of one bot account, by scope key (absent: none stored)."""
    if not scopes:
        return {}
    wanted = or_(*[and_(ChatActivityRow.scope_kind == s.kind, ChatActivityRow.scope_id == s.id) for s in scopes])
    rows = await session.execute(select(ChatActivityRow).where(ChatActivityRow.bot_id == bot_id, wanted))
    return {f"{row.scope_kind}:{row.scope_id}": _activity(row) for row in rows.scalars()}


def _rounded(values: Sequence[float]) -> str:
    return json.dumps([round(value, 4) for value in values], separators=(",", ":"))


async def save(session: AsyncSession, bot_id: str, scope: Scope, activity: ChatActivity, now: datetime) -> None:
    """Write one chat's activity (the row is created on its first write)."""
    row = await session.get(ChatActivityRow, (bot_id, scope.kind, scope.id))
    if row is None:
        row = ChatActivityRow(bot_id=bot_id, scope_kind=scope.kind, scope_id=scope.id)
        session.add(row)
    row.fine_counts = _rounded(activity.fine)
    row.coarse_counts = _rounded(activity.coarse)
    row.decayed_at = activity.decayed_at
    row.first_observed_at = activity.first_observed_at
    row.last_observed_at = activity.last_observed_at
    row.messages_since_cycle = activity.messages_since_cycle
    row.last_cycle_at = activity.last_cycle_at
    row.updated_at = now
