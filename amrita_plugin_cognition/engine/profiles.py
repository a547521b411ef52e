"""Profile cards: read, save with revisions, restore, list and export (``domain/profiles.py`` for
what a card is, ``domain/profile_document.py`` for its document, ``store/profiles.py`` for the SQL).

Every change of a card runs in one unit of work that first takes the entity's write lock
(``cognition:profile:<bot>:<type>:<id>``, every part of a user under one key), so two writers of
one card never interleave, in this process or another; the version it replaces is kept as a
revision first (the newest ``profiles.revisions_keep``), and ``ProfilesChanged`` is recorded for
whoever caches cards. The part's keyword row and its vector's outbox row are written in the same
unit of work (``store/profile_index.py``; ``IndexWorkQueued`` drains it soon). A save that
changes nothing writes nothing.

Export writes the seed's layout below the output folder, one folder per bot account:
``<bot>/profiles/users/<QQ>.md`` (a user's cross-group part), ``<bot>/profiles/users/<QQ>.group-<group>.md``
(their part in one group), ``<bot>/profiles/users/<QQ>.private.md`` (their private part) and
``<bot>/profiles/groups/<group>.md``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..domain.clock import as_utc, aware_or_now
from ..domain.events import IndexWorkQueued, ProfilesChanged
from ..domain.profile_document import render_document
from ..domain.profiles import Card, CardLimits, card_label, check_entity, export_path, same_content, validate_card
from ..errors import ConcurrentChange, InvalidInput, NotFound
from ..logs import log_event
from ..store import profiles as store
from ..store.profiles import ProfileFilter
from ..store.unit_of_work import UnitOfWork, take_write_lock

if TYPE_CHECKING:
    from ..store.models import ProfileRevisionRow
    from .service import CognitionEngine

__all__ = ["ProfileFilter"]

LIST_MAX = 1000


@dataclass(frozen=True, slots=True)
class SavedCard:
    card: Card
    #: False when the card already said exactly this (nothing was written).
    changed: bool
    #: The revision that keeps the replaced version (None: there was none, or none is kept).
    revision_id: int | None = None


@dataclass(frozen=True, slots=True)
class CardRevision:
    id: int
    #: The version as it was (``updated_at``: when it was written).
    card: Card
    written_by: str
    replaced_at: datetime
    replaced_by: str


@dataclass(frozen=True, slots=True)
class ListedCard:
    card: Card
    updated_by: str
    #: Replaced versions kept for this part.
    revisions: int


def card_limits(engine: CognitionEngine) -> CardLimits:
    settings = engine.config.profiles
    return CardLimits(settings.evaluation_max_chars, settings.body_max_chars, settings.roast_max_chars)


async def lock_entity(uow: UnitOfWork, bot_id: str, entity_type: str, entity_id: str) -> None:
    """The entity's write lock, before anything is read (see ``take_write_lock``)."""
    await take_write_lock(uow.session, f"cognition:profile:{bot_id}:{entity_type}:{entity_id}")


def _revision(row: ProfileRevisionRow) -> CardRevision:
    replaced = as_utc(row.replaced_at) or row.replaced_at
    return CardRevision(row.id, store.revision_card(row), row.written_by, replaced, row.replaced_by)


async def get(
    engine: CognitionEngine, bot_id: str, entity_type: str, entity_id: str, part: str = "group"
) -> Card | None:
    """One part of an entity's card, or None."""
    check_entity(entity_type, entity_id, part)
    async with engine.unit_of_work() as uow:
        rows = await store.get_rows(uow.session, bot_id, entity_type, entity_id, part)
    return store.to_card(rows[0]) if rows else None


async def get_parts(
    engine: CognitionEngine, bot_id: str, entity_type: str, entity_id: str, parts: Sequence[str] | None = None
) -> list[Card]:
    """The parts of an entity's card that exist, in one read: those named by ``parts``, in that
    order; without ``parts``, every part (a user's cross-group, per-group and private parts, in
    ``part_order``; a group's one)."""
    check_entity(entity_type, entity_id)
    for part in parts or ():
        check_entity(entity_type, entity_id, part)
    async with engine.unit_of_work() as uow:
        rows = await store.get_rows(uow.session, bot_id, entity_type, entity_id)
    cards = {row.part: store.to_card(row) for row in rows}
    return [cards[part] for part in (cards if parts is None else parts) if part in cards]


async def _write(
    uow: UnitOfWork, card: Card, by: str, now: datetime, keep: int, keep_replaced: bool = True
) -> SavedCard:
    """Write ``card`` (validated, locked) unless its part already says exactly this."""
    rows = await store.get_rows(uow.session, card.bot_id, card.entity_type, card.entity_id, card.part)
    if rows and same_content(store.to_card(rows[0]), card):
        return SavedCard(store.to_card(rows[0]), changed=False)
    revision_id = await store.write_card(uow.session, card, by, now, keep, keep_replaced)
    uow.record(ProfilesChanged(card.bot_id, card.entity_type, card.entity_id), IndexWorkQueued())
    await uow.commit()
    log_event("profile_save", bot=card.bot_id, entity=f"{card.entity_type}:{card.entity_id}", part=card.part, by=by)
    return SavedCard(card, changed=True, revision_id=revision_id)


#: ``save(expected=ANY_VERSION)``: whatever the current version is.
ANY_VERSION: Any = object()


async def save(
    engine: CognitionEngine,
    card: Card,
    by: str = "historian",
    now: datetime | None = None,
    expected: Card | None = ANY_VERSION,
    keep_replaced: bool = True,
) -> SavedCard:
    """Make ``card`` the current version of its part (``updated_at`` = ``now``). Refused with a
    Chinese reason when it is no valid card (``validate_card``). With ``expected`` (the version
    the new one was built from, None: there was none), ``ConcurrentChange`` when another writer
    changed the part since: a merge built on an old card never drops a newer one. With
    ``keep_replaced=False`` the replaced version is not kept as a revision (a rebuild after a
    forget: that version may hold the forgotten fact)."""
    now = aware_or_now(now)
    card = validate_card(replace(card, updated_at=now), card_limits(engine))
    async with engine.unit_of_work() as uow:
        await lock_entity(uow, card.bot_id, card.entity_type, card.entity_id)
        if expected is not ANY_VERSION:
            await _check_expected(uow, card.bot_id, card.entity_type, card.entity_id, card.part, expected)
        return await _write(uow, card, by, now, engine.config.profiles.revisions_keep, keep_replaced)


async def _check_expected(
    uow: UnitOfWork, bot_id: str, entity_type: str, entity_id: str, part: str, expected: Card | None
) -> None:
    rows = await store.get_rows(uow.session, bot_id, entity_type, entity_id, part)
    current = store.to_card(rows[0]) if rows else None
    if (current is None) != (expected is None) or (
        current is not None and expected is not None and current != expected
    ):
        label = card_label(entity_type, entity_id, part)
        raise ConcurrentChange(f"{label}已被其他操作修改，请重新查看", en=f"profile changed meanwhile: {label}")


async def clear(engine: CognitionEngine, expected: Card, by: str = "historian", now: datetime | None = None) -> bool:
    """Delete one card part with its revisions (its keyword row and vector too), only while it
    is still ``expected`` (``ConcurrentChange`` otherwise): a rebuild after a forget with nothing
    left to build from. Returns whether a part was deleted."""
    now = aware_or_now(now)
    async with engine.unit_of_work() as uow:
        await lock_entity(uow, expected.bot_id, expected.entity_type, expected.entity_id)
        await _check_expected(uow, expected.bot_id, expected.entity_type, expected.entity_id, expected.part, expected)
        deleted = await store.delete_part(
            uow.session, expected.bot_id, expected.entity_type, expected.entity_id, expected.part, now
        )
        uow.record(ProfilesChanged(expected.bot_id, expected.entity_type, expected.entity_id), IndexWorkQueued())
        await uow.commit()
    log_event(
        "profile_clear",
        bot=expected.bot_id,
        entity=f"{expected.entity_type}:{expected.entity_id}",
        part=expected.part,
        by=by,
    )
    return bool(deleted)


async def revisions(
    engine: CognitionEngine, bot_id: str, entity_type: str, entity_id: str, part: str | None = None
) -> list[CardRevision]:
    """The kept versions of an entity's card (one part, or both), newest first."""
    check_entity(entity_type, entity_id, part)
    async with engine.unit_of_work() as uow:
        rows = await store.revisions(uow.session, bot_id, entity_type, entity_id, part)
    return [_revision(row) for row in rows]


async def revision(
    engine: CognitionEngine, bot_id: str, entity_type: str, entity_id: str, revision_id: int
) -> CardRevision:
    check_entity(entity_type, entity_id)
    async with engine.unit_of_work() as uow:
        row = await store.revision(uow.session, bot_id, entity_type, entity_id, revision_id)
    if row is None:
        raise NotFound(f"{card_label(entity_type, entity_id)}没有编号为 {revision_id} 的历史版本")
    return _revision(row)


async def restore(
    engine: CognitionEngine,
    bot_id: str,
    entity_type: str,
    entity_id: str,
    revision_id: int,
    part: str | None = None,
    by: str = "cli",
    now: datetime | None = None,
) -> SavedCard:
    """Make a kept version current again. The current version becomes a revision first (at least
    one is kept, whatever ``revisions_keep`` says), so the restore can itself be undone."""
    check_entity(entity_type, entity_id, part)
    now = aware_or_now(now)
    async with engine.unit_of_work() as uow:
        await lock_entity(uow, bot_id, entity_type, entity_id)
        row = await store.revision(uow.session, bot_id, entity_type, entity_id, revision_id)
        if row is None or (part is not None and row.part != part):
            raise NotFound(f"{card_label(entity_type, entity_id, part)}没有编号为 {revision_id} 的历史版本")
        card = validate_card(replace(store.revision_card(row), updated_at=now), card_limits(engine))
        return await _write(uow, card, by, now, max(1, engine.config.profiles.revisions_keep))


async def list_cards(
    engine: CognitionEngine, wanted: ProfileFilter, limit: int = 100, offset: int = 0
) -> tuple[list[ListedCard], int]:
    """One page of cards, the most recently changed first, and how many match in all."""
    if not 1 <= limit <= LIST_MAX:
        raise InvalidInput(f"每页条数必须在 1 到 {LIST_MAX} 之间")
    if offset < 0:
        raise InvalidInput("offset 不能为负数")
    async with engine.unit_of_work() as uow:
        rows, total = await store.list_rows(uow.session, wanted, limit, offset)
        counts = await store.revision_counts(uow.session, rows)
    listed = [
        ListedCard(
            store.to_card(row), row.updated_by, counts.get((row.bot_id, row.entity_type, row.entity_id, row.part), 0)
        )
        for row in rows
    ]
    return listed, total


@dataclass(frozen=True, slots=True)
class ExportReport:
    folder: Path
    #: The files written, relative to ``folder``.
    files: list[str]


def _write_files(folder: Path, documents: list[tuple[str, str]]) -> None:
    for relative, text in documents:
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


async def export(engine: CognitionEngine, folder: Path, bot_id: str | None = None) -> ExportReport:
    """Write every card (of one bot account, or of all) as documents in the seed's layout (see
    the module docstring); existing files of the same name are replaced, others left alone."""
    wanted = ProfileFilter(bot_id=bot_id)
    files: list[str] = []
    last_id = 0
    while True:
        async with engine.unit_of_work() as uow:
            rows = await store.rows_after(uow.session, wanted, last_id)
        if not rows:
            break
        last_id = rows[-1].id
        documents = [(export_path(card), render_document(card)) for card in map(store.to_card, rows)]
        await asyncio.to_thread(_write_files, folder, documents)
        files.extend(relative for relative, _ in documents)
    log_event("profile_export", bot=bot_id or "*", files=len(files))
    return ExportReport(folder, files)
