"""Reading a foreign Chroma folder without touching it: the folder is copied to a temporary one
and opened there (opening may migrate a folder of an older Chroma in place), and only the stored
texts and metadata are read: our embedder re-embeds, so the source's vectors and their dimension
do not matter."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .source import ImportSourceError, SourceRead

#: Records fetched per page.
PAGE = 1000


def read_collection(folder: Path, name: str) -> list[tuple[str, str, dict[str, Any]]] | None:
    """(id, document, metadata) of every record of collection ``name`` in the Chroma folder
    ``folder``; None when the folder has no such collection. Blocking: call it on a thread."""
    if not (folder / "chroma.sqlite3").is_file():
        raise ImportSourceError(
            f"{folder} 不是 Chroma 数据目录（缺少 chroma.sqlite3）",
            en=f"{folder} is no Chroma folder (no chroma.sqlite3)",
        )
    with tempfile.TemporaryDirectory(prefix="cognition-import-") as scratch:
        copy = Path(scratch) / "chroma"
        shutil.copytree(folder, copy)
        try:
            return _read(copy, name)
        except ImportSourceError:
            raise
        except Exception as error:  # chromadb raises many kinds for a folder it cannot open
            raise ImportSourceError(
                f"无法打开 Chroma 数据目录 {folder}（{type(error).__name__}: {error}）：可能是另一版本的 Chroma 写的；"
                "未导入任何内容",
                en=f"cannot open the Chroma folder {folder}: {error!r}; nothing imported",
            ) from error


def read_server_collection(
    url: str, name: str, tenant: str = "default_tenant", database: str = "default_database"
) -> list[tuple[str, str, dict[str, Any]]] | None:
    """``read_collection`` from a Chroma server (``http://host:port``), read only."""
    import chromadb
    from chromadb.config import Settings

    found = urlsplit(url)
    if found.scheme not in ("http", "https") or not found.hostname:
        raise ImportSourceError(
            f"{url} 不是 Chroma 服务器地址（应如 http://127.0.0.1:8000）", en=f"not a Chroma URL: {url}"
        )
    try:
        client = chromadb.HttpClient(
            host=found.hostname,
            port=found.port or (443 if found.scheme == "https" else 8000),
            ssl=found.scheme == "https",
            tenant=tenant,
            database=database,
            settings=Settings(anonymized_telemetry=False),
        )
        return _collection_records(client, name)
    except Exception as error:  # unreachable, another release's API, an unknown tenant or database
        raise ImportSourceError(
            f"无法读取 Chroma 服务器 {url}（{type(error).__name__}: {error}）；未导入任何内容",
            en=f"cannot read the Chroma server {url}: {error!r}; nothing imported",
        ) from error


def _read(copy: Path, name: str) -> list[tuple[str, str, dict[str, Any]]] | None:
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(path=str(copy), settings=Settings(anonymized_telemetry=False))
    try:
        return _collection_records(client, name)
    finally:
        _close(client)


def _collection_records(client: Any, name: str) -> list[tuple[str, str, dict[str, Any]]] | None:
    if name not in {collection.name for collection in client.list_collections()}:
        return None
    collection = client.get_collection(name)
    found: list[tuple[str, str, dict[str, Any]]] = []
    offset = 0
    while True:
        page = collection.get(include=["documents", "metadatas"], limit=PAGE, offset=offset)
        ids = page.get("ids") or []
        if not ids:
            return found
        documents: list[Any] = list(page.get("documents") or [])
        metadatas: list[Any] = list(page.get("metadatas") or [])
        for position, record_id in enumerate(ids):
            document = documents[position] if position < len(documents) else None
            metadata = metadatas[position] if position < len(metadatas) else None
            found.append((str(record_id), document or "", dict(metadata or {})))
        offset += len(ids)


def _close(client: Any) -> None:
    """Release the copy's files (the temporary folder is removed next)."""
    system = getattr(client, "_system", None)
    if system is not None:
        system.stop()


def records_of(
    folder: Path, name: str, found: SourceRead, server: str = ""
) -> list[tuple[str, str, dict[str, Any], str]]:
    """(id, document, metadata, content for the fingerprint) of a collection in the folder (or on
    the Chroma ``server``); [] and said in the report when the folder or the collection is absent."""
    if not server and not folder.exists():
        found.missing.append(str(folder))
        return []
    records = read_server_collection(server, name) if server else read_collection(folder, name)
    if records is None:
        found.missing.append(f"{server or folder} 中的集合 {name}")
        return []
    return [
        (record_id, text, metadata, json.dumps([text, metadata], ensure_ascii=False, sort_keys=True, default=str))
        for record_id, text, metadata in records
    ]
