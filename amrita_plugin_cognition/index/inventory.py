"""What the vector index holds: its collections by generation, how many vectors each has, every
id stored (to compare with SQL), and dropping the generations a reindex left behind.

Long work is many short index calls (a page of collections, a page of ids, one count per
collection), each with its own deadline, so a bank of many chats never makes one call long
enough to hit it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from ..domain.records import Scope
from ..errors import IndexUnavailable
from .collections import (
    KNOWLEDGE_SCOPE,
    Listed,
    StoredIds,
    card_owner_of,
    collection_name,
    generation_of,
    is_missing,
    owner_of,
)
from .connection import ChromaConnection, on_index_thread

#: Ids per ``get`` page: Chroma refuses more than about 32,700 ids or results in one call.
ID_PAGE_SIZE = 10_000
#: Collections per ``list_collections`` page (each page is one index call with its deadline).
COLLECTION_PAGE_SIZE = 1_000


class ChromaInventory(ChromaConnection):
    """Listing, counting, stored ids and dropping of the plugin's collections."""

    def count(self, generation: int, bot_id: str, scope: Scope) -> int:
        return self._count_collection(collection_name(generation, bot_id, scope))

    def collections(self) -> list[tuple[str, int | None]]:
        """Every collection this plugin owns, with its generation."""
        return [(listed.name, listed.generation) for listed in self._listing()]

    def _card_collections(self, generation: int) -> set[str]:
        return {listed.name for listed in self._listing() if listed.generation == generation and listed.cards_of}

    def _listing(self) -> Iterator[Listed]:
        offset = 0
        while True:
            page = self._list_page(offset, COLLECTION_PAGE_SIZE)
            yield from (listed for listed in page[0] if listed is not None)
            if page[1] < COLLECTION_PAGE_SIZE:
                return
            offset += page[1]

    @on_index_thread
    def _list_page(self, offset: int, limit: int) -> tuple[list[Listed | None], int]:
        """One page of ``list_collections``: ours (None for others) and how many Chroma gave."""
        try:
            items: Sequence[object] = self._connect().list_collections(limit=limit, offset=offset)
        except IndexUnavailable:
            raise
        except Exception as error:
            self._reset_client()
            raise IndexUnavailable(en=f"chroma list_collections: {error}") from error
        page: list[Listed | None] = []
        for item in items:
            name = item if isinstance(item, str) else str(getattr(item, "name", item))
            generation = generation_of(name)
            metadata = getattr(item, "metadata", None)
            page.append(
                None
                if generation is None
                else Listed(
                    name,
                    generation,
                    owner_of(name, generation, metadata),
                    card_owner_of(name, generation, metadata),
                    card_owner_of(name, generation, metadata, KNOWLEDGE_SCOPE),
                )
            )
        return page, len(items)

    def total_count(self, generation: int) -> int:
        """Memory vectors in every chat collection of ``generation`` (one index call per
        collection, so a bank of many chats never makes one call long enough to hit the deadline);
        card vectors are ``card_count``."""
        listed = [item for item in self._listing() if item.generation == generation and item.of_chat]
        return sum(self._count_collection(item.name) for item in listed)

    def card_count(self, generation: int) -> int:
        """Card vectors in every card collection of ``generation``."""
        return sum(self._count_collection(name) for name in self._card_collections(generation))

    def knowledge_count(self, generation: int) -> int:
        """Knowledge entry vectors in every knowledge collection of ``generation``."""
        listed = [item.name for item in self._listing() if item.generation == generation and item.knowledge_of]
        return sum(self._count_collection(name) for name in listed)

    @on_index_thread
    def _count_collection(self, name: str) -> int:
        collection = self._collection(name, create=False)
        if collection is None:
            return 0
        try:
            return int(collection.count())
        except Exception as error:
            raise self._failed("count", name, error) from error

    def stored_ids(self, generation: int, known_scopes: Iterable[tuple[str, Scope]] = ()) -> StoredIds:
        """The memory ids stored in every collection of ``generation``, by (bot, scope).

        A collection's (bot, scope) comes from its metadata, or for a collection made before the
        metadata was written, from ``known_scopes`` (e.g. every pair SQL has facts for); the
        rest are listed by name in ``unmapped``. Each page of ids is one index call. A collection
        dropped meanwhile raises ``CollectionMissing``."""
        known = {collection_name(generation, bot_id, scope): (bot_id, scope) for bot_id, scope in known_scopes}
        result = StoredIds()
        for listed in self._listing():
            if listed.generation != generation:
                continue
            ids = self._all_ids(listed.name)
            if listed.cards_of is not None:
                result.cards.setdefault(listed.cards_of, set()).update(ids)
                continue
            if listed.knowledge_of is not None:
                result.knowledge.setdefault(listed.knowledge_of, set()).update(ids)
                continue
            owner = listed.owner or known.get(listed.name)
            if owner is None:
                result.unmapped[listed.name] = ids
            else:
                result.by_scope.setdefault(owner, set()).update(ids)
        return result

    def collection_ids(self, generation: int, bot_id: str, scope: Scope) -> set[int]:
        """The memory ids stored for one chat (none if it has no collection)."""
        return self._all_ids(collection_name(generation, bot_id, scope), missing_ok=True)

    def _all_ids(self, name: str, missing_ok: bool = False) -> set[int]:
        ids: set[int] = set()
        offset = 0
        while True:
            page = self._id_page(name, offset, ID_PAGE_SIZE, missing_ok)
            ids.update(page)
            if len(page) < ID_PAGE_SIZE:
                return ids
            offset += len(page)

    @on_index_thread
    def _id_page(self, name: str, offset: int, limit: int, missing_ok: bool) -> list[int]:
        collection = self._existing(name, missing_ok)
        if collection is None:
            return []
        try:
            result = collection.get(limit=limit, offset=offset, include=[])
        except Exception as error:
            raise self._failed("get", name, error) from error
        return [int(memory_id) for memory_id in result["ids"]]

    def drop_generations(self, keep: int) -> int:
        """Delete every collection of a generation other than ``keep``; returns how many."""
        doomed = [name for name, generation in self.collections() if generation != keep]
        for name in doomed:
            self._drop_collection(name)
        return len(doomed)

    def drop_chat(self, generation: int, bot_id: str, scope: Scope) -> None:
        """Drop one chat's collection (after its delete-all: even empty, its metadata names the chat)."""
        self._drop_collection(collection_name(generation, bot_id, scope))

    @on_index_thread
    def _drop_collection(self, name: str) -> None:
        with self._handles_lock:
            self._collections.pop(name, None)
        try:
            self._connect().delete_collection(name)
        except IndexUnavailable:
            raise
        except Exception as error:
            if is_missing(error):
                return  # already gone
            raise IndexUnavailable(en=f"chroma delete_collection {name}: {error}") from error
