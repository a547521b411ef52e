"""What a fact's provenance still points at, read for the owner's "why" chain: the transcript
turns and ``end`` notes of its source messages, and the historian job that wrote it while the job
is still queued (a finished job is deleted with its payload)."""

from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.records import Scope
from .models import JobRow, NoteRow, TranscriptRow
from .profiles import json_list

#: At most this many source messages are looked up (a fact names a handful).
MESSAGES_MAX = 50


async def turns_of_messages(
    session: AsyncSession, bot_id: str, scope: Scope, message_ids: Collection[str]
) -> list[TranscriptRow]:
    wanted = sorted(message_ids)[:MESSAGES_MAX]
    if not wanted:
        return []
    rows = await session.execute(
        select(TranscriptRow)
        .where(
            TranscriptRow.bot_id == bot_id,
            TranscriptRow.scope_kind == scope.kind,
            TranscriptRow.scope_id == scope.id,
            TranscriptRow.message_id.in_(wanted),
        )
        .order_by(TranscriptRow.id)
    )
    return list(rows.scalars())


async def notes_of_messages(
    session: AsyncSession, bot_id: str, scope: Scope, message_ids: Collection[str]
) -> list[NoteRow]:
    """The chat's ``end`` notes that sum up one of these messages (their ids are a JSON list)."""
    wanted = set(sorted(message_ids)[:MESSAGES_MAX])
    if not wanted:
        return []
    conditions = [NoteRow.message_ids.contains(message_id, autoescape=True) for message_id in wanted]
    query = select(NoteRow).where(
        NoteRow.bot_id == bot_id, NoteRow.scope_kind == scope.kind, NoteRow.scope_id == scope.id
    )
    found: list[NoteRow] = []
    for condition in conditions:  # a few ids each: one indexed query per id
        rows = await session.execute(query.where(condition).order_by(NoteRow.id))
        found.extend(rows.scalars())
    unique = {row.id: row for row in found}
    return [
        row
        for _, row in sorted(unique.items())
        if wanted.intersection(str(item) for item in json_list(row.message_ids))
    ]


async def queued_job(session: AsyncSession, bot_id: str, job_id: int) -> JobRow | None:
    """The job if it is still in the queue and of this bot account."""
    rows = await session.execute(select(JobRow).where(JobRow.id == job_id, JobRow.bot_id == bot_id))
    return rows.scalar_one_or_none()
