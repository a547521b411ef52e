"""card_parts_per_group: a card part's name holds a group id (a user's part in one group)

迁移 ID: d5e1a9c3f7b4
父迁移: 5e1c7a9d3b28
创建时间: 2026-12-04 20:00:00.000000

"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = "d5e1a9c3f7b4"
down_revision: str | Sequence[str] | None = "5e1c7a9d3b28"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Under the strict scope policy a group sees a user's part in that group, "group:<group id>"
# (up to 26 characters); "group" and "private" keep their meaning, so existing rows need no
# change. SQLite rebuilds the tables (batch mode); row ids, which the card keyword index and the
# card vectors name, are copied as they are.
_TABLES = ("cognition_profile", "cognition_profile_revision")


def upgrade(name: str = "") -> None:
    if name:
        return
    for table in _TABLES:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.alter_column(
                "part", existing_type=sa.String(length=8), type_=sa.String(length=32), existing_nullable=False
            )


def downgrade(name: str = "") -> None:
    if name:
        return
    # the per-group parts cannot be kept in 8 characters: they go with their keyword rows (the
    # cross-group and private parts stay); their vectors are left to `ambot cognition reindex`
    per_group = "SELECT id FROM cognition_profile WHERE part LIKE 'group:%'"
    if op.get_context().dialect.name == "sqlite":
        op.execute(f"DELETE FROM cognition_profile_fts WHERE rowid IN ({per_group})")
    else:
        op.execute(f"DELETE FROM cognition_profile_kw WHERE profile_id IN ({per_group})")
    op.execute("DELETE FROM cognition_profile_revision WHERE part LIKE 'group:%'")
    op.execute("DELETE FROM cognition_profile WHERE part LIKE 'group:%'")
    for table in _TABLES:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.alter_column(
                "part", existing_type=sa.String(length=32), type_=sa.String(length=8), existing_nullable=False
            )
