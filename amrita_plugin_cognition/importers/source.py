"""What every reader returns, its one error, and the small readers of foreign files they share."""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..api import ImportItem, InvalidInput, Scope, import_fingerprint


class ImportSourceError(InvalidInput):
    """The source cannot be read as the importer expects (a missing folder, a file that is not
    JSON, a Chroma folder this Chroma cannot open): names the file; nothing was imported."""

    zh_default = "无法读取导入来源"
    en_default = "import source unreadable"


@dataclass(slots=True)
class SourceRead:
    """A reader's result: the items, and what it looked for and did not find (said in the report)."""

    items: list[ImportItem] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def read_json(path: Path) -> Any:
    """A JSON file, or ``ImportSourceError`` naming the file, line and column."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ImportSourceError(
            f"无法读取 {path}：{error.strerror or error}", en=f"cannot read {path}: {error}"
        ) from error
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ImportSourceError(
            f"{path} 第 {error.lineno} 行第 {error.colno} 列不是合法的 JSON（{error.msg}）；未导入任何内容",
            en=f"{path} line {error.lineno} column {error.colno}: {error.msg}; nothing imported",
        ) from error


def table_rows(database: Path | str, table: str, columns: str) -> list[dict[str, Any]] | None:
    """The rows of ``table`` (None when absent) in a SQLite file, or in a PostgreSQL database
    given by its URL (``postgresql://`` or SQLAlchemy's ``postgresql+asyncpg://``); read only."""
    if isinstance(database, str) and database.startswith("postgresql"):
        return _postgresql_rows(database, table, columns)
    rows = sqlite_rows(Path(database), table, columns)
    return None if rows is None else [dict(row) for row in rows]


def _postgresql_rows(url: str, table: str, columns: str) -> list[dict[str, Any]] | None:
    import asyncio

    plain = "postgresql://" + url.split("://", 1)[1]
    shown = plain.split("@", 1)[-1]  # never a password in a message

    async def fetch() -> list[dict[str, Any]] | None:
        import asyncpg

        connection = await asyncpg.connect(plain, timeout=10)
        try:
            async with connection.transaction(readonly=True):
                if await connection.fetchval("SELECT to_regclass($1)", table) is None:
                    return None
                return [dict(row) for row in await connection.fetch(f"SELECT {columns} FROM {table}")]
        finally:
            await connection.close()

    try:
        return asyncio.run(fetch())
    except Exception as error:  # asyncpg's errors, a refused connection, a bad URL
        message = f"无法读取数据库 {shown} 的 {table}：{type(error).__name__}"
        raise ImportSourceError(message, en=f"cannot read {table} in {shown}: {error!r}") from error


def sqlite_rows(path: Path, table: str, columns: str) -> list[sqlite3.Row] | None:
    """The rows of ``table`` in a SQLite file opened read-only (None when the table is absent)."""
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as error:
        raise ImportSourceError(f"无法打开数据库 {path}：{error}", en=f"cannot open {path}: {error}") from error
    try:
        connection.row_factory = sqlite3.Row
        present = connection.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,))
        if present.fetchone() is None:
            return None
        return list(connection.execute(f"SELECT {columns} FROM {table}"))
    except sqlite3.Error as error:
        raise ImportSourceError(
            f"无法读取数据库 {path} 的 {table}：{error}", en=f"cannot read {table} in {path}: {error}"
        ) from error
    finally:
        connection.close()


#: A chat key as Amrita writes it: ``QQPlatform_Private_123``, ``QQPlatform_Group_456``, ``user_123``,
#: ``group_456`` (an optional platform prefix, the kind, the number).
_CHAT_KEY = re.compile(r"^(?:[A-Za-z0-9]+_)?(?P<kind>Private|Group|user|group)_(?P<number>[0-9]+)$")
_NUMBER = re.compile(r"^[0-9]+$")


def chat_scope(key: str, hint: str = "") -> Scope | None:
    """Our scope for an Amrita chat key: a group's chat, or the user's private chat. A bare number
    needs ``hint`` ("group" or "user"); anything else is None (it cannot be placed)."""
    found = _CHAT_KEY.match(key.strip())
    if found is not None:
        group = found.group("kind") in ("Group", "group")
        return Scope("group" if group else "private", found.group("number"))
    if _NUMBER.match(key.strip()) and hint in ("group", "user"):
        return Scope("group" if hint == "group" else "private", key.strip())
    return None


def item(
    importer: str, kind: str, path: str, record_id: str, content: str, payload: Any, refusal: str = ""
) -> ImportItem:
    """One source record as an item: named ``path#id`` for people, fingerprinted for the next run."""
    record = f"{path}#{record_id}" if record_id else path
    return ImportItem(kind, record, import_fingerprint(importer, path, record_id, content), payload, refusal)


def json_list(path: Path, found: SourceRead, what: str) -> list[Any]:
    """The list a JSON file holds ([] and said in the report when the file is absent)."""
    if not path.exists():
        found.missing.append(str(path))
        return []
    records = read_json(path)
    if not isinstance(records, list):
        raise ImportSourceError(f"{path} 不是{what}列表", en=f"{path} is not a list")
    return records
