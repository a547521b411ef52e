"""Data for the importers' tests: a copy of the amrita-plugin-memory data folder that the plugin
itself wrote (``tests/apm_fixture.py``, kept in ``tests/data/imports``), and ways to damage it."""

from __future__ import annotations

import shutil
import sqlite3
import uuid
from pathlib import Path

APM_DATA = Path(__file__).parent / "data" / "imports" / "amrita_plugin_memory_0.8.1" / "data"
#: What the fixture holds (``apm_fixture.MEMORIES`` and friends), by record kind.
APM_GROUP, APM_USER, APM_OTHER_USER = "20001", "10001", "10002"
APM_SECRET_TEXT = "阿明的服务器密码是 hunter2-Secret-99"
APM_PRIVATE_TEXT = "阿明对花生过敏，吃了会起疹子"
APM_GROUP_TEXT = "群里约定每周五晚上八点一起打游戏"
APM_CAT_TEXT = "小红养了一只叫团子的橘猫"


def apm_copy(root: Path) -> Path:
    """A fresh copy of the bot data folder; returns the plugin's data folder inside it."""
    target = root / f"apm-{uuid.uuid4().hex[:8]}"
    shutil.copytree(APM_DATA, target)
    return target / "amrita_plugin_memory"


def other_chroma_version(folder: Path) -> None:
    """Make ``folder`` look written by another Chroma release: one of its schema migrations differs
    from this release's file of the same number (Chroma compares their hashes when it opens)."""
    connection = sqlite3.connect(folder / "chroma.sqlite3")
    try:
        connection.execute(
            "UPDATE migrations SET hash = ? WHERE version = (SELECT max(version) FROM migrations)", ("0" * 32,)
        )
        connection.commit()
    finally:
        connection.close()


CREATED = "2026-01-02T03:04:05+00:00"


def chroma_of_dimension(folder: Path, dimension: int, texts: list[tuple[str, str]]) -> None:
    """A Chroma folder like amrita-plugin-memory's, of vectors of ``dimension`` (an embedder we do
    not have): ``texts`` are (chat key, text) of "user" memories."""
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(path=str(folder), settings=Settings(anonymized_telemetry=False))
    collection = client.get_or_create_collection("amrita_user_memory")
    collection.add(
        ids=[f"m{index}" for index in range(len(texts))],
        documents=[text for _, text in texts],
        metadatas=[
            {
                "scope": "user",
                "user_id": key,
                "tags": "",
                "importance": "medium",
                "created_at": "2026-01-02T03:04:05+00:00",
            }
            for key, _ in texts
        ],
        embeddings=[[float(index + 1)] * dimension for index in range(len(texts))],
    )
    client._system.stop()
