"""``engine.knowledge``: the knowledge base's use cases, for the consolidation cycle (writes,
reviews), the chat tools (search, read, suggest) and the CLI (list, show, delete, export)."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from ..search import DEFAULT_FLOOR
from .base import UseCases, _Service

if TYPE_CHECKING:
    from .. import knowledge as _knowledge
    from .. import knowledge_search as _search
    from .. import knowledge_suggestions as _suggestions
else:  # imported on the first call into them (``base.UseCases``)
    _knowledge = UseCases("knowledge")
    _search = UseCases("knowledge_search")
    _suggestions = UseCases("knowledge_suggestions")

if TYPE_CHECKING:
    from ...domain.knowledge import KnowledgeEntry
    from ...domain.records import ChatContext, Scope
    from ..knowledge import ListedEntry, SavedEntry
    from ..knowledge_search import KnowledgeSearchResult
    from ..knowledge_suggestions import FiledSuggestion, Suggestion
    from ..search import RelevanceFloor


class KnowledgeService(_Service):
    """Knowledge entries (written by the cycle or an operator, policy-checked, with revisions),
    their search, and chat users' suggestions."""

    async def create(
        self,
        bot_id: str,
        title: str,
        summary: str,
        body: str,
        source_ids: Sequence[int] = (),
        by: str = "consolidation",
        now: datetime | None = None,
    ) -> KnowledgeEntry:
        """A new entry derived from ``source_ids`` (``InvalidInput`` when the policy refuses it)."""
        return await _knowledge.create(self._engine, bot_id, title, summary, body, source_ids, by, now)

    async def update(
        self,
        bot_id: str,
        entry_id: int,
        title: str,
        summary: str,
        body: str,
        source_ids: Sequence[int] = (),
        by: str = "consolidation",
        now: datetime | None = None,
        expected_version: int | None = None,
    ) -> SavedEntry:
        """The entry's next version, the replaced one kept as a revision (``expected_version``:
        the version the caller read, else ``ConcurrentChange``); re-shows a stale entry."""
        return await _knowledge.update(
            self._engine, bot_id, entry_id, title, summary, body, source_ids, by, now, expected_version
        )

    async def delete(self, bot_id: str, entry_id: int, by: str = "cli", now: datetime | None = None) -> None:
        """Delete an entry with its revisions and indices."""
        await _knowledge.delete(self._engine, bot_id, entry_id, by, now)

    async def get(self, bot_id: str, entry_id: int) -> KnowledgeEntry:
        """One entry as stored, shown or stale (``NotFound``)."""
        return await _knowledge.get(self._engine, bot_id, entry_id)

    async def list(
        self, bot_id: str | None = None, state: str | None = None, limit: int = _knowledge.LIST_MAX
    ) -> builtins.list[ListedEntry]:
        """Entries, newest change first (``state``: "active" or "stale")."""
        return await _knowledge.list_entries(self._engine, bot_id, state, limit)

    async def revisions(self, bot_id: str, entry_id: int) -> builtins.list[KnowledgeEntry]:
        """The kept versions of an entry, newest first."""
        return await _knowledge.revisions(self._engine, bot_id, entry_id)

    async def search(
        self, bot_id: str, query: str, top_k: int = 5, *, floor: RelevanceFloor = DEFAULT_FLOOR
    ) -> KnowledgeSearchResult:
        """Hybrid search over the bot account's shown entries."""
        return await _search.search(self._engine, bot_id, query, top_k, floor=floor)

    async def suggest(self, context: ChatContext, text: str, now: datetime | None = None) -> FiledSuggestion:
        """File a chat user's suggestion (checked, rate-limited per user and bot account)."""
        return await _suggestions.suggest(self._engine, context, text, now)

    async def suggestions(
        self, bot_id: str | None = None, state: str | None = "pending", limit: int = 200, scope: Scope | None = None
    ) -> builtins.list[Suggestion]:
        """Suggestions, oldest first (``state`` None: every state; ``scope``: those filed in that chat)."""
        return await _suggestions.list_suggestions(self._engine, bot_id, state, limit, scope)

    async def review(
        self, bot_id: str, suggestion_id: int, outcome: str, note: str = "", now: datetime | None = None
    ) -> None:
        """Close a pending suggestion as "accepted" or "rejected" (the cycle)."""
        await _suggestions.review(self._engine, bot_id, suggestion_id, outcome, note, now)
