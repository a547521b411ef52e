"""The knowledge base: entries, their kept versions, chat users' suggestions."""

from __future__ import annotations

from datetime import datetime

from nonebot_plugin_orm import Model
from sqlalchemy import Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from .types import ID, UTCDateTime


class KnowledgeRow(Model):
    """One entry of a bot account's knowledge base (``domain/knowledge.py``): general knowledge
    written by the consolidation cycle, read by chat users who hold ``cognition.knowledge``. The
    versions it replaced are ``KnowledgeRevisionRow``."""

    __tablename__ = "cognition_knowledge"
    __table_args__ = (Index("ix_cognition_knowledge_bot", "bot_id", "state"),)

    id: Mapped[int] = mapped_column(ID, primary_key=True, autoincrement=True)
    bot_id: Mapped[str] = mapped_column(String(32))
    title: Mapped[str] = mapped_column(String(128), default="")
    summary: Mapped[str] = mapped_column(Text, default="")
    body: Mapped[str] = mapped_column(Text, default="")
    #: JSON list of the memory ids the entry was derived from.
    source_ids: Mapped[str] = mapped_column(Text, default="[]")
    #: "active" (shown and indexed) or "stale" (a source was forgotten: hidden, out of the
    #: indices, until the cycle writes it again).
    state: Mapped[str] = mapped_column(String(16), default="active")
    #: Versions written so far (1 for a new entry; a revision keeps each replaced one).
    version: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())
    #: Who wrote this version: "consolidation", "cli", "api".
    updated_by: Mapped[str] = mapped_column(String(64), default="")


class KnowledgeRevisionRow(Model):
    """A replaced version of a knowledge entry (the newest ``consolidation.knowledge_revisions_keep``)."""

    __tablename__ = "cognition_knowledge_revision"
    __table_args__ = (Index("ix_cognition_knowledge_revision_entry", "bot_id", "entry_id"),)

    id: Mapped[int] = mapped_column(ID, primary_key=True, autoincrement=True)
    bot_id: Mapped[str] = mapped_column(String(32))
    entry_id: Mapped[int] = mapped_column(ID)
    version: Mapped[int] = mapped_column(Integer, default=1)
    title: Mapped[str] = mapped_column(String(128), default="")
    summary: Mapped[str] = mapped_column(Text, default="")
    body: Mapped[str] = mapped_column(Text, default="")
    source_ids: Mapped[str] = mapped_column(Text, default="[]")
    written_at: Mapped[datetime] = mapped_column(UTCDateTime())
    written_by: Mapped[str] = mapped_column(String(64), default="")
    replaced_at: Mapped[datetime] = mapped_column(UTCDateTime())
    replaced_by: Mapped[str] = mapped_column(String(64), default="")


class KnowledgeSuggestionRow(Model):
    """A chat user's suggestion for the knowledge base, waiting for the next cycle's review."""

    __tablename__ = "cognition_knowledge_suggestion"
    __table_args__ = (Index("ix_cognition_knowledge_suggestion_user", "bot_id", "user_id", "created_at"),)

    id: Mapped[int] = mapped_column(ID, primary_key=True, autoincrement=True)
    bot_id: Mapped[str] = mapped_column(String(32))
    user_id: Mapped[str] = mapped_column(String(64))
    #: The chat it was filed in (the cycle sees where it came from).
    scope_kind: Mapped[str] = mapped_column(String(16))
    scope_id: Mapped[str] = mapped_column(String(64))
    content: Mapped[str] = mapped_column(Text)
    #: "pending", "accepted" or "rejected".
    state: Mapped[str] = mapped_column(String(16), default="pending")
    #: The reviewer's short note (why accepted or rejected; which entry).
    review_note: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    reviewed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
