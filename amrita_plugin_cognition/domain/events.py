"""What a committed unit of work changed: the after-commit handlers react to these.

Use cases record events on their unit of work; the unit of work hands them to the engine's
handlers only once the transaction has committed (a rolled-back change has no effects). So a
write from the bot, the CLI, the harness, an importer or a test triggers the same effects.
"""

from __future__ import annotations

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
    """A chat's pinned memo or pins changed."""

    bot_id: str
    scope: Scope


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
    ``entity_type`` and ``entity_id`` (both parts of a user), or any card of the bot when empty."""

    bot_id: str
    entity_type: str = ""
    entity_id: str = ""


@dataclass(frozen=True, slots=True)
class StoreReplaced:
    """Everything may have changed at once (a backup was restored)."""


Event = (
    IndexWorkQueued | MemoriesChanged | NotesChanged | JobsQueued | SwitchesChanged | ProfilesChanged | StoreReplaced
)
