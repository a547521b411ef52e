"""What in one chat may need the consolidation cycle's judgement step, read in SQL (the counts
``domain/judgement.JudgementSignals`` holds): knowledge entries marked stale that cite the chat's
memories, suggestions filed in the chat and waiting, the pinned memo's length, and the chat's card
parts changed since its last cycle by anyone but the cycle."""

from __future__ import annotations

import json
from datetime import datetime

from sqlalchemy import and_, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.knowledge import STALE
from ..domain.records import Scope
from .models import KnowledgeRow, KnowledgeSuggestionRow, MemoRow, MemoryRow, ProfileRow

#: Who the cycle writes as (knowledge entries, cards): its own changes ask for no judgement.
CYCLE_AUTHOR = "consolidation"


def _ids(text: str) -> list[int]:
    try:
        return [int(item) for item in json.loads(text or "[]")]
    except (ValueError, TypeError):
        return []


async def stale_knowledge(session: AsyncSession, bot_id: str, scope: Scope) -> int:
    """Stale entries of the bot account with a source in this chat (its cycle can write them again)."""
    rows = (
        await session.execute(
            select(KnowledgeRow.id, KnowledgeRow.source_ids).where(
                KnowledgeRow.bot_id == bot_id, KnowledgeRow.state == STALE
            )
        )
    ).all()
    cited = {entry_id: _ids(sources) for entry_id, sources in rows}
    wanted = sorted({memory_id for ids in cited.values() for memory_id in ids})
    if not wanted:
        return 0
    here: set[int] = set()
    for start in range(0, len(wanted), 500):
        found = await session.execute(
            select(MemoryRow.id).where(
                MemoryRow.id.in_(wanted[start : start + 500]),
                MemoryRow.bot_id == bot_id,
                MemoryRow.scope_kind == scope.kind,
                MemoryRow.scope_id == scope.id,
            )
        )
        here.update(int(memory_id) for memory_id in found.scalars())
    return sum(1 for ids in cited.values() if here.intersection(ids))


async def pending_suggestions(session: AsyncSession, bot_id: str, scope: Scope) -> int:
    """Suggestions filed in this chat that no cycle reviewed yet."""
    count = await session.scalar(
        select(func.count()).where(
            KnowledgeSuggestionRow.bot_id == bot_id,
            KnowledgeSuggestionRow.scope_kind == scope.kind,
            KnowledgeSuggestionRow.scope_id == scope.id,
            KnowledgeSuggestionRow.state == "pending",
        )
    )
    return int(count or 0)


async def memo_chars(session: AsyncSession, bot_id: str, scope: Scope) -> int:
    """The length of the chat's pinned memo (0 without one)."""
    content = await session.scalar(
        select(MemoRow.content).where(
            MemoRow.bot_id == bot_id, MemoRow.scope_kind == scope.kind, MemoRow.scope_id == scope.id
        )
    )
    return len(content or "")


def _chat_cards(scope: Scope):  # type: ignore[no-untyped-def]
    """The card parts a chat's cycle looks after: a group's card and its members' parts of that
    group; a private chat's user's private part."""
    if scope.is_group:
        return or_(
            and_(ProfileRow.entity_type == "group", ProfileRow.entity_id == scope.id),
            and_(ProfileRow.entity_type == "user", ProfileRow.part == f"group:{scope.id}"),
        )
    return and_(ProfileRow.entity_type == "user", ProfileRow.entity_id == scope.id, ProfileRow.part == "private")


async def cards_touched(session: AsyncSession, bot_id: str, scope: Scope, since: datetime | None) -> int:
    """The chat's card parts written since ``since`` (every one, without a last cycle), not by the cycle."""
    query = select(func.count()).where(
        ProfileRow.bot_id == bot_id, _chat_cards(scope), ProfileRow.updated_by != CYCLE_AUTHOR
    )
    if since is not None:
        query = query.where(ProfileRow.updated_at > since)
    return int(await session.scalar(query) or 0)


async def unjudged_clusters(session: AsyncSession, clusters: list[tuple[int, ...]], since: datetime | None) -> int:
    """The near (or wording) clusters with a member recorded after ``since`` (the start of the chat's last run
    whose judgement step ran; None: every cluster). A cluster the model already saw whole, and left
    apart, asks for no new judgement until one of its members is new."""
    if since is None or not clusters:
        return len(clusters)
    members = sorted({member for cluster in clusters for member in cluster})
    newer = set(
        (await session.execute(select(MemoryRow.id).where(MemoryRow.id.in_(members), MemoryRow.recorded_at > since)))
        .scalars()
        .all()
    )
    return sum(1 for cluster in clusters if newer.intersection(cluster))
