"""``engine.turns``: a chat turn: the block it is given, the ``end`` tool, transcript capture."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...domain.records import ChatContext, Scope
    from ..chat_recent import RecentMessage
    from ..context import BuiltContext
    from ..turns import EndResult, InputMessage

from .base import UseCases, _Service

if TYPE_CHECKING:
    from .. import chat_recent as _recent
    from .. import context as _context
    from .. import turns as _turns
else:  # imported on the first call into them (``base.UseCases``)
    _recent = UseCases("chat_recent")
    _context = UseCases("context")
    _turns = UseCases("turns")


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

    async def recent(self, bot_id: str, scope: Scope, turns: int = 20) -> builtins.list[RecentMessage]:
        """A chat's last turns as the consolidation cycle may read them (opted-out users' words,
        requests not to remember and secrets left out)."""
        return await _recent.recent(self._engine, bot_id, scope, turns)
