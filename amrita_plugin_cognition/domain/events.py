"""What a committed unit of work changed: the after-commit handlers react to these.

Use cases record events on their unit of work; the unit of work hands them to the engine's
handlers only once the transaction has committed (a rolled-back change has no effects). So a
write from the bot, the CLI, the harness, an importer or a test triggers the same effects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .records import Scope


@dataclass(frozen=True, slots=True)
class IndexWorkQueued:
    """Outbox rows were written: the vector index should catch up soon."""


@dataclass(frozen=True, slots=True)
class MemoriesChanged:
    """Facts of a bot were added, corrected or forgotten (per-turn caches may be stale)."""

    bot_id: str


@dataclass(frozen=True, slots=True)
class NotesChanged:
    """A chat's pinned memo, pins or short-term notes changed (written, replaced or removed)."""

    bot_id: str
    scope: Scope


@dataclass(frozen=True, slots=True)
class NoteAdded:
    """The ``end`` tool appended a short-term note to a chat: nothing was replaced or removed, so
    no other process has to drop what it cached (the one change of the hot path; see
    ``counted_changes``)."""

    bot_id: str
    scope: Scope


@dataclass(frozen=True, slots=True)
class TranscriptChanged:
    """Transcript turns were removed (a forget took the turn a fact came from, a delete-all its
    target's): the cached recent turns and inputs of the chat are stale, or (``scope`` None: a
    user's or the bot's delete-all, whose words may sit in any chat's cache) of every chat of the
    bot account."""

    bot_id: str
    scope: Scope | None = None


@dataclass(frozen=True, slots=True)
class JobsQueued:
    """Historian jobs were enqueued: the workers should look at the queue now."""


@dataclass(frozen=True, slots=True)
class SwitchesChanged:
    """A chat's memory switch or a user's opt-out of this bot account changed."""

    bot_id: str


@dataclass(frozen=True, slots=True)
class ProfilesChanged:
    """Profile cards of a bot changed (saved, restored, erased): the one named by
    ``entity_type`` and ``entity_id`` (every part of a user), or any card of the bot when empty."""

    bot_id: str
    entity_type: str = ""
    entity_id: str = ""


@dataclass(frozen=True, slots=True)
class StoreReplaced:
    """Everything may have changed at once (a backup was restored)."""


#: The key of the change counter that stands for every bot account (a restore replaces them all).
EVERY_BOT = "*"


@dataclass(frozen=True, slots=True)
class ChangesCounted:
    """The unit of work bumped these change counters (key, new version) in its transaction
    (``store/changes.py``): this process knows the change; other processes see the new version."""

    versions: tuple[tuple[str, int], ...]


Event = (
    IndexWorkQueued
    | MemoriesChanged
    | NotesChanged
    | NoteAdded
    | TranscriptChanged
    | JobsQueued
    | SwitchesChanged
    | ProfilesChanged
    | StoreReplaced
    | ChangesCounted
)


def counted_changes(events: Sequence[Event]) -> list[str]:
    """The change counters a unit of work bumps before it commits: one per bot account whose
    stored content (facts, memo, pins, notes, transcript, cards) or switches it changed, and
    ``EVERY_BOT`` for a restore. Other processes read the counters and drop what they cached of
    that bot (``engine/freshness.py``). Appending the ``end`` tool's note (``NoteAdded``) and
    queueing work bump nothing: they replace nothing another process may hold, and the hot path
    stays one insert-and-commit."""
    keys: set[str] = set()
    for event in events:
        if isinstance(event, StoreReplaced):
            keys.add(EVERY_BOT)
        elif isinstance(event, MemoriesChanged | NotesChanged | TranscriptChanged | SwitchesChanged | ProfilesChanged):
            keys.add(event.bot_id)
    return sorted(keys)
