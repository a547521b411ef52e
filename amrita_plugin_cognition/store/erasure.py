"""Delete-all in SQL: every row a target covers (``domain/erasure.py``), in the caller's unit of
work. Facts leave a forget barrier each (id and content hash, never the text) so that no restore,
import or replayed job brings them back; the vector side follows through the outbox, and the
turns next to an erased turn get their keyword context and vectors again (no window keeps its
words)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import and_, delete, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.erasure import ErasureTarget, names_user, scrub_job
from ..domain.records import MemoryStatus, Scope
from . import keyword, outbox, profiles, repository, turns
from .models import JobRow, MemoRevisionRow, MemoRow, MemoryRow, NoteRow, PinRow, TranscriptRow

#: Ids per statement (SQLite binds at most a few thousand parameters at once).
CHUNK = 500


@dataclass(slots=True)
class ErasureCounts:
    memories: int = 0
    notes: int = 0
    turns: int = 0
    jobs: int = 0
    memos: int = 0
    pins: int = 0
    #: Profile card parts (a user's two parts count two).
    profiles: int = 0
    #: Chats whose memo, pins or notes changed (their per-turn caches are stale).
    chats: set[Scope] = field(default_factory=set)
    #: The ids of the facts removed (the cards built from them are rebuilt; never in the audit).
    memory_ids: list[int] = field(default_factory=list)

    def as_dict(self) -> dict[str, int]:
        return {
            "memories": self.memories,
            "notes": self.notes,
            "turns": self.turns,
            "jobs": self.jobs,
            "memos": self.memos,
            "pins": self.pins,
            "profiles": self.profiles,
        }


def _chunks(ids: Sequence[int]) -> list[list[int]]:
    return [list(ids[start : start + CHUNK]) for start in range(0, len(ids), CHUNK)]


def _in_chat(model: Any, bot_id: str, scope: Scope):  # type: ignore[no-untyped-def]
    return and_(model.bot_id == bot_id, model.scope_kind == scope.kind, model.scope_id == scope.id)


def _whole_chats(model: Any, target: ErasureTarget):  # type: ignore[no-untyped-def]
    """The rows of ``model`` in the chats the target erases whole: the chat, the user's private
    chat, or every chat of the bot account."""
    if target.kind == "bot":
        return model.bot_id == target.bot_id
    chat = target.private_chat
    assert chat is not None
    return _in_chat(model, target.bot_id, chat)


def covers(model: Any, target: ErasureTarget, person_columns: Sequence[Any]):  # type: ignore[no-untyped-def]
    """The rows of ``model`` the target covers: its whole chats and, for a user, their own rows
    (``person_columns``) in every other chat."""
    whole = _whole_chats(model, target)
    if target.kind != "user":
        return whole
    theirs = or_(*[column == target.user_id for column in person_columns])
    return and_(model.bot_id == target.bot_id, or_(theirs, whole))


async def covered_memories(session: AsyncSession, target: ErasureTarget) -> list[MemoryRow]:
    """The facts a target covers, every status: for a user, also the facts that name their QQ
    number (the historian writes people as ``QQ号<id>（昵称<name>）``)."""
    clause = covers(MemoryRow, target, [MemoryRow.speaker_id, MemoryRow.subject_id])
    if target.kind == "user":
        clause = or_(clause, and_(MemoryRow.bot_id == target.bot_id, MemoryRow.text.contains(target.user_id)))
    rows = (await session.execute(select(MemoryRow).where(clause).order_by(MemoryRow.id))).scalars()
    if target.kind != "user":
        return list(rows)
    # the text match above is a substring: keep only whole QQ numbers (10001 is not in 100011)
    return [
        row
        for row in rows
        if target.user_id in (row.speaker_id, row.subject_id)
        or (row.scope_kind == "private" and row.scope_id == target.user_id)
        or names_user(row.text, target.user_id)
    ]


async def _with_older_versions(session: AsyncSession, rows: list[MemoryRow]) -> list[MemoryRow]:
    """``rows`` and every version they replaced, directly or through earlier corrections."""
    found = {row.id: row for row in rows}
    frontier = list(found)
    while frontier:
        newer: list[int] = []
        for chunk in _chunks(frontier):
            result = await session.execute(select(MemoryRow).where(MemoryRow.superseded_by.in_(chunk)))
            for row in result.scalars():
                if row.id not in found:
                    found[row.id] = row
                    newer.append(row.id)
        frontier = newer
    return list(found.values())


async def _erase_memories(
    session: AsyncSession, target: ErasureTarget, reason: str, now: datetime, counts: ErasureCounts
) -> int:
    matched = await covered_memories(session, target)
    rows = await _with_older_versions(session, matched)
    if not rows:
        return 0
    counts.memory_ids = sorted(row.id for row in rows)
    active = [row for row in rows if row.status == MemoryStatus.ACTIVE.value]
    for row in rows:
        session.add_all(repository.barriers_for(row, reason, now))
    for row in active:
        outbox.enqueue(session, row, "delete", now)
    ids = [row.id for row in rows]
    await keyword.remove_documents(session, ids)
    for chunk in _chunks(ids):
        await session.execute(
            delete(MemoryRow).where(MemoryRow.id.in_(chunk)).execution_options(synchronize_session=False)
        )
    await turns.refresh_turn_windows(session, turns.turn_places(active), now)
    return len(rows)


async def _delete_where(session: AsyncSession, model: Any, clause: Any, counts: ErasureCounts) -> int:
    """Delete the rows of a per-chat table; their chats are noted for the caches."""
    chats = await session.execute(select(model.scope_kind, model.scope_id).where(clause).distinct())
    counts.chats.update(Scope(kind, scope_id) for kind, scope_id in chats.all())  # type: ignore[arg-type]
    result = await session.execute(delete(model).where(clause).execution_options(synchronize_session=False))
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


async def _erase_jobs(session: AsyncSession, target: ErasureTarget) -> int:
    """Queued historian jobs (running ones too: a job whose row is gone cannot commit its facts).
    For a user, a job of someone else keeps running with the user's messages taken out."""
    if target.kind != "user":
        clause = _whole_chats(JobRow, target)
        result = await session.execute(delete(JobRow).where(clause).execution_options(synchronize_session=False))
        return int(result.rowcount or 0)  # type: ignore[attr-defined]
    chat = target.private_chat
    assert chat is not None
    result = await session.execute(
        select(JobRow.id, JobRow.payload, JobRow.scope_kind, JobRow.scope_id).where(JobRow.bot_id == target.bot_id)
    )
    dropped: list[int] = []
    for job_id, text, kind, scope_id in result.all():
        if Scope(kind, scope_id) == chat:  # type: ignore[arg-type]
            dropped.append(job_id)
            continue
        try:
            payload = json.loads(text)
        except ValueError:
            continue  # unreadable: the queue marks it failed and never runs it
        if not isinstance(payload, dict):
            continue
        kept = scrub_job(payload, target.user_id)
        if kept is None:
            dropped.append(job_id)
        elif kept is not payload:
            await session.execute(
                update(JobRow)
                .where(JobRow.id == job_id)
                .values(payload=json.dumps(kept, ensure_ascii=False, default=str))
            )
    for chunk in _chunks(dropped):
        await session.execute(delete(JobRow).where(JobRow.id.in_(chunk)).execution_options(synchronize_session=False))
    return len(dropped)


async def erase(session: AsyncSession, target: ErasureTarget, reason: str, now: datetime) -> ErasureCounts:
    """Remove everything ``target`` covers, in the caller's transaction."""
    counts = ErasureCounts()
    counts.memories = await _erase_memories(session, target, reason, now, counts)
    counts.notes = await _delete_where(session, NoteRow, covers(NoteRow, target, [NoteRow.user_id]), counts)
    counts.turns = await _delete_where(
        session, TranscriptRow, covers(TranscriptRow, target, [TranscriptRow.user_id]), counts
    )
    counts.jobs = await _erase_jobs(session, target)
    # a group's memo and pins are the group's: a user's erasure takes only their private chat's
    counts.memos = await _delete_where(session, MemoRow, _whole_chats(MemoRow, target), counts)
    await _delete_where(session, MemoRevisionRow, _whole_chats(MemoRevisionRow, target), counts)
    counts.pins = await _delete_where(session, PinRow, _whole_chats(PinRow, target), counts)
    counts.profiles = await profiles.erase(session, target, now)
    return counts
