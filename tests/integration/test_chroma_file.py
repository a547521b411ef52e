"""The embedded index read from its SQLite file (``index/chroma_file.py``) answers as chromadb's
own client does: the same collections with the same metadata, the same counts, the same ids page
by page, after adds, upserts and deletes, in a folder with several collections, an empty one and
one of another database; a missing collection is "missing" to the inventory. It steps aside
(None: the client opens) for another chromadb release, another layout, and writes logged but
not applied."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from chroma_readers import assert_reads_as_the_client, fill, vector

from amrita_plugin_cognition.errors import IndexUnavailable
from amrita_plugin_cognition.index import chroma_file
from amrita_plugin_cognition.index.chroma_file import open_chroma_file
from amrita_plugin_cognition.index.collections import is_missing

TENANT, DATABASE = "default_tenant", "default_database"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import chromadb
    from chromadb.config import Settings

    path = tmp_path_factory.mktemp("chroma-file") / "chroma"
    client = chromadb.PersistentClient(path=str(path), settings=Settings(anonymized_telemetry=False))
    settings = Settings(anonymized_telemetry=False, is_persistent=True, persist_directory=str(path))
    chromadb.AdminClient(settings).create_database("elsewhere")
    other = chromadb.PersistentClient(
        path=str(path), settings=Settings(anonymized_telemetry=False), database="elsewhere"
    )
    fill(client, other, big=2_500)
    return path


def client_of(path: Path):  # type: ignore[no-untyped-def]
    import chromadb
    from chromadb.config import Settings

    return chromadb.PersistentClient(path=str(path), settings=Settings(anonymized_telemetry=False))


def test_the_file_answers_as_the_client(folder: Path) -> None:
    reader = open_chroma_file(folder, TENANT, DATABASE)
    assert reader is not None
    assert "g1_other" not in assert_reads_as_the_client(reader, client_of(folder), page=700)
    assert reader.get_collection("g1_big").count() == 2_301  # 2,500 − 200 deleted + 1 new by upsert
    assert reader.heartbeat() == 1


def test_a_missing_collection_is_missing_to_the_inventory(folder: Path) -> None:
    reader = open_chroma_file(folder, TENANT, DATABASE)
    assert reader is not None
    with pytest.raises(Exception) as raised:
        reader.get_collection("g9_nothing")
    assert is_missing(raised.value)


def test_anything_but_counts_and_ids_is_refused_as_the_index_being_unavailable(folder: Path) -> None:
    reader = open_chroma_file(folder, TENANT, DATABASE)
    assert reader is not None
    collection = reader.get_collection("g1_small")
    for call in (
        lambda: reader.get_or_create_collection("g1_new"),
        lambda: reader.delete_collection("g1_small"),
        lambda: collection.query(query_embeddings=[vector(1)], n_results=1),
        lambda: collection.upsert(ids=["4"], embeddings=[vector(4)]),
        lambda: collection.get(limit=10, include=["embeddings"]),
    ):
        with pytest.raises(IndexUnavailable):
            call()
    assert client_of(folder).get_collection("g1_small").count() == 2  # nothing was written


def test_it_steps_aside_for_another_release_or_layout(folder: Path, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    assert open_chroma_file(tmp_path / "nothing", TENANT, DATABASE) is None  # no file yet
    monkeypatch.setattr(chroma_file, "layout_release", lambda: "1.6")
    assert open_chroma_file(folder, TENANT, DATABASE) is None
    monkeypatch.undo()
    changed = tmp_path / "changed"
    shutil.copytree(folder, changed)
    with sqlite3.connect(changed / "chroma.sqlite3") as connection:
        connection.execute("ALTER TABLE embeddings RENAME COLUMN embedding_id TO record_id")
    assert open_chroma_file(changed, TENANT, DATABASE) is None


def test_it_steps_aside_while_logged_writes_wait_to_be_applied(folder: Path, tmp_path: Path) -> None:
    """A process killed between logging a write and applying it: chromadb's client applies the log
    when it opens, so the file alone would be behind."""
    behind = tmp_path / "behind"
    shutil.copytree(folder, behind)
    with sqlite3.connect(behind / "chroma.sqlite3") as connection:
        (collection_id,) = connection.execute("SELECT id FROM collections WHERE name = 'g1_small'").fetchone()
        (topic,) = connection.execute(
            "SELECT topic FROM embeddings_queue WHERE topic LIKE ? LIMIT 1", (f"%/{collection_id}",)
        ).fetchone()
        connection.execute(
            "INSERT INTO embeddings_queue (seq_id, operation, topic, id) VALUES (?, 0, ?, 'late')",
            (10**9, topic),
        )
    assert open_chroma_file(behind, TENANT, DATABASE) is None
