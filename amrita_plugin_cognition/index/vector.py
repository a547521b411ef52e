"""The vector index in Chroma: derived from SQL, one collection per (bot account, scope), and
one per bot account for its profile cards (ids: ``cognition_profile`` row ids).

Layout, chosen by measurement (bench/recall_latency.py): a ``where`` scope filter on one shared
collection costs a filtered HNSW search over every scope's vectors, while a collection per
scope is searched alone, so the cost of a query depends on that chat's size only. A collection
name is the generation plus a hash of (bot, scope): ``reindex`` builds generation N+1 beside N
and the authority store's meta row switches between them in one transaction.

The index is three layers, one concern each: the connection (``index/connection.py``: client,
handles, deadlines), the inventory (``index/inventory.py``: listing, counts, stored ids,
dropping generations) and, here, the writes and queries callers make.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from ..domain.records import Scope
from ..domain.vector_parts import VectorLayout, first_model_part
from ..errors import IndexLocked, IndexUnavailable
from .calls import IndexCalls
from .collections import (
    CARDS_SCOPE,
    COLLECTION_METADATA,
    COLLECTION_PREFIX,
    KNOWLEDGE_SCOPE,
    SYNC_EVERY,
    CollectionMissing,
    StoredIds,
    card_collection_name,
    collection_name,
    knowledge_collection_name,
)
from .connection import on_index_thread
from .inventory import ChromaInventory

#: Vectors per ``get`` page when a chat's stored vectors are read: Chroma turns each page into Python
#: lists of floats, which costs less in pages of a few thousand (10,000 vectors of 512: 465 ms in one
#: page, 327 ms in pages of 2,000, 354 ms of 1,000).
VECTOR_PAGE_SIZE = 2_000

__all__ = [
    "COLLECTION_METADATA",
    "COLLECTION_PREFIX",
    "SYNC_EVERY",
    "ChromaVectorIndex",
    "CollectionMissing",
    "EmbeddedCalls",
    "IndexLocked",
    "IndexUnavailable",
    "StoredIds",
    "VectorHit",
    "collection_name",
]

#: The embedded index's call thread, by its old name (tests and benches use it).
EmbeddedCalls = IndexCalls


@dataclass(frozen=True, slots=True)
class VectorHit:
    memory_id: int
    similarity: float
    #: The stored vector (recall diversifies with it without a second round trip).
    vector: np.ndarray | None = None
    #: With two models (``domain/vector_parts.py``): their weighted cosines, which the ranking
    #: uses, while ``similarity`` and ``vector`` are the first model's alone (what its
    #: calibrated floors expect). None with one model.
    fused: float | None = None

    @property
    def ranking_similarity(self) -> float:
        return self.similarity if self.fused is None else self.fused


class ChromaVectorIndex(ChromaInventory):
    """Embedded (persistent folder) or server Chroma, behind one small interface: the writes
    and queries of memories and cards, on top of the inventory and the connection.

    ``layout``: set when the embedder joins two models' vectors in one row (the engine sets it
    from its embedder); hits and stored vectors are then read back as ``VectorHit.fused``
    beside the first model's part."""

    layout: VectorLayout | None = None

    @on_index_thread
    def upsert(
        self,
        generation: int,
        bot_id: str,
        scope: Scope,
        ids: Sequence[int],
        vectors: np.ndarray,
        metadatas: Sequence[dict[str, str | int | float | bool]],
    ) -> None:
        self._upsert_into(collection_name(generation, bot_id, scope), (bot_id, scope.key), ids, vectors, metadatas)

    @on_index_thread
    def upsert_cards(
        self,
        generation: int,
        bot_id: str,
        ids: Sequence[int],
        vectors: np.ndarray,
        metadatas: Sequence[dict[str, str | int | float | bool]],
    ) -> None:
        """Store the vectors of a bot account's card parts (ids: profile row ids)."""
        self._upsert_into(card_collection_name(generation, bot_id), (bot_id, CARDS_SCOPE), ids, vectors, metadatas)

    def _upsert_into(
        self,
        name: str,
        owner: tuple[str, str],
        ids: Sequence[int],
        vectors: np.ndarray,
        metadatas: Sequence[dict[str, str | int | float | bool]],
    ) -> None:
        if not ids:
            return
        collection = self._open_collection(name, True, owner)
        write = partial(
            collection.upsert,
            ids=[str(item) for item in ids],
            embeddings=np.asarray(vectors, dtype=np.float32),
            metadatas=list(metadatas),
        )
        try:
            _saved_write(write, len(ids))
        except Exception as error:
            raise self._failed("upsert", name, error) from error

    @on_index_thread
    def upsert_knowledge(
        self,
        generation: int,
        bot_id: str,
        ids: Sequence[int],
        vectors: np.ndarray,
        metadatas: Sequence[dict[str, str | int | float | bool]],
    ) -> None:
        """Store the vectors of a bot account's knowledge entries (ids: entry ids)."""
        name = knowledge_collection_name(generation, bot_id)
        self._upsert_into(name, (bot_id, KNOWLEDGE_SCOPE), ids, vectors, metadatas)

    @on_index_thread
    def delete_knowledge(self, generation: int, bot_id: str, ids: Sequence[int]) -> None:
        """Remove knowledge entries from a bot account's knowledge collection."""
        self._delete_from(knowledge_collection_name(generation, bot_id), ids)

    @on_index_thread
    def query_knowledge(self, generation: int, bot_id: str, vector: np.ndarray, limit: int) -> list[VectorHit]:
        """The nearest knowledge entries of a bot account (``VectorHit.memory_id``: the entry id);
        none when it has no knowledge collection."""
        return self._query_in(knowledge_collection_name(generation, bot_id), vector, limit, None, True)

    @on_index_thread
    def delete(self, generation: int, bot_id: str, scope: Scope, ids: Sequence[int]) -> None:
        self._delete_from(collection_name(generation, bot_id, scope), ids)

    @on_index_thread
    def delete_cards(self, generation: int, bot_id: str, ids: Sequence[int]) -> None:
        """Remove card parts (profile row ids) from a bot account's card collection."""
        self._delete_from(card_collection_name(generation, bot_id), ids)

    def _delete_from(self, name: str, ids: Sequence[int]) -> None:
        if not ids:
            return
        collection = self._collection(name, create=False)
        if collection is None:
            return
        try:
            _saved_write(partial(collection.delete, ids=[str(item) for item in ids]), len(ids))
        except Exception as error:
            raise self._failed("delete", name, error) from error

    @on_index_thread
    def query(
        self,
        generation: int,
        bot_id: str,
        scope: Scope,
        vector: np.ndarray,
        limit: int,
        where: dict[str, object] | None = None,
        *,
        missing_ok: bool = True,
    ) -> list[VectorHit]:
        """The nearest vectors of one chat. A collection that does not exist gives no hits, or
        ``CollectionMissing`` with ``missing_ok=False``; one this index had open and that has
        since been dropped always raises ``CollectionMissing``."""
        return self._query_in(collection_name(generation, bot_id, scope), vector, limit, where, missing_ok)

    @on_index_thread
    def query_cards(
        self, generation: int, bot_id: str, vector: np.ndarray, limit: int, where: dict[str, object] | None = None
    ) -> list[VectorHit]:
        """The nearest card parts of a bot account (``VectorHit.memory_id``: the profile row id);
        none when it has no card collection. ``where`` narrows on the stored metadata."""
        return self._query_in(card_collection_name(generation, bot_id), vector, limit, where, True)

    def _query_in(
        self, name: str, vector: np.ndarray, limit: int, where: dict[str, object] | None, missing_ok: bool
    ) -> list[VectorHit]:
        collection = self._existing(name, missing_ok)
        if collection is None:
            return []
        try:
            result = collection.query(
                query_embeddings=np.asarray(vector, dtype=np.float32)[None, :],
                n_results=limit,
                where=where or None,
                include=["distances", "embeddings"],
            )
        except Exception as error:
            if _emptied(collection):
                return []
            raise self._failed("query", name, error) from error
        ids = result["ids"][0] if result["ids"] else []
        distances = result["distances"][0] if result.get("distances") else []
        embeddings = result.get("embeddings")
        vectors = embeddings[0] if embeddings is not None and len(embeddings) else [None] * len(ids)
        layout = self.layout
        if layout is not None and len(ids) and vectors[0] is not None and len(vectors[0]) == layout.dimension:
            return _split_hits(layout, vector, ids, vectors)
        return [
            VectorHit(int(memory_id), 1.0 - float(distance), None if vector is None else np.asarray(vector, np.float32))
            for memory_id, distance, vector in zip(ids, distances, vectors, strict=True)
        ]

    def stored_vectors(self, generation: int, bot_id: str, scope: Scope) -> tuple[list[int], np.ndarray]:
        """Every vector stored for one chat, as (memory ids, an n x d float32 matrix): read page by
        page (each page one index call with its deadline), nothing embedded. A chat without a
        collection has none."""
        name = collection_name(generation, bot_id, scope)
        ids: list[int] = []
        pages: list[np.ndarray] = []
        offset = 0
        while True:
            page_ids, page = self._vector_page(name, offset, VECTOR_PAGE_SIZE)
            ids += page_ids
            if len(page_ids):
                pages.append(page)
            if len(page_ids) < VECTOR_PAGE_SIZE:
                break
            offset += len(page_ids)
        matrix = np.vstack(pages) if pages else np.zeros((0, 0), dtype=np.float32)
        return ids, matrix

    @on_index_thread
    def _vector_page(self, name: str, offset: int, limit: int) -> tuple[list[int], np.ndarray]:
        ids, matrix = self._stored_rows(name, limit=limit, offset=offset)
        return ids, first_model_part(self.layout, matrix)

    @on_index_thread
    def vectors_by_ids(
        self, generation: int, bot_id: str, scope: Scope, ids: Sequence[int]
    ) -> tuple[list[int], np.ndarray]:
        """The whole stored rows (both models' parts when there are two) of the given facts of one
        chat, as (the ids found, an n x d float32 matrix): what the copy in SQL is refilled from."""
        if not ids:
            return [], np.zeros((0, 0), dtype=np.float32)
        return self._stored_rows(collection_name(generation, bot_id, scope), ids=[str(item) for item in ids])

    def _stored_rows(self, name: str, **selection: Any) -> tuple[list[int], np.ndarray]:
        """One ``get`` of a collection's stored vectors as (ids, an n x d float32 matrix of the whole
        rows); none when the collection does not exist. ``selection``: chromadb's ``get`` arguments."""
        collection = self._existing(name, True)
        if collection is None:
            return [], np.zeros((0, 0), dtype=np.float32)
        try:
            result = collection.get(include=["embeddings"], **selection)
        except Exception as error:
            raise self._failed("get", name, error) from error
        embeddings = result.get("embeddings")
        ids = [int(memory_id) for memory_id in result["ids"]]
        if embeddings is None or not ids:
            return [], np.zeros((0, 0), dtype=np.float32)
        return ids, np.asarray(embeddings, dtype=np.float32)


def _saved_write(write: Callable[[], object], records: int) -> None:
    """Make a write that Chroma saves to disk before the call returns (``SYNC_EVERY`` in
    ``index/collections.py``). Chroma saves a chat's index once ``SYNC_EVERY`` writes are waiting.
    A call of fewer records would leave them waiting, and they are lost if Chroma drops the index
    from memory before the next write. So the call is made again: the same ids with the same
    content, which changes nothing stored but counts as more writes."""
    for _ in range(-(-SYNC_EVERY // max(records, 1))):  # ceil(SYNC_EVERY / records) calls
        write()


def _emptied(collection: Any) -> bool:
    """Whether a collection whose query failed holds no vector: every vector of a chat deleted,
    chromadb saves an empty index it may then fail to read back ("Nothing found on disk") until
    the chat's next write. Such a chat has nothing to find, not a broken index."""
    try:
        return bool(collection.count() == 0)
    except Exception:  # the index is in trouble after all: the query's error is the one to raise
        return False


def _split_hits(
    layout: VectorLayout, query: np.ndarray, ids: Sequence[str], vectors: Sequence[object]
) -> list[VectorHit]:
    """Hits of joined rows: the first model's cosine and part, and the models' weighted cosine."""
    stored = np.asarray(vectors, dtype=np.float32)
    cosines = layout.cosines(query, stored)
    fused = layout.fused(cosines)
    first = layout.first_part(stored)
    return [
        VectorHit(int(memory_id), float(cosines[row, 0]), first[row], float(fused[row]))
        for row, memory_id in enumerate(ids)
    ]
