"""Chroma collections of the plugin: names, metadata, and what Chroma says about them.

A collection is one chat of one bot account in one generation of the index, named
``cog<generation>-<sha1(bot, scope)>``, or the profile cards of one bot account in one
generation, named ``cog<generation>-<sha1(bot, "profiles")>``, or the knowledge entries of one bot
account, ``cog<generation>-<sha1(bot, "knowledge")>`` (a scope key always has a colon, so these
never collide). The name cannot be read back, so a collection also keeps its bot and
scope (``profiles`` for cards) in its metadata (``stored_ids`` maps collections to owners with it).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

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
#: Every 2 writes, not 10: chromadb keeps a bounded number of loaded indexes in memory
#: (``index/embedded_client.py``; a Chroma server its own count), and writes still waiting to be
#: saved when it drops an index are lost: an index never saved cannot be read back at all ("Error
#: creating hnsw segment reader: Nothing found on disk", for every query of that chat until the
#: process restarts), and one saved before keeps its older state (a vector written since is not
#: found, one deleted since comes back). Measured with 2 indexes kept: chats of 2-9 vectors, 2-5
#: of 20 broken in each run saved every 10 writes; a chat written one vector at a time, 2-4 of 36
#: vectors lost saved every 2; a single delete undone in 2 of 12 chats. So every write leaves
#: nothing waiting: a call of fewer records than ``SYNC_EVERY`` is made again (``vector.py``,
#: ``_saved_write``; chromadb refuses an interval of 1). Cost measured one write at a time, every 10
#: -> every 2: 5,000 vectors p50 4.4 -> 8.1 ms, p95 9.3 -> 9.9; 20,000 vectors p50 7.0 -> 16.0, p95
#: 21.1 -> 20.5; with the repeat, 5,000 vectors p50 16 ms, p95 18-19; queries unchanged.
SYNC_EVERY = 2
COLLECTION_METADATA: dict[str, str | int] = {
    "hnsw:space": "cosine",
    "hnsw:sync_threshold": SYNC_EVERY,
    "hnsw:batch_size": SYNC_EVERY,
}
#: ``SYNC_EVERY`` as an update of a collection's configuration: a collection made when indexes
#: were saved every 10 writes is brought to it when this process first opens it.
SYNC_UPDATE: dict[str, dict[str, int]] = {"hnsw": {"sync_threshold": SYNC_EVERY, "batch_size": SYNC_EVERY}}


def saved_too_rarely(configuration: object) -> bool:
    """Whether a collection's configuration (chromadb's ``configuration_json``) saves its index
    after more than ``SYNC_EVERY`` writes."""
    hnsw = configuration.get("hnsw") if isinstance(configuration, dict) else None
    threshold = hnsw.get("sync_threshold") if isinstance(hnsw, dict) else None
    return isinstance(threshold, int) and threshold > SYNC_EVERY


#: Collection metadata naming its owner (the name is a hash); collections made before these
#: keys existed are mapped back through the (bot, scope) pairs the caller knows.
BOT_KEY = "cognition_bot_id"
SCOPE_KEY = "cognition_scope"
#: ``SCOPE_KEY`` of a bot account's card collection (and the label its ids are reported under).
CARDS_SCOPE = "profiles"
#: ``SCOPE_KEY`` of a bot account's knowledge collection (ids: ``cognition_knowledge`` row ids).
KNOWLEDGE_SCOPE = "knowledge"


class CollectionMissing(IndexUnavailable):
    """Chroma says a collection does not exist: dropped since this index opened it (usually by a
    reindex in another process that switched the generation), or asked for as required."""

    zh_default = "向量索引的集合不存在（索引可能刚被重建）"
    en_default = "chroma collection missing"

    def __init__(self, name: str, detail: str = "") -> None:
        super().__init__(en=f"chroma collection {name} does not exist" + (f": {detail}" if detail else ""))
        self.collection = name


@dataclass(slots=True)
class StoredIds:
    """The memory ids stored in one generation's collections."""

    by_scope: dict[tuple[str, Scope], set[int]] = field(default_factory=dict)
    #: Bot account -> the card (profile row) ids stored in its card collection.
    cards: dict[str, set[int]] = field(default_factory=dict)
    #: Bot account -> the knowledge entry ids stored in its knowledge collection.
    knowledge: dict[str, set[int]] = field(default_factory=dict)
    #: Collections of the generation whose (bot, scope) neither their metadata nor the caller's
    #: known pairs name: collection name -> ids (every one of them is a vector of no known chat).
    unmapped: dict[str, set[int]] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return (
            sum(map(len, self.by_scope.values()))
            + sum(map(len, self.cards.values()))
            + sum(map(len, self.knowledge.values()))
            + sum(map(len, self.unmapped.values()))
        )


@dataclass(frozen=True, slots=True)
class Listed:
    name: str
    generation: int
    owner: tuple[str, Scope] | None
    #: The bot account whose card collection this is (None: a chat's collection, or unknown).
    cards_of: str | None = None
    #: The bot account whose knowledge collection this is.
    knowledge_of: str | None = None

    @property
    def of_chat(self) -> bool:
        """A chat's collection (or one of no known owner), not a bot account's cards or knowledge."""
        return self.cards_of is None and self.knowledge_of is None


def collection_name(generation: int, bot_id: str, scope: Scope) -> str:
    digest = hashlib.sha1(f"{bot_id}\x1f{scope.key}".encode()).hexdigest()[:20]
    return f"{COLLECTION_PREFIX}{generation}-{digest}"


def card_collection_name(generation: int, bot_id: str, kind: str = CARDS_SCOPE) -> str:
    """The collection of a bot account's profile cards (``kind``: or its knowledge entries) in
    ``generation``."""
    digest = hashlib.sha1(f"{bot_id}\x1f{kind}".encode()).hexdigest()[:20]
    return f"{COLLECTION_PREFIX}{generation}-{digest}"


def knowledge_collection_name(generation: int, bot_id: str) -> str:
    return card_collection_name(generation, bot_id, KNOWLEDGE_SCOPE)


def generation_of(name: str) -> int | None:
    if not name.startswith(COLLECTION_PREFIX):
        return None
    head = name[len(COLLECTION_PREFIX) :].split("-", 1)[0]
    return int(head) if head.isdigit() else None


def owner_of(name: str, generation: int, metadata: object) -> tuple[str, Scope] | None:
    """(bot, scope) as stored in a collection's metadata, if it names this very collection."""
    if not isinstance(metadata, dict):
        return None
    bot_id, scope_key = metadata.get(BOT_KEY), metadata.get(SCOPE_KEY)
    if not isinstance(bot_id, str) or not isinstance(scope_key, str):
        return None
    try:
        scope = Scope.parse(scope_key)
    except ValueError:
        return None
    return (bot_id, scope) if collection_name(generation, bot_id, scope) == name else None


def card_owner_of(name: str, generation: int, metadata: object, kind: str = CARDS_SCOPE) -> str | None:
    """The bot account of a card collection (``kind``: or a knowledge collection), as stored in
    its metadata, if it names this very collection."""
    if not isinstance(metadata, dict) or metadata.get(SCOPE_KEY) != kind:
        return None
    bot_id = metadata.get(BOT_KEY)
    if not isinstance(bot_id, str):
        return None
    return bot_id if card_collection_name(generation, bot_id, kind) == name else None


def is_missing(error: Exception) -> bool:
    """Chroma's answer for a collection that does not exist (embedded and HTTP clients alike)."""
    return type(error).__name__ in ("NotFoundError", "InvalidCollectionException") and "ollection" in str(error)
