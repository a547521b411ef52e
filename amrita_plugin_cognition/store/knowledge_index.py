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

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from ..domain.knowledge import ACTIVE
from ..domain.tokenize import keyword_tokens
from . import outbox
from .keyword_table import KeywordRow, KeywordTable
from .models import KnowledgeRow

TABLE = KeywordTable(
    "cognition_knowledge_fts", "cognition_knowledge_kw", "ix_cognition_knowledge_kw_doc", "entry_id", "bot"
)
FTS_TABLE, PG_TABLE, PG_INDEX = TABLE.fts_table, TABLE.pg_table, TABLE.pg_index
#: Objects autogenerate must not see (``store/orm_hooks.py``).
RAW_TABLE_PREFIXES = TABLE.raw_table_prefixes
RAW_INDEXES = frozenset({PG_INDEX})


def bot_token(bot_id: str) -> str:
    """The token that names a bot account's entries in the keyword index."""
    return "n" + hashlib.sha1(f"knowledge\x1f{bot_id}".encode()).hexdigest()[:16]


def entry_text(row: KnowledgeRow) -> str:
    """What is indexed and embedded of an entry: its title, summary and body."""
    return "\n".join(part for part in (row.title, row.summary, row.body) if part.strip())


async def ensure_schema(connection: AsyncConnection | AsyncSession) -> None:
    """Create the keyword objects if missing (idempotent; the migration creates them first)."""
    await TABLE.ensure_schema(connection)


async def index_rows(session: AsyncSession, rows: Sequence[KnowledgeRow]) -> None:
    """Insert or replace the keyword rows of the active ``rows`` (the others lose theirs)."""
    await TABLE.remove(session, [row.id for row in rows])
    active = [row for row in rows if row.state == ACTIVE]
    await TABLE.write(
        session, [KeywordRow(row.id, bot_token(row.bot_id), keyword_tokens(entry_text(row))) for row in active]
    )


async def changed(session: AsyncSession, rows: Sequence[KnowledgeRow], now: datetime) -> None:
    """Entry rows were written, hidden or re-shown (flushed): keyword rows now, vectors through
    the outbox."""
    await index_rows(session, rows)
    for row in rows:
        outbox.enqueue_knowledge(session, row.id, row.bot_id, now)


async def removed(session: AsyncSession, entries: Sequence[tuple[int, str]], now: datetime) -> None:
    """Entry rows ((id, bot account)) were deleted: keyword rows now, vectors through the outbox."""
    await TABLE.remove(session, [entry_id for entry_id, _ in entries])
    for entry_id, bot_id in entries:
        outbox.enqueue_knowledge(session, entry_id, bot_id, now)


async def rebuild(session: AsyncSession) -> int:
    """Every keyword row again from the entry rows (a reindex; a stale entry gets none). Returns
    how many entries were read."""
    return await TABLE.rebuild(session, KnowledgeRow, index_rows)


async def indexed_ids(session: AsyncSession) -> set[int]:
    """The entries the keyword index holds (tests, checks)."""
    return await TABLE.indexed_ids(session)


async def search(session: AsyncSession, bot_id: str, terms: Sequence[str], limit: int) -> list[tuple[int, float]]:
    """Best ``limit`` (entry id, score) pairs of the bot account's active entries, higher = better."""
    return await TABLE.search(session, [bot_token(bot_id)], terms, limit)
