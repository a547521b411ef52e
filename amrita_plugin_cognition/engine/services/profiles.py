"""``engine.profiles``: profile cards: reading the parts a chat may see, searching, saving with revisions,
restoring, listing and exporting."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ..profiles import ANY_VERSION
from ..search import DEFAULT_FLOOR

if TYPE_CHECKING:
    from ...domain.profiles import Card
    from ...domain.records import ChatContext
    from ...store.profiles import ProfileFilter
    from ..profile_search import CardSearchResult, EntityChoice
    from ..profiles import CardRevision, ExportReport, ListedCard, SavedCard
    from ..search import RelevanceFloor

from .base import UseCases, _Service

if TYPE_CHECKING:
    from .. import profile_search as _profile_search
    from .. import profiles as _profiles
else:  # imported on the first call into them (``base.UseCases``)
    _profile_search = UseCases("profile_search")
    _profiles = UseCases("profiles")


class ProfileService(_Service):
    """Profile cards: reading the parts a chat may see, searching, saving with revisions,
    restoring, listing and exporting."""

    async def get(self, bot_id: str, entity_type: str, entity_id: str, part: str = "group") -> Card | None:
        """One part of a card as stored (None: no such card)."""
        return await _profiles.get(self._engine, bot_id, entity_type, entity_id, part)

    async def get_parts(
        self, bot_id: str, entity_type: str, entity_id: str, parts: Sequence[str] | None = None
    ) -> builtins.list[Card]:
        """The stored parts of a card (all of them, or those named)."""
        return await _profiles.get_parts(self._engine, bot_id, entity_type, entity_id, parts)

    async def visible_parts(self, context: ChatContext, entity_type: str, entity_id: str) -> builtins.list[str]:
        """The parts of a card this chat may see (the one predicate of ``domain/profile_access``)."""
        return await _profile_search.visible_parts(self._engine, context, entity_type, entity_id)

    async def search(
        self,
        context: ChatContext,
        query: str,
        entity_type: EntityChoice = "any",
        top_k: int = 5,
        *,
        floor: RelevanceFloor = DEFAULT_FLOOR,
    ) -> CardSearchResult:
        """Hybrid search over the card parts this chat may see."""
        return await _profile_search.search_cards(self._engine, context, query, entity_type, top_k, floor=floor)

    async def save(
        self,
        card: Card,
        by: str = "historian",
        now: datetime | None = None,
        expected: Card | None = ANY_VERSION,
        keep_replaced: bool = True,
    ) -> SavedCard:
        """Save a card part under its entity's lock, keeping the replaced version as a revision
        (``expected``: the version the caller read, else ``ConcurrentChange``)."""
        return await _profiles.save(self._engine, card, by, now, expected, keep_replaced)

    async def revisions(
        self, bot_id: str, entity_type: str, entity_id: str, part: str | None = None
    ) -> builtins.list[CardRevision]:
        """The kept versions of a card (one part, or every part), newest first."""
        return await _profiles.revisions(self._engine, bot_id, entity_type, entity_id, part)

    async def revision(self, bot_id: str, entity_type: str, entity_id: str, revision_id: int) -> CardRevision:
        """One kept version (``NotFound`` when there is none with that id)."""
        return await _profiles.revision(self._engine, bot_id, entity_type, entity_id, revision_id)

    async def restore(
        self,
        bot_id: str,
        entity_type: str,
        entity_id: str,
        revision_id: int,
        part: str | None = None,
        by: str = "cli",
        now: datetime | None = None,
    ) -> SavedCard:
        """Bring a kept version back (the current card is kept as a revision first)."""
        return await _profiles.restore(self._engine, bot_id, entity_type, entity_id, revision_id, part, by, now)

    async def export(self, folder: Path, bot_id: str | None = None) -> ExportReport:
        """Every card as a document, in the seed's layout under ``folder``."""
        return await _profiles.export(self._engine, folder, bot_id)

    async def list(
        self, wanted: ProfileFilter, limit: int = 100, offset: int = 0
    ) -> tuple[builtins.list[ListedCard], int]:
        """One page of the stored cards that match, and the total."""
        return await _profiles.list_cards(self._engine, wanted, limit, offset)
