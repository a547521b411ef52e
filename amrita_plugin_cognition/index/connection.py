"""The connection to Chroma: the client (embedded folder or server), its open collection handles,
and the thread every index call runs on.

All index methods are blocking; each runs on a thread of the index with a deadline
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
from collections.abc import Callable
from functools import partial, wraps
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import httpx
from cachetools import LRUCache

from ..config import ChromaSettings
from ..errors import IndexUnavailable
from .calls import IndexCalls
from .collections import (
    BOT_KEY,
    COLLECTION_METADATA,
    SCOPE_KEY,
    SYNC_UPDATE,
    CollectionMissing,
    is_missing,
    saved_too_rarely,
)
from .owner import FolderHold, hold_folder

#: Collection handles kept open per index (least recently used dropped; reopened on demand).
COLLECTION_HANDLES = 4096
#: Server mode: calls that may run side by side (each waits on HTTP, not on the CPU).
SERVER_WORKERS = 8
#: Server mode: an HTTP request times out at this share of the call's deadline, so a hung
#: server's call ends by itself, with the reason, before its caller gives up on it.
HTTP_TIMEOUT_SHARE = 0.9
_P = ParamSpec("_P")
_R = TypeVar("_R")
logger = logging.getLogger("cognition")


def on_index_thread(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """The call runs on a thread of the index, with its deadline (index/calls.py)."""

    @wraps(method)
    def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        index = args[0]
        assert isinstance(index, ChromaConnection)
        return index.calls.run(method.__name__, partial(method, *args, **kwargs))

    return call


class ChromaConnection:
    """Embedded (persistent folder) or server Chroma: the client, the collection handles, and
    the errors to raise for a failed call. The index's inventory and its reads and writes build
    on it (``index/inventory.py``, ``index/vector.py``)."""

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
        #: Serve the reads without chromadb's client (``read_without_client``): the read commands
        #: of the CLI ask for it.
        self._read_only = False
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

    @on_index_thread
    def open(self) -> None:
        """Connect now instead of at the first call: against a server, check that it answers;
        embedded, take the folder (``IndexLocked`` when another process holds it)."""
        self._connect()

    def read_without_client(self) -> None:
        """Serve the reads (collections, counts, ids) without importing chromadb: embedded, from the
        folder's SQLite file under the folder's hold, when the installed chromadb's file layout is
        the one ``index/chroma_file.py`` reads (otherwise the client opens as always); against a
        server, over its HTTP API with httpx (``index/chroma_rest.py``). For an index that only
        reads (the CLI's read commands): nothing can be written through it."""
        self._read_only = True

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
        if self._hold is None:
            self._hold = hold_folder(self._path())  # IndexLocked: another process has it
        if self._read_only:
            from .chroma_file import open_chroma_file

            reader = open_chroma_file(self._path(), self._settings.tenant, self._settings.database)
            if reader is not None:
                return reader
        from .embedded_client import open_persistent

        try:
            return open_persistent(
                self._path(),
                self._chroma_settings(),
                self._settings.tenant,
                self._settings.database,
                self._settings.cached_indexes,
            )
        except Exception as error:  # chromadb raises many unrelated types here
            raise IndexUnavailable(en=f"cannot open Chroma ({self.description}): {error}") from error

    def _open_server(self):  # type: ignore[no-untyped-def]
        # chromadb's HTTP client waits without limit (httpx ``timeout=None``), including in its
        # constructor (identity, tenant and database checks): ask the server first, with the
        # deadline, so a hung server is found here and not inside the constructor.
        scheme = "https" if self._settings.ssl else "http"
        root = f"{scheme}://{self._settings.host}:{self._settings.port}"
        try:
            httpx.get(
                f"{root}/api/v2/heartbeat", headers=self._settings.headers or None, timeout=self._http_timeout
            ).raise_for_status()
        except Exception as error:
            raise IndexUnavailable(en=f"cannot reach Chroma ({self.description}): {error}") from error
        if self._read_only:
            from .chroma_rest import ChromaRestClient

            try:
                return ChromaRestClient(
                    root, self._settings.tenant, self._settings.database, self._settings.headers, self._http_timeout
                )
            except IndexUnavailable:
                raise
            except Exception as error:  # httpx's own: the server went away after the heartbeat
                raise IndexUnavailable(en=f"cannot reach Chroma ({self.description}): {error}") from error
        import chromadb

        try:
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
            self.calls.stop()
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
            if not self._read_only and saved_too_rarely(getattr(collection, "configuration_json", None)):
                _save_more_often(name, collection)
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

    @on_index_thread
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


def _limit_http_requests(client: Any, seconds: float) -> None:
    """Give the HTTP session inside chromadb's client (created with no timeout) a timeout per
    request, so a call given up on at its deadline also ends by itself on a hung server."""
    session = getattr(getattr(client, "_server", None), "_session", None)
    if isinstance(session, httpx.Client):
        session.timeout = httpx.Timeout(seconds)
    else:  # the deadline still holds for the caller; only the given-up thread may linger
        logger.warning("[cognition] stage=vector_index cannot set the Chroma HTTP timeout (client internals changed)")


def _save_more_often(name: str, collection: Any) -> None:
    """Bring a collection made when indexes were saved every 10 writes to ``SYNC_EVERY``
    (``index/collections.py``). A refusal leaves it working as it was, and is logged."""
    try:
        collection.modify(configuration=SYNC_UPDATE)
    except Exception as error:  # chromadb raises many unrelated types here
        logger.warning("[cognition] stage=vector_index collection=%s saving interval unchanged: %s", name, error)
