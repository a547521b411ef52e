"""A keyword table derived from one kind of row (cards, knowledge entries), in the caller's
transaction: SQLite an FTS5 table ``(<owner>, tokens)`` whose rowid is the row's id, PostgreSQL a
table ``(<id column>, doc tsvector)`` under a GIN index, words at weight A and the owner token at
weight D. The owner token says whose the row is (a card part, a bot account), so a search names the
owners it may see and never walks another owner's postings. The tokens are the facts'
pre-tokenised text (``domain/tokenize.py``); ranking is BM25 (SQLite) or ``ts_rank`` on the words
(PostgreSQL), higher = better either way."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from .keyword import _bounded, _dialect, _fts_quote, _pg_quote, _pg_tsvector_literal

#: Rows per page when a whole table is re-indexed.
PAGE = 500


@dataclass(frozen=True, slots=True)
class KeywordRow:
    id: int
    #: The token naming the row's owner.
    owner: str
    tokens: Sequence[str]


@dataclass(frozen=True, slots=True)
class KeywordTable:
    fts_table: str
    pg_table: str
    pg_index: str
    #: The PostgreSQL table's id column (``profile_id``, ``entry_id``).
    id_column: str
    #: The FTS5 column of the owner token (``card``, ``bot``).
    owner_column: str

    @property
    def raw_table_prefixes(self) -> tuple[str, str]:
        """Objects autogenerate must not see (``store/orm_hooks.py``)."""
        return (self.fts_table, self.pg_table)

    @property
    def sqlite_ddl(self) -> tuple[str, ...]:
        return (
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {self.fts_table} USING fts5("
            f"{self.owner_column}, tokens, tokenize = 'unicode61 remove_diacritics 0')",
        )

    @property
    def postgres_ddl(self) -> tuple[str, ...]:
        return (
            f"CREATE TABLE IF NOT EXISTS {self.pg_table} ({self.id_column} BIGINT PRIMARY KEY, doc TSVECTOR NOT NULL)",
            f"CREATE INDEX IF NOT EXISTS {self.pg_index} ON {self.pg_table} USING gin (doc)",
        )

    async def ensure_schema(self, connection: AsyncConnection | AsyncSession) -> None:
        """Create the table if missing (idempotent; the migration creates it first)."""
        for statement in self.sqlite_ddl if _dialect(connection) == "sqlite" else self.postgres_ddl:
            await connection.execute(text(statement))

    async def write(self, session: AsyncSession, rows: Sequence[KeywordRow]) -> None:
        """Insert or replace the keyword rows of ``rows``."""
        if not rows:
            return
        await self.remove(session, [row.id for row in rows])
        if _dialect(session) == "sqlite":
            values = [{"id": row.id, "owner": row.owner, "tokens": " ".join(row.tokens)} for row in rows]
            await session.execute(
                text(f"INSERT INTO {self.fts_table}(rowid, {self.owner_column}, tokens) VALUES (:id, :owner, :tokens)"),
                values,
            )
            return
        values = [
            {"id": row.id, "words": _pg_tsvector_literal(row.tokens), "owner": _pg_quote(row.owner)} for row in rows
        ]
        # ON CONFLICT: a reindex re-writing every row never fails beside a concurrent write
        await session.execute(
            text(
                f"INSERT INTO {self.pg_table}({self.id_column}, doc) VALUES (:id, "
                "setweight(CAST(:words AS tsvector), 'A') || setweight(CAST(:owner AS tsvector), 'D')) "
                f"ON CONFLICT ({self.id_column}) DO UPDATE SET doc = EXCLUDED.doc"
            ),
            values,
        )

    async def remove(self, session: AsyncSession, ids: Sequence[int]) -> None:
        if not ids:
            return
        values = [{"id": row_id} for row_id in ids]
        if _dialect(session) == "sqlite":
            await session.execute(text(f"DELETE FROM {self.fts_table} WHERE rowid = :id"), values)
        else:
            await session.execute(text(f"DELETE FROM {self.pg_table} WHERE {self.id_column} = :id"), values)

    async def clear(self, session: AsyncSession) -> None:
        table = self.fts_table if _dialect(session) == "sqlite" else self.pg_table
        await session.execute(text(f"DELETE FROM {table}"))

    async def rebuild(
        self, session: AsyncSession, model: Any, index_rows: Callable[[AsyncSession, list[Any]], Awaitable[None]]
    ) -> int:
        """Every keyword row again from the rows of ``model`` (read in id pages, written by
        ``index_rows``). Returns how many rows were read."""
        await self.clear(session)
        count = 0
        last_id = 0
        while True:
            query = select(model).where(model.id > last_id).order_by(model.id).limit(PAGE)
            rows = list((await session.execute(query)).scalars())
            if not rows:
                return count
            await index_rows(session, rows)
            count += len(rows)
            last_id = rows[-1].id

    async def indexed_ids(self, session: AsyncSession) -> set[int]:
        """The row ids the table holds (checks, repair, tests)."""
        if _dialect(session) == "sqlite":
            result = await session.execute(text(f"SELECT rowid FROM {self.fts_table}"))
        else:
            result = await session.execute(text(f"SELECT {self.id_column} FROM {self.pg_table}"))
        return {int(row[0]) for row in result}

    async def search(
        self, session: AsyncSession, owners: Sequence[str], terms: Sequence[str], limit: int
    ) -> list[tuple[int, float]]:
        """Best ``limit`` (row id, score) pairs among the rows of ``owners``, higher = better."""
        terms = _bounded(terms)
        if not terms or not owners:
            return []
        if _dialect(session) == "sqlite":
            match = (
                f"{self.owner_column} : ({' OR '.join(map(_fts_quote, owners))}) "
                f"AND tokens : ({' OR '.join(map(_fts_quote, terms))})"
            )
            result = await session.execute(
                text(
                    f"SELECT rowid, bm25({self.fts_table}, 0.0, 1.0) AS rank FROM {self.fts_table} "
                    f"WHERE {self.fts_table} MATCH :match ORDER BY rank LIMIT :limit"
                ),
                {"match": match, "limit": limit},
            )
            return [(int(row[0]), -float(row[1])) for row in result]
        visible = " | ".join(map(_pg_quote, owners))
        words = " | ".join(map(_pg_quote, terms))
        result = await session.execute(
            text(
                f"SELECT {self.id_column}, ts_rank('{{0, 0, 0, 1}}', doc, words) AS rank FROM {self.pg_table}, "
                "CAST(:words AS tsquery) AS words WHERE doc @@ CAST(:query AS tsquery) ORDER BY rank DESC LIMIT :limit"
            ),
            {"words": words, "query": f"({visible}) & ({words})", "limit": limit},
        )
        return [(int(row[0]), float(row[1])) for row in result]
