"""The keyword index, in the authority database and written in the same transaction as the fact.

SQLite: an FTS5 table over pre-tokenised text (CJK unigrams + bigrams, stemmed Latin words; see
``domain/tokenize.py``), ranked by FTS5's BM25. PostgreSQL: a side table with a ``tsvector``
built from the same tokens (with positions, so term frequency counts) under a GIN index, ranked
by ``ts_rank``. Visibility is part of the match itself: scope and person tokens are indexed next
to the words, so the index never scans another chat's postings.

Only active facts are indexed; superseding or forgetting a fact removes its row. No token
longer than ``MAX_TOKEN_BYTES`` reaches either database (PostgreSQL refuses words of 2 KiB), so
the same text indexes and matches the same way on both.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from ..domain.records import Scope
from ..domain.tokenize import cap_token, keyword_tokens
from .keyword_prune import prune_common_terms

FTS_TABLE = "cognition_memory_fts"
PG_TABLE = "cognition_memory_kw"
PG_INDEX = "ix_cognition_memory_kw_doc"
#: Objects autogenerate must not see (they are not ORM models); used by the orm include_name hook.
RAW_TABLE_PREFIXES = (FTS_TABLE, PG_TABLE)
RAW_INDEXES = frozenset({PG_INDEX})
#: Weight of neighbouring turns' words relative to a fact's own words.
CONTEXT_WEIGHT = 0.5

VOCAB_TABLE = f"{FTS_TABLE}_vocab"
SQLITE_DDL = (
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_TABLE} USING fts5("
    "scope, people, tokens, context, tokenize = 'unicode61 remove_diacritics 0')",
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {VOCAB_TABLE} USING fts5vocab({FTS_TABLE}, 'row')",
)
POSTGRES_DDL = (
    f"CREATE TABLE IF NOT EXISTS {PG_TABLE} (memory_id BIGINT PRIMARY KEY, doc TSVECTOR NOT NULL)",
    f"CREATE INDEX IF NOT EXISTS {PG_INDEX} ON {PG_TABLE} USING gin (doc)",
)


def _token(prefix: str, *parts: str) -> str:
    return prefix + hashlib.sha1("\x1f".join(parts).encode()).hexdigest()[:16]


def scope_token(bot_id: str, scope: Scope) -> str:
    return _token("s", bot_id, scope.key)


def all_groups_token(bot_id: str) -> str:
    """Carried by every group fact of a bot: the ``open`` scope policy matches on it."""
    return _token("a", bot_id)


def person_token(bot_id: str, user_id: str) -> str:
    """Carried by group facts a user said or is about: a private chat matches its own user's."""
    return _token("p", bot_id, user_id)


@dataclass(frozen=True, slots=True)
class KeywordFilter:
    """Which facts a search may see: any scope token, or any person token (OR-ed)."""

    scope_tokens: tuple[str, ...]
    person_tokens: tuple[str, ...] = ()


@dataclass(slots=True)
class KeywordDocument:
    memory_id: int
    bot_id: str
    scope: Scope
    text: str
    people: list[str] = field(default_factory=list)
    #: Words of neighbouring conversation turns, matched at half weight.
    context: str = ""

    def filter_tokens(self) -> tuple[list[str], list[str]]:
        scopes = [scope_token(self.bot_id, self.scope)]
        people: list[str] = []
        if self.scope.is_group:
            scopes.append(all_groups_token(self.bot_id))
            people = [person_token(self.bot_id, user) for user in dict.fromkeys(self.people) if user]
        return scopes, people


def _dialect(session: AsyncSession | AsyncConnection) -> str:
    return session.dialect.name if isinstance(session, AsyncConnection) else session.get_bind().dialect.name


async def ensure_schema(connection: AsyncConnection | AsyncSession) -> None:
    """Create the keyword objects if missing (idempotent; the migration creates them first)."""
    statements = SQLITE_DDL if _dialect(connection) == "sqlite" else POSTGRES_DDL
    for statement in statements:
        await connection.execute(text(statement))


def _pg_quote(token: str) -> str:
    return "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"


def _bounded(terms: Iterable[str]) -> list[str]:
    """Distinct non-empty terms, each cut to ``MAX_TOKEN_BYTES`` as ``keyword_tokens`` cuts them."""
    return list(dict.fromkeys(cap_token(term) for term in terms if term))


def _pg_tsvector_literal(tokens: Sequence[str]) -> str:
    positions: dict[str, list[int]] = {}
    for position, token in enumerate(tokens, start=1):
        positions.setdefault(cap_token(token), []).append(min(position, 16383))
    return " ".join(f"{_pg_quote(tok)}:{','.join(map(str, pos[:256]))}" for tok, pos in positions.items())


async def index_documents(session: AsyncSession, documents: Iterable[KeywordDocument]) -> None:
    """Insert or replace the keyword rows of ``documents`` (caller owns the transaction)."""
    documents = list(documents)
    if not documents:
        return
    await remove_documents(session, [doc.memory_id for doc in documents])
    if _dialect(session) == "sqlite":
        rows = []
        for doc in documents:
            scopes, people = doc.filter_tokens()
            rows.append(
                {
                    "id": doc.memory_id,
                    "scope": " ".join(scopes),
                    "people": " ".join(people),
                    "tokens": " ".join(keyword_tokens(doc.text)),
                    "context": " ".join(keyword_tokens(doc.context)),
                }
            )
        await session.execute(
            text(
                f"INSERT INTO {FTS_TABLE}(rowid, scope, people, tokens, context) "
                "VALUES (:id, :scope, :people, :tokens, :context)"
            ),
            rows,
        )
    else:
        rows = []
        for doc in documents:
            scopes, people = doc.filter_tokens()
            words = _pg_tsvector_literal(keyword_tokens(doc.text))
            context = _pg_tsvector_literal(keyword_tokens(doc.context))
            filters = " ".join(_pg_quote(tok) for tok in scopes + people)
            rows.append({"id": doc.memory_id, "words": words, "context": context, "filters": filters})
        await session.execute(
            text(
                f"INSERT INTO {PG_TABLE}(memory_id, doc) VALUES (:id, "
                "setweight(CAST(:words AS tsvector), 'A') || setweight(CAST(:context AS tsvector), 'B') "
                "|| setweight(CAST(:filters AS tsvector), 'D'))"
            ),
            rows,
        )


async def remove_documents(session: AsyncSession, memory_ids: Sequence[int]) -> None:
    if not memory_ids:
        return
    rows = [{"id": memory_id} for memory_id in memory_ids]
    if _dialect(session) == "sqlite":
        await session.execute(text(f"DELETE FROM {FTS_TABLE} WHERE rowid = :id"), rows)
    else:
        await session.execute(text(f"DELETE FROM {PG_TABLE} WHERE memory_id = :id"), rows)


async def clear(session: AsyncSession) -> None:
    """Drop every keyword row (restore rebuilds them from the authority rows)."""
    table = FTS_TABLE if _dialect(session) == "sqlite" else PG_TABLE
    await session.execute(text(f"DELETE FROM {table}"))


def _fts_quote(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


async def search(
    session: AsyncSession, visibility: KeywordFilter, terms: Sequence[str], limit: int
) -> list[tuple[int, float]]:
    """Best ``limit`` (memory id, score) pairs, higher score = better match."""
    terms = _bounded(terms)
    if not terms or (not visibility.scope_tokens and not visibility.person_tokens):
        return []
    terms = await prune_common_terms(session, terms, FTS_TABLE, VOCAB_TABLE, PG_TABLE)
    if not terms:
        return []
    if _dialect(session) == "sqlite":
        visible = []
        if visibility.scope_tokens:
            visible.append("scope : (" + " OR ".join(map(_fts_quote, visibility.scope_tokens)) + ")")
        if visibility.person_tokens:
            visible.append("people : (" + " OR ".join(map(_fts_quote, visibility.person_tokens)) + ")")
        words = " OR ".join(map(_fts_quote, terms))
        match = f"({' OR '.join(visible)}) AND {{tokens context}} : ({words})"
        result = await session.execute(
            text(
                f"SELECT rowid, bm25({FTS_TABLE}, 0.0, 0.0, 1.0, {CONTEXT_WEIGHT}) AS rank FROM {FTS_TABLE} "
                f"WHERE {FTS_TABLE} MATCH :match ORDER BY rank LIMIT :limit"
            ),
            {"match": match, "limit": limit},
        )
        return [(int(row[0]), -float(row[1])) for row in result]
    visible_query = " | ".join(_pg_quote(tok) for tok in visibility.scope_tokens + visibility.person_tokens)
    words_query = " | ".join(_pg_quote(tok) for tok in terms)
    result = await session.execute(
        text(
            f"SELECT memory_id, ts_rank('{{0, 0, {CONTEXT_WEIGHT}, 1}}', doc, words) AS rank FROM {PG_TABLE}, "
            "CAST(:words AS tsquery) AS words "
            f"WHERE doc @@ CAST(:query AS tsquery) ORDER BY rank DESC LIMIT :limit"
        ),
        {"words": words_query, "query": f"({visible_query}) & ({words_query})", "limit": limit},
    )
    return [(int(row[0]), float(row[1])) for row in result]
