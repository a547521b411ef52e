"""PostgreSQL: the plugin's tables keep their planner statistics where autovacuum does not.

PostgreSQL plans every query from the statistics ``ANALYZE`` keeps; autovacuum runs it as
tables change, but it can be turned off (``autovacuum = off``: some servers run that way). A
table never analysed plans as if it were nearly empty: recall's read of its candidates by id then
walked every active fact of the chat instead of the primary key (50,000 facts in one chat: 13 ms
for 150 ids, against well under a millisecond), and the keyword query's pruning
(``store/keyword_prune.py``) has no lexeme counts to read. So the historian's housekeeping (every
10 minutes) analyses each of the plugin's tables once a tenth of it changed since its last
analysis, autovacuum's own rule; where autovacuum does run, it has found nothing to do. SQLite
needs nothing: it plans without statistics unless asked, and the keyword pruning reads the FTS5
vocabulary, which is exact.
"""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

#: A table is analysed again once this share of its rows changed, and at least this many rows:
#: autovacuum's defaults (``autovacuum_analyze_scale_factor``, ``autovacuum_analyze_threshold``).
ANALYZE_SHARE = 0.1
ANALYZE_MIN_CHANGES = 50
#: The plugin's tables, by the prefix every one of them has.
TABLE_PREFIX = "cognition_"


async def analyse_stale(session: AsyncSession) -> list[str]:
    """``ANALYZE`` each of the plugin's tables in the current schema that changed enough since
    its last analysis; the names of those analysed (none on SQLite)."""
    if session.get_bind().dialect.name == "sqlite":
        return []
    stale = await session.execute(
        text(
            "SELECT relname FROM pg_stat_user_tables WHERE schemaname = current_schema() "
            "AND starts_with(relname, :prefix) "
            "AND n_mod_since_analyze > greatest(:least, :share * n_live_tup) ORDER BY relname"
        ),
        {"prefix": TABLE_PREFIX, "least": ANALYZE_MIN_CHANGES, "share": ANALYZE_SHARE},
    )
    names = [str(name) for name in stale.scalars()]
    preparer = session.get_bind().dialect.identifier_preparer
    for name in names:
        await session.execute(text(f"ANALYZE {preparer.quote(name)}"))
    return names
