"""Delete-all for a chat, a user (every chat of this bot account) or the whole bot account.

One unit of work removes everything the target covers (``store/erasure.py``) and leaves one audit
record: who asked, when, what kind of target, how many facts. Never what was deleted. The cards
left that were built from an erased fact are flagged for a rebuild in that same unit of work
(``profile_queue.queue_rebuilds``). The
confirmation is the caller's (``/memory`` asks for 确认, the CLI for ``--yes`` or a typed answer).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from ..domain.clock import aware_or_now
from ..domain.erasure import ErasureTarget
from ..domain.events import IndexWorkQueued, MemoriesChanged, NotesChanged, ProfilesChanged
from ..logs import log_event
from ..store import audit
from ..store import erasure as erasure_store
from .profile_queue import queue_rebuilds

if TYPE_CHECKING:
    from .service import CognitionEngine


@dataclass(frozen=True, slots=True)
class ErasureReport:
    target: str
    counts: dict[str, int]

    @property
    def memories(self) -> int:
        return self.counts["memories"]

    @property
    def total(self) -> int:
        return sum(self.counts.values())


async def delete_all(
    engine: CognitionEngine, target: ErasureTarget, actor: str, now: datetime | None = None
) -> ErasureReport:
    """Erase what ``target`` covers; ``actor`` (a QQ number, or "cli") goes into the audit."""
    now = aware_or_now(now)
    async with engine.unit_of_work() as uow:
        if target.kind == "chat":
            assert target.scope is not None
            await uow.lock_scope(target.bot_id, target.scope)
        counts = await erasure_store.erase(uow.session, target, f"{target.action}:{actor}", now)
        await queue_rebuilds(engine, uow, target.bot_id, counts.memory_ids, now)  # same commit
        audit.record(uow.session, target.bot_id, target.action, actor, target.label, counts.memories, now)
        uow.record(
            IndexWorkQueued(),
            MemoriesChanged(target.bot_id),
            *[NotesChanged(target.bot_id, scope) for scope in sorted(counts.chats, key=lambda scope: scope.key)],
        )
        if counts.profiles:
            uow.record(ProfilesChanged(target.bot_id))
        await uow.commit()
    engine.recent_turns.drop(target.bot_id, None if target.kind == "bot" else counts.chats)
    report = ErasureReport(target.label, counts.as_dict())
    log_event("delete_all", kind=target.kind, actor=actor, **report.counts)
    return report
