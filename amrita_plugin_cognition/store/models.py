"""ORM models of the authority store (nonebot-plugin-orm; SQLite by default, PostgreSQL when grown).

Datetimes are stored in UTC (``UTCDateTime`` converts an aware value of any offset on the way in:
SQLite keeps no offset, so a local time would otherwise be stored hours off). No server-side
defaults: every value is set by the repository, so the schema behaves the same on every database
and under ``orm sync``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from nonebot_plugin_orm import Model
from sqlalchemy import BigInteger, Boolean, DateTime, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from ..domain.clock import UTC

#: The width of every name column (a speaker's, a subject's, a note's or a turn's user, a card's).
#: A QQ group card may be longer, and PostgreSQL refuses a whole write for one name too long.
NAME_COLUMN_CHARS = 128


def fit_name(name: str) -> str:
    """A display name cut to its column."""
    return name[:NAME_COLUMN_CHARS]


class UTCDateTime(TypeDecorator[datetime]):
    """``UTCDateTime()`` whose aware values are converted to UTC before they are bound
    (columns and the values compared with them); naive values are taken as UTC already."""

    impl = DateTime(timezone=True)
    cache_ok = True

    @property
    def python_type(self) -> type[datetime]:
        return datetime

    def process_bind_param(self, value: Any, dialect: Dialect) -> Any:
        if isinstance(value, datetime):
            return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return value


# SQLite only auto-increments INTEGER PRIMARY KEY; PostgreSQL gets a BIGINT identity.
_ID = BigInteger().with_variant(Integer(), "sqlite")


class MemoryRow(Model):
    """One fact of the memory bank, whoever wrote it."""

    __tablename__ = "cognition_memory"
    __table_args__ = (
        Index("ix_cognition_memory_scope", "bot_id", "scope_kind", "scope_id", "status"),
        Index("ix_cognition_memory_speaker", "bot_id", "speaker_id"),
        Index("ix_cognition_memory_subject", "bot_id", "subject_id"),
        Index("ix_cognition_memory_hash", "content_hash"),
        Index("ix_cognition_memory_updated", "updated_at"),
        # Ids are never reused (forget barriers refer to them): AUTOINCREMENT on SQLite.
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(_ID, primary_key=True, autoincrement=True)
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
    superseded_by: Mapped[int | None] = mapped_column(_ID, nullable=True)
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

    memory_id: Mapped[int] = mapped_column(_ID, primary_key=True, autoincrement=False)
    source_id: Mapped[int] = mapped_column(_ID, primary_key=True, autoincrement=False)
    bot_id: Mapped[str] = mapped_column(String(32))


class MemoRow(Model):
    """The pinned memo of one chat."""

    __tablename__ = "cognition_memo"
    __table_args__ = (UniqueConstraint("bot_id", "scope_kind", "scope_id", name="uq_cognition_memo_scope"),)

    id: Mapped[int] = mapped_column(_ID, primary_key=True, autoincrement=True)
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

    id: Mapped[int] = mapped_column(_ID, primary_key=True, autoincrement=True)
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

    id: Mapped[int] = mapped_column(_ID, primary_key=True, autoincrement=True)
    bot_id: Mapped[str] = mapped_column(String(32))
    scope_kind: Mapped[str] = mapped_column(String(16))
    scope_id: Mapped[str] = mapped_column(String(64))
    content: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())
    created_by: Mapped[str] = mapped_column(String(64), default="")


class OutboxRow(Model):
    """Pending vector-index work: written in the same transaction as the fact it concerns."""

    __tablename__ = "cognition_outbox"
    __table_args__ = (Index("ix_cognition_outbox_due", "state", "next_attempt_at"),)

    id: Mapped[int] = mapped_column(_ID, primary_key=True, autoincrement=True)
    memory_id: Mapped[int] = mapped_column(_ID, index=True)
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


class BarrierRow(Model):
    """A forget barrier: what was forgotten (by id and content hash) never comes back."""

    __tablename__ = "cognition_barrier"
    __table_args__ = (Index("ix_cognition_barrier_hash", "content_hash"),)

    id: Mapped[int] = mapped_column(_ID, primary_key=True, autoincrement=True)
    memory_id: Mapped[int | None] = mapped_column(_ID, nullable=True, index=True)
    content_hash: Mapped[str] = mapped_column(String(64))
    bot_id: Mapped[str] = mapped_column(String(32))
    reason: Mapped[str] = mapped_column(String(64), default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class MetaRow(Model):
    """Key-value facts about the store itself: embedding fingerprint, vector generation."""

    __tablename__ = "cognition_meta"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class NoteRow(Model):
    """A chat's short-term note: the ``end`` tool's memo of one turn (the last few are injected)."""

    __tablename__ = "cognition_note"
    __table_args__ = (Index("ix_cognition_note_scope", "bot_id", "scope_kind", "scope_id", "id"),)

    id: Mapped[int] = mapped_column(_ID, primary_key=True, autoincrement=True)
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

    id: Mapped[int] = mapped_column(_ID, primary_key=True, autoincrement=True)
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

    id: Mapped[int] = mapped_column(_ID, primary_key=True, autoincrement=True)
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


class ChangeRow(Model):
    """A bot account's change counter (``store/changes.py``): bumped in the transaction of every
    change to its stored content, so that other processes drop what they cached of it within
    seconds. Key ``*`` stands for every bot account (a restore). Process coordination, not data:
    never backed up, never erased."""

    __tablename__ = "cognition_change"

    bot_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    version: Mapped[int] = mapped_column(BigInteger)
    changed_at: Mapped[datetime] = mapped_column(UTCDateTime())


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

    id: Mapped[int] = mapped_column(_ID, primary_key=True, autoincrement=True)
    bot_id: Mapped[str] = mapped_column(String(32))
    #: e.g. "delete_all_chat", "delete_all_user", "delete_all_bot", "switch_off", "optout".
    action: Mapped[str] = mapped_column(String(32))
    #: Who asked: a QQ number, or "cli".
    actor: Mapped[str] = mapped_column(String(64), default="")
    #: What it applied to: a chat key ("group:123"), a user id, or the bot account.
    target: Mapped[str] = mapped_column(String(128), default="")
    count: Mapped[int] = mapped_column(Integer, default=0)
    at: Mapped[datetime] = mapped_column(UTCDateTime())


class ProfileRow(Model):
    """One part of a profile card: a group's card, or a user's group-visible or private part
    (``domain/profiles.py``). The versions it replaced are ``ProfileRevisionRow``."""

    __tablename__ = "cognition_profile"
    __table_args__ = (
        UniqueConstraint("bot_id", "entity_type", "entity_id", "part", name="uq_cognition_profile_entity"),
    )

    id: Mapped[int] = mapped_column(_ID, primary_key=True, autoincrement=True)
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

    id: Mapped[int] = mapped_column(_ID, primary_key=True, autoincrement=True)
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


class LLMUsageRow(Model):
    """What the plugin's LLM calls did, per day (in the configured zone) and purpose, summed over
    every process that shares the database (the bot, the CLI): what ``status`` shows. One upsert
    per call; the calls are background work (historian, card merges), never the chat's turn."""

    __tablename__ = "cognition_llm_usage"

    #: ``YYYY-MM-DD`` in the configured time zone.
    day: Mapped[str] = mapped_column(String(10), primary_key=True)
    #: ``historian_rewrite``, ``historian_extract``, ``profile_merge`` …
    purpose: Mapped[str] = mapped_column(String(32), primary_key=True)
    calls: Mapped[int] = mapped_column(Integer, default=0)
    failures: Mapped[int] = mapped_column(Integer, default=0)
    retries: Mapped[int] = mapped_column(Integer, default=0)
    timeouts: Mapped[int] = mapped_column(Integer, default=0)
    invalid_outputs: Mapped[int] = mapped_column(Integer, default=0)
    prompt_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    completion_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    latency_ms: Mapped[int] = mapped_column(BigInteger, default=0)
    #: English reason of the day's last failed call ("" when none failed).
    last_error: Mapped[str] = mapped_column(Text, default="")
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())


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


class KnowledgeRow(Model):
    """One entry of a bot account's knowledge base (``domain/knowledge.py``): general knowledge
    written by the consolidation cycle, read by chat users who hold ``cognition.knowledge``. The
    versions it replaced are ``KnowledgeRevisionRow``."""

    __tablename__ = "cognition_knowledge"
    __table_args__ = (Index("ix_cognition_knowledge_bot", "bot_id", "state"),)

    id: Mapped[int] = mapped_column(_ID, primary_key=True, autoincrement=True)
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

    id: Mapped[int] = mapped_column(_ID, primary_key=True, autoincrement=True)
    bot_id: Mapped[str] = mapped_column(String(32))
    entry_id: Mapped[int] = mapped_column(_ID)
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

    id: Mapped[int] = mapped_column(_ID, primary_key=True, autoincrement=True)
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

    id: Mapped[int] = mapped_column(_ID, primary_key=True, autoincrement=True)
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
    #: Exact-duplicate merges written by the pre-pass, near clusters it proposed.
    merged: Mapped[int] = mapped_column(Integer, default=0)
    near: Mapped[int] = mapped_column(Integer, default=0)
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


class ImportRecordRow(Model):
    """One record an importer brought in (``engine/imports.py``): the fingerprint of the source
    record (a hash of the importer, its path and id, and its content; never the content) and what
    it became, so that a second run of the same import writes nothing new and a failed run resumes.
    Kept after an erasure on purpose: it holds no text, and it stops a re-import from bringing an
    erased record back (the forget barrier refuses it too)."""

    __tablename__ = "cognition_import_record"
    __table_args__ = (UniqueConstraint("bot_id", "importer", "fingerprint", name="uq_cognition_import_record"),)

    id: Mapped[int] = mapped_column(_ID, primary_key=True, autoincrement=True)
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
