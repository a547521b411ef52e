"""The embedded index read from its SQLite file, without chromadb, for the CLI's read commands.

``ambot cognition status`` counts the vectors of every collection and lists their ids to compare
with SQL; importing chromadb and opening its client cost that command more than everything else
it does (about 0.7 s of a 2.4 s start in a fresh bot project). An embedded Chroma folder keeps,
in ``chroma.sqlite3``, each collection's metadata segment: one row per stored id, which is what
the client's ``count()`` and ``get()`` answer from. This module reads those rows with the standard
library, read-only, and stands in for the client's read calls (``list_collections``,
``get_collection``, ``count``, ``get`` of ids, ``heartbeat``).

It is used only where it is safe and only on what it was written for:

* under the folder's hold (``index/owner.py``): no other process writes the file meanwhile (a
  folder held by the running bot is reported as held, as before, and never read here);
* on the chromadb releases whose file layout it was checked against (``LAYOUT_RELEASES``), with
  the tables and columns it reads present, else ``open_chroma_file`` returns None and the caller
  opens chromadb's own client;
* when every collection's metadata segment has applied the whole write log (a process killed
  between logging a write and applying it leaves rows that chromadb's client applies when it
  opens): else, again, None.

``tests/integration/test_chroma_file.py`` compares every answer with chromadb's own client.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from ..errors import IndexUnavailable

FILE_NAME = "chroma.sqlite3"
#: chromadb releases (major.minor) whose ``chroma.sqlite3`` layout this reader was checked against.
LAYOUT_RELEASES = ("1.5",)
#: The tables and columns read here.
LAYOUT = {
    "tenants": {"id"},
    "databases": {"id", "name", "tenant_id"},
    "collections": {"id", "name", "database_id"},
    "collection_metadata": {"collection_id", "key", "str_value", "int_value", "float_value", "bool_value"},
    "segments": {"id", "scope", "collection"},
    "embeddings": {"id", "segment_id", "embedding_id"},
    "max_seq_id": {"segment_id", "seq_id"},
    "embeddings_queue": {"seq_id", "topic"},
}
#: A read waits this long for a lock (none is expected: the folder's holder is this process).
BUSY_TIMEOUT_SECONDS = 5.0


class FileCollectionMissing(Exception):
    """Named as chromadb names it (``NotFoundError``) so ``collections.is_missing`` knows it."""


FileCollectionMissing.__name__ = "NotFoundError"


def layout_release() -> str | None:
    """The installed chromadb's major.minor, read from its metadata (without importing it)."""
    try:
        version = metadata.version("chromadb")
    except metadata.PackageNotFoundError:
        return None
    return ".".join(version.split(".")[:2])


def open_chroma_file(folder: Path, tenant: str, database: str) -> ChromaFileClient | None:
    """A reader of ``folder``'s index file, or None when chromadb's own client must be used (no
    file yet, another chromadb release, another layout, or writes logged and not yet applied)."""
    path = folder / FILE_NAME
    if layout_release() not in LAYOUT_RELEASES or not path.is_file():
        return None
    try:
        connection = sqlite3.connect(
            f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_SECONDS, check_same_thread=False
        )
    except sqlite3.Error:
        return None
    try:
        if not _has_layout(connection) or _unapplied_writes(connection):
            connection.close()
            return None
        found = connection.execute(
            "SELECT d.id FROM databases d WHERE d.name = ? AND d.tenant_id = ?", (database, tenant)
        ).fetchone()
    except sqlite3.Error:
        connection.close()
        return None
    return ChromaFileClient(connection, found[0] if found else None, path)


def _has_layout(connection: sqlite3.Connection) -> bool:
    for table, columns in LAYOUT.items():
        present = {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}  # names of LAYOUT
        if not columns <= present:
            return False
    return True


def _unapplied_writes(connection: sqlite3.Connection) -> bool:
    """Whether a collection's write log holds entries past what its metadata segment applied."""
    row = connection.execute(
        """
        SELECT 1 FROM segments s
        WHERE s.scope = 'METADATA' AND EXISTS (
            SELECT 1 FROM embeddings_queue q
            WHERE q.topic LIKE '%/' || s.collection
              AND q.seq_id > COALESCE((SELECT m.seq_id FROM max_seq_id m WHERE m.segment_id = s.id), 0)
        )
        LIMIT 1
        """
    ).fetchone()
    return row is not None


@dataclass(frozen=True, slots=True)
class FileCollection:
    """A collection as the reader sees it: its name and metadata, its rows counted and listed."""

    name: str
    metadata: dict[str, Any]
    segment_id: str | None
    client: ChromaFileClient

    def count(self) -> int:
        if self.segment_id is None:
            return 0
        return int(self.client.one("SELECT COUNT(*) FROM embeddings WHERE segment_id = ?", (self.segment_id,)))

    def __getattr__(self, name: str) -> Any:
        """Any other call of chromadb's collections (a query, a write): not served here."""
        raise IndexUnavailable(en=f"the Chroma file reader serves counts and ids only, not {name}")

    def get(self, limit: int, offset: int = 0, include: list[str] | None = None) -> dict[str, list[str]]:
        """The ids of one page (what this reader serves: ``include=[]``)."""
        if include:
            raise IndexUnavailable(en="the Chroma file reader lists ids only")
        if self.segment_id is None:
            return {"ids": []}
        rows = self.client.rows(
            "SELECT embedding_id FROM embeddings WHERE segment_id = ? ORDER BY id LIMIT ? OFFSET ?",
            (self.segment_id, limit, offset),
        )
        return {"ids": [row[0] for row in rows]}


class ChromaFileClient:
    """The read calls of chromadb's client that the index's inventory makes, on the file."""

    def __init__(self, connection: sqlite3.Connection, database_id: str | None, path: Path) -> None:
        self._connection = connection
        self._database_id = database_id
        self.path = path

    def one(self, sql: str, parameters: tuple[Any, ...] = ()) -> Any:
        row = self._connection.execute(sql, parameters).fetchone()
        return row[0] if row else None

    def rows(self, sql: str, parameters: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        return self._connection.execute(sql, parameters).fetchall()

    def heartbeat(self) -> int:
        self.one("SELECT COUNT(*) FROM collections")
        return 1

    def list_collections(self, limit: int, offset: int = 0) -> list[FileCollection]:
        names = self.rows(
            "SELECT name FROM collections WHERE database_id = ? ORDER BY rowid LIMIT ? OFFSET ?",
            (self._database_id, limit, offset),
        )
        return [collection for (name,) in names if (collection := self._collection(name)) is not None]

    def get_collection(self, name: str, embedding_function: object = None) -> FileCollection:
        collection = self._collection(name)
        if collection is None:
            raise FileCollectionMissing(f"Collection [{name}] does not exist")
        return collection

    def _collection(self, name: str) -> FileCollection | None:
        found = self._connection.execute(
            "SELECT id FROM collections WHERE name = ? AND database_id = ?", (name, self._database_id)
        ).fetchone()
        if found is None:
            return None
        collection_id = found[0]
        values = self.rows(
            "SELECT key, str_value, int_value, float_value, bool_value FROM collection_metadata "
            "WHERE collection_id = ?",
            (collection_id,),
        )
        segment = self.one("SELECT id FROM segments WHERE collection = ? AND scope = 'METADATA'", (collection_id,))
        return FileCollection(name, {key: _value(*rest) for key, *rest in values}, segment, self)

    def __getattr__(self, name: str) -> Any:
        """Any other call of chromadb's client (creating or dropping a collection): not served here."""
        raise IndexUnavailable(en=f"the Chroma file reader reads only, not {name}")

    def close(self) -> None:
        self._connection.close()


def _value(text: str | None, integer: int | None, real: float | None, boolean: int | None) -> Any:
    if text is not None:
        return text
    if integer is not None:
        return integer
    if real is not None:
        return real
    return bool(boolean) if boolean is not None else None
