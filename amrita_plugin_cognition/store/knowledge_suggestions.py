"""Chat users' suggestions for the knowledge base in SQL: filed from a chat, pending until the
next consolidation cycle reviews them (accepted or rejected, with a note). Works in the caller's
transaction."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.knowledge import PENDING
from ..domain.records import Scope
from .models import KnowledgeSuggestionRow


def add(
    session: AsyncSession, bot_id: str, user_id: str, scope: Scope, content: str, now: datetime
) -> KnowledgeSuggestionRow:
    row = KnowledgeSuggestionRow(
        bot_id=bot_id,
        user_id=user_id,
        scope_kind=scope.kind,
        scope_id=scope.id,
        content=content,
        state=PENDING,
        review_note="",
        created_at=now,
        reviewed_at=None,
    )
    session.add(row)
    return row


async def filed_since(session: AsyncSession, bot_id: str, user_id: str, since: datetime) -> int:
    """How many suggestions the user filed to this bot account since ``since`` (any state)."""
    query = (
        select(func.count())
        .select_from(KnowledgeSuggestionRow)
        .where(
            KnowledgeSuggestionRow.bot_id == bot_id,
            KnowledgeSuggestionRow.user_id == user_id,
            KnowledgeSuggestionRow.created_at >= since,
        )
    )
    return int((await session.execute(query)).scalar_one())


async def list_rows(
    session: AsyncSession, bot_id: str | None, state: str | None = PENDING, limit: int = 200, scope: Scope | None = None
) -> list[KnowledgeSuggestionRow]:
    """Suggestions, oldest first (what the cycle reviews first); ``scope``: those filed in that chat."""
    query = select(KnowledgeSuggestionRow)
    if bot_id is not None:
        query = query.where(KnowledgeSuggestionRow.bot_id == bot_id)
    if scope is not None:
        query = query.where(
            KnowledgeSuggestionRow.scope_kind == scope.kind, KnowledgeSuggestionRow.scope_id == scope.id
        )
    if state is not None:
        query = query.where(KnowledgeSuggestionRow.state == state)
    query = query.order_by(KnowledgeSuggestionRow.id).limit(limit)
    return list((await session.execute(query)).scalars())


async def review(session: AsyncSession, bot_id: str, suggestion_id: int, state: str, note: str, now: datetime) -> bool:
    """Close a pending suggestion; False when it is not (or no longer) pending."""
    result = await session.execute(
        update(KnowledgeSuggestionRow)
        .where(
            KnowledgeSuggestionRow.id == suggestion_id,
            KnowledgeSuggestionRow.bot_id == bot_id,
            KnowledgeSuggestionRow.state == PENDING,
        )
        .values(state=state, review_note=note, reviewed_at=now)
        .execution_options(synchronize_session=False)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


async def of_user(session: AsyncSession, bot_id: str, user_id: str) -> list[KnowledgeSuggestionRow]:
    """Every suggestion the user filed to this bot account, oldest first (their export)."""
    query = (
        select(KnowledgeSuggestionRow)
        .where(KnowledgeSuggestionRow.bot_id == bot_id, KnowledgeSuggestionRow.user_id == user_id)
        .order_by(KnowledgeSuggestionRow.id)
    )
    return list((await session.execute(query)).scalars())
