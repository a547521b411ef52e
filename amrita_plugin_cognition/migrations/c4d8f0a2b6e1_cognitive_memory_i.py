"""cognitive memory I: short-term notes, the job queue, the transcript

迁移 ID: c4d8f0a2b6e1
父迁移: a7c3e91d5b20
创建时间: 2026-12-01 10:40:00.000000

"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = "c4d8f0a2b6e1"
down_revision: str | Sequence[str] | None = "a7c3e91d5b20"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
_BIND = {"bind_key": "amrita_plugin_cognition"}


def upgrade(name: str = "") -> None:
    if name:
        return
    op.create_table(
        "cognition_note",
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        sa.Column("bot_id", sa.String(length=32), nullable=False),
        sa.Column("scope_kind", sa.String(length=16), nullable=False),
        sa.Column("scope_id", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.String(length=64), nullable=False),
        sa.Column("user_name", sa.String(length=128), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cognition_note")),
        info=_BIND,
    )
    with op.batch_alter_table("cognition_note", schema=None) as batch_op:
        batch_op.create_index("ix_cognition_note_scope", ["bot_id", "scope_kind", "scope_id", "id"], unique=False)

    op.create_table(
        "cognition_job",
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("bot_id", sa.String(length=32), nullable=False),
        sa.Column("scope_kind", sa.String(length=16), nullable=False),
        sa.Column("scope_id", sa.String(length=64), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("state", sa.String(length=12), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=False),
        sa.Column("enqueued_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("lease_token", sa.String(length=32), nullable=True),
        sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cognition_job")),
        sqlite_autoincrement=True,
        info=_BIND,
    )
    with op.batch_alter_table("cognition_job", schema=None) as batch_op:
        batch_op.create_index("ix_cognition_job_due", ["state", "enqueued_at"], unique=False)
        batch_op.create_index("ix_cognition_job_scope", ["bot_id", "scope_kind", "scope_id"], unique=False)

    op.create_table(
        "cognition_transcript",
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        sa.Column("bot_id", sa.String(length=32), nullable=False),
        sa.Column("scope_kind", sa.String(length=16), nullable=False),
        sa.Column("scope_id", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.String(length=64), nullable=False),
        sa.Column("user_name", sa.String(length=128), nullable=False),
        sa.Column("message_id", sa.String(length=64), nullable=False),
        sa.Column("input_text", sa.Text(), nullable=False),
        sa.Column("reply_text", sa.Text(), nullable=False),
        sa.Column("said_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("pending", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cognition_transcript")),
        info=_BIND,
    )
    with op.batch_alter_table("cognition_transcript", schema=None) as batch_op:
        batch_op.create_index("ix_cognition_transcript_scope", ["bot_id", "scope_kind", "scope_id", "id"], unique=False)
        batch_op.create_index(
            "ix_cognition_transcript_pending", ["pending", "bot_id", "scope_kind", "scope_id"], unique=False
        )


def downgrade(name: str = "") -> None:
    if name:
        return
    with op.batch_alter_table("cognition_transcript", schema=None) as batch_op:
        batch_op.drop_index("ix_cognition_transcript_pending")
        batch_op.drop_index("ix_cognition_transcript_scope")
    op.drop_table("cognition_transcript")
    with op.batch_alter_table("cognition_job", schema=None) as batch_op:
        batch_op.drop_index("ix_cognition_job_scope")
        batch_op.drop_index("ix_cognition_job_due")
    op.drop_table("cognition_job")
    with op.batch_alter_table("cognition_note", schema=None) as batch_op:
        batch_op.drop_index("ix_cognition_note_scope")
    op.drop_table("cognition_note")
