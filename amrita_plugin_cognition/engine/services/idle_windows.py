"""``engine.idle_windows``: each chat's activity (observed on every message) and the window of its next consolidation
cycle (the idle-window planner)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...domain.chat_activity import ChatActivity
    from ...domain.idle_planner import IdleWindow
    from ...domain.records import Scope

from .base import UseCases, _Service

if TYPE_CHECKING:
    from .. import idle_windows as _idle_windows
else:  # imported on the first call into them (``base.UseCases``)
    _idle_windows = UseCases("idle_windows")


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
