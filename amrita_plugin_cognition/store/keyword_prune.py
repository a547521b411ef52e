"""Which query terms are too common to search for in a large keyword index.

A query's common characters and bigrams (小, 喜, 日和, the) match a large part of a big index:
they cost most of the keyword search's time (every matching fact is ranked) and add little to
the ranking (their IDF is low); the rarer terms and the vector side carry the meaning. So a term
found in more than ``PRUNE_TERM_SHARE`` of the indexed facts is dropped from the query, except
that a query keeps its ``PRUNE_KEEP_RAREST`` rarest terms the index knows, however common.

Where the counts come from, each read once per ``FREQUENCY_CACHE_SECONDS`` per database:

- SQLite: the FTS5 vocabulary table (how many facts hold each term: an indexed lookup per
  query's new terms) and the index's row count;
- PostgreSQL: the planner's statistics of the keyword table (``pg_stats``): ``ANALYZE``, which
  autovacuum runs as the table grows, keeps the most common lexemes of the ``tsvector`` column
  with the share of rows holding each (up to ten times the statistics target: 1,000 by default,
  far more than the terms above a 5 % share), and the table's estimated row count. A term not
  among them is rarer than every term kept, so it is searched. Before the first ``ANALYZE``
  there are no statistics and nothing is pruned, as for an index too small to need it (the
  historian's housekeeping analyses the plugin's tables where autovacuum does not:
  ``store/planner_stats.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

from cachetools import TTLCache
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

#: Below this many indexed facts no query term is pruned (the search is cheap anyway).
PRUNE_MIN_DOCUMENTS = 2000
#: A query term found in more than this share of facts is dropped from the query.
PRUNE_TERM_SHARE = 0.05
#: However common, a query keeps at least this many of its rarest terms that the index knows.
PRUNE_KEEP_RAREST = 3
#: Document frequencies are statistics: cached per database for this long.
FREQUENCY_CACHE_SECONDS = 60.0
_FREQUENCY_CACHE_MAX = 50_000
#: SQLite: per (database, term), the facts holding it.
_frequencies: TTLCache[tuple[str, str], int] = TTLCache(_FREQUENCY_CACHE_MAX, FREQUENCY_CACHE_SECONDS)
#: SQLite: per database, the facts indexed.
_document_count: TTLCache[str, int] = TTLCache(64, FREQUENCY_CACHE_SECONDS)
#: PostgreSQL: per database, the estimated rows and the facts holding each common lexeme.
_statistics: TTLCache[str, tuple[int, dict[str, int]]] = TTLCache(64, FREQUENCY_CACHE_SECONDS)


async def prune_common_terms(
    session: AsyncSession, terms: Sequence[str], fts_table: str, vocab_table: str, pg_table: str
) -> list[str]:
    """``terms`` without the common ones (see the module docstring), in their order."""
    if not terms:
        return []
    if session.get_bind().dialect.name == "sqlite":
        total = await _indexed_documents(session, fts_table)
        if total < PRUNE_MIN_DOCUMENTS:
            return list(terms)
        frequency = await _term_frequencies(session, terms, vocab_table)
    else:
        total, common = await _pg_statistics(session, pg_table)
        if total < PRUNE_MIN_DOCUMENTS:
            return list(terms)
        frequency = {term: common.get(term, 0) for term in terms}
    present = sorted((count, term) for term, count in frequency.items() if count > 0)
    keep = {term for _, term in present[:PRUNE_KEEP_RAREST]}
    limit = PRUNE_TERM_SHARE * total
    return [term for term in terms if term in keep or frequency.get(term, 0) <= limit]


async def _indexed_documents(session: AsyncSession, fts_table: str) -> int:
    """How many facts the FTS5 index holds (cached for a minute per database)."""
    key = str(session.get_bind().engine.url)
    count = _document_count.get(key)
    if count is None:
        count = _document_count[key] = int(
            (await session.execute(text(f"SELECT count(*) FROM {fts_table}"))).scalar_one()
        )
    return count


async def _term_frequencies(session: AsyncSession, terms: Sequence[str], vocab_table: str) -> dict[str, int]:
    """How many facts hold each term, from the FTS5 vocabulary (an indexed lookup), cached."""
    database = str(session.get_bind().engine.url)
    cached = {term: _frequencies.get((database, term)) for term in dict.fromkeys(terms)}
    known = {term: count for term, count in cached.items() if count is not None}
    missing = [term for term, count in cached.items() if count is None]
    if missing:
        placeholders = ", ".join(f":t{index}" for index in range(len(missing)))
        result = await session.execute(
            text(f"SELECT term, doc FROM {vocab_table} WHERE term IN ({placeholders})"),
            {f"t{index}": term for index, term in enumerate(missing)},
        )
        found = {term: int(documents) for term, documents in result}
        for term in missing:
            known[term] = _frequencies[(database, term)] = found.get(term, 0)
    return known


async def _pg_statistics(session: AsyncSession, pg_table: str) -> tuple[int, dict[str, int]]:
    """The keyword table's estimated rows and, per common lexeme, the rows holding it (from
    ``pg_stats``; nothing before the first ``ANALYZE``), cached for a minute per database."""
    key = str(session.get_bind().engine.url)
    cached = _statistics.get(key)
    if cached is not None:
        return cached
    rows = await session.execute(
        text("SELECT reltuples FROM pg_class WHERE oid = to_regclass(:table)"), {"table": pg_table}
    )
    total = max(0, int(rows.scalar_one_or_none() or 0))  # -1: never analysed
    common: dict[str, int] = {}
    if total:
        stats = await session.execute(
            text(
                "SELECT CAST(CAST(most_common_elems AS text) AS text[]), most_common_elem_freqs FROM pg_stats "
                "WHERE schemaname = current_schema() AND tablename = :table AND attname = 'doc'"
            ),
            {"table": pg_table},
        )
        found = stats.first()
        if found is not None and found[0] is not None:
            lexemes, shares = found
            # the shares of the lexemes, then three more figures (least and most share, nulls)
            common = {lexeme: round(share * total) for lexeme, share in zip(lexemes, shares, strict=False)}
    _statistics[key] = (total, common)
    return total, common
