"""Who may be remembered where: chat switches, opt-outs, the audit trail."""

from __future__ import annotations

from datetime import datetime

from nonebot_plugin_orm import Model
from sqlalchemy import Boolean, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from .types import ID, UTCDateTime


class ChatSwitchRow(Model):
    """A chat's own memory switch (``/memory off|on``): no row means on. While off nothing of the
    chat is written, injected or extracted."""

    __tablename__ = "cognition_chat_switch"

    bot_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    scope_kind: Mapped[str] = mapped_column(String(16), primary_key=True)
    scope_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    memory_on: Mapped[bool] = mapped_column(Boolean)
    #: The QQ number of who switched it last.
    changed_by: Mapped[str] = mapped_column(String(64), default="")
    changed_at: Mapped[datetime] = mapped_column(UTCDateTime())


class OptOutRow(Model):
    """A user who opted out (``/memory optout``): from then on nothing new about them is written
    in any chat of this bot account. Removed by ``/memory optin``."""

    __tablename__ = "cognition_optout"

    bot_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    user_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    opted_out_at: Mapped[datetime] = mapped_column(UTCDateTime())


class AuditRow(Model):
    """What a governance action did (who, when, how many), never what it removed."""

    __tablename__ = "cognition_audit"
    __table_args__ = (Index("ix_cognition_audit_bot", "bot_id", "id"),)

    id: Mapped[int] = mapped_column(ID, primary_key=True, autoincrement=True)
    bot_id: Mapped[str] = mapped_column(String(32))
    #: e.g. "delete_all_chat", "delete_all_user", "delete_all_bot", "switch_off", "optout".
    action: Mapped[str] = mapped_column(String(32))
    #: Who asked: a QQ number, or "cli".
    actor: Mapped[str] = mapped_column(String(64), default="")
    #: What it applied to: a chat key ("group:123"), a user id, or the bot account.
    target: Mapped[str] = mapped_column(String(128), default="")
    count: Mapped[int] = mapped_column(Integer, default=0)
    at: Mapped[datetime] = mapped_column(UTCDateTime())
