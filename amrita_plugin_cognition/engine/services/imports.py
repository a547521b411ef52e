"""``engine.imports``: another memory plugin's records, written through the normal write paths."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...domain.imports import ImportItem, ImportReport

from .base import UseCases, _Service

if TYPE_CHECKING:
    from .. import imports as _imports
else:  # imported on the first call into it (``base.UseCases``)
    _imports = UseCases("imports")


class ImportService(_Service):
    """Importing records another memory plugin stored (``amrita_plugin_cognition/importers``)."""

    async def run(
        self,
        bot_id: str,
        importer: str,
        source: str,
        items: Sequence[ImportItem],
        *,
        dry_run: bool = False,
        actor: str = "cli",
        now: datetime | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> ImportReport:
        """Write ``items`` of one bot account (admission, switches, opt-out, barrier, dedupe), each
        once across runs (its fingerprint); with ``dry_run`` only say what would be written.
        One audit row per run that wrote something. ``progress``: called with the records done."""
        return await _imports.run_import(
            self._engine, bot_id, importer, source, items, dry_run=dry_run, actor=actor, now=now, progress=progress
        )
