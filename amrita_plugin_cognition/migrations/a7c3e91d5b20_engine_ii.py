"""engine II: outbox retry state, memo revisions

迁移 ID: a7c3e91d5b20
父迁移: 65941819ecca
创建时间: 2026-12-01 06:20:00.000000

"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = "a7c3e91d5b20"
down_revision: str | Sequence[str] | None = "65941819ecca"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade(name: str = "") -> None:
    if name:
        return
    op.create_table(
        "cognition_memo_revision",
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        sa.Column("bot_id", sa.String(length=32), nullable=False),
        sa.Column("scope_kind", sa.String(length=16), nullable=False),
        sa.Column("scope_id", sa.String(length=64), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("written_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("written_by", sa.String(length=64), nullable=False),
        sa.Column("replaced_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("replaced_by", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cognition_memo_revision")),
        info={"bind_key": "amrita_plugin_cognition"},
    )
    with op.batch_alter_table("cognition_memo_revision", schema=None) as batch_op:
        batch_op.create_index("ix_cognition_memo_revision_scope", ["bot_id", "scope_kind", "scope_id"], unique=False)
    with op.batch_alter_table("cognition_outbox", schema=None) as batch_op:
        batch_op.add_column(sa.Column("state", sa.String(length=8), nullable=False, server_default="pending"))
        batch_op.add_column(sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.create_index("ix_cognition_outbox_due", ["state", "next_attempt_at"], unique=False)
    # the server default only filled the existing rows: the models set every value themselves
    with op.batch_alter_table("cognition_outbox", schema=None) as batch_op:
        batch_op.alter_column("state", server_default=None)


def downgrade(name: str = "") -> None:
    if name:
        return
    with op.batch_alter_table("cognition_outbox", schema=None) as batch_op:
        batch_op.drop_index("ix_cognition_outbox_due")
        batch_op.drop_column("next_attempt_at")
        batch_op.drop_column("state")
    with op.batch_alter_table("cognition_memo_revision", schema=None) as batch_op:
        batch_op.drop_index("ix_cognition_memo_revision_scope")
    op.drop_table("cognition_memo_revision")
