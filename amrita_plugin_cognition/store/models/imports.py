"""What the importers brought in: one fingerprint per source record, so an import runs once."""

from __future__ import annotations

from datetime import datetime

from nonebot_plugin_orm import Model
from sqlalchemy import String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from .types import ID, UTCDateTime


class ImportRecordRow(Model):
    """One record an importer brought in (``engine/imports.py``): the fingerprint of the source
    record (a hash of the importer, its path and id, and its content; never the content) and what
    it became, so that a second run of the same import writes nothing new and a failed run resumes.
    Kept after an erasure on purpose: it holds no text, and it stops a re-import from bringing an
    erased record back (the forget barrier refuses it too)."""

    __tablename__ = "cognition_import_record"
    __table_args__ = (UniqueConstraint("bot_id", "importer", "fingerprint", name="uq_cognition_import_record"),)

    id: Mapped[int] = mapped_column(ID, primary_key=True, autoincrement=True)
    bot_id: Mapped[str] = mapped_column(String(32))
    #: "amrita-plugin-memory" or "undefined".
    importer: Mapped[str] = mapped_column(String(32))
    #: The kind of record: "memory", "memo", "knowledge", "profile", "suggestion", "note", "pin", "job".
    kind: Mapped[str] = mapped_column(String(16))
    #: sha256 hex of (importer, source path, record id, content).
    fingerprint: Mapped[str] = mapped_column(String(64))
    #: What it became: "memory:12", "pin:4", "knowledge:3", "memo", "profile" (never a chat key
    #: or a QQ number: the row outlives a delete-all of the person).
    target: Mapped[str] = mapped_column(String(128), default="")
    at: Mapped[datetime] = mapped_column(UTCDateTime())
