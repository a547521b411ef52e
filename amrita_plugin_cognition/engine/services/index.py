"""``engine.index``: the derived vector index: draining the outbox, repairing, rebuilding, the embedding
fingerprint and the health report."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...index.embedders import Fingerprint
    from ..index_repair import RepairReport
    from ..reindex import Confirm, ReindexReport

from .base import UseCases, _Service

if TYPE_CHECKING:
    from .. import reindex as _reindex
    from .. import status as _status
else:  # imported on the first call into them (``base.UseCases``)
    _reindex = UseCases("reindex")
    _status = UseCases("status")


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

    async def status(self, check_ids: bool = True, full: bool = False) -> dict[str, Any]:
        """The health report: rows, vectors missing by id, dead outbox rows, jobs, LLM counters.
        ``full``: every chat's ids compared however many chats there are (``engine/status.py``)."""
        return await _status.status(self._engine, check_ids, full)
