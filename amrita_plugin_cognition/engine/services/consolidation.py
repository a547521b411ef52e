"""``engine.consolidation``: consolidation cycles (``engine/cycles.py``), their model-free pre-pass
(``engine/consolidation.py``) and judgement step (``engine/judgement.py``), and their recorded runs
(``engine/cycle_runs.py``: usage, messages for users) for the bot's scheduler, the CLI and
``/memory dmn``."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from ...domain.clock import aware_or_now
from ...domain.permissions import Actor, check_run_cycle
from .base import UseCases, _Service

if TYPE_CHECKING:
    from .. import consolidation as _consolidation
    from .. import cycle_runs as _runs
    from .. import cycles as _cycles
else:  # imported on the first call into them (``base.UseCases``)
    _consolidation = UseCases("consolidation")
    _runs = UseCases("cycle_runs")
    _cycles = UseCases("cycles")

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ...domain.idle_planner import IdleWindow
    from ...domain.records import Importance, Scope
    from ...store.cycles import CycleSummary
    from ..consolidation import MergeDone, PrepassReport
    from ..cycle_runs import CycleMessage


class ConsolidationService(_Service):
    """Plan, run and report the cycles."""

    async def refresh(self, chats: list[tuple[str, Scope]] | None = None, now: datetime | None = None) -> int:
        """Plan or re-plan cycle jobs (of these chats, else of every chat with new memories)."""
        return await _cycles.refresh(self._engine, chats, now)

    async def flush_and_refresh(self, now: datetime | None = None) -> int:
        """The activity flush, then the cycles of the chats it wrote re-planned."""
        return await _cycles.flush_and_refresh(self._engine, now)

    async def dry_run(self, actor: Actor, bot_id: str, scope: Scope, now: datetime | None = None) -> PrepassReport:
        """What a cycle of the chat would merge and propose now, and whether its judgement step
        would run (and why not), changing nothing and calling no model."""
        check_run_cycle(actor, bot_id, scope)
        return await _cycles.dry_run(self._engine, bot_id, scope, now)

    async def run_now(self, actor: Actor, bot_id: str, scope: Scope, now: datetime | None = None) -> PrepassReport:
        """A cycle of the chat now: the pre-pass, then the judgement step (when something needs it
        and the budget allows; ``report.model_step`` says what it did or why not)."""
        check_run_cycle(actor, bot_id, scope)
        return await _cycles.run_now(self._engine, bot_id, scope, now)

    async def bots_with_chat(self, scope: Scope) -> list[str]:
        """The bot accounts with memories in this chat (the CLI's ``--bot`` left out)."""
        return await _cycles.bots_with_chat(self._engine, scope)

    async def window(self, bot_id: str, scope: Scope, now: datetime | None = None) -> IdleWindow:
        """When the chat's next cycle would start (the planner's window, after its last message)."""
        return await _cycles.next_due(self._engine, bot_id, scope, aware_or_now(now))

    async def summary(self) -> CycleSummary:
        """Cycle jobs waiting, running and dead; chats cycled; merges done."""
        return await _cycles.summary(self._engine)

    async def merge(
        self,
        bot_id: str,
        scope: Scope,
        source_ids: Sequence[int],
        text: str,
        importance: Importance,
        tags: Sequence[str],
        now: datetime | None = None,
    ) -> MergeDone:
        """The judgement step's merge of facts its model judged one, in its words: a new memory
        (provenance ``consolidated``) supersedes every source, lineage written (``InvalidInput`` when refused)."""
        return await _consolidation.merge_judged(self._engine, bot_id, scope, source_ids, text, importance, tags, now)

    async def usage(self, now: datetime | None = None) -> dict[str, Any]:
        """The cycles' model use: tokens today per bot account against the budget, the last runs."""
        return await _runs.usage(self._engine, now)

    async def undelivered_messages(self, now: datetime | None = None) -> list[CycleMessage]:
        """Messages cycles left for private chats' users, to send now (none while not allowed)."""
        return await _runs.undelivered(self._engine, now)

    async def mark_message_sent(self, run_id: int, now: datetime | None = None) -> bool:
        """A cycle's message was delivered: never sent again."""
        return await _runs.mark_sent(self._engine, run_id, now)
