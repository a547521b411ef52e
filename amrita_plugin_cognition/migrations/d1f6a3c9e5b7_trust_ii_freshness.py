"""trust II: change counters between processes; a note names the messages it sums up

迁移 ID: d1f6a3c9e5b7
父迁移: b9d4e6f2a1c7
创建时间: 2026-12-03 10:00:00.000000

"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = "d1f6a3c9e5b7"
down_revision: str | Sequence[str] | None = "b9d4e6f2a1c7"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BIND = {"bind_key": "amrita_plugin_cognition"}


def upgrade(name: str = "") -> None:
    if name:
        return
    op.create_table(
        "cognition_change",
        sa.Column("bot_id", sa.String(length=32), nullable=False),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("bot_id", name=op.f("pk_cognition_change")),
        info=_BIND,
    )
    # notes written before this revision name no message: a forget cannot tell their source
    op.add_column("cognition_note", sa.Column("message_ids", sa.Text(), nullable=False, server_default="[]"))
    with op.batch_alter_table("cognition_note", schema=None) as batch_op:
        batch_op.alter_column("message_ids", server_default=None)  # the repository sets every value


def downgrade(name: str = "") -> None:
    if name:
        return
    with op.batch_alter_table("cognition_note", schema=None) as batch_op:
        batch_op.drop_column("message_ids")
    op.drop_table("cognition_change")
