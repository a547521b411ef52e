"""profile_search: the keyword index of profile cards (FTS5 on SQLite, a tsvector table on PostgreSQL)

迁移 ID: b9d4e6f2a1c7
父迁移: f3a8c5d1e7b2
创建时间: 2026-12-01 16:30:00.000000

"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op


revision: str = "b9d4e6f2a1c7"
down_revision: str | Sequence[str] | None = "f3a8c5d1e7b2"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


# Raw SQL that autogenerate does not know (hidden by store/orm_hooks.py): a frozen copy of
# store/profile_index.py's DDL as of this revision. Existing cards get their keyword rows and
# vectors from `ambot cognition reindex` (and a restore).


def upgrade(name: str = "") -> None:
    if name:
        return
    if op.get_context().dialect.name == "sqlite":
        op.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS cognition_profile_fts USING fts5("
            "card, tokens, tokenize = 'unicode61 remove_diacritics 0')"
        )
    else:
        op.execute(
            "CREATE TABLE IF NOT EXISTS cognition_profile_kw (profile_id BIGINT PRIMARY KEY, doc TSVECTOR NOT NULL)"
        )
        op.execute("CREATE INDEX IF NOT EXISTS ix_cognition_profile_kw_doc ON cognition_profile_kw USING gin (doc)")


def downgrade(name: str = "") -> None:
    if name:
        return
    if op.get_context().dialect.name == "sqlite":
        op.execute("DROP TABLE IF EXISTS cognition_profile_fts")
    else:
        op.execute("DROP TABLE IF EXISTS cognition_profile_kw")
