"""The profile cards' search indices, kept in step with the card rows in the caller's transaction.

* **Keyword rows**, derived from the card rows and written with them: SQLite an FTS5 table
  ``cognition_profile_fts(card, tokens)`` (rowid = profile row id), PostgreSQL
  ``cognition_profile_kw(profile_id, doc tsvector)`` under a GIN index, over the same
  pre-tokenised text as the memories' keyword index (``domain/tokenize.py``). Visibility is part
  of the match: each row carries one token naming its card part (bot account, entity, part), and
  a search names the parts the chat may see, so it never walks another part's postings.
* **Outbox rows** for the vector side (``store/outbox.py``, scope kind ``profile``): the card
  collection of the bot account is derived from SQL and follows through the outbox, so a crash
  never leaves the two out of step. An outbox row names only the card's row id; the drain reads
  the row then (present: upsert what it says now; gone or another bot's: delete).

Every function works in the caller's transaction; ``store/profiles.py`` calls ``changed`` and
``removed`` wherever it writes or deletes a card row, and a restore or a reindex calls ``rebuild``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from ..domain.tokenize import keyword_tokens
from . import outbox
from .keyword_table import KeywordRow, KeywordTable
from .models import ProfileRow

TABLE = KeywordTable(
    "cognition_profile_fts", "cognition_profile_kw", "ix_cognition_profile_kw_doc", "profile_id", "card"
)
FTS_TABLE, PG_TABLE, PG_INDEX = TABLE.fts_table, TABLE.pg_table, TABLE.pg_index
#: Objects autogenerate must not see (``store/orm_hooks.py``).
RAW_TABLE_PREFIXES = TABLE.raw_table_prefixes
RAW_INDEXES = frozenset({PG_INDEX})


def card_token(bot_id: str, entity_type: str, entity_id: str, part: str) -> str:
    """The token that names one card part in the keyword index."""
    digest = hashlib.sha1("\x1f".join((bot_id, entity_type, entity_id, part)).encode()).hexdigest()[:16]
    return f"k{digest}"


def card_key(entity_type: str, entity_id: str, part: str) -> str:
    """A card part within its bot account, as its vector's metadata holds it."""
    return f"{entity_type}:{entity_id}:{part}"


def card_text(name: str, tags: Iterable[str], evaluation: str, body: str, roast: str) -> str:
    """What is indexed and embedded of a card part: its name, tags and three sections."""
    return "\n".join(part for part in (name, " ".join(tags), evaluation, body, roast) if part.strip())


def row_text(row: ProfileRow) -> str:
    from .profiles import to_card

    card = to_card(row)
    return card_text(card.name, card.tags, card.evaluation, card.body, card.roast)


async def ensure_schema(connection: AsyncConnection | AsyncSession) -> None:
    """Create the card keyword objects if missing (idempotent; the migration creates them first)."""
    await TABLE.ensure_schema(connection)


async def index_rows(session: AsyncSession, rows: Sequence[ProfileRow]) -> None:
    """Insert or replace the keyword rows of ``rows``."""
    await TABLE.write(
        session,
        [
            KeywordRow(
                row.id,
                card_token(row.bot_id, row.entity_type, row.entity_id, row.part),
                keyword_tokens(row_text(row)),
            )
            for row in rows
        ],
    )


async def remove_keywords(session: AsyncSession, profile_ids: Sequence[int]) -> None:
    await TABLE.remove(session, profile_ids)


async def changed(session: AsyncSession, rows: Sequence[ProfileRow], now: datetime) -> None:
    """Card rows were written (flushed): their keyword rows now, their vectors through the outbox."""
    await index_rows(session, rows)
    for row in rows:
        outbox.enqueue_card(session, row.id, row.bot_id, now)


async def removed(session: AsyncSession, cards: Sequence[tuple[int, str]], now: datetime) -> None:
    """Card rows ((id, bot account)) were deleted: their keyword rows go now, their vectors
    through the outbox."""
    await remove_keywords(session, [profile_id for profile_id, _ in cards])
    for profile_id, bot_id in cards:
        outbox.enqueue_card(session, profile_id, bot_id, now)


async def rebuild(session: AsyncSession) -> int:
    """Every keyword row again from the card rows (a restore; a reindex). Returns how many."""
    return await TABLE.rebuild(session, ProfileRow, index_rows)


async def indexed_ids(session: AsyncSession) -> set[int]:
    """The card rows the keyword index holds (tests, checks)."""
    return await TABLE.indexed_ids(session)


async def search(
    session: AsyncSession, card_tokens: Sequence[str], terms: Sequence[str], limit: int
) -> list[tuple[int, float]]:
    """Best ``limit`` (profile row id, score) pairs among the card parts named by ``card_tokens``
    (``card_token``), higher score = better match."""
    return await TABLE.search(session, card_tokens, terms, limit)
