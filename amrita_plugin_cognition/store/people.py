"""The nicknames each user of a bot account was seen with, collected from the stored rows: who
said a transcript turn or a note, a fact's speaker and subject names, a user card's name (and its
kept versions), the speakers of queued jobs, and the historian's ``QQ号<id>（昵称<name>）`` in the
facts' text. The person matcher (``domain/people.py``) decides which of them may be looked for.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Collection
from typing import Any

from sqlalchemy import and_, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.people import QQ_WITH_NICKNAME, PersonMatcher
from .jobs import readable_payload
from .models import JobRow, MemoryRow, NoteRow, ProfileRevisionRow, ProfileRow, TranscriptRow

#: Ids per ``IN`` (SQLite binds a few thousand parameters at most).
CHUNK = 500


def _add(found: dict[str, set[str]], user_id: Any, name: Any, wanted: Collection[str] | None) -> None:
    # a QQ number written in full-width digits is the same user
    user, nickname = unicodedata.normalize("NFKC", str(user_id or "")).strip(), str(name or "").strip()
    if user and nickname and (wanted is None or user in wanted):
        found.setdefault(user, set()).add(nickname)


def _job_speakers(payload: Any, found: dict[str, set[str]], wanted: Collection[str] | None) -> None:
    if not isinstance(payload, dict):
        return
    speaker = payload.get("speaker")
    if isinstance(speaker, dict):
        _add(found, speaker.get("id"), speaker.get("name"), wanted)
    for key in ("turns", "batch", "recent"):
        items = payload.get(key)
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict):
                _add(found, item.get("speaker_id"), item.get("speaker"), wanted)


async def nicknames(
    session: AsyncSession, bot_id: str, users: Collection[str] | None = None, *, facts: bool = True
) -> dict[str, set[str]]:
    """The nicknames of every user of ``bot_id`` (``users``: of those only). ``facts=False`` leaves
    out what only a walk over the facts finds (their speakers' names unless ``users`` are given,
    and the names written into their text): the opt-out matcher, built on the turn's path, reads
    the bounded tables and the indexed name columns of the given users only; a delete-all reads
    everything."""
    found: dict[str, set[str]] = {}
    wanted = set(users) if users is not None else None
    chunks = [sorted(wanted)[start : start + CHUNK] for start in range(0, len(wanted), CHUNK)] if wanted else [[]]
    if wanted is not None and not wanted:
        return found
    pairs: list[tuple[Any, Any, Any]] = [
        (TranscriptRow.user_id, TranscriptRow.user_name, TranscriptRow.bot_id),
        (NoteRow.user_id, NoteRow.user_name, NoteRow.bot_id),
    ]
    if facts or wanted is not None:
        pairs += [
            (MemoryRow.speaker_id, MemoryRow.speaker_name, MemoryRow.bot_id),
            (MemoryRow.subject_id, MemoryRow.subject_name, MemoryRow.bot_id),
        ]
    for user_column, name_column, bot_column in pairs:
        for chunk in chunks:
            query = select(user_column, name_column).where(bot_column == bot_id, name_column != "").distinct()
            if wanted is not None:
                query = query.where(user_column.in_(chunk))
            for user_id, name in (await session.execute(query)).all():
                _add(found, user_id, name, wanted)
    for model in (ProfileRow, ProfileRevisionRow):
        for chunk in chunks:
            query = select(model.entity_id, model.name).where(
                model.bot_id == bot_id, model.entity_type == "user", model.name != ""
            )
            if wanted is not None:
                query = query.where(model.entity_id.in_(chunk))
            for user_id, name in (await session.execute(query.distinct())).all():
                _add(found, user_id, name, wanted)
    for (text,) in (await session.execute(select(JobRow.payload).where(JobRow.bot_id == bot_id))).all():
        _job_speakers(readable_payload(text), found, wanted)
    if facts:
        clause: Any = MemoryRow.text.contains("（昵称")
        if wanted is not None:
            clause = or_(*[MemoryRow.text.contains(f"QQ号{user}（昵称") for user in sorted(wanted)])
        query = select(MemoryRow.text).where(and_(MemoryRow.bot_id == bot_id, clause))
        for (text,) in (await session.execute(query)).all():
            for user_id, name in QQ_WITH_NICKNAME.findall(text):
                _add(found, user_id, name, wanted)
    return found


async def person_matcher(session: AsyncSession, bot_id: str, user_id: str) -> PersonMatcher:
    """Finds one user of the bot account in a text: their QQ number in any writing and the
    nicknames they were seen with (every other user's nicknames decide which may stand alone)."""
    names = await nicknames(session, bot_id)
    theirs = names.pop(user_id, set())
    return PersonMatcher({user_id: theirs}, names)
