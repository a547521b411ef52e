"""``engine.decay``: the decay sweep (``domain/decay.py``): running it, what it retired, and what it never touches."""

from __future__ import annotations

import builtins
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...domain.permissions import Actor
    from ...domain.records import ChatContext, MemoryRecord
    from ..decay import SweepReport

from .base import UseCases, _Service

if TYPE_CHECKING:
    from .. import decay as _decay
    from .. import expiry as _expiry
else:  # imported on the first call into them (``base.UseCases``)
    _decay = UseCases("decay")
    _expiry = UseCases("expiry")


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
