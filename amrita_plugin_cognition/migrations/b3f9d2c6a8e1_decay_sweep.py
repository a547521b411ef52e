"""decay_sweep: a memory the user asked to keep (never decays)

迁移 ID: b3f9d2c6a8e1
父迁移: c7e3b5a9d2f1
创建时间: 2026-12-06 01:00:00.000000

"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = "b3f9d2c6a8e1"
down_revision: str | Sequence[str] | None = "c7e3b5a9d2f1"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# A plain ADD COLUMN on both databases (no batch rebuild of cognition_memory: its ids, which the
# keyword index, the vectors and the barriers name, stay where they are). The server default
# fills the existing rows and stays: a process of the previous release still writing during an
# upgrade writes rows without the column. The status "expired" needs no schema change (a string).


def upgrade(name: str = "") -> None:
    if name:
        return
    op.add_column("cognition_memory", sa.Column("keep", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade(name: str = "") -> None:
    if name:
        return
    # the previous release knows no "expired" (its status enum would refuse the rows): expired
    # memories are out of both indices already and on their way to purge, so they are purged now
    op.execute("DELETE FROM cognition_memory WHERE status = 'expired'")
    with op.batch_alter_table("cognition_memory", schema=None, table_kwargs={"sqlite_autoincrement": True}) as batch_op:
        batch_op.drop_column("keep")
