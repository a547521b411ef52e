"""Delete-all for a chat, a user (every chat of this bot account) or the whole bot account.

One unit of work removes everything the target covers (``store/erasure.py``) and leaves one audit
record: who asked, when, what kind of target, how many facts. Never what was deleted. The cards
left that were built from an erased fact are flagged for a rebuild in that same unit of work
(``profile_queue.queue_rebuilds``). On SQLite the same transaction deletes with ``secure_delete``
on and then merges the FTS5 indices and zeroes the free pages, and after its commit the
write-ahead log is truncated (``store/sqlite.py``): the erased text cannot be read back from the
database file. The
confirmation is the caller's (``/memory`` asks for 确认, the CLI for ``--yes`` or a typed answer).
What stays by design, and what Amrita's own history keeps, the answer says (``domain/erasure.py``).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from ..domain import permissions
from ..domain.clock import aware_or_now
from ..domain.erasure import AMRITA_HISTORY, KEPT_BY_DESIGN, ErasureTarget, kept_names_line
from ..domain.events import IndexWorkQueued, MemoriesChanged, NotesChanged, ProfilesChanged, TranscriptChanged
from ..domain.people import KeptName
from ..domain.permissions import Actor
from ..domain.records import Scope
from ..errors import IndexUnavailable
from ..logs import log_event
from ..store import audit, sqlite
from ..store import erasure as erasure_store
from .knowledge import sources_removed as knowledge_sources_removed
from .profile_queue import queue_rebuilds

if TYPE_CHECKING:
    from .service import CognitionEngine


@dataclass(frozen=True, slots=True)
class ErasureReport:
    target: str
    counts: dict[str, int]
    #: A user's nicknames that were not looked for by themselves (too short, ordinary, shared).
    kept_names: list[KeptName] = field(default_factory=list)
    #: The write-ahead log was truncated (SQLite; always True elsewhere): see ``store/sqlite.py``.
    log_truncated: bool = True
    is_user: bool = False

    def kept(self) -> list[str]:
        """What stays by design, and how to remove it, in Chinese (chat and CLI answers)."""
        if not self.is_user:
            return []
        lines = list(KEPT_BY_DESIGN)
        if self.kept_names:
            lines.append(kept_names_line(self.kept_names))
        return lines

    def amrita_history(self) -> str:
        """What Amrita's own chat history keeps of the user (not this plugin's to delete)."""
        return AMRITA_HISTORY if self.is_user else ""

    @property
    def memories(self) -> int:
        return self.counts["memories"]

    @property
    def total(self) -> int:
        return sum(self.counts.values())


async def _drop_chat_vectors(engine: CognitionEngine, bot_id: str, scope: Scope) -> None:
    """Drop an erased private chat's vector collection: its vectors go at once, and its metadata
    (which names the chat, i.e. the user's QQ number) with it. The outbox's deletes for it find
    nothing left; an unreachable index is logged and the outbox still deletes the vectors later."""
    try:
        async with engine.index_sync.lock:  # not while a drain applies work to it
            generation = await engine.index_sync.current_generation(force=True)
            await asyncio.to_thread(engine.vectors.drop_chat, generation, bot_id, scope)
    except IndexUnavailable as error:
        log_event("delete_all", level=logging.WARNING, scope=scope.kind, drop_collection_failed=str(error)[:200])


async def delete_all(
    engine: CognitionEngine, target: ErasureTarget, actor: Actor, now: datetime | None = None
) -> ErasureReport:
    """Erase what ``target`` covers, if ``actor`` may (``permissions.check_erase``: asked here, so
    every entry point is held to it); the actor's name (a QQ number, or the operator's) goes into
    the audit."""
    permissions.check_erase(actor, target)
    name = permissions.actor_name(actor)
    now = aware_or_now(now)
    async with engine.unit_of_work() as uow:
        await sqlite.secure_delete_now(uow.session)
        if target.kind == "chat":
            assert target.scope is not None
            await uow.lock_scope(target.bot_id, target.scope)
        counts = await erasure_store.erase(uow.session, target, f"{target.action}:{name}", now)
        await queue_rebuilds(engine, uow, target.bot_id, counts.memory_ids, now)  # same commit
        await knowledge_sources_removed(uow, target.bot_id, counts.memory_ids, now)
        await sqlite.scrub_deleted(uow.session)
        audit.record(uow.session, target.bot_id, target.action, name, target.label, counts.memories, now)
        uow.record(
            IndexWorkQueued(),
            MemoriesChanged(target.bot_id),
            *[NotesChanged(target.bot_id, scope) for scope in sorted(counts.chats, key=lambda scope: scope.key)],
            # a user's words may sit in any chat's cached recent turns, not only where rows went
            *(
                [TranscriptChanged(target.bot_id, scope) for scope in sorted(counts.chats, key=lambda s: s.key)]
                if target.kind == "chat"
                else [TranscriptChanged(target.bot_id)]
            ),
        )
        if counts.profiles:
            uow.record(ProfilesChanged(target.bot_id))
        await uow.commit()
    # what waits to be counted for the erased chats goes too (their rows went in the transaction)
    engine.activity_tally.drop(target.bot_id, None if target.kind == "bot" else target.private_chat)
    if target.private_chat is not None and not target.private_chat.is_group:
        await _drop_chat_vectors(engine, target.bot_id, target.private_chat)
    async with engine.unit_of_work() as uow:
        truncated = await sqlite.truncate_log(uow.session)
    report = ErasureReport(
        target.label, counts.as_dict(), counts.kept_names, log_truncated=truncated, is_user=target.kind == "user"
    )
    log_event("delete_all", kind=target.kind, actor=name, log_truncated=int(truncated), **report.counts)
    return report
