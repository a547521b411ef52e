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
from chroma_readers import assert_reads_as_the_client, fill, vector

from amrita_plugin_cognition.errors import IndexUnavailable
from amrita_plugin_cognition.index.chroma_rest import ChromaRestClient
from amrita_plugin_cognition.index.collections import is_missing

TENANT = "default_tenant"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def server(chroma_port: int | None) -> tuple[int, str]:
    """The worker's Chroma server and a fresh database on it, with three collections (one big,
    one small, one empty) and one more in another database."""
    if chroma_port is None:
        pytest.skip("needs a Chroma server (the suite's server run: COGNITION_TEST_BACKEND=server)")
    database = f"rest_{uuid.uuid4().hex[:12]}"
    for name in (database, f"{database}_other"):
        admin(chroma_port).create_database(name, tenant=TENANT)
    fill(client_of(chroma_port, database), client_of(chroma_port, f"{database}_other"), big=1_200)
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
        assert assert_reads_as_the_client(reader, client, page=400) == {"g1_big", "g1_small", "g1_empty"}
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
