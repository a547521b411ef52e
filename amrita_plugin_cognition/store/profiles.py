"""Profile cards in SQL: the current part of each card and its replaced versions (revisions).

Rows become ``domain.profiles.Card`` here and nowhere else. Every function works in the
caller's transaction; ``engine/profiles.py`` takes the entity's write lock before calling the
ones that write. Every write or delete of a card row updates its keyword row and queues its
vector in the same transaction (``store/profile_index.py``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, delete, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.clock import as_utc
from ..domain.erasure import ErasureTarget
from ..domain.people import CardText, PersonMatcher
from ..domain.profiles import Card, in_group_part, part_group, part_order
from ..domain.records import MemoryStatus
from . import profile_index
from .models import MemoryRow, ProfileRevisionRow, ProfileRow
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


def _json_list(text: str) -> list[Any]:
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
        tags=[str(tag) for tag in _json_list(row.tags)],
        evaluation=row.evaluation,
        body=row.body,
        roast=row.roast,
        updated_at=as_utc(updated_at) or updated_at,
        source_ids=[int(item) for item in _json_list(row.source_ids) if isinstance(item, int)],
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


def _entity(model: Any, bot_id: str, entity_type: str, entity_id: str) -> ColumnElement[bool]:
    return and_(model.bot_id == bot_id, model.entity_type == entity_type, model.entity_id == entity_id)


async def get_rows(
    session: AsyncSession, bot_id: str, entity_type: str, entity_id: str, part: str | None = None
) -> list[ProfileRow]:
    """The parts of one entity's card (one, when ``part`` is given), in ``part_order``."""
    query = select(ProfileRow).where(_entity(ProfileRow, bot_id, entity_type, entity_id))
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
            _entity(ProfileRevisionRow, card.bot_id, card.entity_type, card.entity_id),
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
    query = select(ProfileRevisionRow).where(_entity(ProfileRevisionRow, bot_id, entity_type, entity_id))
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


# ---------------------------------------------------------------------------- erasure


def _covered(model: Any, target: ErasureTarget) -> ColumnElement[bool]:
    """The parts a target erases by identity: every card of the bot; a group's card and the
    users' parts in that group (chat target); a user's private part (their private chat); every
    part of a user (user target)."""
    if target.kind == "bot":
        return model.bot_id == target.bot_id  # type: ignore[no-any-return]
    if target.kind == "user":
        return _entity(model, target.bot_id, "user", target.user_id)
    assert target.scope is not None
    if target.scope.is_group:  # its card, and every user's part in it (built from its facts only)
        in_group = and_(
            model.bot_id == target.bot_id, model.entity_type == "user", model.part == in_group_part(target.scope.id)
        )
        return or_(_entity(model, target.bot_id, "group", target.scope.id), in_group)
    return and_(_entity(model, target.bot_id, "user", target.scope.id), model.part == "private")


_TEXT_COLUMNS = ("name", "tags", "evaluation", "body", "roast")
_SECTIONS = ("evaluation", "body", "roast")


def _row_text(row: Any) -> str:
    return "\n".join(getattr(row, column) for column in _TEXT_COLUMNS)


def _matcher(target: ErasureTarget, matcher: PersonMatcher | None) -> PersonMatcher:
    return matcher or PersonMatcher.numbers_only([target.user_id])


def _named(matcher: PersonMatcher, texts: Sequence[str], user_id: str) -> list[bool]:
    return [matcher.names(text, user_id) for text in texts]


async def _naming(session: AsyncSession, model: Any, target: ErasureTarget, matcher: PersonMatcher | None) -> list[Any]:
    """The cards (or revisions) of the bot that name the user (``domain/people.py``), read in pages."""
    matcher = _matcher(target, matcher)
    found: list[Any] = []
    last = 0
    while True:
        query = select(model).where(model.bot_id == target.bot_id, model.id > last).order_by(model.id).limit(PAGE)
        rows = list((await session.execute(query)).scalars())
        if not rows:
            return found
        texts = [_row_text(row) for row in rows]
        named = await asyncio.to_thread(_named, matcher, texts, target.user_id)  # pure CPU, off the loop
        found += [row for row, naming in zip(rows, named, strict=True) if naming]
        last = rows[-1].id


def _cut(row: ProfileRow, names: Callable[[str], bool]) -> bool:
    """Take out of a card part what names the user: its name, tags, and the sentences of its
    sections (``domain/people.CardText.cut``). Returns whether anything is left to show."""
    shown = CardText(
        row.name, tuple(str(tag) for tag in _json_list(row.tags)), {key: getattr(row, key) for key in _SECTIONS}
    )
    kept = shown.cut(names)
    row.name, row.tags = kept.name, json.dumps(list(kept.tags), ensure_ascii=False)
    for section, text in kept.sections.items():
        setattr(row, section, text)
    return not kept.is_empty


async def _delete(session: AsyncSession, model: Any, clause: ColumnElement[bool]) -> int:
    result = await session.execute(delete(model).where(clause).execution_options(synchronize_session=False))
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


async def _delete_cards(session: AsyncSession, clause: ColumnElement[bool], now: datetime) -> int:
    """Delete the card rows ``clause`` selects, with their keyword rows and vectors (outbox)."""
    doomed = [
        (int(row[0]), str(row[1]))
        for row in await session.execute(select(ProfileRow.id, ProfileRow.bot_id).where(clause))
    ]
    if not doomed:
        return 0
    await _delete(session, ProfileRow, ProfileRow.id.in_([profile_id for profile_id, _ in doomed]))
    await profile_index.removed(session, doomed, now)
    return len(doomed)


async def erase(
    session: AsyncSession, target: ErasureTarget, now: datetime, matcher: PersonMatcher | None = None
) -> int:
    """Delete the cards ``target`` covers with all their revisions. For a user also, from every
    other card of the bot, what names them (``matcher``: their QQ number in any writing, their
    nicknames; the number alone without one): its name, tags and the sentences of its sections
    that name them are cut; a card left with nothing to show is deleted with its revisions. Kept
    revisions that name them are deleted, and who wrote a version is forgotten when it was them.
    The keyword rows follow and the vectors are queued in the same transaction. Returns how many
    card parts were deleted or cut."""
    await _delete(session, ProfileRevisionRow, _covered(ProfileRevisionRow, target))
    count = await _delete_cards(session, _covered(ProfileRow, target), now)
    if target.kind != "user":
        return count
    user = target.user_id

    def names(text: str) -> bool:
        return _matcher(target, matcher).names(text, user)

    cut: list[ProfileRow] = []
    for row in await _naming(session, ProfileRow, target, matcher):
        count += 1
        if _cut(row, names):
            cut.append(row)
            continue
        entity = _entity(ProfileRevisionRow, row.bot_id, row.entity_type, row.entity_id)
        await _delete(session, ProfileRevisionRow, and_(entity, ProfileRevisionRow.part == row.part))
        await _delete_cards(session, ProfileRow.id == row.id, now)
    for revision_row in await _naming(session, ProfileRevisionRow, target, matcher):
        await _delete(session, ProfileRevisionRow, ProfileRevisionRow.id == revision_row.id)
    for model, authors in ((ProfileRow, ("updated_by",)), (ProfileRevisionRow, ("written_by", "replaced_by"))):
        for author in authors:
            await session.execute(
                update(model)
                .where(model.bot_id == target.bot_id, getattr(model, author) == user)
                .values({author: ""})
                .execution_options(synchronize_session=False)
            )
    if cut:
        await session.flush()
        await profile_index.changed(session, cut, now)
    return count


async def covered_cards(
    session: AsyncSession, target: ErasureTarget, matcher: PersonMatcher | None = None
) -> list[Card]:
    """The current cards a delete-all of ``target`` removes or cuts (a user's export lists them)."""
    rows = list((await session.execute(select(ProfileRow).where(_covered(ProfileRow, target)))).scalars())
    if target.kind == "user":
        seen = {row.id for row in rows}
        rows += [row for row in await _naming(session, ProfileRow, target, matcher) if row.id not in seen]
    return [to_card(row) for row in sorted(rows, key=lambda row: row.id)]


# ---------------------------------------------------------------------------- forgotten sources


def source_list(text: str) -> list[int]:
    return [item for item in _json_list(text) if isinstance(item, int) and not isinstance(item, bool)]


async def _citing(session: AsyncSession, model: Any, bot_id: str, memory_ids: Sequence[int]) -> list[Any]:
    """The rows of ``model`` (cards or revisions) of the bot whose ``source_ids`` hold one of
    ``memory_ids``: a substring filter in SQL, the exact match here (1 is not in [12])."""
    wanted = set(memory_ids)
    found: dict[int, Any] = {}
    ordered = sorted(wanted)
    for start in range(0, len(ordered), PAGE):
        chunk = ordered[start : start + PAGE]
        query = select(model).where(
            model.bot_id == bot_id, or_(*[model.source_ids.contains(str(memory_id)) for memory_id in chunk])
        )
        for row in (await session.execute(query)).scalars():
            if wanted.intersection(source_list(row.source_ids)):
                found[row.id] = row
    return [found[key] for key in sorted(found)]


async def citing(session: AsyncSession, bot_id: str, memory_ids: Sequence[int]) -> list[ProfileRow]:
    """The current card parts of the bot built from one of ``memory_ids``."""
    return await _citing(session, ProfileRow, bot_id, memory_ids) if memory_ids else []


async def drop_sources(session: AsyncSession, row: ProfileRow, memory_ids: Sequence[int]) -> None:
    """Take ``memory_ids`` out of a card part's ``source_ids`` (its text is left to the rebuild)."""
    gone = set(memory_ids)
    row.source_ids = json.dumps([item for item in source_list(row.source_ids) if item not in gone])
    await session.flush()


async def drop_revisions_citing(session: AsyncSession, bot_id: str, memory_ids: Sequence[int]) -> int:
    """Delete the kept revisions built from one of ``memory_ids`` (no restore brings a forgotten
    fact back); returns how many."""
    if not memory_ids:
        return 0
    rows = await _citing(session, ProfileRevisionRow, bot_id, memory_ids)
    for start in range(0, len(rows), PAGE):
        chunk = [row.id for row in rows[start : start + PAGE]]
        await _delete(session, ProfileRevisionRow, ProfileRevisionRow.id.in_(chunk))
    return len(rows)


async def delete_part(
    session: AsyncSession, bot_id: str, entity_type: str, entity_id: str, part: str, now: datetime
) -> int:
    """Delete one card part with its revisions, its keyword row and (outbox) its vector; returns
    how many parts (0 or 1)."""
    await _delete(
        session,
        ProfileRevisionRow,
        and_(_entity(ProfileRevisionRow, bot_id, entity_type, entity_id), ProfileRevisionRow.part == part),
    )
    return await _delete_cards(
        session, and_(_entity(ProfileRow, bot_id, entity_type, entity_id), ProfileRow.part == part), now
    )


# ---------------------------------------------------------------------------- what a part is built from


def source_facts_query(bot_id: str, entity_type: str, entity_id: str, part: str) -> Any:
    """The active facts a card part may be built from (``domain/profile_policy.visible_to`` in
    SQL): a group's card, its own chat; a user's part in group G, what they said or what was said
    about them in G; their cross-group part, that in every group; their private part, that and
    their own private chat. ``repository.list_visible`` pages it."""
    by_or_about = or_(MemoryRow.speaker_id == entity_id, MemoryRow.subject_id == entity_id)
    in_groups = MemoryRow.scope_kind == "group"
    group_id = part_group(part)
    if entity_type == "group":
        where: ColumnElement[bool] = and_(in_groups, MemoryRow.scope_id == entity_id)
    elif group_id is not None:
        where = and_(in_groups, MemoryRow.scope_id == group_id, by_or_about)
    elif part == "private":
        own_chat = and_(MemoryRow.scope_kind == "private", MemoryRow.scope_id == entity_id)
        where = or_(and_(in_groups, by_or_about), own_chat)
    else:
        where = and_(in_groups, by_or_about)
    return select(MemoryRow).where(MemoryRow.bot_id == bot_id, MemoryRow.status == MemoryStatus.ACTIVE.value, where)
