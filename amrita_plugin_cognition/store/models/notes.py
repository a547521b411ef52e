"""What a chat keeps besides facts: the pinned memo and its revisions, pins, the turn notes and the transcript."""

from __future__ import annotations

from datetime import datetime

from nonebot_plugin_orm import Model
from sqlalchemy import Boolean, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from .types import ID, UTCDateTime


class MemoRow(Model):
    """The pinned memo of one chat."""

    __tablename__ = "cognition_memo"
    __table_args__ = (UniqueConstraint("bot_id", "scope_kind", "scope_id", name="uq_cognition_memo_scope"),)

    id: Mapped[int] = mapped_column(ID, primary_key=True, autoincrement=True)
    bot_id: Mapped[str] = mapped_column(String(32))
    scope_kind: Mapped[str] = mapped_column(String(16))
    scope_id: Mapped[str] = mapped_column(String(64))
    content: Mapped[str] = mapped_column(Text, default="")
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())
    updated_by: Mapped[str] = mapped_column(String(64), default="")


class MemoRevisionRow(Model):
    """A replaced version of a chat's pinned memo (the last ``memo_revisions_keep`` are kept)."""

    __tablename__ = "cognition_memo_revision"
    __table_args__ = (Index("ix_cognition_memo_revision_scope", "bot_id", "scope_kind", "scope_id"),)

    id: Mapped[int] = mapped_column(ID, primary_key=True, autoincrement=True)
    bot_id: Mapped[str] = mapped_column(String(32))
    scope_kind: Mapped[str] = mapped_column(String(16))
    scope_id: Mapped[str] = mapped_column(String(64))
    content: Mapped[str] = mapped_column(Text, default="")
    #: When and by whom this version was written.
    written_at: Mapped[datetime] = mapped_column(UTCDateTime())
    written_by: Mapped[str] = mapped_column(String(64), default="")
    #: When and by whom it was replaced.
    replaced_at: Mapped[datetime] = mapped_column(UTCDateTime())
    replaced_by: Mapped[str] = mapped_column(String(64), default="")


class PinRow(Model):
    """A reminder or todo the bot keeps for itself in one chat."""

    __tablename__ = "cognition_pin"
    __table_args__ = (Index("ix_cognition_pin_scope", "bot_id", "scope_kind", "scope_id"),)

    id: Mapped[int] = mapped_column(ID, primary_key=True, autoincrement=True)
    bot_id: Mapped[str] = mapped_column(String(32))
    scope_kind: Mapped[str] = mapped_column(String(16))
    scope_id: Mapped[str] = mapped_column(String(64))
    content: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())
    created_by: Mapped[str] = mapped_column(String(64), default="")


class NoteRow(Model):
    """A chat's short-term note: the ``end`` tool's memo of one turn (the last few are injected)."""

    __tablename__ = "cognition_note"
    __table_args__ = (Index("ix_cognition_note_scope", "bot_id", "scope_kind", "scope_id", "id"),)

    id: Mapped[int] = mapped_column(ID, primary_key=True, autoincrement=True)
    bot_id: Mapped[str] = mapped_column(String(32))
    scope_kind: Mapped[str] = mapped_column(String(16))
    scope_id: Mapped[str] = mapped_column(String(64))
    user_id: Mapped[str] = mapped_column(String(64), default="")
    user_name: Mapped[str] = mapped_column(String(128), default="")
    content: Mapped[str] = mapped_column(Text)
    #: The time of the message the note sums up.
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    #: The ids of the messages the note sums up (JSON list): a forget of a fact said in one of
    #: them takes the note with it (``engine/corrections.py``).
    message_ids: Mapped[str] = mapped_column(Text, default="[]")


class TranscriptRow(Model):
    """One answered turn of a chat: the input and the bot's reply. Turns that ended without the
    ``end`` tool wait here (``pending``) until the chat pauses or the batch is full; then one
    historian job extracts their observations. The last few turns of a chat are the recent
    messages an ``end`` job carries for disambiguation."""

    __tablename__ = "cognition_transcript"
    __table_args__ = (
        Index("ix_cognition_transcript_scope", "bot_id", "scope_kind", "scope_id", "id"),
        Index("ix_cognition_transcript_pending", "pending", "bot_id", "scope_kind", "scope_id"),
    )

    id: Mapped[int] = mapped_column(ID, primary_key=True, autoincrement=True)
    bot_id: Mapped[str] = mapped_column(String(32))
    scope_kind: Mapped[str] = mapped_column(String(16))
    scope_id: Mapped[str] = mapped_column(String(64))
    user_id: Mapped[str] = mapped_column(String(64), default="")
    user_name: Mapped[str] = mapped_column(String(128), default="")
    message_id: Mapped[str] = mapped_column(String(64), default="")
    input_text: Mapped[str] = mapped_column(Text, default="")
    reply_text: Mapped[str] = mapped_column(Text, default="")
    said_at: Mapped[datetime] = mapped_column(UTCDateTime())
    #: Waiting for transcript extraction (a turn that called ``end`` never is).
    pending: Mapped[bool] = mapped_column(Boolean, default=False)
