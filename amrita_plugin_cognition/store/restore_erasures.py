"""A restore replays the delete-alls made since its backup, so that an erased person, chat or bot
account does not come back with an older file.

Every delete-all leaves an audit record (``engine/erasure.py``: the action, the target's label,
who asked, when). After the file's rows are in (``store/backup.py``), each such record from the
backup's time on is replayed through the very erasure a live delete-all runs
(``store/erasure.erase``), on the tables a backup brings back only: the notes, the transcript and
the queued jobs were erased at the time and what they hold now came later. The backup's time
comes with an overlap (``OVERLAP``): a backup reads its tables page by page, so an erasure that
ran while it was being written may be half in it.

A user is looked for as a live erasure looks for them, by their QQ number in any writing and the
nicknames the restored rows show, plus the nicknames of the facts the restore skipped because
they were forgotten (mostly by that very erasure). A nickname seen only in the transcript or the
notes of the time is not known any more: what names them only by it can come back.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.clock import as_utc
from ..domain.erasure import ErasureTarget
from ..domain.people import PersonMatcher
from . import erasure, people
from .models import AuditRow

#: How long before the backup's time an erasure is still replayed (it may have run during the backup).
OVERLAP = timedelta(minutes=10)
#: The audit actions of a delete-all (``ErasureTarget.action``).
ACTIONS = ("delete_all_chat", "delete_all_user", "delete_all_bot")
#: How the historian writes a person into a fact (``historian_sources.person``).
_NAMED = re.compile(r"QQ号(\d{5,20})（昵称([^）]{1,64})）")


@dataclass(frozen=True, slots=True)
class Replayed:
    target: ErasureTarget
    counts: erasure.ErasureCounts


def newer(candidate: datetime | None, current: datetime | None) -> bool:
    """Whether ``candidate`` is later than ``current`` (either may come naive from SQLite)."""
    first, second = as_utc(candidate), as_utc(current)
    return first is not None and (second is None or first > second)


def note_names(found: dict[str, dict[str, set[str]]], values: dict[str, Any]) -> None:
    """Add the nicknames a fact's row shows (speaker, subject, the historian's ``QQ号…（昵称…）``)
    to ``found`` (bot -> user -> names)."""
    bot = found.setdefault(str(values.get("bot_id", "")), {})
    pairs = [
        (values.get("speaker_id"), values.get("speaker_name")),
        (values.get("subject_id"), values.get("subject_name")),
        *_NAMED.findall(str(values.get("text", ""))),
    ]
    for user_id, name in pairs:
        # a QQ number written in full-width digits is the same user (as ``people.nicknames`` reads it)
        user, nickname = unicodedata.normalize("NFKC", str(user_id or "")).strip(), str(name or "").strip()
        if user and nickname:
            bot.setdefault(user, set()).add(nickname)


async def _matcher(session: AsyncSession, target: ErasureTarget, forgotten: dict[str, set[str]]) -> PersonMatcher:
    """The user's matcher over the restored rows and the forgotten facts' nicknames."""
    names = await people.nicknames(session, target.bot_id)
    for user, seen in forgotten.items():
        names.setdefault(user, set()).update(seen)
    theirs = names.pop(target.user_id, set())
    return PersonMatcher({target.user_id: theirs}, names)


async def since(session: AsyncSession, backup_time: datetime) -> list[AuditRow]:
    """The delete-all records from ``backup_time`` less the overlap on, oldest first."""
    start = (as_utc(backup_time) or backup_time) - OVERLAP
    rows = await session.execute(
        select(AuditRow).where(AuditRow.action.in_(ACTIONS), AuditRow.at >= start).order_by(AuditRow.at, AuditRow.id)
    )
    return list(rows.scalars())


async def replay(
    session: AsyncSession, backup_time: datetime, forgotten_names: dict[str, dict[str, set[str]]], now: datetime
) -> list[Replayed]:
    """Run again, in the caller's transaction (the restore's, after its rows are in), every
    delete-all recorded since ``backup_time`` (less ``OVERLAP``), in the order they were made."""
    replayed: list[Replayed] = []
    for row in await since(session, backup_time):
        target = ErasureTarget.from_audit(row.bot_id, row.action, row.target)
        if target is None:
            continue
        matcher = None
        if target.kind == "user":
            matcher = await _matcher(session, target, forgotten_names.get(target.bot_id, {}))
        reason = f"{target.action}:{row.actor}"
        counts = await erasure.erase(session, target, reason, now, matcher=matcher, restored_only=True)
        replayed.append(Replayed(target, counts))
    return replayed
