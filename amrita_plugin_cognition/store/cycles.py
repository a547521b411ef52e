"""Consolidation cycles in SQL: which chats have new memories since their last cycle (the
``last_cycle_at`` of their activity row; never, without one), each chat's one cycle job in the
queue, and its due time moved when the chat's idle window moves."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import and_, case, delete, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.clock import as_utc
from ..domain.job_kinds import CONSOLIDATION_JOB
from ..domain.records import MemoryStatus, Scope
from . import jobs
from .models import ChatActivityRow, JobRow, MemoryRow, MemorySourceRow


@dataclass(frozen=True, slots=True)
class ChatDue:
    """A chat with memories written since its last cycle: ``new`` of its ``active`` memories."""

    bot_id: str
    scope: Scope
    new: int
    active: int


def _new_since_cycle():  # type: ignore[no-untyped-def]
    return or_(ChatActivityRow.last_cycle_at.is_(None), MemoryRow.recorded_at > ChatActivityRow.last_cycle_at)


async def chats_due(
    session: AsyncSession, bot_id: str | None = None, scope: Scope | None = None, limit: int = 1000
) -> list[ChatDue]:
    """The chats (of one bot account, or one chat) with active memories recorded since their last
    cycle, cheapest first (fewest new memories, then the smallest chat)."""
    new = func.sum(case((_new_since_cycle(), 1), else_=0))
    query = (
        select(MemoryRow.bot_id, MemoryRow.scope_kind, MemoryRow.scope_id, new, func.count())
        .select_from(MemoryRow)
        .outerjoin(
            ChatActivityRow,
            and_(
                ChatActivityRow.bot_id == MemoryRow.bot_id,
                ChatActivityRow.scope_kind == MemoryRow.scope_kind,
                ChatActivityRow.scope_id == MemoryRow.scope_id,
            ),
        )
        .where(MemoryRow.status == MemoryStatus.ACTIVE.value)
        .group_by(MemoryRow.bot_id, MemoryRow.scope_kind, MemoryRow.scope_id)
        .having(new > 0)
        .order_by(new, func.count(), MemoryRow.bot_id, MemoryRow.scope_kind, MemoryRow.scope_id)
        .limit(limit)
    )
    if bot_id is not None:
        query = query.where(MemoryRow.bot_id == bot_id)
    if scope is not None:
        query = query.where(MemoryRow.scope_kind == scope.kind, MemoryRow.scope_id == scope.id)
    rows = (await session.execute(query)).all()
    return [
        ChatDue(str(bot), Scope(kind, scope_id), int(fresh), int(active))  # type: ignore[arg-type]
        for bot, kind, scope_id, fresh, active in rows
    ]


def _of_chat(bot_id: str, scope: Scope):  # type: ignore[no-untyped-def]
    """The cycle jobs of one chat."""
    return and_(
        JobRow.kind == CONSOLIDATION_JOB,
        JobRow.bot_id == bot_id,
        JobRow.scope_kind == scope.kind,
        JobRow.scope_id == scope.id,
    )


async def cycle_job(session: AsyncSession, bot_id: str, scope: Scope) -> JobRow | None:
    """The chat's cycle job waiting or running (at most one: ``enqueue_cycle`` adds none beside it)."""
    found = await session.execute(
        select(JobRow)
        .where(_of_chat(bot_id, scope), JobRow.state.in_((jobs.PENDING, jobs.PROCESSING)))
        .order_by(JobRow.id)
        .limit(1)
    )
    return found.scalars().first()


async def scheduled_chats(session: AsyncSession) -> set[tuple[str, str]]:
    """(bot, scope key) of every chat with a cycle job waiting or running."""
    rows = await session.execute(
        select(JobRow.bot_id, JobRow.scope_kind, JobRow.scope_id).where(
            JobRow.kind == CONSOLIDATION_JOB, JobRow.state.in_((jobs.PENDING, jobs.PROCESSING))
        )
    )
    return {(str(bot), f"{kind}:{scope_id}") for bot, kind, scope_id in rows.all()}


async def move_due(session: AsyncSession, job_id: int, not_before: datetime, now: datetime) -> bool:
    """A waiting cycle's due time moved (its chat's window moved); False once it was leased."""
    result = await session.execute(
        update(JobRow)
        .where(JobRow.id == job_id, JobRow.state == jobs.PENDING)
        .values(next_attempt_at=not_before, updated_at=now)
        .execution_options(synchronize_session=False)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


async def drop_waiting(session: AsyncSession, bot_id: str, scope: Scope) -> int:
    """The chat's waiting cycle job removed (a cycle ran now, by command)."""
    result = await session.execute(
        delete(JobRow)
        .where(_of_chat(bot_id, scope), JobRow.state == jobs.PENDING)
        .execution_options(synchronize_session=False)
    )
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class CycleSummary:
    """What ``status`` shows of the cycles: jobs waiting, running and dead; chats with a finished
    cycle and the newest; merged memories written and the sources they replaced."""

    pending: int
    processing: int
    dead: int
    chats_cycled: int
    last_cycle_at: datetime | None
    merged: int
    merged_sources: int


async def summary(session: AsyncSession) -> CycleSummary:
    states = dict(
        (
            await session.execute(
                select(JobRow.state, func.count()).where(JobRow.kind == CONSOLIDATION_JOB).group_by(JobRow.state)
            )
        ).all()
    )
    cycled, last = (
        await session.execute(
            select(func.count(), func.max(ChatActivityRow.last_cycle_at)).where(
                ChatActivityRow.last_cycle_at.is_not(None)
            )
        )
    ).one()
    merged, sources = (
        await session.execute(select(func.count(func.distinct(MemorySourceRow.memory_id)), func.count()))
    ).one()
    return CycleSummary(
        pending=int(states.get(jobs.PENDING, 0)),
        processing=int(states.get(jobs.PROCESSING, 0)),
        dead=int(states.get(jobs.DEAD, 0)),
        chats_cycled=int(cycled),
        last_cycle_at=as_utc(last),
        merged=int(merged or 0),
        merged_sources=int(sources or 0),
    )


async def bots_with_chat(session: AsyncSession, scope: Scope) -> list[str]:
    """The bot accounts holding memories (any status) in this chat."""
    rows = await session.execute(
        select(MemoryRow.bot_id)
        .where(MemoryRow.scope_kind == scope.kind, MemoryRow.scope_id == scope.id)
        .distinct()
        .order_by(MemoryRow.bot_id)
    )
    return [str(bot) for bot in rows.scalars()]
