"""Profile cards, one row per part, and their kept revisions."""

from __future__ import annotations

from datetime import datetime

from nonebot_plugin_orm import Model
from sqlalchemy import Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from .types import ID, UTCDateTime


class ProfileRow(Model):
    """One part of a profile card: a group's card, or a user's group-visible or private part
    (``domain/profiles.py``). The versions it replaced are ``ProfileRevisionRow``."""

    __tablename__ = "cognition_profile"
    __table_args__ = (
        UniqueConstraint("bot_id", "entity_type", "entity_id", "part", name="uq_cognition_profile_entity"),
    )

    id: Mapped[int] = mapped_column(ID, primary_key=True, autoincrement=True)
    bot_id: Mapped[str] = mapped_column(String(32))
    #: "user" or "group".
    entity_type: Mapped[str] = mapped_column(String(8))
    entity_id: Mapped[str] = mapped_column(String(64))
    #: "group" (group-visible: a group's card; a user's cross-group part), "group:<id>" (a user's
    #: part shown in that group only) or "private" (a user's private chat only).
    part: Mapped[str] = mapped_column(String(32))
    name: Mapped[str] = mapped_column(String(128), default="")
    tags: Mapped[str] = mapped_column(Text, default="[]")  # JSON list
    evaluation: Mapped[str] = mapped_column(Text, default="")
    body: Mapped[str] = mapped_column(Text, default="")
    roast: Mapped[str] = mapped_column(Text, default="")
    source_ids: Mapped[str] = mapped_column(Text, default="[]")  # JSON list of memory ids
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())
    #: Who wrote this version: "historian", "cli", a QQ number.
    updated_by: Mapped[str] = mapped_column(String(64), default="")


class ProfileRevisionRow(Model):
    """A replaced version of a card part (the last ``profiles.revisions_keep`` are kept)."""

    __tablename__ = "cognition_profile_revision"
    __table_args__ = (Index("ix_cognition_profile_revision_entity", "bot_id", "entity_type", "entity_id", "part"),)

    id: Mapped[int] = mapped_column(ID, primary_key=True, autoincrement=True)
    bot_id: Mapped[str] = mapped_column(String(32))
    entity_type: Mapped[str] = mapped_column(String(8))
    entity_id: Mapped[str] = mapped_column(String(64))
    part: Mapped[str] = mapped_column(String(32))
    name: Mapped[str] = mapped_column(String(128), default="")
    tags: Mapped[str] = mapped_column(Text, default="[]")
    evaluation: Mapped[str] = mapped_column(Text, default="")
    body: Mapped[str] = mapped_column(Text, default="")
    roast: Mapped[str] = mapped_column(Text, default="")
    source_ids: Mapped[str] = mapped_column(Text, default="[]")
    #: When and by whom this version was written.
    written_at: Mapped[datetime] = mapped_column(UTCDateTime())
    written_by: Mapped[str] = mapped_column(String(64), default="")
    #: When and by whom it was replaced.
    replaced_at: Mapped[datetime] = mapped_column(UTCDateTime())
    replaced_by: Mapped[str] = mapped_column(String(64), default="")
