"""cycle_runs: one row per consolidation cycle run (the pre-pass, the judgement step, its tokens)

迁移 ID: f6b2d8a4c1e9
父迁移: e8a4c1f7d3b6
创建时间: 2026-12-07 01:00:00.000000

"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = "f6b2d8a4c1e9"
down_revision: str | Sequence[str] | None = "e8a4c1f7d3b6"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade(name: str = "") -> None:
    if name:
        return
    op.create_table(
        "cognition_cycle_run",
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        sa.Column("bot_id", sa.String(length=32), nullable=False),
        sa.Column("scope_kind", sa.String(length=16), nullable=False),
        sa.Column("scope_id", sa.String(length=64), nullable=False),
        sa.Column("trigger", sa.String(length=16), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("outcome", sa.String(length=16), nullable=False),
        sa.Column("merged", sa.Integer(), nullable=False),
        sa.Column("near", sa.Integer(), nullable=False),
        sa.Column("ended", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.String(length=200), nullable=False),
        sa.Column("rounds", sa.Integer(), nullable=False),
        sa.Column("prompt_tokens", sa.BigInteger(), nullable=False),
        sa.Column("completion_tokens", sa.BigInteger(), nullable=False),
        sa.Column("reserved_tokens", sa.BigInteger(), nullable=False),
        sa.Column("tool_calls", sa.Integer(), nullable=False),
        sa.Column("changes", sa.Text(), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("message_to_user", sa.Text(), nullable=True),
        sa.Column("message_sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cognition_cycle_run")),
        info={"bind_key": "amrita_plugin_cognition"},
    )
    with op.batch_alter_table("cognition_cycle_run", schema=None) as batch_op:
        batch_op.create_index("ix_cognition_cycle_run_bot", ["bot_id", "started_at"], unique=False)
        batch_op.create_index("ix_cognition_cycle_run_chat", ["bot_id", "scope_kind", "scope_id"], unique=False)


def downgrade(name: str = "") -> None:
    if name:
        return
    # the previous release knows no cycle runs: their usage and summaries go with the table
    with op.batch_alter_table("cognition_cycle_run", schema=None) as batch_op:
        batch_op.drop_index("ix_cognition_cycle_run_chat")
        batch_op.drop_index("ix_cognition_cycle_run_bot")
    op.drop_table("cognition_cycle_run")
