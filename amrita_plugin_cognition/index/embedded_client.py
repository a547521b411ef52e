"""The embedded Chroma client, with a bound on the vector indexes it keeps in memory.

Each chat is a collection of its own, and chromadb keeps every collection's HNSW index it has
loaded in memory up to a count it derives from the process's open-file limit (soft
``RLIMIT_NOFILE`` // 5): 204 indexes under the common limit of 1,024, 4,000 at 20,000, 200,000 in
a container started with 1,048,576, which is no bound at all. An index takes about 2.6 MB from its
first vector (room for 1,000 vectors of 512 floats is allocated up front; measured: 100 new
collections of 1, 3 or 30 vectors each grew the process by 263–276 MB), so a bot that meets a
thousand chats grew by gigabytes and never gave them back. With the bound, the least recently
used index is dropped and read back from its folder when its chat is asked again (about 1 ms more
per query: bench/index_memory.py). chromadb loses what was not saved of an index it drops, so
every write is saved before its call returns (``index/collections.py``, ``SYNC_EVERY``). The bound
is ``chroma.cached_indexes`` (64 by default; 0 keeps chromadb's own count).

chromadb has no setting for that count, so the client's system is made here as chromadb makes it,
with the count set before the system starts, and the client made from it (``Client.from_system``).
Where the installed chromadb has no such count any more, the client opens with chromadb's own and
a warning says the bound is not applied.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

logger = logging.getLogger("cognition")
#: One folder, one system in this process (chromadb's own registry is not locked either).
_opening = threading.Lock()


def open_persistent(path: Path, settings: Any, tenant: str, database: str, cached_indexes: int) -> Any:
    """A persistent chromadb client for the folder ``path`` (``chromadb.PersistentClient``) that
    keeps at most ``cached_indexes`` collections' vector indexes in memory (fewer if chromadb's
    own count is lower; 0: chromadb's own count). A folder this process already has open shares its
    system, as chromadb's own clients do (the first one's bound holds)."""
    import chromadb

    if cached_indexes > 0:
        with _opening:
            bounded = _bounded_client(path, settings, tenant, database, cached_indexes)
        if bounded is not None:
            return bounded
    return chromadb.PersistentClient(path=str(path), settings=settings, tenant=tenant, database=database)


def _bounded_client(path: Path, settings: Any, tenant: str, database: str, cached_indexes: int) -> Any:
    """The client on a system of its own whose index cache holds ``cached_indexes``; None when
    the folder's system already exists in this process or chromadb's internals moved (warned)."""
    import chromadb
    from chromadb.api import ServerAPI
    from chromadb.api.client import Client
    from chromadb.api.shared_system_client import SharedSystemClient
    from chromadb.config import System
    from chromadb.telemetry.product import ProductTelemetryClient

    systems = getattr(SharedSystemClient, "_identifier_to_system", None)
    if isinstance(systems, dict) and str(path) in systems:
        return None
    settings.persist_directory = str(path)
    settings.is_persistent = True
    system = System(settings)
    system.instance(ProductTelemetryClient)  # type: ignore[type-abstract]  # chromadb's own calls
    server: Any = system.instance(ServerAPI)  # type: ignore[type-abstract]
    own = getattr(server, "hnsw_cache_size", None)
    if not isinstance(systems, dict) or not isinstance(own, int):
        logger.warning(
            "[cognition] stage=vector_index cannot bound the embedded index cache (chromadb %s): it keeps "
            "up to its own count of collections in memory",
            chromadb.__version__,
        )
        return None
    server.hnsw_cache_size = max(1, min(own, cached_indexes))
    system.start()
    # registers the system under the folder; a client that fails its checks stops and drops it
    return Client.from_system(system, tenant=tenant, database=database)
