"""``engine.governance``: who may keep what: forgetting, delete-all, switches and opt-outs, inspection, the audit
record, backups and restores."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...domain.erasure import ErasureTarget
    from ...domain.permissions import Actor, Operator
    from ...domain.records import ChatContext, MemoryRecord, Scope
    from ...store.audit import AuditEntry
    from ..backup import BackupInfo
    from ..browse import ChatSummary
    from ..erasure import ErasureReport
    from ..inspection import Inspected, InspectFilter
    from ..switches import SwitchChange
    from ..why import WhyChain

from .base import UseCases, _Service

if TYPE_CHECKING:
    from .. import backup as _backup
    from .. import browse as _browse
    from .. import chat_memories as _chat
    from .. import corrections as _corrections
    from .. import erasure as _erasure
    from .. import inspection as _inspection
    from .. import switches as _switches
    from .. import why as _why
else:  # imported on the first call into them (``base.UseCases``)
    _backup = UseCases("backup")
    _browse = UseCases("browse")
    _chat = UseCases("chat_memories")
    _corrections = UseCases("corrections")
    _erasure = UseCases("erasure")
    _inspection = UseCases("inspection")
    _switches = UseCases("switches")
    _why = UseCases("why")


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

    async def forget_in_chat(
        self, actor: Operator, bot_id: str, scope: Scope, memory_id: int, now: datetime | None = None
    ) -> MemoryRecord:
        """The operator's (the consolidation cycle's) forget of a fact of one chat, with its lineage."""
        return await _corrections.forget_in_chat(self._engine, actor, bot_id, scope, memory_id, now)

    async def barred_in(self, bot_id: str, scope: Scope, texts: Sequence[str]) -> bool:
        """Whether a piece of any of ``texts`` hashes like a fact forgotten in this chat."""
        return await _chat.barred_in(self._engine, bot_id, scope, texts)

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

    async def bot_accounts(self) -> dict[str, int]:
        """Bot account → how many facts it holds (the owner's page)."""
        return await _browse.bot_accounts(self._engine)

    async def chats(self, bot_id: str) -> builtins.list[ChatSummary]:
        """One bot account's chats with their facts by status and whether memory is on there."""
        return await _browse.chats(self._engine, bot_id)

    async def why(self, bot_id: str, memory_id: int) -> WhyChain:
        """Why the bot remembers this: the fact's chain from what the store still keeps."""
        return await _why.why(self._engine, bot_id, memory_id)

    async def record_action(
        self, bot_id: str, action: str, actor: Operator, target: str, count: int = 1, now: datetime | None = None
    ) -> None:
        """An audit record of an operator's action that its use case does not record itself."""
        await _inspection.record_action(self._engine, bot_id, action, actor.name, target, count, now)

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
