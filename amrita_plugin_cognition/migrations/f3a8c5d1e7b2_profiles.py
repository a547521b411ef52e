"""profiles: profile cards (a group's, a user's group-visible and private parts) and their revisions

迁移 ID: f3a8c5d1e7b2
父迁移: e2b7d91c4f03
创建时间: 2026-12-02 09:30:00.000000

"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = "f3a8c5d1e7b2"
down_revision: str | Sequence[str] | None = "e2b7d91c4f03"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
_BIND = {"bind_key": "amrita_plugin_cognition"}


def _card_columns() -> list[sa.Column]:
    return [
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        sa.Column("bot_id", sa.String(length=32), nullable=False),
        sa.Column("entity_type", sa.String(length=8), nullable=False),
        sa.Column("entity_id", sa.String(length=64), nullable=False),
        sa.Column("part", sa.String(length=8), nullable=False),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("tags", sa.Text(), nullable=False),
        sa.Column("evaluation", sa.Text(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("roast", sa.Text(), nullable=False),
        sa.Column("source_ids", sa.Text(), nullable=False),
    ]


def upgrade(name: str = "") -> None:
    if name:
        return
    op.create_table(
        "cognition_profile",
        *_card_columns(),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_by", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cognition_profile")),
        sa.UniqueConstraint("bot_id", "entity_type", "entity_id", "part", name="uq_cognition_profile_entity"),
        info=_BIND,
    )
    op.create_table(
        "cognition_profile_revision",
        *_card_columns(),
        sa.Column("written_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("written_by", sa.String(length=64), nullable=False),
        sa.Column("replaced_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("replaced_by", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cognition_profile_revision")),
        info=_BIND,
    )
    with op.batch_alter_table("cognition_profile_revision", schema=None) as batch_op:
        batch_op.create_index(
            "ix_cognition_profile_revision_entity", ["bot_id", "entity_type", "entity_id", "part"], unique=False
        )


def downgrade(name: str = "") -> None:
    if name:
        return
    with op.batch_alter_table("cognition_profile_revision", schema=None) as batch_op:
        batch_op.drop_index("ix_cognition_profile_revision_entity")
    op.drop_table("cognition_profile_revision")
    op.drop_table("cognition_profile")
