"""governance: per-chat memory switch, per-user opt-out, audit records

迁移 ID: e2b7d91c4f03
父迁移: c4d8f0a2b6e1
创建时间: 2026-12-01 13:20:00.000000

"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = "e2b7d91c4f03"
down_revision: str | Sequence[str] | None = "c4d8f0a2b6e1"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
_BIND = {"bind_key": "amrita_plugin_cognition"}


def upgrade(name: str = "") -> None:
    if name:
        return
    op.create_table(
        "cognition_chat_switch",
        sa.Column("bot_id", sa.String(length=32), nullable=False),
        sa.Column("scope_kind", sa.String(length=16), nullable=False),
        sa.Column("scope_id", sa.String(length=64), nullable=False),
        sa.Column("memory_on", sa.Boolean(), nullable=False),
        sa.Column("changed_by", sa.String(length=64), nullable=False),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("bot_id", "scope_kind", "scope_id", name=op.f("pk_cognition_chat_switch")),
        info=_BIND,
    )
    op.create_table(
        "cognition_optout",
        sa.Column("bot_id", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.String(length=64), nullable=False),
        sa.Column("opted_out_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("bot_id", "user_id", name=op.f("pk_cognition_optout")),
        info=_BIND,
    )
    op.create_table(
        "cognition_audit",
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        sa.Column("bot_id", sa.String(length=32), nullable=False),
        sa.Column("action", sa.String(length=32), nullable=False),
        sa.Column("actor", sa.String(length=64), nullable=False),
        sa.Column("target", sa.String(length=128), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cognition_audit")),
        info=_BIND,
    )
    with op.batch_alter_table("cognition_audit", schema=None) as batch_op:
        batch_op.create_index("ix_cognition_audit_bot", ["bot_id", "id"], unique=False)


def downgrade(name: str = "") -> None:
    if name:
        return
    with op.batch_alter_table("cognition_audit", schema=None) as batch_op:
        batch_op.drop_index("ix_cognition_audit_bot")
    op.drop_table("cognition_audit")
    op.drop_table("cognition_optout")
    op.drop_table("cognition_chat_switch")
