"""activity_zone_and_wording: the zone a chat's heat maps were counted in; a cycle run's wording pairs;
an index on the memories' superseded_by (lineage reads scanned the table)

迁移 ID: a7c3e9f1b5d2
父迁移: f6b2d8a4c1e9
创建时间: 2026-12-08 01:00:00.000000

"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = "a7c3e9f1b5d2"
down_revision: str | Sequence[str] | None = "f6b2d8a4c1e9"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade(name: str = "") -> None:
    if name:
        return
    # the rows there are get "" (maps read as the zone in force) and 0; then the repository sets every value
    with op.batch_alter_table("cognition_chat_activity", schema=None) as batch_op:
        batch_op.add_column(sa.Column("zone", sa.String(length=64), server_default="", nullable=False))
    with op.batch_alter_table("cognition_chat_activity", schema=None) as batch_op:
        batch_op.alter_column("zone", server_default=None)
    with op.batch_alter_table("cognition_cycle_run", schema=None) as batch_op:
        batch_op.add_column(sa.Column("wording", sa.Integer(), server_default="0", nullable=False))
    with op.batch_alter_table("cognition_cycle_run", schema=None) as batch_op:
        batch_op.alter_column("wording", server_default=None)
    with op.batch_alter_table("cognition_memory", schema=None) as batch_op:
        batch_op.create_index("ix_cognition_memory_superseded_by", ["superseded_by"], unique=False)


def downgrade(name: str = "") -> None:
    if name:
        return
    with op.batch_alter_table("cognition_memory", schema=None) as batch_op:
        batch_op.drop_index("ix_cognition_memory_superseded_by")
    with op.batch_alter_table("cognition_cycle_run", schema=None) as batch_op:
        batch_op.drop_column("wording")
    with op.batch_alter_table("cognition_chat_activity", schema=None) as batch_op:
        batch_op.drop_column("zone")
