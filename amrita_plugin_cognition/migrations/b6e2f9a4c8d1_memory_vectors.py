"""memory_vectors: a copy of each fact's stored vector in SQL (small chats are searched there)

迁移 ID: b6e2f9a4c8d1
父迁移: a9e4c2b7d5f3
创建时间: 2026-12-07 12:30:00.000000

"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = "b6e2f9a4c8d1"
down_revision: str | Sequence[str] | None = "a9e4c2b7d5f3"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade(name: str = "") -> None:
    if name:
        return
    # empty at first: the startup repair copies what the index stores, then marks the copy complete
    op.create_table(
        "cognition_memory_vector",
        sa.Column("generation", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("memory_id", _ID, autoincrement=False, nullable=False),
        sa.Column("bot_id", sa.String(length=32), nullable=False),
        sa.Column("scope_kind", sa.String(length=16), nullable=False),
        sa.Column("scope_id", sa.String(length=64), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("generation", "memory_id", name=op.f("pk_cognition_memory_vector")),
        info={"bind_key": "amrita_plugin_cognition"},
    )
    with op.batch_alter_table("cognition_memory_vector", schema=None) as batch_op:
        batch_op.create_index(
            "ix_cognition_memory_vector_chat", ["generation", "bot_id", "scope_kind", "scope_id"], unique=False
        )


def downgrade(name: str = "") -> None:
    if name:
        return
    # derived data: the index keeps every vector; the copy's completeness marks go with it
    op.execute("DELETE FROM cognition_meta WHERE key LIKE 'vector_copy:%'")
    with op.batch_alter_table("cognition_memory_vector", schema=None) as batch_op:
        batch_op.drop_index("ix_cognition_memory_vector_chat")
    op.drop_table("cognition_memory_vector")
