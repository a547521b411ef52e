"""The pinned memo (with its kept revisions) and the pins of each chat; the per-turn read of
memo, pins and short-term notes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, DateTime, Select, and_, cast, func, literal, null, select, union_all
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.clock import as_utc
from ..domain.records import Scope
from .models import MemoRevisionRow, MemoRow, MemoryRow, NoteRow, PinRow
from .revisions import keep_newest


async def get_memo(session: AsyncSession, bot_id: str, scope: Scope) -> MemoRow | None:
    result = await session.execute(
        select(MemoRow).where(MemoRow.bot_id == bot_id, MemoRow.scope_kind == scope.kind, MemoRow.scope_id == scope.id)
    )
    return result.scalar_one_or_none()


async def write_memo(
    session: AsyncSession, bot_id: str, scope: Scope, content: str, by: str, now: datetime, keep_revisions: int
) -> None:
    """Set a chat's memo; the version it replaces is kept as a revision (the newest
    ``keep_revisions`` are kept, older ones pruned)."""
    row = await get_memo(session, bot_id, scope)
    if row is None:
        session.add(
            MemoRow(
                bot_id=bot_id, scope_kind=scope.kind, scope_id=scope.id, content=content, updated_at=now, updated_by=by
            )
        )
        return
    if row.content and row.content != content and keep_revisions > 0:
        session.add(
            MemoRevisionRow(
                bot_id=bot_id,
                scope_kind=scope.kind,
                scope_id=scope.id,
                content=row.content,
                written_at=row.updated_at,
                written_by=row.updated_by,
                replaced_at=now,
                replaced_by=by,
            )
        )
        await session.flush()
        await keep_newest(session, MemoRevisionRow, _owner(bot_id, scope), keep_revisions)
    row.content = content
    row.updated_at = now
    row.updated_by = by


def _owner(bot_id: str, scope: Scope) -> ColumnElement[bool]:
    return and_(
        MemoRevisionRow.bot_id == bot_id, MemoRevisionRow.scope_kind == scope.kind, MemoRevisionRow.scope_id == scope.id
    )


def _revisions_of(bot_id: str, scope: Scope) -> Select[Any]:
    return select(MemoRevisionRow).where(_owner(bot_id, scope))


async def memo_revisions(session: AsyncSession, bot_id: str, scope: Scope) -> list[MemoRevisionRow]:
    """A chat's kept memo versions, newest first."""
    result = await session.execute(_revisions_of(bot_id, scope).order_by(MemoRevisionRow.id.desc()))
    return list(result.scalars())


async def memo_revision(session: AsyncSession, bot_id: str, scope: Scope, revision_id: int) -> MemoRevisionRow | None:
    result = await session.execute(_revisions_of(bot_id, scope).where(MemoRevisionRow.id == revision_id))
    return result.scalar_one_or_none()


@dataclass(slots=True)
class TurnDocuments:
    memo: str
    #: (pin id, content, updated at), in id order.
    pins: list[tuple[int, str, datetime]]
    #: Whether any fact is visible (None when not probed).
    sees_memories: bool | None
    #: The chat's last short-term notes (id, content, time), oldest first.
    notes: list[tuple[int, str, datetime]]


async def turn_documents(
    session: AsyncSession, bot_id: str, scope: Scope, probe: Select[Any] | None, notes_limit: int = 0
) -> TurnDocuments:
    """A chat's memo, its pins, its last ``notes_limit`` short-term notes and (optionally)
    whether ``probe`` finds a visible fact, in ONE statement: on the per-turn path each
    statement costs several thread hops in aiosqlite."""
    parts = [
        select(literal("memo").label("part"), MemoRow.id.label("ref"), MemoRow.content.label("body"),
               MemoRow.updated_at.label("at"))
        .where(MemoRow.bot_id == bot_id, MemoRow.scope_kind == scope.kind, MemoRow.scope_id == scope.id),
        select(literal("pin"), PinRow.id, PinRow.content, PinRow.updated_at)
        .where(PinRow.bot_id == bot_id, PinRow.scope_kind == scope.kind, PinRow.scope_id == scope.id),
    ]  # fmt: skip
    if probe is not None:
        found = probe.with_only_columns(MemoryRow.id).limit(1).subquery()
        parts.append(select(literal("probe"), found.c.id, literal(""), cast(null(), DateTime(timezone=True))))
    if notes_limit > 0:
        last = (
            select(NoteRow.id, NoteRow.content, NoteRow.created_at)
            .where(NoteRow.bot_id == bot_id, NoteRow.scope_kind == scope.kind, NoteRow.scope_id == scope.id)
            .order_by(NoteRow.id.desc())
            .limit(notes_limit)
            .subquery()
        )
        parts.append(select(literal("note"), last.c.id, last.c.content, last.c.created_at))
    rows = (await session.execute(union_all(*parts))).all()
    memo = next((row.body for row in rows if row.part == "memo"), "")
    pins = sorted((int(row.ref), row.body, as_utc(row.at)) for row in rows if row.part == "pin")
    notes = sorted((int(row.ref), row.body, as_utc(row.at)) for row in rows if row.part == "note")
    sees = any(row.part == "probe" for row in rows) if probe is not None else None
    return TurnDocuments(memo, pins, sees, notes)  # type: ignore[arg-type]


async def list_pins(session: AsyncSession, bot_id: str, scope: Scope) -> list[PinRow]:
    result = await session.execute(
        select(PinRow)
        .where(PinRow.bot_id == bot_id, PinRow.scope_kind == scope.kind, PinRow.scope_id == scope.id)
        .order_by(PinRow.id)
    )
    return list(result.scalars())


async def get_pin(session: AsyncSession, bot_id: str, scope: Scope, pin_id: int) -> PinRow | None:
    result = await session.execute(
        select(PinRow).where(
            PinRow.id == pin_id, PinRow.bot_id == bot_id, PinRow.scope_kind == scope.kind, PinRow.scope_id == scope.id
        )
    )
    return result.scalar_one_or_none()


async def count_pins(session: AsyncSession, bot_id: str, scope: Scope) -> int:
    result = await session.execute(
        select(func.count())
        .select_from(PinRow)
        .where(PinRow.bot_id == bot_id, PinRow.scope_kind == scope.kind, PinRow.scope_id == scope.id)
    )
    return int(result.scalar_one())


async def add_pin(session: AsyncSession, bot_id: str, scope: Scope, content: str, by: str, now: datetime) -> PinRow:
    row = PinRow(
        bot_id=bot_id,
        scope_kind=scope.kind,
        scope_id=scope.id,
        content=content,
        created_at=now,
        updated_at=now,
        created_by=by,
    )
    session.add(row)
    await session.flush()
    return row


def update_pin(row: PinRow, content: str, now: datetime) -> None:
    row.content = content
    row.updated_at = now


async def delete_pin(session: AsyncSession, row: PinRow) -> None:
    await session.delete(row)
