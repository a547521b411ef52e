"""import_records: fingerprints of the records the importers brought in (idempotent imports)

迁移 ID: a9e4c2b7d5f3
父迁移: a7c3e9f1b5d2
创建时间: 2026-12-06 07:30:00.000000

"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = "a9e4c2b7d5f3"
down_revision: str | Sequence[str] | None = "a7c3e9f1b5d2"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade(name: str = "") -> None:
    if name:
        return
    op.create_table(
        "cognition_import_record",
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        sa.Column("bot_id", sa.String(length=32), nullable=False),
        sa.Column("importer", sa.String(length=32), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("target", sa.String(length=128), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cognition_import_record")),
        sa.UniqueConstraint("bot_id", "importer", "fingerprint", name="uq_cognition_import_record"),
        info={"bind_key": "amrita_plugin_cognition"},
    )


def downgrade(name: str = "") -> None:
    if name:
        return
    # the previous release imports nothing: the fingerprints go with the table
    op.drop_table("cognition_import_record")
