"""chat_activity: each chat's heat maps and penalty, for the idle-window planner

迁移 ID: a4c2e8f1b6d9
父迁移: d5e1a9c3f7b4
创建时间: 2026-12-06 01:00:00.000000

"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = "a4c2e8f1b6d9"
down_revision: str | Sequence[str] | None = "d5e1a9c3f7b4"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BIND = {"bind_key": "amrita_plugin_cognition"}


def upgrade(name: str = "") -> None:
    if name:
        return
    op.create_table(
        "cognition_chat_activity",
        sa.Column("bot_id", sa.String(length=32), nullable=False),
        sa.Column("scope_kind", sa.String(length=16), nullable=False),
        sa.Column("scope_id", sa.String(length=64), nullable=False),
        sa.Column("fine_counts", sa.Text(), nullable=False),
        sa.Column("coarse_counts", sa.Text(), nullable=False),
        sa.Column("decayed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("first_observed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_observed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("messages_since_cycle", sa.BigInteger(), nullable=False),
        sa.Column("last_cycle_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("bot_id", "scope_kind", "scope_id", name=op.f("pk_cognition_chat_activity")),
        info=_BIND,
    )


def downgrade(name: str = "") -> None:
    if name:
        return
    op.drop_table("cognition_chat_activity")
