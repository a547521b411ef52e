"""llm_usage: the LLM calls of every process, per day and purpose (what status shows)

迁移 ID: 5e1c7a9d3b28
父迁移: d1f6a3c9e5b7
创建时间: 2026-12-04 20:30:00.000000

"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = "5e1c7a9d3b28"
down_revision: str | Sequence[str] | None = "d1f6a3c9e5b7"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BIND = {"bind_key": "amrita_plugin_cognition"}


def upgrade(name: str = "") -> None:
    if name:
        return
    op.create_table(
        "cognition_llm_usage",
        sa.Column("day", sa.String(length=10), nullable=False),
        sa.Column("purpose", sa.String(length=32), nullable=False),
        sa.Column("calls", sa.Integer(), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("retries", sa.Integer(), nullable=False),
        sa.Column("timeouts", sa.Integer(), nullable=False),
        sa.Column("invalid_outputs", sa.Integer(), nullable=False),
        sa.Column("prompt_tokens", sa.BigInteger(), nullable=False),
        sa.Column("completion_tokens", sa.BigInteger(), nullable=False),
        sa.Column("latency_ms", sa.BigInteger(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("day", "purpose", name=op.f("pk_cognition_llm_usage")),
        info=_BIND,
    )


def downgrade(name: str = "") -> None:
    if name:
        return
    op.drop_table("cognition_llm_usage")
