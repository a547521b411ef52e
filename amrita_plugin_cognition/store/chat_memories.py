"""One chat's memories as the consolidation cycle reads them (a filtered page, the counts, the
figures) and the one change it makes in place: a fact's importance and tags (neither is in a
keyword row or a vector: ranking and filters read them from SQL, as the decay sweep's demotion
does). Every query is bounded to one chat of one bot account (``turns.scope_clause``)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import ColumnElement, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.clock import as_utc
from ..domain.records import Importance, MemoryStatus, Scope
from .models import MemoryRow
from .turns import scope_clause


def _active(bot_id: str, scope: Scope) -> ColumnElement[bool]:
    return scope_clause(bot_id, scope) & (MemoryRow.status == MemoryStatus.ACTIVE.value)


async def page(
    session: AsyncSession,
    bot_id: str,
    scope: Scope,
    *,
    importance: Importance | None = None,
    tag: str = "",
    since: datetime | None = None,
    offset: int = 0,
    limit: int = 20,
) -> tuple[list[MemoryRow], int]:
    """One page of the chat's active facts, newest first, and how many match: of one importance,
    carrying ``tag`` (matched in the stored JSON list, so exactly that tag), recorded after ``since``."""
    clause = _active(bot_id, scope)
    if importance is not None:
        clause &= MemoryRow.importance == importance.value
    if tag:
        clause &= MemoryRow.tags.contains(json.dumps(tag, ensure_ascii=False), autoescape=True)
    if since is not None:
        clause &= MemoryRow.recorded_at > since
    total = (await session.execute(select(func.count()).select_from(MemoryRow).where(clause))).scalar_one()
    rows = await session.execute(
        select(MemoryRow).where(clause).order_by(MemoryRow.id.desc()).offset(offset).limit(limit)
    )
    return list(rows.scalars()), int(total)


@dataclass(frozen=True, slots=True)
class ChatCounts:
    """A chat's active facts: in all, by importance, recorded after the last cycle; and its expired ones."""

    active: int
    by_importance: dict[str, int]
    new: int
    expired: int


async def counts(session: AsyncSession, bot_id: str, scope: Scope, since: datetime | None) -> ChatCounts:
    by_status_importance = await session.execute(
        select(MemoryRow.status, MemoryRow.importance, func.count())
        .where(scope_clause(bot_id, scope))
        .group_by(MemoryRow.status, MemoryRow.importance)
    )
    by_importance: Counter[str] = Counter()
    expired = 0
    for status, importance, count in by_status_importance.all():
        if status == MemoryStatus.ACTIVE.value:
            by_importance[str(importance)] += int(count)
        elif status == MemoryStatus.EXPIRED.value:
            expired += int(count)
    new_clause = _active(bot_id, scope)
    if since is not None:
        new_clause &= MemoryRow.recorded_at > since
    new = (await session.execute(select(func.count()).select_from(MemoryRow).where(new_clause))).scalar_one()
    return ChatCounts(sum(by_importance.values()), dict(by_importance), int(new), expired)


@dataclass(slots=True)
class ChatFigures:
    """What ``cycle_stats`` shows of a chat's active facts."""

    by_kind: Counter[str] = field(default_factory=Counter)
    by_provenance: Counter[str] = field(default_factory=Counter)
    tags: Counter[str] = field(default_factory=Counter)
    untagged: int = 0
    kept: int = 0
    oldest: datetime | None = None
    newest: datetime | None = None


async def figures(session: AsyncSession, bot_id: str, scope: Scope) -> ChatFigures:
    """Kinds, provenances, tags (each row's tags read: no SQL of the JSON), kept, oldest and newest."""
    found = ChatFigures()
    rows = await session.execute(
        select(MemoryRow.kind, MemoryRow.provenance, MemoryRow.tags, MemoryRow.keep, MemoryRow.recorded_at).where(
            _active(bot_id, scope)
        )
    )
    for kind, provenance, tags, keep, recorded_at in rows.all():
        found.by_kind[str(kind)] += 1
        found.by_provenance[str(provenance)] += 1
        listed = [str(tag) for tag in json.loads(tags or "[]")]
        found.tags.update(listed)
        found.untagged += not listed
        found.kept += bool(keep)
        moment = as_utc(recorded_at)
        if moment is not None:
            found.oldest = moment if found.oldest is None else min(found.oldest, moment)
            found.newest = moment if found.newest is None else max(found.newest, moment)
    return found


async def relabel(
    session: AsyncSession, row: MemoryRow, importance: Importance | None, tags: Sequence[str] | None
) -> bool:
    """Set an active fact's importance and/or tags in place (its text, its clock and its indices
    stay). False when it is no longer active."""
    values: dict[str, str] = {}
    if importance is not None:
        values["importance"] = importance.value
    if tags is not None:
        values["tags"] = json.dumps(list(dict.fromkeys(tags)), ensure_ascii=False)
    result = await session.execute(
        update(MemoryRow)
        .where(MemoryRow.id == row.id, MemoryRow.status == MemoryStatus.ACTIVE.value)
        .values(**values)
        .execution_options(synchronize_session="fetch")
    )
    return result.rowcount == 1  # type: ignore[attr-defined]
