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

from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from ..domain.tokenize import keyword_tokens
from . import outbox
from .keyword import _bounded, _dialect, _fts_quote, _pg_quote, _pg_tsvector_literal
from .models import ProfileRow

FTS_TABLE = "cognition_profile_fts"
PG_TABLE = "cognition_profile_kw"
PG_INDEX = "ix_cognition_profile_kw_doc"
#: Objects autogenerate must not see (``store/orm_hooks.py``).
RAW_TABLE_PREFIXES = (FTS_TABLE, PG_TABLE)
RAW_INDEXES = frozenset({PG_INDEX})
SQLITE_DDL = (
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_TABLE} USING fts5("
    "card, tokens, tokenize = 'unicode61 remove_diacritics 0')",
)
POSTGRES_DDL = (
    f"CREATE TABLE IF NOT EXISTS {PG_TABLE} (profile_id BIGINT PRIMARY KEY, doc TSVECTOR NOT NULL)",
    f"CREATE INDEX IF NOT EXISTS {PG_INDEX} ON {PG_TABLE} USING gin (doc)",
)
#: Card rows per page when the whole table is re-indexed.
PAGE = 500


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
    for statement in SQLITE_DDL if _dialect(connection) == "sqlite" else POSTGRES_DDL:
        await connection.execute(text(statement))


async def index_rows(session: AsyncSession, rows: Sequence[ProfileRow]) -> None:
    """Insert or replace the keyword rows of ``rows``."""
    if not rows:
        return
    await remove_keywords(session, [row.id for row in rows])
    if _dialect(session) == "sqlite":
        values = [
            {
                "id": row.id,
                "card": card_token(row.bot_id, row.entity_type, row.entity_id, row.part),
                "tokens": " ".join(keyword_tokens(row_text(row))),
            }
            for row in rows
        ]
        await session.execute(
            text(f"INSERT INTO {FTS_TABLE}(rowid, card, tokens) VALUES (:id, :card, :tokens)"), values
        )
        return
    values = [
        {
            "id": row.id,
            "words": _pg_tsvector_literal(keyword_tokens(row_text(row))),
            "card": _pg_quote(card_token(row.bot_id, row.entity_type, row.entity_id, row.part)),
        }
        for row in rows
    ]
    # ON CONFLICT: a reindex re-writing every row never fails beside a concurrent card save
    await session.execute(
        text(
            f"INSERT INTO {PG_TABLE}(profile_id, doc) VALUES (:id, "
            "setweight(CAST(:words AS tsvector), 'A') || setweight(CAST(:card AS tsvector), 'D')) "
            "ON CONFLICT (profile_id) DO UPDATE SET doc = EXCLUDED.doc"
        ),
        values,
    )


async def remove_keywords(session: AsyncSession, profile_ids: Sequence[int]) -> None:
    if not profile_ids:
        return
    values = [{"id": profile_id} for profile_id in profile_ids]
    if _dialect(session) == "sqlite":
        await session.execute(text(f"DELETE FROM {FTS_TABLE} WHERE rowid = :id"), values)
    else:
        await session.execute(text(f"DELETE FROM {PG_TABLE} WHERE profile_id = :id"), values)


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
    table = FTS_TABLE if _dialect(session) == "sqlite" else PG_TABLE
    await session.execute(text(f"DELETE FROM {table}"))
    count = 0
    last_id = 0
    while True:
        query = select(ProfileRow).where(ProfileRow.id > last_id).order_by(ProfileRow.id).limit(PAGE)
        rows = list((await session.execute(query)).scalars())
        if not rows:
            return count
        await index_rows(session, rows)
        count += len(rows)
        last_id = rows[-1].id


async def indexed_ids(session: AsyncSession) -> set[int]:
    """The card rows the keyword index holds (tests, checks)."""
    if _dialect(session) == "sqlite":
        result = await session.execute(text(f"SELECT rowid FROM {FTS_TABLE}"))
    else:
        result = await session.execute(text(f"SELECT profile_id FROM {PG_TABLE}"))
    return {int(row[0]) for row in result}


async def search(
    session: AsyncSession, card_tokens: Sequence[str], terms: Sequence[str], limit: int
) -> list[tuple[int, float]]:
    """Best ``limit`` (profile row id, score) pairs among the card parts named by ``card_tokens``
    (``card_token``), higher score = better match."""
    terms = _bounded(terms)
    if not terms or not card_tokens:
        return []
    if _dialect(session) == "sqlite":
        match = (
            f"card : ({' OR '.join(map(_fts_quote, card_tokens))}) AND tokens : ({' OR '.join(map(_fts_quote, terms))})"
        )
        result = await session.execute(
            text(
                f"SELECT rowid, bm25({FTS_TABLE}, 0.0, 1.0) AS rank FROM {FTS_TABLE} "
                f"WHERE {FTS_TABLE} MATCH :match ORDER BY rank LIMIT :limit"
            ),
            {"match": match, "limit": limit},
        )
        return [(int(row[0]), -float(row[1])) for row in result]
    visible = " | ".join(map(_pg_quote, card_tokens))
    words = " | ".join(map(_pg_quote, terms))
    result = await session.execute(
        text(
            f"SELECT profile_id, ts_rank('{{0, 0, 0, 1}}', doc, words) AS rank FROM {PG_TABLE}, "
            "CAST(:words AS tsquery) AS words WHERE doc @@ CAST(:query AS tsquery) ORDER BY rank DESC LIMIT :limit"
        ),
        {"words": words, "query": f"({visible}) & ({words})", "limit": limit},
    )
    return [(int(row[0]), float(row[1])) for row in result]
