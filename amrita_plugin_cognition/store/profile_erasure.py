"""Card erasure in SQL (``store/erasure.py``'s part of a delete-all): the parts a target covers
by identity, and in every other card of the bot the name, tags and sentences that name an erased
user (``domain/people.CardText.cut``); a card left empty is deleted, a kept version naming them
too. Works in the caller's transaction."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.erasure import ErasureTarget
from ..domain.people import CardText, PersonMatcher
from ..domain.profiles import Card, in_group_part
from . import profile_index
from .models import ProfileRevisionRow, ProfileRow
from .profiles import PAGE, delete_cards, delete_rows, entity_clause, json_list, to_card


def _covered(model: Any, target: ErasureTarget) -> ColumnElement[bool]:
    """The parts a target erases by identity: every card of the bot; a group's card and the
    users' parts in that group (chat target); a user's private part (their private chat); every
    part of a user (user target)."""
    if target.kind == "bot":
        return model.bot_id == target.bot_id  # type: ignore[no-any-return]
    if target.kind == "user":
        return entity_clause(model, target.bot_id, "user", target.user_id)
    assert target.scope is not None
    if target.scope.is_group:  # its card, and every user's part in it (built from its facts only)
        in_group = and_(
            model.bot_id == target.bot_id, model.entity_type == "user", model.part == in_group_part(target.scope.id)
        )
        return or_(entity_clause(model, target.bot_id, "group", target.scope.id), in_group)
    return and_(entity_clause(model, target.bot_id, "user", target.scope.id), model.part == "private")


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
    return await rows_naming(session, model, target, matcher, _row_text)


async def rows_naming(
    session: AsyncSession,
    model: Any,
    target: ErasureTarget,
    matcher: PersonMatcher | None,
    text_of: Callable[[Any], str],
) -> list[Any]:
    """The rows of ``model`` of the bot whose text (``text_of``) names the user, read in pages."""
    matcher = _matcher(target, matcher)
    found: list[Any] = []
    last = 0
    while True:
        query = select(model).where(model.bot_id == target.bot_id, model.id > last).order_by(model.id).limit(PAGE)
        rows = list((await session.execute(query)).scalars())
        if not rows:
            return found
        texts = [text_of(row) for row in rows]
        named = await asyncio.to_thread(_named, matcher, texts, target.user_id)  # pure CPU, off the loop
        found += [row for row, naming in zip(rows, named, strict=True) if naming]
        last = rows[-1].id


def _cut(row: ProfileRow, names: Callable[[str], bool]) -> bool:
    """Take out of a card part what names the user: its name, tags, and the sentences of its
    sections (``domain/people.CardText.cut``). Returns whether anything is left to show."""
    shown = CardText(
        row.name, tuple(str(tag) for tag in json_list(row.tags)), {key: getattr(row, key) for key in _SECTIONS}
    )
    kept = shown.cut(names)
    row.name, row.tags = kept.name, json.dumps(list(kept.tags), ensure_ascii=False)
    for section, text in kept.sections.items():
        setattr(row, section, text)
    return not kept.is_empty


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
    await delete_rows(session, ProfileRevisionRow, _covered(ProfileRevisionRow, target))
    count = await delete_cards(session, _covered(ProfileRow, target), now)
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
        entity = entity_clause(ProfileRevisionRow, row.bot_id, row.entity_type, row.entity_id)
        await delete_rows(session, ProfileRevisionRow, and_(entity, ProfileRevisionRow.part == row.part))
        await delete_cards(session, ProfileRow.id == row.id, now)
    for revision_row in await _naming(session, ProfileRevisionRow, target, matcher):
        await delete_rows(session, ProfileRevisionRow, ProfileRevisionRow.id == revision_row.id)
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
