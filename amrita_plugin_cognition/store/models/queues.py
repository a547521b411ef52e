"""Work that waits: the vector outbox, the job queue (historian, card merges, cycles), the change feed."""

from __future__ import annotations

from datetime import datetime

from nonebot_plugin_orm import Model
from sqlalchemy import BigInteger, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from .types import ID, UTCDateTime


class OutboxRow(Model):
    """Pending vector-index work: written in the same transaction as the fact it concerns."""

    __tablename__ = "cognition_outbox"
    __table_args__ = (Index("ix_cognition_outbox_due", "state", "next_attempt_at"),)

    id: Mapped[int] = mapped_column(ID, primary_key=True, autoincrement=True)
    memory_id: Mapped[int] = mapped_column(ID, index=True)
    operation: Mapped[str] = mapped_column(String(8))  # "upsert" | "delete"
    bot_id: Mapped[str] = mapped_column(String(32))
    scope_kind: Mapped[str] = mapped_column(String(16))
    scope_id: Mapped[str] = mapped_column(String(64))
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    #: "pending" (retried, with backoff, from ``next_attempt_at``) or "dead" (gave up after
    #: ``outbox_max_attempts``; ``status`` counts these and ``ambot cognition outbox retry`` revives them).
    state: Mapped[str] = mapped_column(String(8), default="pending")
    next_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class JobRow(Model):
    """Durable background work (historian jobs): FIFO by ``enqueued_at``, leased with an expiry.

    States: "pending" (due from ``next_attempt_at``), "processing" (leased by ``lease_token``
    until ``lease_expires_at``), "failed" (*dead*: given up after ``historian.job_max_attempts``
    attempts; kept with its error until pruned, revived by ``ambot cognition jobs retry``; the
    stored value keeps its old name, ``store/jobs.DEAD``). A completed job is deleted in the same
    transaction that writes its results."""

    __tablename__ = "cognition_job"
    __table_args__ = (
        Index("ix_cognition_job_due", "state", "enqueued_at"),
        Index("ix_cognition_job_scope", "bot_id", "scope_kind", "scope_id"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(ID, primary_key=True, autoincrement=True)
    #: "observations" (from the ``end`` tool) or "transcript" (turns that ended without it).
    kind: Mapped[str] = mapped_column(String(16))
    bot_id: Mapped[str] = mapped_column(String(32))
    scope_kind: Mapped[str] = mapped_column(String(16))
    scope_id: Mapped[str] = mapped_column(String(64))
    payload: Mapped[str] = mapped_column(Text)  # JSON object
    state: Mapped[str] = mapped_column(String(12), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str] = mapped_column(Text, default="")
    enqueued_at: Mapped[datetime] = mapped_column(UTCDateTime())
    next_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    lease_token: Mapped[str | None] = mapped_column(String(32), nullable=True)
    lease_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())


class ChangeRow(Model):
    """A bot account's change counter (``store/changes.py``): bumped in the transaction of every
    change to its stored content, so that other processes drop what they cached of it within
    seconds. Key ``*`` stands for every bot account (a restore). Process coordination, not data:
    never backed up, never erased."""

    __tablename__ = "cognition_change"

    bot_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    version: Mapped[int] = mapped_column(BigInteger)
    changed_at: Mapped[datetime] = mapped_column(UTCDateTime())
