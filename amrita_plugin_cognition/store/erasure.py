"""Delete-all in SQL: every row a target covers (``domain/erasure.py``), in the caller's unit of
work. Facts leave a forget barrier each (id and content hash, never the text) so that no restore,
import or replayed job brings them back; the vector side follows through the outbox, and the
turns next to an erased turn get their keyword context and vectors again (no window keeps its
words). For a user, whatever names them is found by the person matcher (``domain/people.py``,
their nicknames from ``store/people.py``), which reads every text of the bot account in pages:
no SQL filter knows a QQ number written in Chinese numerals."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import and_, delete, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.erasure import ErasureTarget, merge_job_without_part, scrub_job
from ..domain.job_kinds import MERGE_JOB
from ..domain.people import KeptName, PersonMatcher, without_lines
from ..domain.records import MemoryStatus, Scope
from . import (
    cycle_runs,
    jobs,
    keyword,
    knowledge_erasure,
    memory_sources,
    outbox,
    people,
    profile_erasure,
    repository,
    turns,
    vector_copy,
)
from .models import (
    BarrierRow,
    ChatActivityRow,
    CycleRunRow,
    JobRow,
    MemoRevisionRow,
    MemoRow,
    MemoryRow,
    NoteRow,
    PinRow,
    TranscriptRow,
)

#: Ids per statement (SQLite binds at most a few thousand parameters at once).
CHUNK = 500
#: Rows read per page when every text of a bot account is read.
PAGE = 2000


@dataclass(slots=True)
class ErasureCounts:
    memories: int = 0
    notes: int = 0
    turns: int = 0
    jobs: int = 0
    memos: int = 0
    pins: int = 0
    #: Profile card parts deleted or cut (a user's two parts count two).
    profiles: int = 0
    #: Knowledge entries and suggestions deleted (``store/knowledge_erasure.py``).
    knowledge: int = 0
    #: Chats whose memo, pins or notes changed (their per-turn caches are stale).
    chats: set[Scope] = field(default_factory=set)
    #: The ids of the facts removed (the cards built from them are rebuilt; never in the audit).
    memory_ids: list[int] = field(default_factory=list)
    #: A user's nicknames that were not looked for by themselves (``domain/people.py``).
    kept_names: list[KeptName] = field(default_factory=list)

    def as_dict(self) -> dict[str, int]:
        return {
            "memories": self.memories,
            "notes": self.notes,
            "turns": self.turns,
            "jobs": self.jobs,
            "memos": self.memos,
            "pins": self.pins,
            "profiles": self.profiles,
            "knowledge": self.knowledge,
        }


def chunks(ids: Sequence[int]) -> list[list[int]]:
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
    """The rows of ``model`` the target covers by who they belong to: its whole chats and, for a
    user, their own rows (``person_columns``) in every other chat."""
    whole = _whole_chats(model, target)
    if target.kind != "user":
        return whole
    theirs = or_(*[column == target.user_id for column in person_columns])
    return and_(model.bot_id == target.bot_id, or_(theirs, whole))


def _matching(rows: Sequence[Any], user_id: str, chat: Scope, width: int, names: Callable[[str], bool]) -> list[int]:
    """The ids among ``rows`` (id, scope kind, scope id, ``width`` person columns, texts) of the
    user, in their private chat, or naming them."""
    return [
        int(row[0])
        for row in rows
        if user_id in row[3 : 3 + width]
        or (row[1] == chat.kind and row[2] == chat.id)
        or any(names(str(text or "")) for text in row[3 + width :])
    ]


async def _naming_ids(
    session: AsyncSession,
    model: Any,
    target: ErasureTarget,
    columns: Sequence[Any],
    person_columns: Sequence[Any],
    names: Callable[[str], bool],
) -> list[int]:
    """The ids of the bot's rows of ``model`` that the user said (``person_columns``), that sit
    in their private chat, or whose texts (``columns``) name them, read in id pages and matched on
    a worker thread."""
    chat = target.private_chat
    assert chat is not None
    found: list[int] = []
    last = 0
    while True:
        query = (
            select(model.id, model.scope_kind, model.scope_id, *person_columns, *columns)
            .where(model.bot_id == target.bot_id, model.id > last)
            .order_by(model.id)
            .limit(PAGE)
        )
        rows = (await session.execute(query)).all()
        if not rows:
            return found
        # pure CPU: on a worker thread, so the event loop keeps serving chats
        found += await asyncio.to_thread(_matching, rows, target.user_id, chat, len(person_columns), names)
        last = int(rows[-1][0])


async def covered_memories(
    session: AsyncSession, target: ErasureTarget, matcher: PersonMatcher | None = None
) -> list[MemoryRow]:
    """The facts a target covers, every status: for a user, also the facts that name them (the
    historian writes people as ``QQ号<id>（昵称<name>）``; people write them any way)."""
    if target.kind != "user":
        clause = covers(MemoryRow, target, [MemoryRow.speaker_id, MemoryRow.subject_id])
        return list((await session.execute(select(MemoryRow).where(clause).order_by(MemoryRow.id))).scalars())
    matcher = matcher or await people.person_matcher(session, target.bot_id, target.user_id)
    ids = await _naming_ids(
        session,
        MemoryRow,
        target,
        [MemoryRow.text, MemoryRow.tags],
        [MemoryRow.speaker_id, MemoryRow.subject_id],
        lambda text: matcher.names(text, target.user_id),
    )
    found: list[MemoryRow] = []
    for chunk in chunks(ids):
        found.extend((await session.execute(select(MemoryRow).where(MemoryRow.id.in_(chunk)))).scalars())
    return sorted(found, key=lambda row: row.id)


async def with_older_versions(session: AsyncSession, rows: list[MemoryRow]) -> list[MemoryRow]:
    """``rows`` and every version they replaced, directly or through earlier corrections."""
    found = {row.id: row for row in rows}
    frontier = list(found)
    while frontier:
        newer: list[int] = []
        for chunk in chunks(frontier):
            result = await session.execute(select(MemoryRow).where(MemoryRow.superseded_by.in_(chunk)))
            for row in result.scalars():
                if row.id not in found:
                    found[row.id] = row
                    newer.append(row.id)
        frontier = newer
    return list(found.values())


async def _erase_memories(
    session: AsyncSession,
    target: ErasureTarget,
    matcher: PersonMatcher | None,
    reason: str,
    now: datetime,
    counts: ErasureCounts,
) -> int:
    matched = await covered_memories(session, target, matcher)
    # with their lineage: older versions, and a merge built from a covered fact or its sources
    lineage = await memory_sources.closure(session, [row.id for row in matched])
    rows = [row for chunk in chunks(sorted(lineage)) for row in await repository.rows_by_ids(session, chunk)]
    if not rows:
        return 0
    await memory_sources.drop(session, lineage)
    counts.memory_ids = sorted(row.id for row in rows)
    active = [row for row in rows if row.status == MemoryStatus.ACTIVE.value]
    for row in rows:
        session.add_all(repository.barriers_for(row, reason, now))
    for row in active:
        outbox.enqueue(session, row, "delete", now)
    ids = [row.id for row in rows]
    await keyword.remove_documents(session, ids)
    await vector_copy.remove(session, None, ids)  # the outbox clears the index; the copy goes now
    for chunk in chunks(ids):
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


async def _delete_ids(session: AsyncSession, model: Any, ids: Sequence[int], counts: ErasureCounts) -> int:
    total = 0
    for chunk in chunks(ids):
        total += await _delete_where(session, model, model.id.in_(chunk), counts)
    return total


async def _erase_jobs(session: AsyncSession, target: ErasureTarget, matcher: PersonMatcher | None) -> int:
    """Queued historian jobs (running ones too: a job whose row is gone cannot commit its facts).
    For a user, a job of someone else keeps its other messages and observations (``scrub_job``);
    one that was running is handed back to the queue, so that the worker holding it cannot commit
    what it read before the erasure (its lease is gone) and the job runs again on what is left."""
    if target.kind != "user":
        clause = _whole_chats(JobRow, target)
        if target.kind == "chat" and target.scope is not None and not target.scope.is_group:
            clause = and_(clause, JobRow.id.not_in(await _keep_card_merge_job(session, clause)))
        result = await session.execute(delete(JobRow).where(clause).execution_options(synchronize_session=False))
        return int(result.rowcount or 0)  # type: ignore[attr-defined]
    chat = target.private_chat
    assert chat is not None
    result = await session.execute(
        select(JobRow.id, JobRow.payload, JobRow.scope_kind, JobRow.scope_id, JobRow.state, JobRow.last_error).where(
            JobRow.bot_id == target.bot_id
        )
    )
    dropped: list[int] = []
    for job_id, text, kind, scope_id, state, last_error in result.all():
        if Scope(kind, scope_id) == chat:  # type: ignore[arg-type]
            dropped.append(job_id)
            continue
        payload = jobs.readable_payload(text)
        if payload is None:
            continue
        kept = scrub_job(payload, target.user_id, matcher)
        if kept is None:
            dropped.append(job_id)
            continue
        changes: dict[str, Any] = {}
        if kept is not payload:
            changes.update(jobs.rewritten(kept, state))
        if last_error and matcher is not None and matcher.names(last_error, target.user_id):
            changes["last_error"] = ""
        if changes:
            await session.execute(update(JobRow).where(JobRow.id == job_id).values(**changes))
    for chunk in chunks(dropped):
        await session.execute(delete(JobRow).where(JobRow.id.in_(chunk)).execution_options(synchronize_session=False))
    return len(dropped)


async def _keep_card_merge_job(session: AsyncSession, in_chat: Any) -> list[int]:
    """A private chat's erasure takes its user's private card part, not the card: their queued
    merge job (in this chat's scope) is kept for the other parts (``merge_job_without_part``),
    handed back to the queue if it was running. Returns the ids of the jobs kept."""
    result = await session.execute(
        select(JobRow.id, JobRow.payload, JobRow.state).where(in_chat, JobRow.kind == MERGE_JOB)
    )
    kept: list[int] = []
    for job_id, text, state in result.all():
        payload = jobs.readable_payload(text)
        left = None if payload is None else merge_job_without_part(payload, "private")
        if left is not None:
            await session.execute(update(JobRow).where(JobRow.id == job_id).values(**jobs.rewritten(left, state)))
            kept.append(job_id)
    return kept


async def _erase_memos(
    session: AsyncSession, target: ErasureTarget, names: Callable[[str], bool], counts: ErasureCounts
) -> int:
    """A user's private chat's memo goes whole; every other memo of the bot (and each kept
    version) loses the lines that name them, and forgets that they wrote it. Returns the memos
    (and versions) changed or deleted."""
    user = target.user_id
    changed = await _delete_where(session, MemoRow, _whole_chats(MemoRow, target), counts)
    changed += await _delete_where(session, MemoRevisionRow, _whole_chats(MemoRevisionRow, target), counts)
    versions: tuple[tuple[Any, tuple[str, ...]], ...] = (
        (MemoRow, ("updated_by",)),
        (MemoRevisionRow, ("written_by", "replaced_by")),
    )
    for model, authors in versions:
        rows: list[Any] = list((await session.execute(select(model).where(model.bot_id == target.bot_id))).scalars())
        for row in rows:
            content = without_lines(row.content, names) if names(row.content) else row.content
            touched = content != row.content or any(getattr(row, author) == user for author in authors)
            if not touched:
                continue
            counts.chats.add(Scope(row.scope_kind, row.scope_id))  # type: ignore[arg-type]
            changed += 1
            if model is MemoRevisionRow and not content.strip():
                await session.delete(row)
                continue
            row.content = content
            for author in authors:
                if getattr(row, author) == user:
                    setattr(row, author, "")
    await session.flush()
    return changed


async def _erase_barrier_reasons(session: AsyncSession, target: ErasureTarget) -> None:
    """A barrier keeps why it was made (``by:<QQ>``, ``delete_all_user:<QQ>``): never the user's number."""
    suffix = f":{target.user_id}"
    reasons = await session.execute(
        select(BarrierRow.reason)
        .where(BarrierRow.bot_id == target.bot_id, BarrierRow.reason.endswith(suffix))
        .distinct()
    )
    for (reason,) in reasons.all():
        await session.execute(
            update(BarrierRow)
            .where(BarrierRow.bot_id == target.bot_id, BarrierRow.reason == reason)
            .values(reason=reason[: -len(suffix)])
            .execution_options(synchronize_session=False)
        )


async def erase(
    session: AsyncSession,
    target: ErasureTarget,
    reason: str,
    now: datetime,
    *,
    matcher: PersonMatcher | None = None,
    restored_only: bool = False,
) -> ErasureCounts:
    """Remove everything ``target`` covers, in the caller's transaction. ``matcher`` finds a user
    (default: built from the rows stored now). ``restored_only``: only the tables a backup brings
    back (a restore replaying a delete-all, ``store/restore_erasures.py``): the notes, transcript
    and queued jobs were erased at the time and are newer than it since."""
    counts = ErasureCounts()
    # the chats erased whole lose their activity counts too (a private chat's are its user's rhythm)
    await session.execute(
        delete(ChatActivityRow)
        .where(_whole_chats(ChatActivityRow, target))
        .execution_options(synchronize_session=False)
    )
    if target.kind != "user":
        counts.memories = await _erase_memories(session, target, None, reason, now, counts)
        if not restored_only:
            counts.notes = await _delete_where(session, NoteRow, _whole_chats(NoteRow, target), counts)
            counts.turns = await _delete_where(session, TranscriptRow, _whole_chats(TranscriptRow, target), counts)
            counts.jobs = await _erase_jobs(session, target, None)
        counts.memos = await _delete_where(session, MemoRow, _whole_chats(MemoRow, target), counts)
        await _delete_where(session, MemoRevisionRow, _whole_chats(MemoRevisionRow, target), counts)
        counts.pins = await _delete_where(session, PinRow, _whole_chats(PinRow, target), counts)
        counts.profiles = await profile_erasure.erase(session, target, now)
        counts.knowledge = await knowledge_erasure.erase(session, target, now)
        await cycle_runs.erase(session, _whole_chats(CycleRunRow, target), target.bot_id, None)
        return counts
    matcher = matcher or await people.person_matcher(session, target.bot_id, target.user_id)
    counts.kept_names = matcher.kept(target.user_id)

    def names(text: str) -> bool:
        return matcher.names(text, target.user_id)

    counts.memories = await _erase_memories(session, target, matcher, reason, now, counts)
    if not restored_only:
        note_ids = await _naming_ids(session, NoteRow, target, [NoteRow.content], [NoteRow.user_id], names)
        counts.notes = await _delete_ids(session, NoteRow, note_ids, counts)
        turn_ids = await _naming_ids(
            session, TranscriptRow, target, [TranscriptRow.input_text, TranscriptRow.reply_text],
            [TranscriptRow.user_id], names,
        )  # fmt: skip
        counts.turns = await _delete_ids(session, TranscriptRow, turn_ids, counts)
        counts.jobs = await _erase_jobs(session, target, matcher)
    counts.memos = await _erase_memos(session, target, names, counts)
    pin_ids = await _naming_ids(session, PinRow, target, [PinRow.content], [PinRow.created_by], names)
    counts.pins = await _delete_ids(session, PinRow, pin_ids, counts)
    counts.profiles = await profile_erasure.erase(session, target, now, matcher)
    counts.knowledge = await knowledge_erasure.erase(session, target, now, matcher)
    await cycle_runs.erase(session, _whole_chats(CycleRunRow, target), target.bot_id, names)
    await _erase_barrier_reasons(session, target)
    return counts
