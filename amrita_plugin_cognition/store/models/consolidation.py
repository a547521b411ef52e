"""Consolidation: each chat's activity (the idle-window planner's heat maps) and the cycles' runs."""

from __future__ import annotations

from datetime import datetime

from nonebot_plugin_orm import Model
from sqlalchemy import BigInteger, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from .types import ID, UTCDateTime


class ChatActivityRow(Model):
    """When a chat is busy (``domain/chat_activity.py``): its decayed heat maps and the penalty the
    idle-window planner reads. Counts of messages by time of day, never their content; written by
    the activity flush (``store/chat_activity.py``), deleted with the chat's or its user's data."""

    __tablename__ = "cognition_chat_activity"

    bot_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    scope_kind: Mapped[str] = mapped_column(String(16), primary_key=True)
    scope_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    #: JSON list of 84 decayed counts, index ``weekday * 12 + slot`` in the planner's zone.
    fine_counts: Mapped[str] = mapped_column(Text)
    #: JSON list of 12 decayed counts, index ``slot``.
    coarse_counts: Mapped[str] = mapped_column(Text)
    #: The moment the counts are valued at (the decay reference); None before the first message.
    decayed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    #: The first message seen: the days of history are counted from it.
    first_observed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    last_observed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    #: The penalty: messages since the last successful consolidation cycle.
    messages_since_cycle: Mapped[int] = mapped_column(BigInteger, default=0)
    last_cycle_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())
    #: The zone the maps were counted in ("": before it was recorded; read as the zone in force).
    zone: Mapped[str] = mapped_column(String(64), default="")


class CycleRunRow(Model):
    """One run of a chat's consolidation cycle (``engine/judgement.py``): what the pre-pass did and
    what the judgement step (the model) did or why it did not run, with its tokens, so that each
    bot account's daily budget is a sum over its rows of the day and ``status`` shows the last runs.
    ``summary`` and ``message_to_user`` are the model's words about this chat: blanked by a forget
    in the chat, deleted with the chat's (a private chat: its user's) data."""

    __tablename__ = "cognition_cycle_run"
    __table_args__ = (
        Index("ix_cognition_cycle_run_bot", "bot_id", "started_at"),
        Index("ix_cognition_cycle_run_chat", "bot_id", "scope_kind", "scope_id"),
    )

    id: Mapped[int] = mapped_column(ID, primary_key=True, autoincrement=True)
    bot_id: Mapped[str] = mapped_column(String(32))
    scope_kind: Mapped[str] = mapped_column(String(16))
    scope_id: Mapped[str] = mapped_column(String(64))
    #: "scheduled" (a cycle job) or "command" (``/memory dmn``, ``ambot cognition consolidate``).
    trigger: Mapped[str] = mapped_column(String(16))
    started_at: Mapped[datetime] = mapped_column(UTCDateTime())
    #: None while the judgement step runs (its ``reserved_tokens`` count against the day).
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    #: The cycle's: "running", "done", "yielded" (a message came in) or "lost" (its job's lease was taken).
    outcome: Mapped[str] = mapped_column(String(16))
    #: Exact-duplicate merges written by the pre-pass, near clusters it proposed, and the pairs it
    #: proposed because only their wording kept them apart.
    merged: Mapped[int] = mapped_column(Integer, default=0)
    near: Mapped[int] = mapped_column(Integer, default=0)
    wording: Mapped[int] = mapped_column(Integer, default=0)
    #: How the judgement step ended (``llm/agent_types.Ended``), or "skipped" / "unavailable" / "running".
    ended: Mapped[str] = mapped_column(String(16))
    #: Why it was skipped (``domain/judgement.py``'s codes) or what failed (English, short); "" when it ran.
    reason: Mapped[str] = mapped_column(String(200), default="")
    rounds: Mapped[int] = mapped_column(Integer, default=0)
    prompt_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    completion_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    #: The step's token budget while it runs (0 once finished: then its tokens count).
    reserved_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    tool_calls: Mapped[int] = mapped_column(Integer, default=0)
    #: JSON object: what the step's tools changed, by kind ({"merged": 2, "tags": 1}).
    changes: Mapped[str] = mapped_column(Text, default="{}")
    #: The model's summary of the run (at most 500 characters).
    summary: Mapped[str] = mapped_column(Text, default="")
    #: A message the agent left for the private chat's user (``allow_send_to_user``), and when it went.
    message_to_user: Mapped[str | None] = mapped_column(Text, nullable=True)
    message_sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
