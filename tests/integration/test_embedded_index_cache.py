"""The embedded index keeps at most ``chroma.cached_indexes`` chats' vector indexes in memory
(``index/embedded_client.py``): chromadb's index cache is built with that count, and a chat whose
index was dropped from memory is read back from the folder with every vector it had; a second
index of the process on the same folder shares the first one's system."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from amrita_plugin_cognition.config import ChromaSettings
from amrita_plugin_cognition.domain.records import Scope
from amrita_plugin_cognition.index.vector import ChromaVectorIndex

CHATS = 8
PER_CHAT = 12
DIMENSIONS = 512


def _vectors(chat: int) -> np.ndarray:
    return np.random.default_rng(chat).standard_normal((PER_CHAT, DIMENSIONS)).astype(np.float32)


def test_chromadb_is_given_the_bound_and_a_chat_whose_index_was_dropped_reads_back_whole(tmp_path: Path) -> None:
    settings = ChromaSettings(mode="embedded", path=str(tmp_path / "chroma"), cached_indexes=2)
    index = ChromaVectorIndex(settings, tmp_path)
    try:
        index.open()
        # the count chromadb's index cache is built with (its own would be the open-file limit / 5);
        # what the bound saves is measured by bench/index_memory.py
        assert index._client._server.hnsw_cache_size == 2
        for chat in range(CHATS):
            ids = [chat * 1000 + row for row in range(PER_CHAT)]
            index.upsert(0, "42", Scope("group", str(chat)), ids, _vectors(chat), [{"t": 0}] * PER_CHAT)
            index.query(0, "42", Scope("group", str(chat)), _vectors(chat)[0], 1)
        for chat in range(CHATS):  # the first chats' indexes left memory long ago: read back whole
            vectors = _vectors(chat)
            for row in range(PER_CHAT):
                hits = index.query(0, "42", Scope("group", str(chat)), vectors[row], 1)
                assert [hit.memory_id for hit in hits] == [chat * 1000 + row]
        # a second index of this process on the folder shares chromadb's one system for it (two
        # would write one SQLite file unaware of each other)
        second = ChromaVectorIndex(ChromaSettings(mode="embedded", path=str(tmp_path / "chroma")), tmp_path)
        try:
            second.open()
            assert second._client._server is index._client._server
            hits = second.query(0, "42", Scope("group", "0"), _vectors(0)[3], 1)
            assert [hit.memory_id for hit in hits] == [3]
        finally:
            second.close()
    finally:
        index.close()
