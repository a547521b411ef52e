"""Consolidation cycle runs in SQL (``cognition_cycle_run``): one row per run, its judgement step's
tokens (a bot account's day is the sum over its rows), the last runs for ``status``, the message a
run left for a private chat's user and when it went, and what a forget or a delete-all does to them.

A judgement step reserves its token budget when it starts (a row with ``finished_at`` unset and
``reserved_tokens``), under the bot account's budget lock, so two cycles of one account never both
spend the day's last tokens; when it ends the row holds what it used. A row left unfinished by a
crash stops counting its reservation after :data:`RESERVATION_HOURS`."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, and_, case, delete, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.clock import as_utc
from ..domain.records import Scope
from .models import CycleRunRow
from .unit_of_work import take_write_lock

#: A judgement step's reservation counts this long at most (a run cut short by a crash never finishes).
RESERVATION_HOURS = 2
#: The longest summary kept.
SUMMARY_MAX_CHARS = 500
#: Rows read per page when a user's delete-all looks for their name in the bot's summaries.
PAGE = 2000


@dataclass(frozen=True, slots=True)
class CycleRun:
    """A stored run, as ``status`` and the reports read it."""

    id: int
    bot_id: str
    scope: Scope
    trigger: str
    started_at: datetime
    finished_at: datetime | None
    outcome: str
    merged: int
    near: int
    wording: int
    ended: str
    reason: str
    rounds: int
    prompt_tokens: int
    completion_tokens: int
    tool_calls: int
    changes: dict[str, int]
    summary: str
    message_to_user: str | None
    message_sent_at: datetime | None

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def to_run(row: CycleRunRow) -> CycleRun:
    try:
        changes = {str(key): int(value) for key, value in json.loads(row.changes or "{}").items()}
    except (ValueError, TypeError, AttributeError):
        changes = {}
    return CycleRun(
        id=row.id,
        bot_id=row.bot_id,
        scope=Scope(row.scope_kind, row.scope_id),  # type: ignore[arg-type]
        trigger=row.trigger,
        started_at=as_utc(row.started_at),  # type: ignore[arg-type]  # never None: the column is not nullable
        finished_at=as_utc(row.finished_at),
        outcome=row.outcome,
        merged=row.merged,
        near=row.near,
        wording=row.wording or 0,
        ended=row.ended,
        reason=row.reason,
        rounds=row.rounds,
        prompt_tokens=int(row.prompt_tokens),
        completion_tokens=int(row.completion_tokens),
        tool_calls=row.tool_calls,
        changes=changes,
        summary=row.summary,
        message_to_user=row.message_to_user,
        message_sent_at=as_utc(row.message_sent_at),
    )


def _in_chat(bot_id: str, scope: Scope) -> ColumnElement[bool]:
    return and_(CycleRunRow.bot_id == bot_id, CycleRunRow.scope_kind == scope.kind, CycleRunRow.scope_id == scope.id)


async def lock_budget(session: AsyncSession, bot_id: str) -> None:
    """Serialise the reading and reserving of one bot account's daily budget (every process)."""
    await take_write_lock(session, f"cognition:cycle_budget:{bot_id}")


def _spent(now: datetime):  # type: ignore[no-untyped-def]
    """A row's tokens against the day: what it used, or while it runs (recently) its reservation."""
    running = and_(CycleRunRow.finished_at.is_(None), CycleRunRow.started_at > now - timedelta(hours=RESERVATION_HOURS))
    used = CycleRunRow.prompt_tokens + CycleRunRow.completion_tokens
    return case((and_(running, CycleRunRow.reserved_tokens > used), CycleRunRow.reserved_tokens), else_=used)


async def tokens_between(session: AsyncSession, bot_id: str, start: datetime, end: datetime, now: datetime) -> int:
    """The tokens of the bot account's runs started in [start, end) (reservations included)."""
    spent = _spent(now)
    total = await session.scalar(
        select(func.coalesce(func.sum(spent), 0)).where(
            CycleRunRow.bot_id == bot_id, CycleRunRow.started_at >= start, CycleRunRow.started_at < end
        )
    )
    return int(total or 0)


def _values(changes: Mapping[str, int], summary: str) -> dict[str, Any]:
    return {
        "changes": json.dumps({key: int(value) for key, value in changes.items() if value}, sort_keys=True),
        "summary": summary[:SUMMARY_MAX_CHARS],
    }


def add(
    session: AsyncSession,
    bot_id: str,
    scope: Scope,
    *,
    trigger: str,
    started_at: datetime,
    outcome: str,
    merged: int,
    near: int,
    ended: str,
    wording: int = 0,
    reason: str = "",
    reserved_tokens: int = 0,
    finished_at: datetime | None = None,
) -> CycleRunRow:
    """A new run row (a judgement step starting with its reservation, or a step skipped: finished)."""
    row = CycleRunRow(
        bot_id=bot_id,
        scope_kind=scope.kind,
        scope_id=scope.id,
        trigger=trigger,
        started_at=started_at,
        finished_at=finished_at,
        outcome=outcome,
        merged=merged,
        near=near,
        wording=wording,
        ended=ended,
        reason=reason[:200],
        rounds=0,
        prompt_tokens=0,
        completion_tokens=0,
        reserved_tokens=reserved_tokens,
        tool_calls=0,
        **_values({}, ""),
        message_to_user=None,
        message_sent_at=None,
    )
    session.add(row)
    return row


async def finish(
    session: AsyncSession,
    run_id: int,
    *,
    finished_at: datetime,
    outcome: str,
    ended: str,
    reason: str,
    rounds: int,
    prompt_tokens: int,
    completion_tokens: int,
    tool_calls: int,
    changes: Mapping[str, int],
    summary: str,
    message_to_user: str | None,
) -> None:
    """What a judgement step did, its reservation released."""
    await session.execute(
        update(CycleRunRow)
        .where(CycleRunRow.id == run_id)
        .values(
            finished_at=finished_at,
            outcome=outcome,
            ended=ended,
            reason=reason[:200],
            rounds=rounds,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            reserved_tokens=0,
            tool_calls=tool_calls,
            message_to_user=message_to_user,
            **_values(changes, summary),
        )
        .execution_options(synchronize_session=False)
    )


async def set_outcome(session: AsyncSession, run_id: int, outcome: str) -> None:
    """The cycle's outcome once its job was completed (``lost`` when its lease was taken meanwhile)."""
    await session.execute(
        update(CycleRunRow)
        .where(CycleRunRow.id == run_id)
        .values(outcome=outcome)
        .execution_options(synchronize_session=False)
    )


async def last_finished(session: AsyncSession, bot_id: str, scope: Scope) -> CycleRun | None:
    """The chat's newest finished run whose judgement step ran (its summary is the next run's context)."""
    found = await session.execute(
        select(CycleRunRow)
        .where(_in_chat(bot_id, scope), CycleRunRow.finished_at.is_not(None), CycleRunRow.rounds > 0)
        .order_by(CycleRunRow.id.desc())
        .limit(1)
    )
    row = found.scalars().first()
    return None if row is None else to_run(row)


async def recent(session: AsyncSession, limit: int) -> list[CycleRun]:
    """The newest runs of every bot account, newest first."""
    found = await session.execute(select(CycleRunRow).order_by(CycleRunRow.id.desc()).limit(limit))
    return [to_run(row) for row in found.scalars()]


@dataclass(frozen=True, slots=True)
class DayUsage:
    """One bot account's cycles of a day: runs, runs whose judgement step ran, tokens."""

    bot_id: str
    runs: int
    judged: int
    tokens: int


async def usage_between(session: AsyncSession, start: datetime, end: datetime, now: datetime) -> list[DayUsage]:
    """Per bot account with runs started in [start, end): its runs, judged runs and tokens."""
    found = await session.execute(
        select(
            CycleRunRow.bot_id,
            func.count(),
            func.sum(case((CycleRunRow.rounds > 0, 1), else_=0)),
            func.coalesce(func.sum(_spent(now)), 0),
        )
        .where(CycleRunRow.started_at >= start, CycleRunRow.started_at < end)
        .group_by(CycleRunRow.bot_id)
        .order_by(CycleRunRow.bot_id)
    )
    return [DayUsage(str(bot), int(runs), int(judged or 0), int(tokens or 0)) for bot, runs, judged, tokens in found]


async def undelivered(session: AsyncSession, since: datetime, limit: int = 50) -> list[CycleRun]:
    """Messages left for private chats' users, not sent yet, from runs finished since ``since``."""
    found = await session.execute(
        select(CycleRunRow)
        .where(
            CycleRunRow.scope_kind == "private",
            CycleRunRow.message_to_user.is_not(None),
            CycleRunRow.message_to_user != "",
            CycleRunRow.message_sent_at.is_(None),
            CycleRunRow.finished_at >= since,
        )
        .order_by(CycleRunRow.id)
        .limit(limit)
    )
    return [to_run(row) for row in found.scalars()]


async def mark_sent(session: AsyncSession, run_id: int, now: datetime) -> bool:
    """The run's message delivered (False when it was sent, blanked or deleted meanwhile)."""
    result = await session.execute(
        update(CycleRunRow)
        .where(
            CycleRunRow.id == run_id, CycleRunRow.message_sent_at.is_(None), CycleRunRow.message_to_user.is_not(None)
        )
        .values(message_sent_at=now)
        .execution_options(synchronize_session=False)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


async def blank_chat(session: AsyncSession, bot_id: str, scope: Scope) -> int:
    """A forget in the chat: its runs' summaries and messages may quote what was forgotten, so they
    go (a message not sent yet is never sent). Returns the rows changed."""
    result = await session.execute(
        update(CycleRunRow)
        .where(
            _in_chat(bot_id, scope),
            or_(CycleRunRow.summary != "", CycleRunRow.message_to_user.is_not(None)),
        )
        .values(summary="", message_to_user=None)
        .execution_options(synchronize_session=False)
    )
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


async def erase(
    session: AsyncSession, whole_chats: ColumnElement[bool], bot_id: str, names: Callable[[str], bool] | None
) -> int:
    """A delete-all: the runs of the chats it erases whole go (a private chat's name its user); for
    a user (``names``), the summaries and messages of the bot's other runs that name them are
    blanked. Returns the rows deleted or changed."""
    result = await session.execute(delete(CycleRunRow).where(whole_chats).execution_options(synchronize_session=False))
    changed = int(result.rowcount or 0)  # type: ignore[attr-defined]
    if names is None:
        return changed
    last = 0
    while True:
        rows = (
            await session.execute(
                select(CycleRunRow.id, CycleRunRow.summary, CycleRunRow.message_to_user)
                .where(CycleRunRow.bot_id == bot_id, CycleRunRow.id > last)
                .order_by(CycleRunRow.id)
                .limit(PAGE)
            )
        ).all()
        if not rows:
            return changed
        naming = [int(run_id) for run_id, summary, message in rows if names(summary or "") or names(message or "")]
        if naming:
            await session.execute(
                update(CycleRunRow)
                .where(CycleRunRow.id.in_(naming))
                .values(summary="", message_to_user=None)
                .execution_options(synchronize_session=False)
            )
            changed += len(naming)
        last = int(rows[-1][0])
