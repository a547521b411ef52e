"""The vector index in Chroma: derived from SQL, one collection per (bot account, scope).

Layout, chosen by measurement (bench/recall_latency.py): a ``where`` scope filter on one shared
collection costs a filtered HNSW search over every scope's vectors, while a collection per
scope is searched alone, so the cost of a query depends on that chat's size only. A collection
name is the generation plus a hash of (bot, scope): ``reindex`` builds generation N+1 beside N
and the authority store's meta row switches between them in one transaction.

All methods are blocking; the engine calls them from worker threads. With the embedded client
every call runs on one daemon thread of its own (``EmbeddedCalls``), one at a time:

* Chroma's embedded (Rust) client holds the GIL for the whole of a write (measured: an upsert
  of 5,000 vectors left another Python thread 4 ticks of 1 ms in 12 s), so running calls side by
  side gains nothing, and it has an open report of a deadlock under concurrent writes and
  queries (chroma-core/chroma#4038).
* A call that does not return within ``chroma.call_timeout_seconds`` is given up: the caller
  gets ``IndexUnavailable`` (recall goes on keyword-only, writes stay in the outbox), every
  later call fails at once instead of queueing behind it, and the index is usable again as soon
  as the stuck call returns. The thread is a daemon, so a call that never returns cannot keep
  the process from exiting either.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from functools import partial, wraps
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import numpy as np

from ..config import ChromaSettings
from ..domain.records import Scope
from ..errors import IndexUnavailable

COLLECTION_PREFIX = "cog"
#: Chroma keeps every write in its log (one SQLite table for all collections, no index by
#: collection) until the collection's HNSW index is saved, by default after 1,000 writes: a chat
#: with fewer memories never is, its writes stay in the log for good, and loading its collection
#: scans the whole log. Measured (300 collections of 100 vectors written 5 at a time): default,
#: 30,000 log rows and a first query per collection p50 92 ms, build 263 s; saved every 10
#: writes, 300 log rows, first query 11 ms, build 93 s; a single write to a 20,000-vector
#: collection p50 10.7 ms either way (max 36 ms when it saves).
SYNC_EVERY = 10
COLLECTION_METADATA = {"hnsw:space": "cosine", "hnsw:sync_threshold": SYNC_EVERY, "hnsw:batch_size": SYNC_EVERY}
_P = ParamSpec("_P")
_R = TypeVar("_R")
logger = logging.getLogger("cognition")


_Job = tuple[str, Callable[[], object], "Future[object]"]


class EmbeddedCalls:
    """Runs calls one at a time on a daemon thread, each with a deadline (module docstring)."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._start = threading.Lock()
        #: What the thread is running, since when (monotonic), and for whom, while it runs something.
        self._current: tuple[str, float, Future[object]] | None = None
        #: Why calls fail at once: a call outlived its deadline and has not returned yet.
        self.stalled: str | None = None

    def run(self, operation: str, call: Callable[[], _R]) -> _R:
        if threading.current_thread() is self._thread:  # a call made by another call
            return call()
        future = self._submit(operation, call)
        try:
            return future.result(timeout=self.timeout)  # type: ignore[return-value]
        except FutureTimeout:
            if not future.cancel() and future.done():  # answered just now
                return future.result()  # type: ignore[return-value]
            raise self._gave_up(operation, future) from None

    async def run_async(self, operation: str, call: Callable[[], _R]) -> _R:
        """``run`` for a caller on the event loop: the loop waits for the index thread itself,
        two thread hand-offs per call instead of four through a worker thread."""
        future = self._submit(operation, call)
        waiter = asyncio.wrap_future(future)
        try:
            done, _ = await asyncio.wait({waiter}, timeout=self.timeout)
        except asyncio.CancelledError:
            waiter.cancel()  # a call still queued will not run
            raise
        if done:
            return waiter.result()  # type: ignore[return-value]
        if not future.cancel() and future.done():  # answered just now
            return future.result()  # type: ignore[return-value]
        waiter.cancel()
        raise self._gave_up(operation, future)

    def _submit(self, operation: str, call: Callable[[], _R]) -> Future[object]:
        if self.stalled is not None:
            raise IndexUnavailable(en=self.stalled)
        future: Future[object] = Future()
        self._jobs.put((operation, call, future))
        self._ensure_thread()
        return future

    def _gave_up(self, operation: str, future: Future[object]) -> IndexUnavailable:
        """The call got no answer in time: cancelled while still queued (it will not run), or
        running past its deadline, which stalls the index until it returns."""
        current = self._current
        if current is not None and (current[2] is future or time.monotonic() - current[1] >= self.timeout):
            self.stalled = (
                f"embedded Chroma: {current[0]} has not returned for {self.timeout:.0f} s; "
                "vector search is off until it does (restart the bot if it stays so)"
            )
            logger.error("[cognition] stage=vector_index %s", self.stalled)
        return IndexUnavailable(en=f"embedded Chroma: {operation} got no answer within {self.timeout:.0f} s")

    def _ensure_thread(self) -> None:
        if self._thread is not None:
            return
        with self._start:
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name="cognition-chroma", daemon=True)
                self._thread.start()

    def _serve(self) -> None:
        while True:
            operation, call, future = self._jobs.get()
            if not future.set_running_or_notify_cancel():
                continue
            self._current = (operation, time.monotonic(), future)
            try:
                result = call()
            except BaseException as error:  # handed to the caller
                future.set_exception(error)
            else:
                future.set_result(result)
            finally:
                self._current = None
                if self.stalled is not None:
                    logger.warning("[cognition] stage=vector_index recovered: %s returned", operation)
                    self.stalled = None


def _on_index_thread(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """An embedded index runs the call on its own thread, with a deadline (module docstring)."""

    @wraps(method)
    def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        index = args[0]
        assert isinstance(index, ChromaVectorIndex)
        if index._settings.mode == "server":
            return method(*args, **kwargs)
        return index.embedded_calls.run(method.__name__, partial(method, *args, **kwargs))

    return call


@dataclass(frozen=True, slots=True)
class VectorHit:
    memory_id: int
    similarity: float
    #: The stored vector (recall diversifies with it without a second round trip).
    vector: np.ndarray | None = None


def collection_name(generation: int, bot_id: str, scope: Scope) -> str:
    digest = hashlib.sha1(f"{bot_id}\x1f{scope.key}".encode()).hexdigest()[:20]
    return f"{COLLECTION_PREFIX}{generation}-{digest}"


def _generation_of(name: str) -> int | None:
    if not name.startswith(COLLECTION_PREFIX):
        return None
    head = name[len(COLLECTION_PREFIX) :].split("-", 1)[0]
    return int(head) if head.isdigit() else None


class ChromaVectorIndex:
    """Embedded (persistent folder) or server Chroma, behind one small interface."""

    def __init__(self, settings: ChromaSettings, data_dir: Path) -> None:
        self._settings = settings
        self._data_dir = data_dir
        self._client: Any = None
        self._collections: dict[str, Any] = {}
        self._lock = threading.Lock()
        self.embedded_calls = EmbeddedCalls(settings.call_timeout_seconds)

    async def off_loop(self, operation: str, call: Callable[[], _R]) -> _R:
        """Run blocking index work for a caller on the event loop: embedded, on the index thread
        (the index calls inside it run there directly); against a server, on a worker thread."""
        if self._settings.mode == "server":
            return await asyncio.to_thread(call)
        return await self.embedded_calls.run_async(operation, call)

    @property
    def description(self) -> str:
        if self._settings.mode == "server":
            scheme = "https" if self._settings.ssl else "http"
            return f"server {scheme}://{self._settings.host}:{self._settings.port}"
        return f"embedded {self._path()}"

    def _path(self) -> Path:
        path = Path(self._settings.path)
        return path if path.is_absolute() else self._data_dir / path

    def _connect(self):  # type: ignore[no-untyped-def]
        if self._client is not None:
            return self._client
        with self._lock:
            if self._client is None:
                import chromadb
                from chromadb.config import Settings

                chroma_settings = Settings(anonymized_telemetry=False, allow_reset=False)
                try:
                    if self._settings.mode == "server":
                        self._client = chromadb.HttpClient(
                            host=self._settings.host,
                            port=self._settings.port,
                            ssl=self._settings.ssl,
                            headers=self._settings.headers or None,
                            settings=chroma_settings,
                            tenant=self._settings.tenant,
                            database=self._settings.database,
                        )
                    else:
                        self._path().mkdir(parents=True, exist_ok=True)
                        self._client = chromadb.PersistentClient(
                            path=str(self._path()),
                            settings=chroma_settings,
                            tenant=self._settings.tenant,
                            database=self._settings.database,
                        )
                except Exception as error:  # chromadb raises many unrelated types here
                    raise IndexUnavailable(en=f"cannot open Chroma ({self.description}): {error}") from error
        return self._client

    def _collection(self, name: str, create: bool):  # type: ignore[no-untyped-def]
        cached = self._collections.get(name)
        if cached is not None:
            return cached
        client = self._connect()
        try:
            if create:
                collection = client.get_or_create_collection(
                    name, metadata=COLLECTION_METADATA, embedding_function=None
                )
            else:
                collection = client.get_collection(name, embedding_function=None)
        except Exception as error:
            if not create and type(error).__name__ in ("NotFoundError", "InvalidCollectionException"):
                return None
            raise IndexUnavailable(en=f"chroma collection {name}: {error}") from error
        self._collections[name] = collection
        return collection

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
        with self._lock:
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
        if not ids:
            return
        name = collection_name(generation, bot_id, scope)
        try:
            collection = self._collection(name, create=True)
            collection.upsert(
                ids=[str(memory_id) for memory_id in ids],
                embeddings=np.asarray(vectors, dtype=np.float32),
                metadatas=list(metadatas),
            )
        except IndexUnavailable:
            raise
        except Exception as error:
            self._reset_client()
            raise IndexUnavailable(en=f"chroma upsert into {name}: {error}") from error

    @_on_index_thread
    def delete(self, generation: int, bot_id: str, scope: Scope, ids: Sequence[int]) -> None:
        if not ids:
            return
        name = collection_name(generation, bot_id, scope)
        try:
            collection = self._collection(name, create=False)
            if collection is not None:
                collection.delete(ids=[str(memory_id) for memory_id in ids])
        except IndexUnavailable:
            raise
        except Exception as error:
            self._reset_client()
            raise IndexUnavailable(en=f"chroma delete from {name}: {error}") from error

    @_on_index_thread
    def query(
        self,
        generation: int,
        bot_id: str,
        scope: Scope,
        vector: np.ndarray,
        limit: int,
        where: dict[str, object] | None = None,
    ) -> list[VectorHit]:
        name = collection_name(generation, bot_id, scope)
        try:
            collection = self._collection(name, create=False)
            if collection is None:
                return []
            result = collection.query(
                query_embeddings=np.asarray(vector, dtype=np.float32)[None, :],
                n_results=limit,
                where=where or None,
                include=["distances", "embeddings"],
            )
        except IndexUnavailable:
            raise
        except Exception as error:
            self._reset_client()
            raise IndexUnavailable(en=f"chroma query on {name}: {error}") from error
        ids = result["ids"][0] if result["ids"] else []
        distances = result["distances"][0] if result.get("distances") else []
        embeddings = result.get("embeddings")
        vectors = embeddings[0] if embeddings is not None and len(embeddings) else [None] * len(ids)
        return [
            VectorHit(int(memory_id), 1.0 - float(distance), None if vector is None else np.asarray(vector, np.float32))
            for memory_id, distance, vector in zip(ids, distances, vectors, strict=True)
        ]

    @_on_index_thread
    def count(self, generation: int, bot_id: str, scope: Scope) -> int:
        collection = self._collection(collection_name(generation, bot_id, scope), create=False)
        return 0 if collection is None else int(collection.count())

    @_on_index_thread
    def collections(self) -> list[tuple[str, int | None]]:
        """Every collection this plugin owns, with its generation."""
        try:
            names: Iterable[object] = self._connect().list_collections()
        except IndexUnavailable:
            raise
        except Exception as error:
            self._reset_client()
            raise IndexUnavailable(en=f"chroma list_collections: {error}") from error
        result: list[tuple[str, int | None]] = []
        for item in names:
            name = item if isinstance(item, str) else getattr(item, "name", str(item))
            generation = _generation_of(name)
            if generation is not None:
                result.append((name, generation))
        return result

    def total_count(self, generation: int) -> int:
        """Vectors in every collection of ``generation`` (one index call per collection, so a
        bank of many chats never makes one call long enough to hit the deadline)."""
        return sum(self._count_collection(name) for name, found in self.collections() if found == generation)

    @_on_index_thread
    def _count_collection(self, name: str) -> int:
        collection = self._collection(name, create=False)
        return 0 if collection is None else int(collection.count())

    def drop_generations(self, keep: int) -> int:
        """Delete every collection of a generation other than ``keep``; returns how many."""
        doomed = [name for name, generation in self.collections() if generation != keep]
        for name in doomed:
            self._drop_collection(name)
        return len(doomed)

    @_on_index_thread
    def _drop_collection(self, name: str) -> None:
        try:
            self._connect().delete_collection(name)
        except Exception as error:
            raise IndexUnavailable(en=f"chroma delete_collection {name}: {error}") from error
        self._collections.pop(name, None)
