"""``engine.memories``: facts: writing them (admission, dedupe, limits), correcting, listing, recalling, searching."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from ...domain.records import Importance, MemoryKind
from ..search import DEFAULT_FLOOR

if TYPE_CHECKING:
    from ...domain.permissions import Operator
    from ...domain.records import ChatContext, MemoryDraft, MemoryRecord, Scope
    from ...store.chat_memories import ChatCounts, ChatFigures
    from ..duplicates import DuplicateClusters
    from ..ranking import RecallFilters, RecallResult
    from ..search import RelevanceFloor, SearchResult
    from ..writes import WriteResult

from .base import Target, UseCases, _Service

if TYPE_CHECKING:
    from .. import chat_memories as _chat
    from .. import corrections as _corrections
    from .. import duplicates as _duplicates
    from .. import recall as _recall
    from .. import search as _search
    from .. import writes as _writes
else:  # imported on the first call into them (``base.UseCases``)
    _chat = UseCases("chat_memories")
    _corrections = UseCases("corrections")
    _duplicates = UseCases("duplicates")
    _recall = UseCases("recall")
    _search = UseCases("search")
    _writes = UseCases("writes")


class MemoryService(_Service):
    """Facts: writing them (admission, dedupe, limits), correcting, listing, recalling, searching."""

    async def remember(self, bot_id: str, drafts: Sequence[MemoryDraft], now: datetime | None = None) -> WriteResult:
        """Write drafts of one scope through admission, the barrier, dedupe and the per-chat limit."""
        return await _writes.remember(self._engine, bot_id, drafts, now)

    async def write(
        self,
        context: ChatContext,
        target: Target,
        text: str,
        importance: Importance = Importance.MEDIUM,
        tags: Sequence[str] = (),
        now: datetime | None = None,
        message_id: str = "",
        said: Sequence[str] = (),
    ) -> MemoryRecord:
        """The ``write_memory`` tool: one fact about the speaker (``user``) or the group, checked
        against the chat's switches and what the speaker asked not to remember."""
        return await _writes.write_memory(
            self._engine, context, target, text, importance, tags, now, message_id=message_id, said=said
        )

    async def duplicate_clusters(self, bot_id: str, scope: Scope) -> DuplicateClusters:
        """Near-duplicate clusters of one chat's active facts, from the stored vectors and the
        keyword tokens (no model, no embedding); exact ones marked. Changes nothing."""
        return await _duplicates.duplicate_clusters(self._engine, bot_id, scope)

    async def supersede(self, bot_id: str, old_id: int, new_id: int, now: datetime | None = None) -> None:
        """Mark ``old_id`` as replaced by ``new_id`` (an importer's or the harness's correction)."""
        await _writes.supersede(self._engine, bot_id, old_id, new_id, now)

    async def update(
        self,
        context: ChatContext,
        memory_id: int,
        text: str,
        importance: Importance | None = None,
        tags: Sequence[str] | None = None,
        now: datetime | None = None,
        message_id: str = "",
        said: Sequence[str] = (),
    ) -> MemoryRecord:
        """Correct a still-active fact: a new fact supersedes it (``ConcurrentChange`` if it changed)."""
        return await _corrections.update_memory(
            self._engine, context, memory_id, text, importance, tags, now, message_id=message_id, said=said
        )

    async def recall(
        self,
        context: ChatContext,
        queries: Sequence[str],
        now: datetime | None = None,
        top_k: int | None = None,
        filters: RecallFilters | None = None,
        use_mmr: bool = True,
        vector_deadline: float | None = None,
    ) -> RecallResult:
        """The facts a chat may see that answer the queries, ranked (keyword and vector sides)."""
        return await _recall.recall(
            self._engine, context, queries, now, top_k, filters, use_mmr=use_mmr, vector_deadline=vector_deadline
        )

    async def search(
        self,
        context: ChatContext,
        query: str,
        target: Target | None = None,
        *,
        floor: RelevanceFloor = DEFAULT_FLOOR,
        now: datetime | None = None,
    ) -> SearchResult:
        """``/memory … search``: recall, then only the facts about the query (the relevance floor)."""
        return await _search.search_memories(self._engine, context, query, target, floor=floor, now=now)

    async def list(
        self, context: ChatContext, target: Target, offset: int = 0, limit: int = 10
    ) -> tuple[builtins.list[MemoryRecord], int]:
        """One page of the chat's (``group``) or the speaker's (``user``) facts, and the total."""
        return await _corrections.list_memories(self._engine, context, target, offset, limit)

    # ---------------------------------------------------------------- one chat, for the consolidation cycle

    async def in_chat(self, bot_id: str, scope: Scope, ids: Sequence[int]) -> dict[int, MemoryRecord]:
        """The facts of ``ids`` that belong to this chat, whatever their status."""
        return await _chat.in_chat(self._engine, bot_id, scope, ids)

    async def merged_from(self, ids: Sequence[int]) -> dict[int, builtins.list[int]]:
        """memory id → the ids a merge built it from (only merged memories appear)."""
        return await _chat.merged_from(self._engine, ids)

    async def chat_page(
        self,
        bot_id: str,
        scope: Scope,
        *,
        importance: Importance | None = None,
        tag: str = "",
        since: datetime | None = None,
        offset: int = 0,
        limit: int = 20,
    ) -> tuple[builtins.list[MemoryRecord], int]:
        """One page of a chat's active facts (newest first; of one importance, with a tag,
        recorded after ``since``) and how many match."""
        return await _chat.page(
            self._engine, bot_id, scope, importance=importance, tag=tag, since=since, offset=offset, limit=limit
        )

    async def chat_counts(self, bot_id: str, scope: Scope, since: datetime | None = None) -> ChatCounts:
        """A chat's active facts in all, by importance and recorded after ``since``; its expired ones."""
        return await _chat.counts(self._engine, bot_id, scope, since)

    async def chat_figures(self, bot_id: str, scope: Scope) -> ChatFigures:
        """A chat's active facts by kind, provenance and tag; kept; oldest and newest."""
        return await _chat.figures(self._engine, bot_id, scope)

    async def relabel(
        self,
        actor: Operator,
        bot_id: str,
        scope: Scope,
        memory_id: int,
        importance: Importance | None = None,
        tags: Sequence[str] | None = None,
    ) -> MemoryRecord:
        """Set a fact's importance and/or tags in place (the cycle's calibration)."""
        return await _chat.relabel(self._engine, actor, bot_id, scope, memory_id, importance, tags)

    async def write_consolidated(
        self,
        actor: Operator,
        bot_id: str,
        scope: Scope,
        text: str,
        importance: Importance = Importance.MEDIUM,
        tags: Sequence[str] = (),
        about: str = "",
        kind: MemoryKind = MemoryKind.FACT,
        now: datetime | None = None,
    ) -> MemoryRecord:
        """A new fact of the chat written by the cycle (provenance ``consolidated``) through the write path."""
        return await _chat.write_consolidated(
            self._engine, actor, bot_id, scope, text, importance, tags, about, kind, now
        )

    async def correct_in_chat(
        self, actor: Operator, bot_id: str, scope: Scope, memory_id: int, text: str, now: datetime | None = None
    ) -> MemoryRecord:
        """The owner's correction of a fact of ``scope`` (the WebUI's page): a new fact supersedes
        it, its source a correction by ``actor``."""
        return await _corrections.correct_in_chat(self._engine, actor, bot_id, scope, memory_id, text, now)

    async def revise_in_chat(
        self,
        actor: Operator,
        bot_id: str,
        scope: Scope,
        memory_id: int,
        text: str,
        importance: Importance | None = None,
        tags: Sequence[str] | None = None,
        now: datetime | None = None,
    ) -> MemoryRecord:
        """The operator's (the cycle's) rewording of a fact of ``scope``: a new fact supersedes it."""
        return await _corrections.revise_in_chat(
            self._engine, actor, bot_id, scope, memory_id, text, importance, tags, now
        )
