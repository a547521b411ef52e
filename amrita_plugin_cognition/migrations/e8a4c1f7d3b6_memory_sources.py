"""memory_sources: the lineage of a consolidation merge (a merged memory and its sources)

迁移 ID: e8a4c1f7d3b6
父迁移: b3f9d2c6a8e1
创建时间: 2026-12-06 02:00:00.000000

"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = "e8a4c1f7d3b6"
down_revision: str | Sequence[str] | None = "b3f9d2c6a8e1"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade(name: str = "") -> None:
    if name:
        return
    op.create_table(
        "cognition_memory_source",
        sa.Column("memory_id", _ID, autoincrement=False, nullable=False),
        sa.Column("source_id", _ID, autoincrement=False, nullable=False),
        sa.Column("bot_id", sa.String(length=32), nullable=False),
        sa.PrimaryKeyConstraint("memory_id", "source_id", name=op.f("pk_cognition_memory_source")),
        info={"bind_key": "amrita_plugin_cognition"},
    )
    with op.batch_alter_table("cognition_memory_source", schema=None) as batch_op:
        batch_op.create_index("ix_cognition_memory_source_source", ["source_id"], unique=False)


def downgrade(name: str = "") -> None:
    if name:
        return
    # the previous release knows no lineage table: the merged memories and their sources stay
    # (each source is still ``superseded_by`` its merge), only the table goes
    with op.batch_alter_table("cognition_memory_source", schema=None) as batch_op:
        batch_op.drop_index("ix_cognition_memory_source_source")
    op.drop_table("cognition_memory_source")
