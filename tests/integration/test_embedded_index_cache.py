"""The embedded index keeps at most ``chroma.cached_indexes`` chats' vector indexes in memory
(``index/embedded_client.py``): chromadb's index cache is built with that count, and a chat whose
index was dropped from memory is read back from the folder with exactly the vectors it had, small
chats and chats written one vector at a time too (chromadb loses what it had not saved of an index
it drops: ``SYNC_EVERY``, each write saved before it returns); a
collection made when indexes were saved every 10 writes is brought to ``SYNC_EVERY`` when opened;
a second index of the process on the same folder shares the first one's system."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from amrita_plugin_cognition.config import ChromaSettings
from amrita_plugin_cognition.domain.records import Scope
from amrita_plugin_cognition.index.collections import SYNC_EVERY, collection_name
from amrita_plugin_cognition.index.vector import ChromaVectorIndex

CHATS = 20
DIMENSIONS = 512


def _vectors(chat: int, count: int) -> np.ndarray:
    return np.random.default_rng(chat).standard_normal((count, DIMENSIONS)).astype(np.float32)


def _size(chat: int) -> int:
    return 2 + chat % 8  # 2-9 memories: below the old saving interval of 10


def test_small_chats_whose_indexes_left_memory_read_back_whole(tmp_path: Path) -> None:
    settings = ChromaSettings(mode="embedded", path=str(tmp_path / "chroma"), cached_indexes=2)
    index = ChromaVectorIndex(settings, tmp_path)
    try:
        index.open()
        # the count chromadb's index cache is built with (its own would be the open-file limit / 5);
        # what the bound saves is measured by bench/index_memory.py
        assert index._client._server.hnsw_cache_size == 2
        for chat in range(CHATS):  # written and asked in turn, as chats are
            ids = [chat * 1000 + row for row in range(_size(chat))]
            scope = Scope("group", str(chat))
            index.upsert(0, "42", scope, ids, _vectors(chat, _size(chat)), [{"t": 0}] * _size(chat))
            index.query(0, "42", scope, _vectors(chat, _size(chat))[0], 1)
        for chat in range(CHATS):  # the first chats' indexes left memory long ago: read back whole
            vectors = _vectors(chat, _size(chat))
            for row in range(_size(chat)):
                hits = index.query(0, "42", Scope("group", str(chat)), vectors[row], 1, missing_ok=False)
                assert [hit.memory_id for hit in hits] == [chat * 1000 + row]
        second = ChromaVectorIndex(ChromaSettings(mode="embedded", path=str(tmp_path / "chroma")), tmp_path)
        try:  # two systems would write one SQLite file unaware of each other
            second.open()
            assert second._client._server is index._client._server
            hits = second.query(0, "42", Scope("group", "0"), _vectors(0, _size(0))[1], 1)
            assert [hit.memory_id for hit in hits] == [1]
        finally:
            second.close()
    finally:
        index.close()


def test_a_collection_saved_every_ten_writes_is_brought_to_the_new_interval_when_opened(tmp_path: Path) -> None:
    import chromadb
    from chromadb.config import Settings

    name = collection_name(0, "42", Scope("group", "1"))
    old = chromadb.PersistentClient(path=str(tmp_path / "chroma"), settings=Settings(anonymized_telemetry=False))
    made = old.create_collection(
        name,
        metadata={"hnsw:space": "cosine", "hnsw:sync_threshold": 10, "hnsw:batch_size": 10},
        embedding_function=None,
    )
    made.add(ids=["7"], embeddings=_vectors(1, 1))
    assert made.configuration_json["hnsw"]["sync_threshold"] == 10
    old.close()
    index = ChromaVectorIndex(ChromaSettings(mode="embedded", path=str(tmp_path / "chroma")), tmp_path)
    try:
        assert [hit.memory_id for hit in index.query(0, "42", Scope("group", "1"), _vectors(1, 1)[0], 1)] == [7]
        client = index._client
        assert client.get_collection(name).configuration_json["hnsw"]["sync_threshold"] == SYNC_EVERY
    finally:
        index.close()


def test_a_refused_update_of_the_saving_interval_is_logged_not_raised(caplog) -> None:  # type: ignore[no-untyped-def]
    from amrita_plugin_cognition.index import connection

    class Refusing:
        def modify(self, **_: object) -> None:
            raise ValueError("configuration cannot be changed on this server")

    connection._save_more_often("cog1-abc", Refusing())
    assert "saving interval unchanged: configuration cannot be changed" in caplog.text


def test_by_default_at_most_64_indexes_stay_in_memory(tmp_path: Path) -> None:
    import resource

    index = ChromaVectorIndex(ChromaSettings(mode="embedded", path=str(tmp_path / "chroma")), tmp_path)
    try:
        index.open()
        own = resource.getrlimit(resource.RLIMIT_NOFILE)[0] // 5
        assert index._client._server.hnsw_cache_size == min(64, own)
    finally:
        index.close()
    unbounded = ChromaVectorIndex(
        ChromaSettings(mode="embedded", path=str(tmp_path / "chroma"), cached_indexes=0), tmp_path
    )
    try:  # 0: chromadb's own count
        unbounded.open()
        assert unbounded._client._server.hnsw_cache_size == own
    finally:
        unbounded.close()


def test_chats_written_and_erased_a_few_vectors_at_a_time_read_back_exactly(tmp_path: Path) -> None:
    """Chats written and erased one to five vectors at a time, in random turn, under a bound of 2:
    every chat's index leaves memory between its writes, and each must read back with exactly
    the vectors it has (no write lost, no delete undone; a chat erased whole finds nothing and
    raises nothing)."""
    import random

    rng = random.Random(1)
    index = ChromaVectorIndex(
        ChromaSettings(mode="embedded", path=str(tmp_path / "chroma"), cached_indexes=2), tmp_path
    )
    chats = 30
    held: dict[int, dict[int, np.ndarray]] = {chat: {} for chat in range(chats)}
    probe = np.ones(64, dtype=np.float32)
    next_id = 0
    try:
        index.open()
        for _ in range(400):
            chat = rng.randrange(chats)
            scope = Scope("group", str(chat))
            if held[chat] and rng.random() < 0.3:
                gone = rng.sample(sorted(held[chat]), min(len(held[chat]), rng.choice([1, 1, 2, 3])))
                index.delete(0, "42", scope, gone)
                for memory_id in gone:
                    del held[chat][memory_id]
            else:
                count = rng.choice([1, 1, 1, 2, 3, 5])
                ids = list(range(next_id, next_id + count))
                next_id += count
                vectors = np.random.default_rng(next_id).standard_normal((count, 64)).astype(np.float32)
                index.upsert(0, "42", scope, ids, vectors, [{"t": 0}] * count)
                held[chat].update(zip(ids, vectors, strict=True))
            index.query(0, "42", scope, probe, 1)
        for chat in range(0, chats, 3):  # a chat whose every vector was erased has nothing to find
            if held[chat]:
                index.delete(0, "42", Scope("group", str(chat)), sorted(held[chat]))
                held[chat].clear()
            index.query(0, "42", Scope("group", str(chat + 1)), probe, 1)
        wrong = []
        for chat in range(chats):
            scope = Scope("group", str(chat))
            for memory_id, vector in held[chat].items():
                if [hit.memory_id for hit in index.query(0, "42", scope, vector, 1)] != [memory_id]:
                    wrong.append((chat, memory_id))
            stored = {hit.memory_id for hit in index.query(0, "42", scope, probe, 100)}
            if stored != set(held[chat]):
                wrong.append((chat, sorted(stored ^ set(held[chat]))))
        assert wrong == []
    finally:
        index.close()
