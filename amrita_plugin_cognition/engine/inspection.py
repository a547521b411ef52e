"""Inspecting what is kept: facts with their provenance, source and lineage, and one user's
data as JSON lines (``ambot cognition export --user``).

A fact's lineage is the chain of its versions: each correction writes a new fact and marks the
old one superseded by it, so ``supersedes`` (older versions, oldest last) and ``superseded_by``
(the newer chain) say where it came from and what replaced it. Forgotten facts are gone; only
their barrier (id and content hash) remains, which no inspection shows.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, or_, select

from ..domain.clock import as_utc, aware_or_now
from ..domain.erasure import ErasureTarget
from ..domain.happened import precision_of
from ..domain.records import MemoryRecord, MemoryStatus, Scope
from ..errors import InvalidInput, NotFound
from ..store import audit, knowledge_suggestions, profile_erasure, repository
from ..store.audit import AuditEntry
from ..store.erasure import covered_memories, covers
from ..store.models import (
    KnowledgeSuggestionRow,
    MemoRow,
    MemoryRow,
    NoteRow,
    OptOutRow,
    PinRow,
    ProfileRow,
    TranscriptRow,
)

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from .ports import Transactional

EXPORT_FORMAT = "amrita_plugin_cognition.user_export"
PAGE_MAX = 200


@dataclass(frozen=True, slots=True)
class InspectFilter:
    """Which facts to show. Every field narrows; none given: every fact of every bot account."""

    bot_id: str | None = None
    user_id: str | None = None
    scope: Scope | None = None
    status: MemoryStatus | None = None
    memory_id: int | None = None
    #: The facts said by this user (``user_id`` also takes the facts about them).
    speaker_id: str | None = None
    #: A piece of the text (a plain substring, case-insensitive for Latin letters).
    text: str | None = None
    #: Recorded at or after / before these moments.
    recorded_from: datetime | None = None
    recorded_before: datetime | None = None


@dataclass(frozen=True, slots=True)
class Inspected:
    record: MemoryRecord
    #: Older versions this fact replaced, newest first (directly or through earlier corrections).
    supersedes: list[int]
    #: The newer versions that replaced it, in order (empty while it is current).
    superseded_by: list[int]


def _where(query: Any, wanted: InspectFilter) -> Any:
    if wanted.bot_id is not None:
        query = query.where(MemoryRow.bot_id == wanted.bot_id)
    if wanted.user_id is not None:
        query = query.where(or_(MemoryRow.speaker_id == wanted.user_id, MemoryRow.subject_id == wanted.user_id))
    if wanted.scope is not None:
        query = query.where(MemoryRow.scope_kind == wanted.scope.kind, MemoryRow.scope_id == wanted.scope.id)
    if wanted.status is not None:
        query = query.where(MemoryRow.status == wanted.status.value)
    if wanted.memory_id is not None:
        query = query.where(MemoryRow.id == wanted.memory_id)
    if wanted.speaker_id is not None:
        query = query.where(MemoryRow.speaker_id == wanted.speaker_id)
    if wanted.text:
        pattern = "%" + wanted.text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        query = query.where(MemoryRow.text.ilike(pattern, escape="\\"))
    if wanted.recorded_from is not None:
        query = query.where(MemoryRow.recorded_at >= wanted.recorded_from)
    if wanted.recorded_before is not None:
        query = query.where(MemoryRow.recorded_at < wanted.recorded_before)
    return query


async def _newer_chain(session: AsyncSession, row: MemoryRow) -> list[int]:
    chain: list[int] = []
    following = row.superseded_by
    while following is not None and following not in chain:
        chain.append(following)
        rows = await repository.rows_by_ids(session, [following])
        following = rows[0].superseded_by if rows else None
    return chain


async def _detail(session: AsyncSession, row: MemoryRow) -> Inspected:
    older = (await repository.lineages(session, [row]))[row.id]
    return Inspected(repository.to_record(row), older, await _newer_chain(session, row))


async def inspect(
    engine: Transactional, wanted: InspectFilter, offset: int = 0, limit: int = 20
) -> tuple[list[Inspected], int]:
    """One page of facts, newest first, each with its lineage; and how many match in all."""
    if not 1 <= limit <= PAGE_MAX:
        raise InvalidInput(f"每页条数必须在 1 到 {PAGE_MAX} 之间")
    if offset < 0:
        raise InvalidInput("offset 不能为负数")
    # ids first (the scope and speaker indices cover them), then the page's rows by id: sorting
    # whole rows of a 100,000-fact chat to show twenty took seconds
    ids_query = _where(select(MemoryRow.id), wanted)
    async with engine.unit_of_work() as uow:
        session = uow.session
        total = int((await session.execute(select(func.count()).select_from(ids_query.subquery()))).scalar_one())
        page_query = ids_query.order_by(MemoryRow.id.desc()).offset(offset).limit(limit)
        ids = list((await session.execute(page_query)).scalars())
        by_id = {row.id: row for row in await repository.rows_by_ids(session, ids)}
        rows = [by_id[memory_id] for memory_id in ids if memory_id in by_id]
        older = await repository.lineages(session, rows)
        return [
            Inspected(repository.to_record(row), older[row.id], await _newer_chain(session, row)) for row in rows
        ], total


async def inspect_one(engine: Transactional, bot_id: str, memory_id: int) -> Inspected:
    """One fact of this bot account with its lineage, whatever its status."""
    async with engine.unit_of_work() as uow:
        rows = await repository.get_rows(uow.session, bot_id, [memory_id])
        row = rows.get(memory_id)
        if row is None:
            if await repository.barrier_for(uow.session, memory_id):
                raise NotFound(f"记忆 #{memory_id} 已被删除")
            raise NotFound(f"没有找到编号为 {memory_id} 的记忆")
        return await _detail(uow.session, row)


def _iso(moment: datetime | None) -> str | None:
    value = as_utc(moment)
    return value.isoformat() if value is not None else None


def memory_document(item: Inspected) -> dict[str, Any]:
    """A fact as inspect and export write it (JSON)."""
    record = item.record
    return {
        "id": record.id,
        "bot_id": record.bot_id,
        "chat": record.scope.key,
        "text": record.text,
        "kind": record.kind,
        "tags": record.tags,
        "importance": record.importance.value,
        "provenance": record.provenance,
        "source": record.source,
        "speaker": {"id": record.speaker_id, "name": record.speaker_name},
        "subject": {"id": record.subject_id, "name": record.subject_name},
        "happened_at": _iso(record.happened_at),
        #: how precisely it was said ("day", "month", "year"; null: an exact time or none)
        "happened_precision": precision.value if (precision := precision_of(record.source)) else None,
        "recorded_at": _iso(record.recorded_at),
        "updated_at": _iso(record.updated_at),
        "status": record.status.value,
        #: when it stopped being current (superseded, or expired: the decay sweep)
        "invalid_at": _iso(record.invalid_at),
        "keep": record.keep,
        "supersedes": item.supersedes,
        "superseded_by": item.superseded_by,
    }


async def _bots_of(session: AsyncSession, user_id: str) -> list[str]:
    found: set[str] = set()
    for model, column in (
        (MemoryRow, MemoryRow.speaker_id),
        (NoteRow, NoteRow.user_id),
        (TranscriptRow, TranscriptRow.user_id),
    ):
        result = await session.execute(
            select(model.bot_id)
            .distinct()
            .where(or_(column == user_id, (model.scope_kind == "private") & (model.scope_id == user_id)))
        )
        found.update(result.scalars())
    result = await session.execute(select(MemoryRow.bot_id).distinct().where(MemoryRow.subject_id == user_id))
    found.update(result.scalars())
    result = await session.execute(
        select(KnowledgeSuggestionRow.bot_id).distinct().where(KnowledgeSuggestionRow.user_id == user_id)
    )
    found.update(result.scalars())
    result = await session.execute(
        select(ProfileRow.bot_id).distinct().where(ProfileRow.entity_type == "user", ProfileRow.entity_id == user_id)
    )
    found.update(result.scalars())
    return sorted(found)


async def export_user(
    engine: Transactional, user_id: str, bot_id: str | None = None, now: datetime | None = None
) -> list[dict[str, Any]]:
    """Everything kept about one user, as JSON-lines documents: a header, then per bot account
    their facts (every version, with lineage), notes, transcript turns, their private chat's memo
    and pins, the profile cards (theirs, and others that name them), the knowledge-base suggestions
    they filed, and whether they opted out.
    The same rows a delete-all of the user removes."""
    user_id = str(user_id).strip()
    if not user_id.isdigit():
        raise InvalidInput("用户写作 QQ 号（纯数字）")
    documents: list[dict[str, Any]] = [
        {
            "type": "export",
            "format": EXPORT_FORMAT,
            "version": 1,
            "user_id": user_id,
            "exported_at": aware_or_now(now).isoformat(),
        }
    ]
    async with engine.unit_of_work() as uow:
        session = uow.session
        bots = [bot_id] if bot_id is not None else await _bots_of(session, user_id)
        for bot in bots:
            documents.extend(await _user_documents(session, ErasureTarget.user(bot, user_id)))
    return documents


async def _user_documents(session: AsyncSession, target: ErasureTarget) -> list[dict[str, Any]]:
    bot = target.bot_id
    out: list[dict[str, Any]] = []
    memories = await covered_memories(session, target)
    for row in memories:
        out.append({"type": "memory", **memory_document(await _detail(session, row))})
    notes = await session.execute(
        select(NoteRow).where(covers(NoteRow, target, [NoteRow.user_id])).order_by(NoteRow.id)
    )
    out += [
        {
            "type": "note",
            "id": row.id,
            "bot_id": bot,
            "chat": f"{row.scope_kind}:{row.scope_id}",
            "text": row.content,
            "at": _iso(row.created_at),
        }
        for row in notes.scalars()
    ]
    turns = await session.execute(
        select(TranscriptRow).where(covers(TranscriptRow, target, [TranscriptRow.user_id])).order_by(TranscriptRow.id)
    )
    out += [
        {
            "type": "turn",
            "id": row.id,
            "bot_id": bot,
            "chat": f"{row.scope_kind}:{row.scope_id}",
            "speaker": {"id": row.user_id, "name": row.user_name},
            "message_id": row.message_id,
            "input": row.input_text,
            "reply": row.reply_text,
            "at": _iso(row.said_at),
        }
        for row in turns.scalars()
    ]
    chat = target.private_chat
    assert chat is not None
    memo = (
        await session.execute(
            select(MemoRow).where(MemoRow.bot_id == bot, MemoRow.scope_kind == chat.kind, MemoRow.scope_id == chat.id)
        )
    ).scalar_one_or_none()
    if memo is not None and memo.content:
        out.append(
            {"type": "memo", "bot_id": bot, "chat": chat.key, "text": memo.content, "updated_at": _iso(memo.updated_at)}
        )
    pins = await session.execute(
        select(PinRow)
        .where(PinRow.bot_id == bot, PinRow.scope_kind == chat.kind, PinRow.scope_id == chat.id)
        .order_by(PinRow.id)
    )
    out += [
        {"type": "pin", "id": row.id, "bot_id": bot, "chat": chat.key, "text": row.content, "at": _iso(row.created_at)}
        for row in pins.scalars()
    ]
    out += [{"type": "profile", **card.as_dict()} for card in await profile_erasure.covered_cards(session, target)]
    out += [
        {
            "type": "knowledge_suggestion",
            "id": row.id,
            "bot_id": bot,
            "chat": f"{row.scope_kind}:{row.scope_id}",
            "text": row.content,
            "state": row.state,
            "at": _iso(row.created_at),
        }
        for row in await knowledge_suggestions.of_user(session, bot, target.user_id)
    ]
    opted = await session.get(OptOutRow, (bot, target.user_id))
    out.append(
        {
            "type": "settings",
            "bot_id": bot,
            "opted_out": opted is not None,
            "opted_out_at": _iso(opted.opted_out_at) if opted else None,
        }
    )
    return out


def json_lines(documents: list[dict[str, Any]]) -> Iterator[str]:
    for document in documents:
        yield json.dumps(document, ensure_ascii=False, default=str)


async def record_action(
    engine: Transactional, bot_id: str, action: str, actor: str, target: str, count: int, now: datetime | None = None
) -> None:
    """One audit record of an operator's action that no use case records itself (a page's
    forget, correction, restore, job retry): who, what, on which chat or user, how many."""
    async with engine.unit_of_work() as uow:
        audit.record(uow.session, bot_id, action[:32], actor[:64], target[:128], count, aware_or_now(now))
        await uow.commit()


async def audit_entries(engine: Transactional, bot_id: str | None = None, limit: int = 100) -> list[AuditEntry]:
    """The newest audit records first (of one bot account, or of all): who did what, never content."""
    async with engine.unit_of_work() as uow:
        return await audit.entries(uow.session, bot_id, limit)
