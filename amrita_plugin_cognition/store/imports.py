"""Fingerprints of imported records (``ImportRecordRow``): which source records a bot account
already holds, so that an import run twice writes nothing new and a failed run resumes."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from .models import ImportRecordRow

#: Fingerprints looked up per query (SQLite's bound-parameter limit is far above).
_CHUNK = 500


async def seen(session: AsyncSession, bot_id: str, importer: str, fingerprints: Iterable[str]) -> set[str]:
    """The fingerprints among ``fingerprints`` this bot account already imported."""
    wanted = sorted(set(fingerprints))
    found: set[str] = set()
    for start in range(0, len(wanted), _CHUNK):
        chunk = wanted[start : start + _CHUNK]
        query = select(ImportRecordRow.fingerprint).where(
            ImportRecordRow.bot_id == bot_id,
            ImportRecordRow.importer == importer,
            ImportRecordRow.fingerprint.in_(chunk),
        )
        found.update((await session.execute(query)).scalars().all())
    return found


def add(
    session: AsyncSession, bot_id: str, importer: str, kind: str, fingerprint: str, target: str, at: datetime
) -> None:
    """Remember one imported record in the caller's transaction (it commits with what it wrote)."""
    session.add(
        ImportRecordRow(
            bot_id=bot_id, importer=importer, kind=kind, fingerprint=fingerprint, target=target[:128], at=at
        )
    )


async def count(session: AsyncSession, bot_id: str, importer: str) -> int:
    """How many records of ``importer`` this bot account holds."""
    rows = await session.execute(
        select(ImportRecordRow.id).where(ImportRecordRow.bot_id == bot_id, ImportRecordRow.importer == importer)
    )
    return len(rows.all())
