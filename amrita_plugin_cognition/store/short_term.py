"""A chat's short-term record: the ``end`` tool's notes and the transcript of answered turns.

Notes are injected (the last few of the same chat, with their times). Transcript rows give an
``end`` job its recent messages, and turns that ended without ``end`` wait here (``pending``)
until a batch of them becomes one extraction job. Both are trimmed per chat in the background
(``prune``), never on a turn's path. Both name the messages they come from (a note its batch's
message ids, a turn its message id), so a forget can take the traces of the messages a fact was
drawn from (``remove_traces``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.clock import as_utc
from ..domain.records import Scope
from .models import NoteRow, TranscriptRow, fit_name
from .row_insert import NewRow

#: Ids per statement (SQLite binds at most a few thousand parameters at once).
CHUNK = 500


def _in_chat(model, bot_id: str, scope: Scope):  # type: ignore[no-untyped-def]
    return (model.bot_id == bot_id) & (model.scope_kind == scope.kind) & (model.scope_id == scope.id)


def note_row(
    bot_id: str,
    scope: Scope,
    user_id: str,
    user_name: str,
    content: str,
    at: datetime,
    message_ids: Sequence[str] = (),
) -> NewRow:
    """A note (the ``end`` tool's memo) as a new row, for ``row_insert.insert_rows``."""
    values = {
        "bot_id": bot_id,
        "scope_kind": scope.kind,
        "scope_id": scope.id,
        "user_id": user_id,
        "user_name": fit_name(user_name),
        "content": content,
        "created_at": at,
        "message_ids": json.dumps([str(item) for item in message_ids if item]),
    }
    return NoteRow.__table__, values


@dataclass(frozen=True, slots=True)
class Note:
    content: str
    user_name: str
    at: datetime


async def recent_notes(session: AsyncSession, bot_id: str, scope: Scope, limit: int) -> list[Note]:
    """The chat's last ``limit`` notes, oldest first."""
    if limit <= 0:
        return []
    rows = (
        await session.execute(
            select(NoteRow.content, NoteRow.user_name, NoteRow.created_at)
            .where(_in_chat(NoteRow, bot_id, scope))
            .order_by(NoteRow.id.desc())
            .limit(limit)
        )
    ).all()
    return [Note(content, name, as_utc(at) or at) for content, name, at in reversed(rows)]


def add_turn(
    session: AsyncSession,
    bot_id: str,
    scope: Scope,
    user_id: str,
    user_name: str,
    message_id: str,
    input_text: str,
    reply_text: str,
    at: datetime,
    pending: bool,
) -> TranscriptRow:
    row = TranscriptRow(
        bot_id=bot_id,
        scope_kind=scope.kind,
        scope_id=scope.id,
        user_id=user_id,
        user_name=fit_name(user_name),
        message_id=message_id,
        input_text=input_text,
        reply_text=reply_text,
        said_at=at,
        pending=pending,
    )
    session.add(row)
    return row


async def present_turns(session: AsyncSession, bot_id: str, turn_ids: Iterable[int]) -> set[int]:
    """Which of these transcript turns are still kept (a forget or an erasure removes turns)."""
    wanted = sorted(set(turn_ids))
    present: set[int] = set()
    for start in range(0, len(wanted), CHUNK):
        rows = await session.execute(
            select(TranscriptRow.id).where(
                TranscriptRow.bot_id == bot_id, TranscriptRow.id.in_(wanted[start : start + CHUNK])
            )
        )
        present.update(int(turn_id) for turn_id in rows.scalars())
    return present


@dataclass(slots=True)
class RemovedTraces:
    """What ``remove_traces`` took out of one chat."""

    notes: int = 0
    #: The ids of the transcript turns removed.
    turns: list[int] = field(default_factory=list)


async def remove_traces(session: AsyncSession, bot_id: str, scope: Scope, message_ids: Iterable[str]) -> RemovedTraces:
    """Remove the short-term traces of these messages in their chat: the notes that sum them up
    and their transcript turns (input and reply), in the caller's transaction."""
    wanted = {str(item) for item in message_ids if item}
    removed = RemovedTraces()
    if not wanted:
        return removed
    notes = await session.execute(
        select(NoteRow.id, NoteRow.message_ids).where(_in_chat(NoteRow, bot_id, scope), NoteRow.message_ids != "[]")
    )
    note_ids = [note_id for note_id, ids in notes.all() if wanted.intersection(_id_list(ids))]
    ordered = sorted(wanted)
    turn_ids: list[int] = []
    for start in range(0, len(ordered), CHUNK):
        rows = await session.execute(
            select(TranscriptRow.id).where(
                _in_chat(TranscriptRow, bot_id, scope), TranscriptRow.message_id.in_(ordered[start : start + CHUNK])
            )
        )
        turn_ids += [int(turn_id) for turn_id in rows.scalars()]
    for model, ids in ((NoteRow, note_ids), (TranscriptRow, turn_ids)):
        for start in range(0, len(ids), CHUNK):
            await session.execute(
                delete(model)
                .where(model.id.in_(ids[start : start + CHUNK]))
                .execution_options(synchronize_session=False)
            )
    removed.notes, removed.turns = len(note_ids), turn_ids
    return removed


def _id_list(text: str) -> list[str]:
    try:
        value = json.loads(text or "[]")
    except ValueError:
        return []
    return [str(item) for item in value] if isinstance(value, list) else []


async def recent_turns(session: AsyncSession, bot_id: str, scope: Scope, limit: int) -> list[TranscriptRow]:
    """The chat's last ``limit`` answered turns, oldest first."""
    if limit <= 0:
        return []
    rows = (
        await session.execute(
            select(TranscriptRow)
            .where(_in_chat(TranscriptRow, bot_id, scope))
            .order_by(TranscriptRow.id.desc())
            .limit(limit)
        )
    ).scalars()
    return list(reversed(list(rows)))


@dataclass(frozen=True, slots=True)
class PendingChat:
    bot_id: str
    scope: Scope
    turns: int
    last_at: datetime


async def pending_chats(session: AsyncSession) -> list[PendingChat]:
    """Chats with turns waiting for extraction: how many, and when the last was said."""
    rows = (
        await session.execute(
            select(
                TranscriptRow.bot_id,
                TranscriptRow.scope_kind,
                TranscriptRow.scope_id,
                func.count(),
                func.max(TranscriptRow.said_at),
            )
            .where(TranscriptRow.pending.is_(True))
            .group_by(TranscriptRow.bot_id, TranscriptRow.scope_kind, TranscriptRow.scope_id)
        )
    ).all()
    return [
        PendingChat(bot_id, Scope(kind, scope_id), int(count), as_utc(last) or last)  # type: ignore[arg-type]
        for bot_id, kind, scope_id, count, last in rows
    ]


async def take_pending(session: AsyncSession, bot_id: str, scope: Scope, limit: int) -> list[TranscriptRow]:
    """The chat's oldest waiting turns (up to ``limit``), marked as taken in the caller's
    transaction (which enqueues the job that extracts them)."""
    rows = list(
        (
            await session.execute(
                select(TranscriptRow)
                .where(_in_chat(TranscriptRow, bot_id, scope), TranscriptRow.pending.is_(True))
                .order_by(TranscriptRow.id)
                .limit(limit)
            )
        ).scalars()
    )
    if rows:
        await session.execute(
            update(TranscriptRow)
            .where(TranscriptRow.id.in_([row.id for row in rows]), TranscriptRow.pending.is_(True))
            .values(pending=False)
            .execution_options(synchronize_session=False)
        )
    return rows


async def prune(session: AsyncSession, bot_id: str, scope: Scope, keep_notes: int, keep_turns: int) -> int:
    """Trim one chat to its newest notes and turns (a turn still waiting is never dropped)."""
    dropped = 0
    for model, keep, extra in (
        (NoteRow, keep_notes, None),
        (TranscriptRow, keep_turns, TranscriptRow.pending.is_(False)),
    ):
        threshold = (
            await session.execute(
                select(model.id).where(_in_chat(model, bot_id, scope)).order_by(model.id.desc()).offset(keep).limit(1)
            )
        ).scalar_one_or_none()
        if threshold is None:
            continue
        query = delete(model).where(_in_chat(model, bot_id, scope), model.id <= threshold)
        if extra is not None:
            query = query.where(extra)
        result = await session.execute(query.execution_options(synchronize_session=False))
        dropped += int(result.rowcount or 0)  # type: ignore[attr-defined]
    return dropped


async def chats_over(session: AsyncSession, keep_notes: int, keep_turns: int) -> list[tuple[str, Scope]]:
    """Chats holding more notes or turns than they keep."""
    chats: set[tuple[str, Scope]] = set()
    for model, keep in ((NoteRow, keep_notes), (TranscriptRow, keep_turns)):
        rows = (
            await session.execute(
                select(model.bot_id, model.scope_kind, model.scope_id)
                .group_by(model.bot_id, model.scope_kind, model.scope_id)
                .having(func.count() > keep)
            )
        ).all()
        chats.update((bot_id, Scope(kind, scope_id)) for bot_id, kind, scope_id in rows)  # type: ignore[arg-type]
    return sorted(chats, key=lambda chat: (chat[0], chat[1].key))
