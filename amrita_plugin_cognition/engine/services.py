"""The engine's use cases, one small service per area, reached from the facade as attributes:
``engine.memories``, ``engine.notes``, ``engine.profiles``, ``engine.governance``,
``engine.index``, ``engine.jobs``, ``engine.turns`` and ``engine.decay`` (and ``engine.knowledge``,
in ``knowledge_service.py``).

Each method is the one way callers (the bot, the CLI, the benchmarks) reach a use case; it
delegates to the module function that does the work (``writes.remember``, ``notes.add_pin`` …),
which stays where it is, takes the engine (or a ``ports`` protocol of what it needs) first, and is
what the tests may still call directly.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..domain.records import Importance
from . import backup as _backup
from . import context as _context
from . import corrections as _corrections
from . import decay as _decay
from . import duplicates as _duplicates
from . import erasure as _erasure
from . import expiry as _expiry
from . import idle_windows as _idle_windows
from . import inspection as _inspection
from . import notes as _notes
from . import profile_search as _profile_search
from . import profiles as _profiles
from . import queue as _queue
from . import recall as _recall
from . import reindex as _reindex
from . import search as _search
from . import status as _status
from . import switches as _switches
from . import turns as _turns
from . import writes as _writes
from .profiles import ANY_VERSION
from .search import DEFAULT_FLOOR

if TYPE_CHECKING:
    from ..domain.chat_activity import ChatActivity
    from ..domain.erasure import ErasureTarget
    from ..domain.idle_planner import IdleWindow
    from ..domain.permissions import Actor
    from ..domain.profiles import Card
    from ..domain.records import ChatContext, MemoryDraft, MemoryRecord, Scope
    from ..index.embedders import Fingerprint
    from ..store.audit import AuditEntry
    from ..store.profiles import ProfileFilter
    from .backup import BackupInfo
    from .context import BuiltContext
    from .decay import SweepReport
    from .duplicates import DuplicateClusters
    from .erasure import ErasureReport
    from .index_repair import RepairReport
    from .inspection import Inspected, InspectFilter
    from .notes import MemoRevision, Pin
    from .profile_search import CardSearchResult, EntityChoice
    from .profiles import CardRevision, ExportReport, ListedCard, SavedCard
    from .queue import QueuedJob
    from .ranking import RecallFilters, RecallResult
    from .reindex import Confirm, ReindexReport
    from .search import RelevanceFloor, SearchResult
    from .service import CognitionEngine
    from .switches import SwitchChange
    from .turns import EndResult, InputMessage
    from .writes import WriteResult

Target = Literal["user", "group"]


class _Service:
    def __init__(self, engine: CognitionEngine) -> None:
        self._engine = engine


class MemoryService(_Service):
    """Facts: writing them (admission, dedupe, limits), correcting, listing, recalling, searching."""

    async def remember(self, bot_id: str, drafts: Sequence[MemoryDraft], now: datetime | None = None) -> WriteResult:
        """Write drafts of one scope through admission, the barrier, dedupe and the per-chat limit."""
        return await _writes.remember(self._engine, bot_id, drafts, now)

    async def write(
        self,
        context: ChatContext,
        target: Target,
        text: str,
        importance: Importance = Importance.MEDIUM,
        tags: Sequence[str] = (),
        now: datetime | None = None,
        message_id: str = "",
        said: Sequence[str] = (),
    ) -> MemoryRecord:
        """The ``write_memory`` tool: one fact about the speaker (``user``) or the group, checked
        against the chat's switches and what the speaker asked not to remember."""
        return await _writes.write_memory(
            self._engine, context, target, text, importance, tags, now, message_id=message_id, said=said
        )

    async def duplicate_clusters(self, bot_id: str, scope: Scope) -> DuplicateClusters:
        """Near-duplicate clusters of one chat's active facts, from the stored vectors and the
        keyword tokens (no model, no embedding); exact ones marked. Changes nothing."""
        return await _duplicates.duplicate_clusters(self._engine, bot_id, scope)

    async def supersede(self, bot_id: str, old_id: int, new_id: int, now: datetime | None = None) -> None:
        """Mark ``old_id`` as replaced by ``new_id`` (an importer's or the harness's correction)."""
        await _writes.supersede(self._engine, bot_id, old_id, new_id, now)

    async def update(
        self,
        context: ChatContext,
        memory_id: int,
        text: str,
        importance: Importance | None = None,
        tags: Sequence[str] | None = None,
        now: datetime | None = None,
        message_id: str = "",
        said: Sequence[str] = (),
    ) -> MemoryRecord:
        """Correct a still-active fact: a new fact supersedes it (``ConcurrentChange`` if it changed)."""
        return await _corrections.update_memory(
            self._engine, context, memory_id, text, importance, tags, now, message_id=message_id, said=said
        )

    async def recall(
        self,
        context: ChatContext,
        queries: Sequence[str],
        now: datetime | None = None,
        top_k: int | None = None,
        filters: RecallFilters | None = None,
        use_mmr: bool = True,
        vector_deadline: float | None = None,
    ) -> RecallResult:
        """The facts a chat may see that answer the queries, ranked (keyword and vector sides)."""
        return await _recall.recall(
            self._engine, context, queries, now, top_k, filters, use_mmr=use_mmr, vector_deadline=vector_deadline
        )

    async def search(
        self,
        context: ChatContext,
        query: str,
        target: Target | None = None,
        *,
        floor: RelevanceFloor = DEFAULT_FLOOR,
        now: datetime | None = None,
    ) -> SearchResult:
        """``/memory … search``: recall, then only the facts about the query (the relevance floor)."""
        return await _search.search_memories(self._engine, context, query, target, floor=floor, now=now)

    async def list(
        self, context: ChatContext, target: Target, offset: int = 0, limit: int = 10
    ) -> tuple[builtins.list[MemoryRecord], int]:
        """One page of the chat's (``group``) or the speaker's (``user``) facts, and the total."""
        return await _corrections.list_memories(self._engine, context, target, offset, limit)


class NoteService(_Service):
    """The pinned memo of a chat (with revisions) and its pins."""

    async def read_memo(self, context: ChatContext) -> str:
        """The chat's memo ("" when none)."""
        return await _notes.read_memo(self._engine, context)

    async def update_memo(
        self, context: ChatContext, content: str, now: datetime | None = None, said: Sequence[str] = ()
    ) -> str:
        """Replace the memo (an admin's in a group); the old one is kept as a revision."""
        return await _notes.update_memo(self._engine, context, content, now, said)

    async def append_memo(
        self, context: ChatContext, addition: str, now: datetime | None = None, said: Sequence[str] = ()
    ) -> str:
        """Add a line to the memo (everyone may); returns the memo as it is now."""
        return await _notes.append_memo(self._engine, context, addition, now, said)

    async def memo_revisions(self, bot_id: str, scope: Scope) -> builtins.list[MemoRevision]:
        """The kept versions of a chat's memo, newest first."""
        return await _notes.memo_revisions(self._engine, bot_id, scope)

    async def restore_memo(
        self, bot_id: str, scope: Scope, revision_id: int, by: str = "cli", now: datetime | None = None
    ) -> str:
        """Bring a kept version back (the current memo becomes a revision first)."""
        return await _notes.restore_memo(self._engine, bot_id, scope, revision_id, by, now)

    async def list_pins(self, context: ChatContext) -> builtins.list[Pin]:
        """The chat's pins, in order."""
        return await _notes.list_pins(self._engine, context)

    async def add_pin(
        self, context: ChatContext, content: str, now: datetime | None = None, said: Sequence[str] = ()
    ) -> Pin:
        """Pin a note to the chat (everyone may)."""
        return await _notes.add_pin(self._engine, context, content, now, said)

    async def update_pin(
        self, context: ChatContext, pin_id: int, content: str, now: datetime | None = None, said: Sequence[str] = ()
    ) -> Pin:
        """Change a pin (its author, an admin, the owner or a bot admin)."""
        return await _notes.update_pin(self._engine, context, pin_id, content, now, said)

    async def delete_pin(self, context: ChatContext, pin_id: int) -> None:
        """Delete a pin (its author, an admin, the owner or a bot admin)."""
        await _notes.delete_pin(self._engine, context, pin_id)


class ProfileService(_Service):
    """Profile cards: reading the parts a chat may see, searching, saving with revisions,
    restoring, listing and exporting."""

    async def get(self, bot_id: str, entity_type: str, entity_id: str, part: str = "group") -> Card | None:
        """One part of a card as stored (None: no such card)."""
        return await _profiles.get(self._engine, bot_id, entity_type, entity_id, part)

    async def get_parts(
        self, bot_id: str, entity_type: str, entity_id: str, parts: Sequence[str] | None = None
    ) -> builtins.list[Card]:
        """The stored parts of a card (all of them, or those named)."""
        return await _profiles.get_parts(self._engine, bot_id, entity_type, entity_id, parts)

    async def visible_parts(self, context: ChatContext, entity_type: str, entity_id: str) -> builtins.list[str]:
        """The parts of a card this chat may see (the one predicate of ``domain/profile_access``)."""
        return await _profile_search.visible_parts(self._engine, context, entity_type, entity_id)

    async def search(
        self,
        context: ChatContext,
        query: str,
        entity_type: EntityChoice = "any",
        top_k: int = 5,
        *,
        floor: RelevanceFloor = DEFAULT_FLOOR,
    ) -> CardSearchResult:
        """Hybrid search over the card parts this chat may see."""
        return await _profile_search.search_cards(self._engine, context, query, entity_type, top_k, floor=floor)

    async def save(
        self,
        card: Card,
        by: str = "historian",
        now: datetime | None = None,
        expected: Card | None = ANY_VERSION,
        keep_replaced: bool = True,
    ) -> SavedCard:
        """Save a card part under its entity's lock, keeping the replaced version as a revision
        (``expected``: the version the caller read, else ``ConcurrentChange``)."""
        return await _profiles.save(self._engine, card, by, now, expected, keep_replaced)

    async def revisions(
        self, bot_id: str, entity_type: str, entity_id: str, part: str | None = None
    ) -> builtins.list[CardRevision]:
        """The kept versions of a card (one part, or every part), newest first."""
        return await _profiles.revisions(self._engine, bot_id, entity_type, entity_id, part)

    async def revision(self, bot_id: str, entity_type: str, entity_id: str, revision_id: int) -> CardRevision:
        """One kept version (``NotFound`` when there is none with that id)."""
        return await _profiles.revision(self._engine, bot_id, entity_type, entity_id, revision_id)

    async def restore(
        self,
        bot_id: str,
        entity_type: str,
        entity_id: str,
        revision_id: int,
        part: str | None = None,
        by: str = "cli",
        now: datetime | None = None,
    ) -> SavedCard:
        """Bring a kept version back (the current card is kept as a revision first)."""
        return await _profiles.restore(self._engine, bot_id, entity_type, entity_id, revision_id, part, by, now)

    async def export(self, folder: Path, bot_id: str | None = None) -> ExportReport:
        """Every card as a document, in the seed's layout under ``folder``."""
        return await _profiles.export(self._engine, folder, bot_id)

    async def list(
        self, wanted: ProfileFilter, limit: int = 100, offset: int = 0
    ) -> tuple[builtins.list[ListedCard], int]:
        """One page of the stored cards that match, and the total."""
        return await _profiles.list_cards(self._engine, wanted, limit, offset)


class GovernanceService(_Service):
    """Who may keep what: forgetting, delete-all, switches and opt-outs, inspection, the audit
    record, backups and restores."""

    async def forgettable(self, context: ChatContext, memory_id: int) -> MemoryRecord:
        """The fact this chat's speaker may forget (``NotFound`` / ``PermissionDenied`` otherwise),
        read before asking for a confirmation."""
        return await _corrections.forgettable(self._engine, context, memory_id)

    async def forget(self, context: ChatContext, memory_id: int, now: datetime | None = None) -> MemoryRecord:
        """Forget a still-active fact with every version it replaced (barriers kept)."""
        return await _corrections.forget_memory(self._engine, context, memory_id, now)

    async def delete_all(self, target: ErasureTarget, actor: Actor, now: datetime | None = None) -> ErasureReport:
        """Delete everything of a chat, a user or a bot account in one unit of work, audited, if
        ``actor`` (someone in a chat, or the ``Operator``) may: ``permissions.check_erase``."""
        return await _erasure.delete_all(self._engine, target, actor, now)

    async def memory_on(self, bot_id: str, scope: Scope) -> bool:
        """Whether memory is on in this chat (configured on and not switched off)."""
        return await _switches.memory_on(self._engine, bot_id, scope)

    async def set_chat_memory(
        self, bot_id: str, scope: Scope, on: bool, actor: Actor, now: datetime | None = None
    ) -> SwitchChange:
        """Switch a chat's memory on or off, audited, if ``actor`` may (``permissions.check_set_chat_memory``)."""
        return await _switches.set_chat_memory(self._engine, bot_id, scope, on, actor, now)

    async def switch_chat_memory(self, context: ChatContext, on: bool, now: datetime | None = None) -> SwitchChange:
        """``/memory on|off`` in a chat (an admin's in a group)."""
        return await _switches.switch_chat_memory(self._engine, context, on, now)

    async def set_opt_out(
        self, bot_id: str, user_id: str, out: bool, actor: Actor, now: datetime | None = None
    ) -> SwitchChange:
        """A user's opt-out (or back in): nothing more is kept about them. ``actor``: the user
        themselves (their chat) or the operator (``permissions.check_opt_out``)."""
        return await _switches.set_opt_out(self._engine, bot_id, user_id, out, actor, now)

    async def inspect(
        self, wanted: InspectFilter, offset: int = 0, limit: int = 20
    ) -> tuple[builtins.list[Inspected], int]:
        """One page of facts with provenance and lineage, and the total."""
        return await _inspection.inspect(self._engine, wanted, offset, limit)

    async def inspect_one(self, bot_id: str, memory_id: int) -> Inspected:
        """One fact with provenance and lineage (``NotFound`` when there is none)."""
        return await _inspection.inspect_one(self._engine, bot_id, memory_id)

    async def export_user(
        self, user_id: str, bot_id: str | None = None, now: datetime | None = None
    ) -> builtins.list[dict[str, Any]]:
        """Everything kept about one user, as documents (``json_lines`` writes them)."""
        return await _inspection.export_user(self._engine, user_id, bot_id, now)

    async def audit(self, bot_id: str | None = None, limit: int = 100) -> builtins.list[AuditEntry]:
        """The newest audit records first (of one bot account, or of all)."""
        return await _inspection.audit_entries(self._engine, bot_id, limit)

    async def create_backup(self, destination: Path | None = None) -> BackupInfo:
        """Write a backup file (into the data folder's backups unless ``destination``)."""
        return await _backup.create_backup(self._engine, destination)

    async def list_backups(self) -> builtins.list[BackupInfo]:
        """The backup files in the data folder, newest first."""
        return await _backup.list_backups(self._engine)

    async def restore_backup(self, path: Path, progress: Callable[[int, int], None] | None = None) -> dict[str, int]:
        """Replace the store with a backup's content (delete-alls since replayed); rows per table."""
        return await _backup.restore_backup(self._engine, path, progress)


class IndexService(_Service):
    """The derived vector index: draining the outbox, repairing, rebuilding, the embedding
    fingerprint and the health report."""

    async def drain(self, max_batches: int | None = None, now: datetime | None = None) -> int:
        """Apply due index work now; how many outbox rows were applied."""
        return await self._engine.index_sync.drain(max_batches, now=now)

    async def repair(self) -> RepairReport:
        """Re-queue active facts the index lacks and delete vectors SQL no longer holds."""
        return await self._engine.index_sync.repair()

    def repair_soon(self) -> None:
        """Check the index against SQL by id in the background (at startup), repairing it."""
        self._engine.index_sync.repair_soon()

    async def retry_dead(self) -> int:
        """Give the outbox rows that ran out of retries another round; how many."""
        return await self._engine.index_sync.retry_dead()

    async def reindex(self, progress: Callable[[int, int], None] | None = None, page_size: int = 1000) -> ReindexReport:
        """Rebuild into a new generation, checked by id before the switch."""
        return await _reindex.reindex(self._engine, progress, page_size)

    async def stored_fingerprint(self) -> Fingerprint | None:
        """The embedder the index was built with (None before the first build)."""
        return await _reindex.stored_fingerprint(self._engine)

    async def check_fingerprint(self, confirm: Confirm | None = None) -> str:
        """Compare the configured embedder with the index's; rebuild when confirmed
        (``EngineUnavailable`` when refused). Returns the outcome's name."""
        return await _reindex.check_fingerprint(self._engine, confirm)

    async def status(self, check_ids: bool = True) -> dict[str, Any]:
        """The health report: rows, vectors missing by id, dead outbox rows, jobs, LLM counters."""
        return await _status.status(self._engine, check_ids)


class JobService(_Service):
    """The historian's durable queue: listing, retrying and dropping jobs, and running it."""

    async def retry(self, job_ids: Sequence[int] | None = None) -> int:
        """Make failed jobs (these, or all) pending again; how many."""
        return await _queue.retry_jobs(self._engine, job_ids)

    async def drop(self, job_ids: Sequence[int] | None = None, state: str | None = None) -> int:
        """Delete jobs (these, or all of a state); how many."""
        return await _queue.drop_jobs(self._engine, job_ids, state)

    async def queued(self, state: str | None = None, limit: int = 10_000) -> builtins.list[QueuedJob]:
        """The jobs with their payloads read, in the order they were enqueued."""
        return await _queue.queued_jobs(self._engine, state, limit)

    async def facts_of(self, job_ids: set[int]) -> dict[int, builtins.list[MemoryRecord]]:
        """The active facts the historian wrote for these jobs."""
        return await _queue.facts_of_jobs(self._engine, job_ids)

    async def flush_transcripts(self, now: datetime | None = None, *, everything: bool = False) -> int:
        """Turn the transcript turns still waiting into jobs (all of them with ``everything``)."""
        return await _turns.flush_transcripts(self._engine, now, everything=everything)

    def resume(self) -> None:
        """Let the scheduler and enqueues run the historian (the bot's start)."""
        self._engine.historian.running = True

    def pause(self) -> None:
        """Keep the scheduler and enqueues from running the historian (``run_until_idle`` still does)."""
        self._engine.historian.running = False

    def wake(self) -> None:
        """The queue poll: recover stale leases, batch transcripts, start due jobs."""
        self._engine.historian.wake()

    async def stop(self) -> int:
        """Cancel running jobs and give their leases back; how many were running."""
        return await self._engine.historian.stop()

    async def settle(self) -> None:
        """Wait for the jobs in flight."""
        await self._engine.historian.settle()

    async def run_until_idle(self, now: datetime | None = None, *, flush: bool = True) -> None:
        """Run every job due at ``now`` to its end, one tick after another (demo, tests)."""
        await self._engine.historian.run_until_idle(now, flush=flush)

    async def list(self, state: str | None = None, limit: int = 50) -> builtins.list[dict[str, Any]]:
        """The jobs for operators (``ambot cognition jobs``), as plain documents."""
        return await _queue.list_jobs(self._engine, state, limit)


class TurnService(_Service):
    """A chat turn: the block it is given, the ``end`` tool, transcript capture."""

    def recall_queries(self, bot_id: str, scope: Scope, text: str, short_chars: int) -> builtins.list[str]:
        """The current input as recall queries; a short one is read with the chat's previous input."""
        return self._engine.caches.recall_queries(bot_id, scope, text, short_chars)

    async def context(
        self, context: ChatContext, queries: builtins.list[str], now: datetime | None = None
    ) -> BuiltContext:
        """The per-turn block within the turn's budget (memo, pins, notes, recalled facts)."""
        return await _context.build_context(self._engine, context, queries, now)

    async def end(
        self,
        context: ChatContext,
        memo: str,
        observations: Sequence[str],
        *,
        batch: Sequence[InputMessage],
        perspective: str = "",
        force: bool = False,
        now: datetime | None = None,
    ) -> EndResult:
        """The ``end`` tool: the turn's note and the historian's job, in one transaction."""
        return await _turns.end_turn(
            self._engine, context, memo, observations, batch=batch, perspective=perspective, force=force, now=now
        )

    async def record(self, context: ChatContext, message: InputMessage, reply: str, *, ended: bool) -> bool:
        """Capture one turn of the transcript (batched into a job unless ``end`` covered it)."""
        return await _turns.record_turn(self._engine, context, message, reply, ended=ended)


class IdleWindowService(_Service):
    """Each chat's activity (observed on every message) and the window of its next consolidation
    cycle (the idle-window planner)."""

    def observe(self, bot_id: str, scope: Scope, user_id: str, at: datetime) -> bool:
        """Count one message of a chat, in this process only (no SQL, no await: every message of
        every chat calls it); written by ``flush``. False when it was not counted (the tally is full)."""
        engine = self._engine
        tally = engine.activity_tally
        return tally.observe(bot_id, scope, user_id, at, tally.zone(engine.config))

    async def flush(self, now: datetime | None = None) -> int:
        """Write the counted messages to SQL (on a timer and when the engine closes); chats written."""
        return await _idle_windows.flush(self._engine, now)

    async def plan(self, bot_id: str, scope: Scope, now: datetime | None = None) -> IdleWindow:
        """The window (start, end) of the chat's next cycle as of ``now``, and why it was chosen."""
        return await _idle_windows.plan(self._engine, bot_id, scope, now)

    async def record_cycle(self, bot_id: str, scope: Scope, at: datetime | None = None) -> ChatActivity:
        """A cycle of the chat succeeded at ``at``: the penalty starts again from nothing."""
        return await _idle_windows.record_cycle(self._engine, bot_id, scope, at)

    async def state(self, bot_id: str, scope: Scope) -> ChatActivity:
        """The chat's heat maps and penalty as of now (stored, plus what waits to be written)."""
        return await _idle_windows.state(self._engine, bot_id, scope)


class DecayService(_Service):
    """The decay sweep (``domain/decay.py``): running it, what it retired, and what it never touches."""

    async def sweep(self, now: datetime | None = None, max_batches: int | None = None) -> SweepReport:
        """Walk the table from the cursor to its end (or ``max_batches`` batches): demote, retire, purge."""
        return await _decay.sweep(self._engine, now, max_batches)

    async def sweep_if_due(self, now: datetime | None = None) -> SweepReport | None:
        """The scheduled sweep: a pass when ``consolidation.sweep_interval_hours`` say so, else None."""
        return await _decay.sweep_if_due(self._engine, now)

    async def status(self) -> dict[str, Any]:
        """The sweep's cursor, the pass under way and the last finished pass."""
        return await _decay.sweep_status(self._engine)

    async def keep(self, context: ChatContext, memory_id: int, keep: bool = True) -> MemoryRecord:
        """Mark a memory kept (never decays) or not, if this speaker may forget it."""
        return await _expiry.set_keep(self._engine, context, memory_id, keep)

    async def expired(
        self, context: ChatContext, offset: int = 0, limit: int = 10
    ) -> tuple[builtins.list[MemoryRecord], int]:
        """One page of this chat's expired memories (its admins) and their total."""
        return await _expiry.list_expired(self._engine, context, offset, limit)

    async def restore(
        self, actor: Actor, bot_id: str | None, memory_id: int, now: datetime | None = None
    ) -> MemoryRecord:
        """Bring an expired memory back to active (refused under a forget barrier); ``bot_id``
        None: the memory's own bot account."""
        return await _expiry.restore_expired(self._engine, actor, bot_id, memory_id, now)


__all__ = [
    "DecayService",
    "GovernanceService",
    "IdleWindowService",
    "IndexService",
    "JobService",
    "MemoryService",
    "NoteService",
    "ProfileService",
    "TurnService",
]
