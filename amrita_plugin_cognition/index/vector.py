"""The vector index in Chroma: derived from SQL, one collection per (bot account, scope).

Layout, chosen by measurement (bench/recall_latency.py): a ``where`` scope filter on one shared
collection costs a filtered HNSW search over every scope's vectors, while a collection per
scope is searched alone, so the cost of a query depends on that chat's size only. A collection
name is the generation plus a hash of (bot, scope): ``reindex`` builds generation N+1 beside N
and the authority store's meta row switches between them in one transaction.

All methods are blocking; the engine calls them from worker threads. With the embedded client
they run one at a time: Chroma's embedded (Rust) client has an open report of a deadlock under
concurrent writes and queries (chroma-core/chroma#4038), and a demo run here once hung with an
idle event loop while a drain and a recall overlapped. A query waits for a write batch at most.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import wraps
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import numpy as np

from ..config import ChromaSettings
from ..domain.records import Scope

COLLECTION_PREFIX = "cog"
_P = ParamSpec("_P")
_R = TypeVar("_R")


def _one_at_a_time(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """Serialise the calls of an embedded index (see the module docstring)."""

    @wraps(method)
    def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        index = args[0]
        assert isinstance(index, ChromaVectorIndex)
        if index._settings.mode == "server":
            return method(*args, **kwargs)
        with index._calls:
            return method(*args, **kwargs)

    return call


class VectorIndexError(RuntimeError):
    """Chroma is unreachable or refused the operation."""


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
        self._calls = threading.RLock()

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
                    raise VectorIndexError(f"cannot open Chroma ({self.description}): {error}") from error
        return self._client

    def _collection(self, name: str, create: bool):  # type: ignore[no-untyped-def]
        cached = self._collections.get(name)
        if cached is not None:
            return cached
        client = self._connect()
        try:
            if create:
                collection = client.get_or_create_collection(
                    name, metadata={"hnsw:space": "cosine"}, embedding_function=None
                )
            else:
                collection = client.get_collection(name, embedding_function=None)
        except Exception as error:
            if not create and type(error).__name__ in ("NotFoundError", "InvalidCollectionException"):
                return None
            raise VectorIndexError(f"chroma collection {name}: {error}") from error
        self._collections[name] = collection
        return collection

    @_one_at_a_time
    def heartbeat(self) -> None:
        try:
            self._connect().heartbeat()
        except VectorIndexError:
            raise
        except Exception as error:
            self._reset_client()
            raise VectorIndexError(f"chroma heartbeat failed: {error}") from error

    def _reset_client(self) -> None:
        with self._lock:
            self._client = None
            self._collections.clear()

    @_one_at_a_time
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
        except VectorIndexError:
            raise
        except Exception as error:
            self._reset_client()
            raise VectorIndexError(f"chroma upsert into {name}: {error}") from error

    @_one_at_a_time
    def delete(self, generation: int, bot_id: str, scope: Scope, ids: Sequence[int]) -> None:
        if not ids:
            return
        name = collection_name(generation, bot_id, scope)
        try:
            collection = self._collection(name, create=False)
            if collection is not None:
                collection.delete(ids=[str(memory_id) for memory_id in ids])
        except VectorIndexError:
            raise
        except Exception as error:
            self._reset_client()
            raise VectorIndexError(f"chroma delete from {name}: {error}") from error

    @_one_at_a_time
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
        except VectorIndexError:
            raise
        except Exception as error:
            self._reset_client()
            raise VectorIndexError(f"chroma query on {name}: {error}") from error
        ids = result["ids"][0] if result["ids"] else []
        distances = result["distances"][0] if result.get("distances") else []
        embeddings = result.get("embeddings")
        vectors = embeddings[0] if embeddings is not None and len(embeddings) else [None] * len(ids)
        return [
            VectorHit(int(memory_id), 1.0 - float(distance), None if vector is None else np.asarray(vector, np.float32))
            for memory_id, distance, vector in zip(ids, distances, vectors, strict=True)
        ]

    @_one_at_a_time
    def count(self, generation: int, bot_id: str, scope: Scope) -> int:
        collection = self._collection(collection_name(generation, bot_id, scope), create=False)
        return 0 if collection is None else int(collection.count())

    @_one_at_a_time
    def collections(self) -> list[tuple[str, int | None]]:
        """Every collection this plugin owns, with its generation."""
        try:
            names: Iterable[object] = self._connect().list_collections()
        except VectorIndexError:
            raise
        except Exception as error:
            self._reset_client()
            raise VectorIndexError(f"chroma list_collections: {error}") from error
        result: list[tuple[str, int | None]] = []
        for item in names:
            name = item if isinstance(item, str) else getattr(item, "name", str(item))
            generation = _generation_of(name)
            if generation is not None:
                result.append((name, generation))
        return result

    @_one_at_a_time
    def total_count(self, generation: int) -> int:
        total = 0
        for name, collection_generation in self.collections():
            if collection_generation == generation:
                collection = self._collection(name, create=False)
                total += 0 if collection is None else int(collection.count())
        return total

    @_one_at_a_time
    def drop_generations(self, keep: int) -> int:
        """Delete every collection of a generation other than ``keep``; returns how many."""
        dropped = 0
        for name, generation in self.collections():
            if generation != keep:
                try:
                    self._connect().delete_collection(name)
                except Exception as error:
                    raise VectorIndexError(f"chroma delete_collection {name}: {error}") from error
                self._collections.pop(name, None)
                dropped += 1
        return dropped
