"""The memory bank: facts, the lineage of merged facts, forget barriers."""

from __future__ import annotations

from datetime import datetime

from nonebot_plugin_orm import Model
from sqlalchemy import Boolean, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from .types import ID, UTCDateTime


class MemoryRow(Model):
    """One fact of the memory bank, whoever wrote it."""

    __tablename__ = "cognition_memory"
    __table_args__ = (
        Index("ix_cognition_memory_scope", "bot_id", "scope_kind", "scope_id", "status"),
        Index("ix_cognition_memory_speaker", "bot_id", "speaker_id"),
        Index("ix_cognition_memory_subject", "bot_id", "subject_id"),
        Index("ix_cognition_memory_hash", "content_hash"),
        Index("ix_cognition_memory_updated", "updated_at"),
        # a version's newer versions and a merge's sources (a forget's closure, a delete-all, a page's lineage)
        Index("ix_cognition_memory_superseded_by", "superseded_by"),
        # Ids are never reused (forget barriers refer to them): AUTOINCREMENT on SQLite.
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(ID, primary_key=True, autoincrement=True)
    bot_id: Mapped[str] = mapped_column(String(32))
    scope_kind: Mapped[str] = mapped_column(String(16))
    scope_id: Mapped[str] = mapped_column(String(64))
    speaker_id: Mapped[str] = mapped_column(String(64), default="")
    speaker_name: Mapped[str] = mapped_column(String(128), default="")
    subject_id: Mapped[str] = mapped_column(String(64), default="")
    subject_name: Mapped[str] = mapped_column(String(128), default="")
    text: Mapped[str] = mapped_column(Text)
    kind: Mapped[str] = mapped_column(String(16), default="fact")
    tags: Mapped[str] = mapped_column(Text, default="[]")  # JSON list
    importance: Mapped[str] = mapped_column(String(8), default="medium")
    provenance: Mapped[str] = mapped_column(String(16), default="user_stated")
    source: Mapped[str] = mapped_column(Text, default="{}")  # JSON object
    happened_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    recorded_at: Mapped[datetime] = mapped_column(UTCDateTime())
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())
    status: Mapped[str] = mapped_column(String(16), default="active")
    superseded_by: Mapped[int | None] = mapped_column(ID, nullable=True)
    invalid_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    content_hash: Mapped[str] = mapped_column(String(64))
    #: The user asked to keep it (``/memory keep``): the decay sweep never demotes or retires it.
    keep: Mapped[bool] = mapped_column(Boolean, default=False)


class MemorySourceRow(Model):
    """Lineage of a merge: the consolidated memory ``memory_id`` was built from ``source_id``
    (each source is also marked ``superseded_by`` it). Indexed both ways: what a memory was built
    from, and what was built from a memory (a forget of either takes the other)."""

    __tablename__ = "cognition_memory_source"
    __table_args__ = (Index("ix_cognition_memory_source_source", "source_id"),)

    memory_id: Mapped[int] = mapped_column(ID, primary_key=True, autoincrement=False)
    source_id: Mapped[int] = mapped_column(ID, primary_key=True, autoincrement=False)
    bot_id: Mapped[str] = mapped_column(String(32))


class BarrierRow(Model):
    """A forget barrier: what was forgotten (by id and content hash) never comes back."""

    __tablename__ = "cognition_barrier"
    __table_args__ = (Index("ix_cognition_barrier_hash", "content_hash"),)

    id: Mapped[int] = mapped_column(ID, primary_key=True, autoincrement=True)
    memory_id: Mapped[int | None] = mapped_column(ID, nullable=True, index=True)
    content_hash: Mapped[str] = mapped_column(String(64))
    bot_id: Mapped[str] = mapped_column(String(32))
    reason: Mapped[str] = mapped_column(String(64), default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
