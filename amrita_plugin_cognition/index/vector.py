"""The vector index in Chroma: derived from SQL, one collection per (bot account, scope), and
one per bot account for its profile cards (ids: ``cognition_profile`` row ids).

Layout, chosen by measurement (bench/recall_latency.py): a ``where`` scope filter on one shared
collection costs a filtered HNSW search over every scope's vectors, while a collection per
scope is searched alone, so the cost of a query depends on that chat's size only. A collection
name is the generation plus a hash of (bot, scope): ``reindex`` builds generation N+1 beside N
and the authority store's meta row switches between them in one transaction.

All methods are blocking; each runs on a thread of the index with a deadline
(``chroma.call_timeout_seconds``), in both modes (``index/calls.py``): past it the caller gets
``IndexUnavailable`` (recall goes on keyword-only, writes stay in the outbox), whether Chroma is
dead, hung or slow. A server is reached through an HTTP client whose requests time out at the
same deadline; an embedded folder is held by one process at a time (``index/owner.py``).
A collection Chroma says does not exist while this index had it open (dropped, usually by a
reindex in another process that switched the generation) raises ``CollectionMissing``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial, wraps
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import httpx
import numpy as np
from cachetools import LRUCache

from ..config import ChromaSettings
from ..domain.records import Scope
from ..errors import IndexLocked, IndexUnavailable
from .calls import IndexCalls
from .collections import (
    BOT_KEY,
    CARDS_SCOPE,
    COLLECTION_METADATA,
    COLLECTION_PREFIX,
    SCOPE_KEY,
    SYNC_EVERY,
    CollectionMissing,
    Listed,
    StoredIds,
    card_collection_name,
    card_owner_of,
    collection_name,
    generation_of,
    is_missing,
    owner_of,
)
from .owner import FolderHold, hold_folder

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

#: Ids per ``get`` page: Chroma refuses more than about 32,700 ids or results in one call.
ID_PAGE_SIZE = 10_000
#: Collection handles kept open per index (least recently used dropped; reopened on demand).
COLLECTION_HANDLES = 4096
#: Collections per ``list_collections`` page (each page is one index call with its deadline).
COLLECTION_PAGE_SIZE = 1_000
#: Server mode: calls that may run side by side (each waits on HTTP, not on the CPU).
SERVER_WORKERS = 8
#: Server mode: an HTTP request times out at this share of the call's deadline, so a hung
#: server's call ends by itself, with the reason, before its caller gives up on it.
HTTP_TIMEOUT_SHARE = 0.9
_P = ParamSpec("_P")
_R = TypeVar("_R")
logger = logging.getLogger("cognition")

#: The embedded index's call thread, by its old name (tests and benches use it).
EmbeddedCalls = IndexCalls


def _on_index_thread(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """The call runs on a thread of the index, with its deadline (index/calls.py)."""

    @wraps(method)
    def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        index = args[0]
        assert isinstance(index, ChromaVectorIndex)
        return index.calls.run(method.__name__, partial(method, *args, **kwargs))

    return call


@dataclass(frozen=True, slots=True)
class VectorHit:
    memory_id: int
    similarity: float
    #: The stored vector (recall diversifies with it without a second round trip).
    vector: np.ndarray | None = None


class ChromaVectorIndex:
    """Embedded (persistent folder) or server Chroma, behind one small interface."""

    def __init__(self, settings: ChromaSettings, data_dir: Path, call_timeout: float | None = None) -> None:
        self._settings = settings
        self._data_dir = data_dir
        self._client: Any = None
        #: Open collection handles, bounded: a bot in 100,000 chats keeps only the recent ones.
        self._collections: LRUCache[str, Any] = LRUCache(maxsize=COLLECTION_HANDLES)
        #: The handle cache is shared by the server mode's worker threads (cachetools is not
        #: thread-safe).
        self._handles_lock = threading.Lock()
        self._lock = threading.Lock()
        self._hold: FolderHold | None = None
        timeout = settings.call_timeout_seconds if call_timeout is None else call_timeout
        if settings.mode == "server":
            self.calls = IndexCalls(timeout, SERVER_WORKERS, name="cognition-chroma-http", label="Chroma server")
        else:
            self.calls = IndexCalls(timeout, 1, name="cognition-chroma", label="embedded Chroma")

    @property
    def embedded_calls(self) -> IndexCalls:
        """The index's call threads (the old name; in server mode too)."""
        return self.calls

    async def off_loop(self, operation: str, call: Callable[[], _R], timeout: float | None = None) -> _R:
        """Run blocking index work for a caller on the event loop, on the index's threads (the
        index calls inside it run there directly), all of it within ``timeout`` (default and at
        most ``chroma.call_timeout_seconds``). Raises ``IndexUnavailable`` past the deadline."""
        return await self.calls.run_async(operation, call, timeout)

    @property
    def description(self) -> str:
        if self._settings.mode == "server":
            scheme = "https" if self._settings.ssl else "http"
            return f"server {scheme}://{self._settings.host}:{self._settings.port}"
        return f"embedded {self._path()}"

    def _path(self) -> Path:
        path = Path(self._settings.path)
        return path if path.is_absolute() else self._data_dir / path

    @_on_index_thread
    def open(self) -> None:
        """Connect now instead of at the first call: against a server, check that it answers;
        embedded, take the folder (``IndexLocked`` when another process holds it)."""
        self._connect()

    def _connect(self):  # type: ignore[no-untyped-def]
        if self._client is not None:
            return self._client
        if not self._lock.acquire(timeout=self.calls.timeout):
            raise IndexUnavailable(en=f"chroma ({self.description}): still connecting")
        try:
            if self._client is None:
                self._client = self._open_server() if self._settings.mode == "server" else self._open_embedded()
            return self._client
        finally:
            self._lock.release()

    def _chroma_settings(self):  # type: ignore[no-untyped-def]
        from chromadb.config import Settings

        return Settings(anonymized_telemetry=False, allow_reset=False)

    def _open_embedded(self):  # type: ignore[no-untyped-def]
        import chromadb

        if self._hold is None:
            self._hold = hold_folder(self._path())  # IndexLocked: another process has it
        try:
            return chromadb.PersistentClient(
                path=str(self._path()),
                settings=self._chroma_settings(),
                tenant=self._settings.tenant,
                database=self._settings.database,
            )
        except Exception as error:  # chromadb raises many unrelated types here
            raise IndexUnavailable(en=f"cannot open Chroma ({self.description}): {error}") from error

    def _open_server(self):  # type: ignore[no-untyped-def]
        import chromadb

        # chromadb's HTTP client waits without limit (httpx ``timeout=None``), including in its
        # constructor (identity, tenant and database checks): ask the server first, with the
        # deadline, so a hung server is found here and not inside the constructor.
        scheme = "https" if self._settings.ssl else "http"
        url = f"{scheme}://{self._settings.host}:{self._settings.port}/api/v2/heartbeat"
        try:
            httpx.get(url, headers=self._settings.headers or None, timeout=self._http_timeout).raise_for_status()
            client = chromadb.HttpClient(
                host=self._settings.host,
                port=self._settings.port,
                ssl=self._settings.ssl,
                headers=self._settings.headers or None,
                settings=self._chroma_settings(),
                tenant=self._settings.tenant,
                database=self._settings.database,
            )
        except Exception as error:  # chromadb raises many unrelated types here
            raise IndexUnavailable(en=f"cannot reach Chroma ({self.description}): {error}") from error
        _limit_http_requests(client, self._http_timeout)
        return client

    @property
    def _http_timeout(self) -> float:
        return self.calls.timeout * HTTP_TIMEOUT_SHARE

    def close(self) -> None:
        """Let go of the index: close the Chroma client and, embedded, release the folder.

        Raises ``IndexUnavailable`` (and keeps the folder) if a stuck call is still using it:
        the process's exit releases it then."""
        if self.calls.on_index_thread():
            self._close_client()
        else:
            self.calls.run("close", self._close_client)
        if self._hold is not None:
            self._hold.release()
            self._hold = None

    def _close_client(self) -> None:
        with self._lock, self._handles_lock:
            client, self._client = self._client, None
            self._collections.clear()
        if client is not None:
            try:
                client.close()
            except Exception as error:  # closing is best effort; the folder is released after
                logger.warning("[cognition] stage=vector_index close failed: %s", error)

    def _existing(self, name: str, missing_ok: bool):  # type: ignore[no-untyped-def]
        """The collection ``name`` if it exists; else None, or ``CollectionMissing`` unless
        ``missing_ok``."""
        collection = self._collection(name, create=False)
        if collection is None and not missing_ok:
            raise CollectionMissing(name)
        return collection

    def _collection(self, name: str, create: bool):  # type: ignore[no-untyped-def]
        """The collection ``name``; with ``create=False`` None if it does not exist."""
        return self._open_collection(name, create, None)

    def _open_collection(self, name: str, create: bool, owner: tuple[str, str] | None):  # type: ignore[no-untyped-def]
        """``owner``: (bot, scope key or ``CARDS_SCOPE``), kept in a created collection's metadata."""
        with self._handles_lock:
            cached = self._collections.get(name)
        if cached is not None:
            return cached
        client = self._connect()
        try:
            if create:
                metadata: dict[str, str | int] = dict(COLLECTION_METADATA)
                if owner is not None:  # the name is a hash: keep who it belongs to (stored_ids)
                    metadata |= {BOT_KEY: owner[0], SCOPE_KEY: owner[1]}
                collection = client.get_or_create_collection(name, metadata=metadata, embedding_function=None)
            else:
                collection = client.get_collection(name, embedding_function=None)
        except Exception as error:
            if not create and is_missing(error):
                return None
            raise IndexUnavailable(en=f"chroma collection {name}: {error}") from error
        with self._handles_lock:
            self._collections[name] = collection
        return collection

    def _failed(self, operation: str, name: str, error: Exception) -> IndexUnavailable:
        """The error to raise for a failed Chroma call on collection ``name``."""
        if is_missing(error):
            with self._handles_lock:
                self._collections.pop(name, None)  # a stale handle: the collection was dropped
            return CollectionMissing(name, f"{operation}: {error}")
        self._reset_client()
        return IndexUnavailable(en=f"chroma {operation} on {name}: {error}")

    @_on_index_thread
    def heartbeat(self) -> None:
        try:
            self._connect().heartbeat()
        except IndexUnavailable:
            raise
        except Exception as error:
            self._reset_client()
            raise IndexUnavailable(en=f"chroma heartbeat failed: {error}") from error

    def _reset_client(self) -> None:
        with self._lock, self._handles_lock:
            self._client = None
            self._collections.clear()

    @_on_index_thread
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

    @_on_index_thread
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
        try:
            collection.upsert(
                ids=[str(item) for item in ids],
                embeddings=np.asarray(vectors, dtype=np.float32),
                metadatas=list(metadatas),
            )
        except Exception as error:
            raise self._failed("upsert", name, error) from error

    @_on_index_thread
    def delete(self, generation: int, bot_id: str, scope: Scope, ids: Sequence[int]) -> None:
        self._delete_from(collection_name(generation, bot_id, scope), ids)

    @_on_index_thread
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
            collection.delete(ids=[str(item) for item in ids])
        except Exception as error:
            raise self._failed("delete", name, error) from error

    @_on_index_thread
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

    @_on_index_thread
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
            raise self._failed("query", name, error) from error
        ids = result["ids"][0] if result["ids"] else []
        distances = result["distances"][0] if result.get("distances") else []
        embeddings = result.get("embeddings")
        vectors = embeddings[0] if embeddings is not None and len(embeddings) else [None] * len(ids)
        return [
            VectorHit(int(memory_id), 1.0 - float(distance), None if vector is None else np.asarray(vector, np.float32))
            for memory_id, distance, vector in zip(ids, distances, vectors, strict=True)
        ]

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

    @_on_index_thread
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
                )
            )
        return page, len(items)

    def total_count(self, generation: int) -> int:
        """Memory vectors in every chat collection of ``generation`` (one index call per
        collection, so a bank of many chats never makes one call long enough to hit the deadline);
        card vectors are ``card_count``."""
        listed = [item for item in self._listing() if item.generation == generation and not item.cards_of]
        return sum(self._count_collection(item.name) for item in listed)

    def card_count(self, generation: int) -> int:
        """Card vectors in every card collection of ``generation``."""
        return sum(self._count_collection(name) for name in self._card_collections(generation))

    @_on_index_thread
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

    @_on_index_thread
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

    @_on_index_thread
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


def _limit_http_requests(client: Any, seconds: float) -> None:
    """Give the HTTP session inside chromadb's client (created with no timeout) a timeout per
    request, so a call given up on at its deadline also ends by itself on a hung server."""
    session = getattr(getattr(client, "_server", None), "_session", None)
    if isinstance(session, httpx.Client):
        session.timeout = httpx.Timeout(seconds)
    else:  # the deadline still holds for the caller; only the given-up thread may linger
        logger.warning("[cognition] stage=vector_index cannot set the Chroma HTTP timeout (client internals changed)")
