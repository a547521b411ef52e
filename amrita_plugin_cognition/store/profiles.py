"""Profile cards in SQL: the current part of each card and its replaced versions (revisions).

Rows become ``domain.profiles.Card`` here and nowhere else. Every function works in the
caller's transaction; ``engine/profiles.py`` takes the entity's write lock before calling the
ones that write. Every write or delete of a card row updates its keyword row and queues its
vector in the same transaction (``store/profile_index.py``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, delete, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.clock import as_utc
from ..domain.profiles import Card, part_order
from . import profile_index
from .models import ProfileRevisionRow, ProfileRow
from .revisions import keep_newest

#: Cards per page when a whole table is walked (export, erasure checks).
PAGE = 500


@dataclass(frozen=True, slots=True)
class ProfileFilter:
    """Which cards to list: every field given narrows."""

    bot_id: str | None = None
    entity_type: str | None = None
    entity_id: str | None = None
    part: str | None = None


def json_list(text: str) -> list[Any]:
    try:
        value = json.loads(text or "[]")
    except ValueError:
        return []
    return value if isinstance(value, list) else []


def _card(row: ProfileRow | ProfileRevisionRow, updated_at: datetime) -> Card:
    return Card(
        bot_id=row.bot_id,
        entity_type=row.entity_type,
        entity_id=row.entity_id,
        part=row.part,
        name=row.name,
        tags=[str(tag) for tag in json_list(row.tags)],
        evaluation=row.evaluation,
        body=row.body,
        roast=row.roast,
        updated_at=as_utc(updated_at) or updated_at,
        source_ids=[int(item) for item in json_list(row.source_ids) if isinstance(item, int)],
    )


def to_card(row: ProfileRow) -> Card:
    return _card(row, row.updated_at)


def revision_card(row: ProfileRevisionRow) -> Card:
    """The version a revision kept, as it was when written (``updated_at`` = ``written_at``)."""
    return _card(row, row.written_at)


def _content(card: Card) -> dict[str, Any]:
    return {
        "name": card.name,
        "tags": json.dumps(list(card.tags), ensure_ascii=False),
        "evaluation": card.evaluation,
        "body": card.body,
        "roast": card.roast,
        "source_ids": json.dumps(list(card.source_ids)),
    }


def entity_clause(model: Any, bot_id: str, entity_type: str, entity_id: str) -> ColumnElement[bool]:
    return and_(model.bot_id == bot_id, model.entity_type == entity_type, model.entity_id == entity_id)


async def get_rows(
    session: AsyncSession, bot_id: str, entity_type: str, entity_id: str, part: str | None = None
) -> list[ProfileRow]:
    """The parts of one entity's card (one, when ``part`` is given), in ``part_order``."""
    query = select(ProfileRow).where(entity_clause(ProfileRow, bot_id, entity_type, entity_id))
    if part is not None:
        query = query.where(ProfileRow.part == part)
    rows = (await session.execute(query)).scalars().all()
    return sorted(rows, key=lambda row: part_order(row.part))


async def turn_cards(session: AsyncSession, bot_id: str, keys: Sequence[tuple[str, str, str]]) -> list[Card]:
    """The card parts named by ``keys`` ((entity type, entity id, part)) that exist, in ONE
    statement (the per-turn read of the speaker's and the group's card)."""
    if not keys:
        return []
    wanted = or_(
        *[
            and_(ProfileRow.entity_type == kind, ProfileRow.entity_id == entity, ProfileRow.part == part)
            for kind, entity, part in keys
        ]
    )
    rows = (await session.execute(select(ProfileRow).where(ProfileRow.bot_id == bot_id, wanted))).scalars()
    return [to_card(row) for row in rows]


async def write_card(
    session: AsyncSession, card: Card, by: str, now: datetime, keep_revisions: int, keep_replaced: bool = True
) -> int | None:
    """Make ``card`` the current version of its part. The version it replaces is kept as a
    revision first (unless ``keep_replaced`` is False: a rebuild after a forget never keeps the
    version that may hold the forgotten fact), then only the newest ``keep_revisions`` are kept
    (0: none); returns that revision's id (None: there was no version before, or none is kept)."""
    rows = await get_rows(session, card.bot_id, card.entity_type, card.entity_id, card.part)
    if not rows:
        created = ProfileRow(
            bot_id=card.bot_id,
            entity_type=card.entity_type,
            entity_id=card.entity_id,
            part=card.part,
            updated_at=now,
            updated_by=by,
            **_content(card),
        )
        session.add(created)
        await session.flush()
        await profile_index.changed(session, [created], now)
        return None
    row = rows[0]
    revision_id: int | None = None
    if keep_revisions > 0 and keep_replaced:
        revision = ProfileRevisionRow(
            bot_id=row.bot_id,
            entity_type=row.entity_type,
            entity_id=row.entity_id,
            part=row.part,
            name=row.name,
            tags=row.tags,
            evaluation=row.evaluation,
            body=row.body,
            roast=row.roast,
            source_ids=row.source_ids,
            written_at=row.updated_at,
            written_by=row.updated_by,
            replaced_at=now,
            replaced_by=by,
        )
        session.add(revision)
        await session.flush()
        revision_id = revision.id
    await keep_newest(
        session,
        ProfileRevisionRow,
        and_(
            entity_clause(ProfileRevisionRow, card.bot_id, card.entity_type, card.entity_id),
            ProfileRevisionRow.part == card.part,
        ),
        max(0, keep_revisions),
    )
    for key, value in _content(card).items():
        setattr(row, key, value)
    row.updated_at = now
    row.updated_by = by
    await session.flush()
    await profile_index.changed(session, [row], now)
    return revision_id


def _revisions_of(bot_id: str, entity_type: str, entity_id: str, part: str | None = None) -> Any:
    query = select(ProfileRevisionRow).where(entity_clause(ProfileRevisionRow, bot_id, entity_type, entity_id))
    return query if part is None else query.where(ProfileRevisionRow.part == part)


async def revisions(
    session: AsyncSession, bot_id: str, entity_type: str, entity_id: str, part: str | None = None
) -> list[ProfileRevisionRow]:
    """The kept versions of an entity's card (one part, or both), newest first."""
    query = _revisions_of(bot_id, entity_type, entity_id, part).order_by(ProfileRevisionRow.id.desc())
    return list((await session.execute(query)).scalars())


async def revision(
    session: AsyncSession, bot_id: str, entity_type: str, entity_id: str, revision_id: int
) -> ProfileRevisionRow | None:
    query = _revisions_of(bot_id, entity_type, entity_id).where(ProfileRevisionRow.id == revision_id)
    return (await session.execute(query)).scalar_one_or_none()


def _filtered(query: Any, wanted: ProfileFilter) -> Any:
    for column, value in (
        (ProfileRow.bot_id, wanted.bot_id),
        (ProfileRow.entity_type, wanted.entity_type),
        (ProfileRow.entity_id, wanted.entity_id),
        (ProfileRow.part, wanted.part),
    ):
        if value is not None:
            query = query.where(column == value)
    return query


async def list_rows(
    session: AsyncSession, wanted: ProfileFilter, limit: int, offset: int = 0
) -> tuple[list[ProfileRow], int]:
    """One page of cards (newest change first) and how many match in all."""
    page = _filtered(select(ProfileRow), wanted).order_by(ProfileRow.updated_at.desc(), ProfileRow.id.desc())
    rows = list((await session.execute(page.limit(limit).offset(offset))).scalars())
    total = (await session.execute(_filtered(select(func.count()).select_from(ProfileRow), wanted))).scalar_one()
    return rows, int(total)


async def rows_after(
    session: AsyncSession, wanted: ProfileFilter, after_id: int, limit: int = PAGE
) -> list[ProfileRow]:
    """The next ``limit`` cards by id after ``after_id``: a whole table walked in pages."""
    query = _filtered(select(ProfileRow), wanted).where(ProfileRow.id > after_id).order_by(ProfileRow.id)
    return list((await session.execute(query.limit(limit))).scalars())


async def rows_by_ids(session: AsyncSession, profile_ids: Sequence[int]) -> list[ProfileRow]:
    """The card rows among ``profile_ids`` that exist (any bot account)."""
    found: list[ProfileRow] = []
    ordered = sorted(set(profile_ids))
    for start in range(0, len(ordered), PAGE):
        query = select(ProfileRow).where(ProfileRow.id.in_(ordered[start : start + PAGE]))
        found.extend((await session.execute(query)).scalars())
    return found


async def all_ids(session: AsyncSession) -> set[int]:
    """The id of every card row (index checks)."""
    return {int(row[0]) for row in await session.execute(select(ProfileRow.id))}


async def revision_counts(session: AsyncSession, rows: Sequence[ProfileRow]) -> dict[tuple[str, str, str, str], int]:
    """How many revisions each listed card part has kept (``rows``: one page of a listing)."""
    if not rows:
        return {}
    keys = {(row.bot_id, row.entity_type, row.entity_id, row.part) for row in rows}
    columns = (ProfileRevisionRow.bot_id, ProfileRevisionRow.entity_type, ProfileRevisionRow.entity_id,
               ProfileRevisionRow.part)  # fmt: skip
    query = (
        select(*columns, func.count())
        .where(
            ProfileRevisionRow.bot_id.in_(sorted({key[0] for key in keys})),
            ProfileRevisionRow.entity_id.in_(sorted({key[2] for key in keys})),
        )
        .group_by(*columns)
    )
    counted = {
        (bot, kind, entity, part): int(count) for bot, kind, entity, part, count in (await session.execute(query)).all()
    }
    return {key: counted.get(key, 0) for key in keys}


async def delete_rows(session: AsyncSession, model: Any, clause: ColumnElement[bool]) -> int:
    result = await session.execute(delete(model).where(clause).execution_options(synchronize_session=False))
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


async def delete_cards(session: AsyncSession, clause: ColumnElement[bool], now: datetime) -> int:
    """Delete the card rows ``clause`` selects, with their keyword rows and vectors (outbox)."""
    doomed = [
        (int(row[0]), str(row[1]))
        for row in await session.execute(select(ProfileRow.id, ProfileRow.bot_id).where(clause))
    ]
    if not doomed:
        return 0
    await delete_rows(session, ProfileRow, ProfileRow.id.in_([profile_id for profile_id, _ in doomed]))
    await profile_index.removed(session, doomed, now)
    return len(doomed)


async def delete_part(
    session: AsyncSession, bot_id: str, entity_type: str, entity_id: str, part: str, now: datetime
) -> int:
    """Delete one card part with its revisions, its keyword row and (outbox) its vector; returns
    how many parts (0 or 1)."""
    await delete_rows(
        session,
        ProfileRevisionRow,
        and_(entity_clause(ProfileRevisionRow, bot_id, entity_type, entity_id), ProfileRevisionRow.part == part),
    )
    return await delete_cards(
        session, and_(entity_clause(ProfileRow, bot_id, entity_type, entity_id), ProfileRow.part == part), now
    )
