"""Which card parts and kept versions were built from which facts (``source_ids``), what a
forget does to them, and which facts a card part may be built from. Works in the caller's
transaction."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import ColumnElement, and_, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.profiles import part_group
from ..domain.records import MemoryStatus
from .models import MemoryRow, ProfileRevisionRow, ProfileRow
from .profiles import PAGE, delete_rows, json_list


def source_list(text: str) -> list[int]:
    return [item for item in json_list(text) if isinstance(item, int) and not isinstance(item, bool)]


def sources_without(text: str, memory_ids: Sequence[int]) -> list[int]:
    """The ids of a ``source_ids`` column without ``memory_ids`` (in their order)."""
    gone = set(memory_ids)
    return [item for item in source_list(text) if item not in gone]


async def rows_citing(session: AsyncSession, model: Any, bot_id: str, memory_ids: Sequence[int]) -> list[Any]:
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
    return await rows_citing(session, ProfileRow, bot_id, memory_ids) if memory_ids else []


async def drop_sources(session: AsyncSession, row: ProfileRow, memory_ids: Sequence[int]) -> None:
    """Take ``memory_ids`` out of a card part's ``source_ids`` (its text is left to the rebuild)."""
    row.source_ids = json.dumps(sources_without(row.source_ids, memory_ids))
    await session.flush()


async def sources_purged(session: AsyncSession, bot_id: str, memory_ids: Sequence[int]) -> int:
    """Expired facts ``memory_ids`` were purged (no forget: the card's text stays, no rebuild):
    they leave the ``source_ids`` of the current card parts citing them. Returns how many parts."""
    rows = await citing(session, bot_id, memory_ids)
    for row in rows:
        await drop_sources(session, row, memory_ids)
    return len(rows)


async def drop_revisions_citing(session: AsyncSession, bot_id: str, memory_ids: Sequence[int]) -> int:
    """Delete the kept revisions built from one of ``memory_ids`` (no restore brings a forgotten
    fact back); returns how many."""
    if not memory_ids:
        return 0
    rows = await rows_citing(session, ProfileRevisionRow, bot_id, memory_ids)
    for start in range(0, len(rows), PAGE):
        chunk = [row.id for row in rows[start : start + PAGE]]
        await delete_rows(session, ProfileRevisionRow, ProfileRevisionRow.id.in_(chunk))
    return len(rows)


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
