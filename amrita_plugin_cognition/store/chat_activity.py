"""Each chat's heat maps and penalty in SQL (``cognition_chat_activity``): read as
``domain.chat_activity.ChatActivity`` values, written back whole. Every function works in the
caller's transaction; the caller holds the bot account's activity lock (``lock_activity``), so
the activity flush and a cycle's reset, in any process, never lose each other's change."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.chat_activity import CELLS, SLOTS_PER_DAY, ChatActivity
from ..domain.clock import as_utc
from ..domain.records import Scope
from .models import ChatActivityRow
from .unit_of_work import take_write_lock


async def lock_activity(session: AsyncSession, bot_id: str) -> None:
    """Serialise the writers of a bot account's activity rows (one lock for every chat of it: a
    flush writes hundreds of chats, and a lock per chat was a statement per chat)."""
    await take_write_lock(session, f"cognition:{bot_id}:activity")


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
        zone=row.zone or "",
    )


async def _rows(session: AsyncSession, bot_id: str, scopes: Sequence[Scope]) -> dict[str, ChatActivityRow]:
    """The rows of these chats, by scope key (one statement: the ids, then the kinds in Python)."""
    keys = {scope.key for scope in scopes}
    statement = select(ChatActivityRow).where(
        ChatActivityRow.bot_id == bot_id, ChatActivityRow.scope_id.in_(sorted({scope.id for scope in scopes}))
    )
    rows = (await session.execute(statement)).scalars()
    return {key: row for row in rows if (key := f"{row.scope_kind}:{row.scope_id}") in keys}


async def load(session: AsyncSession, bot_id: str, scopes: Sequence[Scope]) -> dict[str, ChatActivity]:
    """The stored activity of these chats of one bot account, by scope key (absent: none stored)."""
    if not scopes:
        return {}
    return {key: _activity(row) for key, row in (await _rows(session, bot_id, scopes)).items()}


def _rounded(values: Sequence[float]) -> str:
    return json.dumps([round(value, 4) for value in values], separators=(",", ":"))


async def save(session: AsyncSession, bot_id: str, activities: Mapping[Scope, ChatActivity], now: datetime) -> None:
    """Write these chats' activity (a row is created on a chat's first write): one read of the
    rows there are, then the updates and inserts in one flush."""
    if not activities:
        return
    found = await _rows(session, bot_id, list(activities))
    for scope, activity in activities.items():
        row = found.get(scope.key)
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
        row.zone = activity.zone
        row.updated_at = now
    await session.flush()
