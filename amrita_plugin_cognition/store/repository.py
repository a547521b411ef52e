"""Repository functions over the authority store. Each takes the caller's session: the unit of
work (one transaction) is decided by the engine, so a fact, its keyword row and its outbox row
are always committed together."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, delete, false, func, or_, select, union, union_all, update
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.clock import UTC, as_utc
from ..domain.records import (
    Importance,
    MemoryDraft,
    MemoryRecord,
    MemoryStatus,
    Scope,
    content_hash,
    normalise_text,
    origin_hashes,
)
from ..domain.visibility import Visibility
from . import keyword, memory_sources, outbox, turns, vector_copy
from .models import BarrierRow, MemoRow, MemoryRow, NoteRow, PinRow, ProfileRow, fit_name


def to_record(row: Any) -> MemoryRecord:
    """A memory row (ORM object or plain row of the memory table) as a domain record."""
    return MemoryRecord(
        id=row.id,
        bot_id=row.bot_id,
        scope=Scope(row.scope_kind, row.scope_id),  # type: ignore[arg-type]
        text=row.text,
        speaker_id=row.speaker_id,
        speaker_name=row.speaker_name,
        subject_id=row.subject_id,
        subject_name=row.subject_name,
        kind=row.kind,
        tags=list(json.loads(row.tags or "[]")),
        importance=Importance(row.importance),
        provenance=row.provenance,
        source=dict(json.loads(row.source or "{}")),
        happened_at=as_utc(row.happened_at),
        recorded_at=as_utc(row.recorded_at),  # type: ignore[arg-type]
        updated_at=as_utc(row.updated_at),  # type: ignore[arg-type]
        status=MemoryStatus(row.status),
        superseded_by=row.superseded_by,
        invalid_at=as_utc(row.invalid_at),
        content_hash=row.content_hash,
        keep=bool(row.keep),
    )


async def count_active(session: AsyncSession, bot_id: str, scope: Scope) -> int:
    result = await session.execute(
        select(func.count())
        .select_from(MemoryRow)
        .where(turns.scope_clause(bot_id, scope), MemoryRow.status == MemoryStatus.ACTIVE.value)
    )
    return int(result.scalar_one())


async def active_texts(session: AsyncSession, bot_id: str, scope: Scope) -> list[tuple[int, str, str]]:
    """(id, text, content hash) of every active fact of one chat, oldest first."""
    result = await session.execute(
        select(MemoryRow.id, MemoryRow.text, MemoryRow.content_hash)
        .where(turns.scope_clause(bot_id, scope), MemoryRow.status == MemoryStatus.ACTIVE.value)
        .order_by(MemoryRow.id)
    )
    return [(int(row[0]), str(row[1]), str(row[2])) for row in result.all()]


async def barred_hashes(session: AsyncSession, hashes: Sequence[str]) -> set[str]:
    if not hashes:
        return set()
    result = await session.execute(select(BarrierRow.content_hash).where(BarrierRow.content_hash.in_(set(hashes))))
    return {row[0] for row in result}


async def insert_memories(
    session: AsyncSession, bot_id: str, drafts: Sequence[MemoryDraft], now: datetime
) -> list[MemoryRow]:
    """Add facts with their keyword rows and outbox entries (no commit)."""
    rows = []
    for draft in drafts:
        text_value = normalise_text(draft.text)
        rows.append(
            MemoryRow(
                bot_id=bot_id,
                scope_kind=draft.scope.kind,
                scope_id=draft.scope.id,
                speaker_id=draft.speaker_id,
                speaker_name=fit_name(draft.speaker_name),
                subject_id=draft.subject_id or draft.speaker_id,
                subject_name=fit_name(draft.subject_name or draft.speaker_name),
                text=text_value,
                kind=str(draft.kind),
                tags=json.dumps(list(dict.fromkeys(draft.tags)), ensure_ascii=False),
                importance=str(draft.importance),
                provenance=str(draft.provenance),
                source=json.dumps(draft.source, ensure_ascii=False, default=str),
                happened_at=draft.happened_at.astimezone(UTC) if draft.happened_at else None,
                recorded_at=now,
                updated_at=now,
                status=MemoryStatus.ACTIVE.value,
                superseded_by=None,
                invalid_at=None,
                content_hash=content_hash(bot_id, draft.scope, text_value),
            )
        )
    session.add_all(rows)
    await session.flush()
    await enter_indices(session, rows, now)
    return rows


async def enter_indices(session: AsyncSession, rows: Sequence[MemoryRow], now: datetime) -> None:
    """Active ``rows`` (new, or restored from expiry) into both indices: their keyword rows now,
    their vectors through the outbox."""
    for row in rows:
        outbox.enqueue(session, row, "upsert", now)
    windows = await turns.index_keywords(session, rows)
    # A new turn changes its neighbours' windows: their vectors are re-embedded too.
    fresh = {row.id for row in rows}
    for item in windows:
        if item.row.id not in fresh:
            outbox.enqueue(session, item.row, "upsert", now)


async def leave_indices(session: AsyncSession, rows: Sequence[MemoryRow], now: datetime) -> None:
    """``rows``, no longer active (superseded, expired), out of both indices: their keyword rows
    now, their vectors through the outbox (their copy in SQL now); the conversation turns next to
    them get new windows."""
    await keyword.remove_documents(session, [row.id for row in rows])
    await vector_copy.remove(session, None, [row.id for row in rows])
    await outbox.enqueue_many(session, rows, "delete", now)
    await turns.refresh_turn_windows(session, turns.turn_places(rows), now)


async def find_active_duplicate(session: AsyncSession, bot_id: str, hashes: Sequence[str]) -> dict[str, int]:
    if not hashes:
        return {}
    result = await session.execute(
        select(MemoryRow.content_hash, MemoryRow.id).where(
            MemoryRow.bot_id == bot_id,
            MemoryRow.content_hash.in_(set(hashes)),
            MemoryRow.status == MemoryStatus.ACTIVE.value,
        )
    )
    return {row[0]: int(row[1]) for row in result}


async def get_rows(session: AsyncSession, bot_id: str, memory_ids: Sequence[int]) -> dict[int, MemoryRow]:
    if not memory_ids:
        return {}
    result = await session.execute(
        select(MemoryRow).where(MemoryRow.bot_id == bot_id, MemoryRow.id.in_(set(memory_ids)))
    )
    return {row.id: row for row in result.scalars()}


async def recallable_rows(session: AsyncSession, memory_ids: Sequence[int]) -> list[Any]:
    """The active, never-barred facts among ``memory_ids``, as plain rows of the memory table
    (``to_record`` reads them like ORM rows): one statement, no ORM bookkeeping, because recall
    re-reads every candidate on every turn."""
    if not memory_ids:
        return []
    barred = select(BarrierRow.memory_id).where(BarrierRow.memory_id == MemoryRow.id).exists()
    result = await session.execute(
        select(MemoryRow.__table__).where(
            MemoryRow.id.in_(set(memory_ids)), MemoryRow.status == MemoryStatus.ACTIVE.value, ~barred
        )
    )
    return list(result)


async def rows_by_ids(session: AsyncSession, memory_ids: Sequence[int]) -> list[MemoryRow]:
    if not memory_ids:
        return []
    result = await session.execute(select(MemoryRow).where(MemoryRow.id.in_(set(memory_ids))))
    return list(result.scalars())


async def supersede(session: AsyncSession, old: MemoryRow, new: MemoryRow, now: datetime) -> bool:
    """Mark ``old`` replaced by ``new`` if it is still active (one conditional update: of two
    corrections racing, exactly one wins). It leaves both indices and stays in SQL as history.
    Returns False, changing nothing, when ``old`` was no longer active."""
    result = await session.execute(
        update(MemoryRow)
        .where(MemoryRow.id == old.id, MemoryRow.status == MemoryStatus.ACTIVE.value)
        .values(status=MemoryStatus.SUPERSEDED.value, superseded_by=new.id, invalid_at=now, updated_at=now)
        .execution_options(synchronize_session="fetch")
    )
    if result.rowcount != 1:  # type: ignore[attr-defined]
        return False
    await leave_indices(session, [old], now)
    return True


async def lineages(session: AsyncSession, rows: Sequence[MemoryRow]) -> dict[int, list[int]]:
    """For a page of facts at once, each one's older versions (``lineage``'s ids, oldest last).

    Versions stay in their fact's bot account and chat, and a replaced version is ``superseded``:
    the query walks only that chat's superseded rows (the scope index holds the status), one
    query per chat and level, instead of the whole table once per fact (``superseded_by`` has no
    index of its own)."""
    found: dict[int, list[int]] = {row.id: [] for row in rows}
    chats: dict[tuple[str, str, str], list[int]] = {}
    for row in rows:
        chats.setdefault((row.bot_id, row.scope_kind, row.scope_id), []).append(row.id)
    for (bot_id, kind, scope_id), ids in chats.items():
        frontier: dict[int, set[int]] = {memory_id: {memory_id} for memory_id in ids}  # id → whose lineage
        while frontier:
            result = await session.execute(
                select(MemoryRow.id, MemoryRow.superseded_by)
                .where(
                    MemoryRow.bot_id == bot_id,
                    MemoryRow.scope_kind == kind,
                    MemoryRow.scope_id == scope_id,
                    MemoryRow.status == MemoryStatus.SUPERSEDED.value,
                    MemoryRow.superseded_by.in_(list(frontier)),
                )
                .order_by(MemoryRow.id.desc())
            )
            following: dict[int, set[int]] = {}
            for older, newer in result.all():
                for owner in frontier.get(int(newer), ()) if newer is not None else ():
                    if older == owner or older in found[owner]:
                        continue
                    found[owner].append(older)
                    following.setdefault(older, set()).add(owner)
            frontier = following
    return found


async def whole_lineage(session: AsyncSession, memory_id: int) -> list[MemoryRow]:
    """What a forget of ``memory_id`` takes with it: the versions it replaced, and for a merge what
    it was built from and any merge built from it (``memory_sources.closure``), newest first."""
    others = await rows_by_ids(session, sorted(await memory_sources.closure(session, [memory_id]) - {memory_id}))
    return sorted(others, key=lambda item: -item.id)


#: What a forget removes: a fact still in use, or one the decay sweep retired (restorable, so
#: still the user's to forget); never an old version alone (it goes with its newest).
FORGETTABLE = (MemoryStatus.ACTIVE.value, MemoryStatus.EXPIRED.value)


async def forget(session: AsyncSession, row: MemoryRow, reason: str, now: datetime) -> list[int]:
    """The one true removal, of a still-active (or expired) fact and every version it replaced
    (and, for a merge, what it was built from and any merge built from it: ``memory_sources.closure``):
    the rows go, a barrier (id + content hash) stays for each, so neither a restore nor a
    re-import brings an old version back. Returns the ids removed; empty, changing nothing, when
    ``row`` was corrected or forgotten meanwhile."""
    result = await session.execute(
        delete(MemoryRow)
        .where(MemoryRow.id == row.id, MemoryRow.status.in_(FORGETTABLE))
        .execution_options(synchronize_session=False)
    )
    if result.rowcount != 1:  # type: ignore[attr-defined]
        return []
    others = await whole_lineage(session, row.id)
    rows = [row, *others]
    for item in rows:
        session.add_all(barriers_for(item, reason, now))
    # a current version reached through a merge's lineage leaves the indices as the fact does
    current = [row, *(item for item in others if item.status in FORGETTABLE)]
    for item in current:
        outbox.enqueue(session, item, "delete", now)
    older = [item.id for item in others]
    if older:
        await session.execute(
            delete(MemoryRow).where(MemoryRow.id.in_(older)).execution_options(synchronize_session=False)
        )
    await memory_sources.drop(session, [item.id for item in rows])
    await keyword.remove_documents(session, [item.id for item in current])
    await vector_copy.remove(session, None, [item.id for item in rows])  # the outbox clears the index
    await turns.refresh_turn_windows(session, turns.turn_places(current), now)
    return [item.id for item in rows]


def barriers_for(row: MemoryRow, reason: str, now: datetime) -> list[BarrierRow]:
    """What a removed fact leaves behind: its content hash and, for a historian fact, the hashes
    of where it came from (``origin_hashes``). Never its text."""
    hashes = [row.content_hash, *origin_hashes(row.bot_id, json.loads(row.source or "{}"))]
    return [
        BarrierRow(memory_id=row.id, content_hash=digest, bot_id=row.bot_id, reason=reason, created_at=now)
        for digest in hashes
    ]


async def barrier_for(session: AsyncSession, memory_id: int) -> bool:
    """Whether ``memory_id`` was forgotten."""
    found = await session.execute(select(BarrierRow.id).where(BarrierRow.memory_id == memory_id).limit(1))
    return found.first() is not None


def visibility_clause(visibility: Visibility) -> ColumnElement[bool]:
    """``Visibility.allows`` as SQL: the same grants, each one conjunction, no rule of its own
    (``domain/visibility.py`` decides; ``tests/integration/test_visibility_sql.py`` holds the two together)."""
    clauses = []
    for grant in visibility.grants:
        parts = [MemoryRow.scope_kind == grant.scope_kind]
        if grant.scope_id is not None:
            parts.append(MemoryRow.scope_id == grant.scope_id)
        if grant.person is not None:
            parts.append(or_(MemoryRow.speaker_id == grant.person, MemoryRow.subject_id == grant.person))
        clauses.append(and_(*parts))
    return and_(MemoryRow.bot_id == visibility.bot_id, or_(false(), *clauses))


def visible_memories_query(visibility: Visibility, status: str = MemoryStatus.ACTIVE.value) -> Select[Any]:
    """The facts of ``status`` this visibility allows."""
    return select(MemoryRow).where(MemoryRow.status == status, visibility_clause(visibility))


async def any_visible(session: AsyncSession, visibility: Visibility) -> bool:
    """Whether any active fact is visible with this visibility (one indexed probe)."""
    probe = visible_memories_query(visibility)
    result = await session.execute(probe.with_only_columns(MemoryRow.id).limit(1))
    return result.first() is not None


async def bank_holds_anything(session: AsyncSession, bot_id: str) -> bool:
    """Whether this bot account has any active fact, memo text, pin, short-term note or profile
    card (one statement)."""
    probes = [
        select(MemoryRow.id).where(MemoryRow.bot_id == bot_id, MemoryRow.status == MemoryStatus.ACTIVE.value),
        select(MemoRow.id).where(MemoRow.bot_id == bot_id, MemoRow.content != ""),
        select(PinRow.id).where(PinRow.bot_id == bot_id),
        select(NoteRow.id).where(NoteRow.bot_id == bot_id),
        select(ProfileRow.id).where(ProfileRow.bot_id == bot_id),
    ]
    # each probe as a LIMIT 1 subquery: SQLite refuses LIMIT on the bare members of a UNION
    found = union_all(*(select(probe.limit(1).subquery().c.id) for probe in probes))
    return (await session.execute(found)).first() is not None


async def groups_with_person(session: AsyncSession, bot_id: str, user_id: str) -> list[str]:
    result = await session.execute(
        select(MemoryRow.scope_id)
        .where(
            MemoryRow.bot_id == bot_id,
            MemoryRow.scope_kind == "group",
            MemoryRow.status == MemoryStatus.ACTIVE.value,
            or_(MemoryRow.speaker_id == user_id, MemoryRow.subject_id == user_id),
        )
        .distinct()
    )
    return [row[0] for row in result]


async def group_members(
    session: AsyncSession, bot_id: str, group_id: str, among: Sequence[str] | None = None, limit: int = 1000
) -> set[str]:
    """The users an active fact of the group was said by or is about (at most ``limit``; only
    those in ``among`` when given): whose card the group may see (their part of this group under
    ``strict``, their cross-group part otherwise)."""
    if among is not None and not among:
        return set()
    base = and_(
        MemoryRow.bot_id == bot_id,
        MemoryRow.scope_kind == "group",
        MemoryRow.scope_id == group_id,
        MemoryRow.status == MemoryStatus.ACTIVE.value,
    )
    speakers = select(MemoryRow.speaker_id.label("person")).where(base)
    subjects = select(MemoryRow.subject_id.label("person")).where(base)
    if among is not None:
        speakers = speakers.where(MemoryRow.speaker_id.in_(set(among)))
        subjects = subjects.where(MemoryRow.subject_id.in_(set(among)))
    people = union(speakers, subjects).subquery()
    result = await session.execute(select(people.c.person).where(people.c.person != "").limit(limit))
    return {row[0] for row in result}


async def list_visible(
    session: AsyncSession, query: Select[Any], offset: int, limit: int
) -> tuple[list[MemoryRecord], int]:
    """One page of ``query`` (``visible_memories_query``), newest first, and its total."""
    total = (await session.execute(select(func.count()).select_from(query.subquery()))).scalar_one()
    rows = (await session.execute(query.order_by(MemoryRow.id.desc()).offset(offset).limit(limit))).scalars()
    return [to_record(row) for row in rows], int(total)


async def count_all_active(session: AsyncSession) -> int:
    result = await session.execute(
        select(func.count()).select_from(MemoryRow).where(MemoryRow.status == MemoryStatus.ACTIVE.value)
    )
    return int(result.scalar_one())


async def active_page(session: AsyncSession, after_id: int, size: int) -> list[MemoryRow]:
    """Active facts with ids above ``after_id``, in id order (paged scans: reindex, repair)."""
    result = await session.execute(
        select(MemoryRow)
        .where(MemoryRow.id > after_id, MemoryRow.status == MemoryStatus.ACTIVE.value)
        .order_by(MemoryRow.id)
        .limit(size)
    )
    return list(result.scalars())


async def enqueue_upserts(session: AsyncSession, rows: Sequence[MemoryRow], now: datetime) -> None:
    """Queue index work for facts whose vectors are missing (repair)."""
    for row in rows:
        outbox.enqueue(session, row, "upsert", now)


async def scope_counts(session: AsyncSession) -> list[tuple[str, str, str, str, int]]:
    """(bot, scope kind, scope id, status, facts) of every chat and status: one pass over the scope
    index, from which ``status`` takes both the counts by kind and status and the chats' sizes (two
    grouped scans took twice as long at a million facts)."""
    result = await session.execute(
        select(MemoryRow.bot_id, MemoryRow.scope_kind, MemoryRow.scope_id, MemoryRow.status, func.count()).group_by(
            MemoryRow.bot_id, MemoryRow.scope_kind, MemoryRow.scope_id, MemoryRow.status
        )
    )
    return [(bot, kind, scope_id, state, int(count)) for bot, kind, scope_id, state, count in result.all()]


async def recently_written_chats(session: AsyncSession, rows: int) -> list[tuple[str, Scope]]:
    """The chats of the newest ``rows`` active facts, the most recently written first."""
    result = await session.execute(
        select(MemoryRow.bot_id, MemoryRow.scope_kind, MemoryRow.scope_id)
        .where(MemoryRow.status == MemoryStatus.ACTIVE.value)
        .order_by(MemoryRow.id.desc())
        .limit(rows)
    )
    return list(dict.fromkeys((bot, Scope(kind, scope_id)) for bot, kind, scope_id in result.all()))  # type: ignore[arg-type]


async def active_ids(session: AsyncSession, bot_id: str, scope: Scope) -> set[int]:
    """The ids of one chat's active facts."""
    result = await session.execute(
        select(MemoryRow.id).where(turns.scope_clause(bot_id, scope), MemoryRow.status == MemoryStatus.ACTIVE.value)
    )
    return set(result.scalars())
