"""The knowledge entries' search indices, kept in step with the entry rows in the caller's
transaction, as the cards' are (``store/profile_index.py``):

* **Keyword rows**: SQLite an FTS5 table ``cognition_knowledge_fts(bot, tokens)`` (rowid = entry
  id), PostgreSQL ``cognition_knowledge_kw(entry_id, doc tsvector)`` under a GIN index, over the
  facts' pre-tokenised text (``domain/tokenize.py``). Each row carries one token naming its bot
  account, so a search never walks another bot's postings. Only active entries have one: a
  stale entry (a source forgotten) is out of the keyword index until it is written again.
* **Outbox rows** (scope kind ``knowledge``) for the vector side: the drain reads the entry then
  (active and still that bot's: upsert what it says now; otherwise: delete its vector).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from ..domain.knowledge import ACTIVE
from ..domain.tokenize import keyword_tokens
from . import outbox
from .keyword import _bounded, _dialect, _fts_quote, _pg_quote, _pg_tsvector_literal
from .models import KnowledgeRow

FTS_TABLE = "cognition_knowledge_fts"
PG_TABLE = "cognition_knowledge_kw"
PG_INDEX = "ix_cognition_knowledge_kw_doc"
#: Objects autogenerate must not see (``store/orm_hooks.py``).
RAW_TABLE_PREFIXES = (FTS_TABLE, PG_TABLE)
RAW_INDEXES = frozenset({PG_INDEX})
SQLITE_DDL = (
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_TABLE} USING fts5("
    "bot, tokens, tokenize = 'unicode61 remove_diacritics 0')",
)
POSTGRES_DDL = (
    f"CREATE TABLE IF NOT EXISTS {PG_TABLE} (entry_id BIGINT PRIMARY KEY, doc TSVECTOR NOT NULL)",
    f"CREATE INDEX IF NOT EXISTS {PG_INDEX} ON {PG_TABLE} USING gin (doc)",
)
PAGE = 500


def bot_token(bot_id: str) -> str:
    """The token that names a bot account's entries in the keyword index."""
    return "n" + hashlib.sha1(f"knowledge\x1f{bot_id}".encode()).hexdigest()[:16]


def entry_text(row: KnowledgeRow) -> str:
    """What is indexed and embedded of an entry: its title, summary and body."""
    return "\n".join(part for part in (row.title, row.summary, row.body) if part.strip())


async def ensure_schema(connection: AsyncConnection | AsyncSession) -> None:
    """Create the keyword objects if missing (idempotent; the migration creates them first)."""
    for statement in SQLITE_DDL if _dialect(connection) == "sqlite" else POSTGRES_DDL:
        await connection.execute(text(statement))


async def index_rows(session: AsyncSession, rows: Sequence[KnowledgeRow]) -> None:
    """Insert or replace the keyword rows of the active ``rows`` (the others lose theirs)."""
    if not rows:
        return
    await remove_keywords(session, [row.id for row in rows])
    active = [row for row in rows if row.state == ACTIVE]
    if not active:
        return
    if _dialect(session) == "sqlite":
        values = [
            {"id": row.id, "bot": bot_token(row.bot_id), "tokens": " ".join(keyword_tokens(entry_text(row)))}
            for row in active
        ]
        await session.execute(text(f"INSERT INTO {FTS_TABLE}(rowid, bot, tokens) VALUES (:id, :bot, :tokens)"), values)
        return
    values = [
        {
            "id": row.id,
            "words": _pg_tsvector_literal(keyword_tokens(entry_text(row))),
            "bot": _pg_quote(bot_token(row.bot_id)),
        }
        for row in active
    ]
    await session.execute(
        text(
            f"INSERT INTO {PG_TABLE}(entry_id, doc) VALUES (:id, "
            "setweight(CAST(:words AS tsvector), 'A') || setweight(CAST(:bot AS tsvector), 'D')) "
            "ON CONFLICT (entry_id) DO UPDATE SET doc = EXCLUDED.doc"
        ),
        values,
    )


async def remove_keywords(session: AsyncSession, entry_ids: Sequence[int]) -> None:
    if not entry_ids:
        return
    values = [{"id": entry_id} for entry_id in entry_ids]
    if _dialect(session) == "sqlite":
        await session.execute(text(f"DELETE FROM {FTS_TABLE} WHERE rowid = :id"), values)
    else:
        await session.execute(text(f"DELETE FROM {PG_TABLE} WHERE entry_id = :id"), values)


async def changed(session: AsyncSession, rows: Sequence[KnowledgeRow], now: datetime) -> None:
    """Entry rows were written, hidden or re-shown (flushed): keyword rows now, vectors through
    the outbox."""
    await index_rows(session, rows)
    for row in rows:
        outbox.enqueue_knowledge(session, row.id, row.bot_id, now)


async def removed(session: AsyncSession, entries: Sequence[tuple[int, str]], now: datetime) -> None:
    """Entry rows ((id, bot account)) were deleted: keyword rows now, vectors through the outbox."""
    await remove_keywords(session, [entry_id for entry_id, _ in entries])
    for entry_id, bot_id in entries:
        outbox.enqueue_knowledge(session, entry_id, bot_id, now)


async def rebuild(session: AsyncSession) -> int:
    """Every keyword row again from the entry rows (a reindex). Returns how many were indexed."""
    table = FTS_TABLE if _dialect(session) == "sqlite" else PG_TABLE
    await session.execute(text(f"DELETE FROM {table}"))
    count = 0
    last_id = 0
    while True:
        query = select(KnowledgeRow).where(KnowledgeRow.id > last_id).order_by(KnowledgeRow.id).limit(PAGE)
        rows = list((await session.execute(query)).scalars())
        if not rows:
            return count
        await index_rows(session, rows)
        count += sum(1 for row in rows if row.state == ACTIVE)
        last_id = rows[-1].id


async def indexed_ids(session: AsyncSession) -> set[int]:
    """The entries the keyword index holds (tests, checks)."""
    if _dialect(session) == "sqlite":
        result = await session.execute(text(f"SELECT rowid FROM {FTS_TABLE}"))
    else:
        result = await session.execute(text(f"SELECT entry_id FROM {PG_TABLE}"))
    return {int(row[0]) for row in result}


async def search(session: AsyncSession, bot_id: str, terms: Sequence[str], limit: int) -> list[tuple[int, float]]:
    """Best ``limit`` (entry id, score) pairs of the bot account's active entries, higher = better."""
    terms = _bounded(terms)
    if not terms:
        return []
    if _dialect(session) == "sqlite":
        match = f"bot : {_fts_quote(bot_token(bot_id))} AND tokens : ({' OR '.join(map(_fts_quote, terms))})"
        result = await session.execute(
            text(
                f"SELECT rowid, bm25({FTS_TABLE}, 0.0, 1.0) AS rank FROM {FTS_TABLE} "
                f"WHERE {FTS_TABLE} MATCH :match ORDER BY rank LIMIT :limit"
            ),
            {"match": match, "limit": limit},
        )
        return [(int(row[0]), -float(row[1])) for row in result]
    words = " | ".join(map(_pg_quote, terms))
    result = await session.execute(
        text(
            f"SELECT entry_id, ts_rank('{{0, 0, 0, 1}}', doc, words) AS rank FROM {PG_TABLE}, "
            "CAST(:words AS tsquery) AS words WHERE doc @@ CAST(:query AS tsquery) ORDER BY rank DESC LIMIT :limit"
        ),
        {"words": words, "query": f"{_pg_quote(bot_token(bot_id))} & ({words})", "limit": limit},
    )
    return [(int(row[0]), float(row[1])) for row in result]
