"""A Chroma server read over its HTTP API (``index/chroma_rest.py``) answers as chromadb's own
client does: the same collections with the same metadata, page by page, the same counts, the same
ids, after adds, upserts and deletes, in a database of its own with an empty collection and one
in another database; a missing collection is "missing" to the inventory; anything but reads is
refused. Through the index, the read commands' path imports no chromadb at all.

Needs a Chroma server: the suite's server run gives each worker one (``booting.py``)."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from amrita_plugin_cognition.errors import IndexUnavailable
from amrita_plugin_cognition.index.chroma_rest import ChromaRestClient
from amrita_plugin_cognition.index.collections import is_missing

TENANT = "default_tenant"
ROOT = Path(__file__).resolve().parents[2]


def vector(seed: int) -> list[float]:
    return [((seed * 7 + index * 3) % 11) / 11.0 + 0.01 for index in range(8)]


@pytest.fixture
def server(chroma_port: int | None) -> tuple[int, str]:
    """The worker's Chroma server and a fresh database on it, with three collections (one big,
    one small, one empty) and one more in another database."""
    if chroma_port is None:
        pytest.skip("needs a Chroma server (the suite's server run: COGNITION_TEST_BACKEND=server)")
    database = f"rest_{uuid.uuid4().hex[:12]}"
    for name in (database, f"{database}_other"):
        admin(chroma_port).create_database(name, tenant=TENANT)
    client = client_of(chroma_port, database)
    big = client.get_or_create_collection("g1_big", metadata={"bot": "1", "scope": "group:1", "n": 3, "f": 0.5})
    ids = [str(number) for number in range(1, 1_201)]
    big.add(ids=ids, embeddings=[vector(int(item)) for item in ids])
    big.delete(ids=[str(number) for number in range(100, 300)])
    big.upsert(ids=["5", "9999"], embeddings=[vector(5), vector(9999)])
    small = client.get_or_create_collection("g1_small", metadata={"bot": "2", "scope": "private:7", "flag": True})
    small.add(ids=["1", "2", "3"], embeddings=[vector(1), vector(2), vector(3)])
    small.delete(ids=["2"])
    client.get_or_create_collection("g1_empty")
    other = client_of(chroma_port, f"{database}_other")
    other.get_or_create_collection("g1_other").add(ids=["1"], embeddings=[vector(1)])
    return chroma_port, database


def admin(port: int):  # type: ignore[no-untyped-def]
    import chromadb
    from chromadb.config import Settings

    return chromadb.AdminClient(
        Settings(
            chroma_api_impl="chromadb.api.fastapi.FastAPI",
            chroma_server_host="127.0.0.1",
            chroma_server_http_port=port,
            anonymized_telemetry=False,
        )
    )


def client_of(port: int, database: str):  # type: ignore[no-untyped-def]
    import chromadb
    from chromadb.config import Settings

    return chromadb.HttpClient(
        host="127.0.0.1", port=port, settings=Settings(anonymized_telemetry=False), tenant=TENANT, database=database
    )


def reader_of(port: int, database: str) -> ChromaRestClient:
    return ChromaRestClient(f"http://127.0.0.1:{port}", TENANT, database, {}, 30.0)


def test_the_server_answers_as_the_client(server: tuple[int, str]) -> None:
    port, database = server
    reader, client = reader_of(port, database), client_of(port, database)
    try:
        expected = {item.name: dict(item.metadata or {}) for item in client.list_collections()}
        found = {item.name: item.metadata for item in reader.list_collections(limit=1000)}
        assert found == expected and set(found) == {"g1_big", "g1_small", "g1_empty"}
        paged = [item.name for offset in (0, 1, 2, 3) for item in reader.list_collections(limit=1, offset=offset)]
        assert sorted(paged) == sorted(expected)
        for name in expected:
            theirs, ours = client.get_collection(name), reader.get_collection(name)
            assert ours.count() == theirs.count()
            their_ids = set(theirs.get(include=[])["ids"])
            our_ids: set[str] = set()
            offset = 0
            while page := ours.get(limit=400, offset=offset, include=[])["ids"]:
                our_ids.update(page)
                offset += len(page)
            assert our_ids == their_ids
        assert reader.get_collection("g1_big").count() == 1_001  # 1,200 − 200 deleted + 1 new by upsert
        assert reader.heartbeat() > 0
    finally:
        reader.close()


def test_a_missing_collection_is_missing_and_anything_but_reads_is_refused(server: tuple[int, str]) -> None:
    port, database = server
    reader = reader_of(port, database)
    try:
        with pytest.raises(Exception) as missing:
            reader.get_collection("g1_nothing")
        assert is_missing(missing.value)
        with pytest.raises(IndexUnavailable):
            reader.delete_collection("g1_big")
        with pytest.raises(IndexUnavailable):
            reader.get_collection("g1_big").upsert(ids=["1"], embeddings=[vector(1)])
        with pytest.raises(IndexUnavailable):
            reader.get_collection("g1_big").get(limit=10, include=["embeddings"])
        with pytest.raises(IndexUnavailable, match="not found"):  # no such database: the server's words
            reader_of(port, f"{database}_none")
    finally:
        reader.close()


#: The index as the read commands open it (``read_without_client``), in a process of its own:
#: counts and ids through the inventory, and whether chromadb was imported on the way.
PROBE = """
import json, sys
from pathlib import Path
from amrita_plugin_cognition.config import ChromaSettings
from amrita_plugin_cognition.index.vector import ChromaVectorIndex

port, database = int(sys.argv[1]), sys.argv[2]
settings = ChromaSettings(mode="server", host="127.0.0.1", port=port, database=database)
index = ChromaVectorIndex(settings, Path("."))
index.read_without_client()
counts = {name: index._count_collection(name) for name in ("g1_big", "g1_small", "g1_empty", "g1_nothing")}
print(json.dumps({"counts": counts, "chromadb": "chromadb" in sys.modules}))
"""


def test_the_read_path_counts_through_the_index_without_importing_chromadb(server: tuple[int, str]) -> None:
    port, database = server
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(port), database],
        capture_output=True, text=True, timeout=120, cwd=ROOT, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer["counts"] == {"g1_big": 1_001, "g1_small": 2, "g1_empty": 0, "g1_nothing": 0}
    assert answer["chromadb"] is False
