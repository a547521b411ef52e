"""Reading amrita-plugin-memory's data (the plugin data folder, ``--from``, and the bot's SQLite
database) into import items. Its on-disk layout, learned from its behaviour and files:

* ``vector_db.chroma/``: a Chroma folder; collection ``amrita_user_memory`` holds the long-term
  memories (L2): the text as the document; metadata ``scope`` ("user" or "group"), ``user_id``
  (the chat key of the partition: ``QQPlatform_Private_<qq>`` / ``QQPlatform_Group_<id>``, older
  ``user_<qq>`` / ``group_<id>`` or a bare number), ``tags`` (one string, comma separated),
  ``importance`` ("low" / "medium" / "high"), ``created_at`` (ISO 8601). Its vectors are not
  carried: our embedder re-embeds.
* ``knowledge_index.json`` (a list of entries: ``kid``, ``title``, ``summary``, ``file_name``,
  times) and ``knowledge/KNOWLEDGE_<kid>.md`` (``# title``, the summary, a ``---`` line, the body):
  the global knowledge base.
* ``user_profile.md``: the profile its background loop writes of one configured user (a summary,
  a ``---`` line, the body).
* In the bot's database: ``amrita_plugin_memory_user_memo`` (one memo per chat key: ``user_id``,
  ``content``) and ``amrita_plugin_memory_subconscious_state`` (a JSON payload: run counters,
  pending proactive messages, knowledge suggestions).

Scope: a "user" memory is the user's own, learned in any chat; it becomes a fact of that user's
private chat, never of a group. A "group" memory becomes a fact of that group.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..api import (
    Importance,
    ImportCard,
    ImportItem,
    ImportKnowledge,
    ImportMemo,
    MemoryDraft,
)
from .chroma_source import records_of
from .source import ImportSourceError, SourceRead, chat_scope, item, read_json, table_rows

IMPORTER = "amrita-plugin-memory"
MEMORY_COLLECTION = "amrita_user_memory"
MEMO_TABLE = "amrita_plugin_memory_user_memo"
STATE_TABLE = "amrita_plugin_memory_subconscious_state"
_TAG_SPLIT = re.compile(r"[,，、;；\s]+")
_SPLITTER = re.compile(r"^---\s*$", re.MULTILINE)


def default_database(data_dir: Path) -> Path:
    """Where nonebot-plugin-orm keeps the bot's SQLite database by default: beside the plugin's
    data folder, both under the bot's localstore data folder."""
    return data_dir.parent / "nonebot_plugin_orm" / "db.sqlite3"


def read(
    data_dir: Path, database: Path | str | None = None, profile_user: str = "", chroma_url: str = ""
) -> SourceRead:
    """Every record of the source as import items (blocking: call it on a thread). ``chroma_url``:
    its memories are on a Chroma server (its ``vector_db_type = "remote"``), not in the folder."""
    if not data_dir.is_dir():
        raise ImportSourceError(f"找不到目录 {data_dir}", en=f"no folder {data_dir}")
    found = SourceRead()
    _memories(data_dir, found, chroma_url)
    _knowledge(data_dir, found)
    _profile(data_dir, profile_user, found)
    database = database or default_database(data_dir)
    if isinstance(database, str) or database.is_file():  # a PostgreSQL URL, or a SQLite file
        _memos(database, found)
        _state(database, found)
    else:
        found.missing.append(f"{database}（备忘录与状态所在的数据库；可用 --database 指定）")
    return found


def _item(kind: str, path: str, record_id: str, content: str, payload: Any, refusal: str = "") -> ImportItem:
    return item(IMPORTER, kind, path, record_id, content, payload, refusal)


def _memories(data_dir: Path, found: SourceRead, chroma_url: str) -> None:
    folder = data_dir / "vector_db.chroma"
    path = chroma_url or str(folder)
    for record_id, text, metadata, content in records_of(folder, MEMORY_COLLECTION, found, chroma_url):
        owner = str(metadata.get("user_id", ""))
        scope = chat_scope(owner, str(metadata.get("scope", "")))
        if scope is None:
            found.items.append(_item("memory", "vector_db.chroma", record_id, content, None, "no_owner"))
            continue
        draft = MemoryDraft(
            text=text,
            scope=scope,
            subject_id="" if scope.is_group else scope.id,
            tags=[tag for tag in _TAG_SPLIT.split(str(metadata.get("tags", ""))) if tag][:16],
            importance=_importance(metadata.get("importance")),
            source={
                "importer": IMPORTER,
                "path": path,
                "record": record_id,
                "recorded_at": str(metadata.get("created_at", "")),
            },
        )
        found.items.append(_item("memory", "vector_db.chroma", record_id, content, draft))


def _importance(value: object) -> Importance:
    try:
        return Importance(str(value))
    except ValueError:
        return Importance.MEDIUM


def _knowledge(data_dir: Path, found: SourceRead) -> None:
    index_path = data_dir / "knowledge_index.json"
    if not index_path.exists():
        found.missing.append(str(index_path))
        return
    index = read_json(index_path)
    if not isinstance(index, list):
        raise ImportSourceError(f"{index_path} 不是条目列表", en=f"{index_path} is not a list of entries")
    for position, entry in enumerate(index):
        if not isinstance(entry, dict) or not entry.get("kid"):
            found.items.append(_item("knowledge", "knowledge_index.json", f"[{position}]", "", None, "unreadable"))
            continue
        kid = str(entry["kid"])
        file = data_dir / "knowledge" / str(entry.get("file_name") or f"KNOWLEDGE_{kid}.md")
        try:
            document = file.read_text(encoding="utf-8")
        except OSError:
            found.items.append(_item("knowledge", "knowledge_index.json", kid, "", None, "unreadable"))
            continue
        parts = _SPLITTER.split(document, maxsplit=1)
        body = parts[1].strip() if len(parts) > 1 else ""
        title = str(entry.get("title", "")).strip()
        summary = str(entry.get("summary", "")).strip()
        content = json.dumps([title, summary, body], ensure_ascii=False)
        found.items.append(
            _item("knowledge", "knowledge_index.json", kid, content, ImportKnowledge(title, summary, body))
        )


def _profile(data_dir: Path, profile_user: str, found: SourceRead) -> None:
    path = data_dir / "user_profile.md"
    if not path.exists():
        return
    text = path.read_text(encoding="utf-8")
    summary, _, body = text.partition("---")
    if not profile_user:
        found.items.append(_item("profile", "user_profile.md", "", text, None, "no_owner"))
        return
    card = ImportCard("user", profile_user, "private", evaluation=summary.strip(), body=body.strip())
    found.items.append(_item("profile", "user_profile.md", profile_user, text, card))


def _memos(database: Path | str, found: SourceRead) -> None:
    rows = table_rows(database, MEMO_TABLE, "user_id, content")
    if rows is None:
        found.missing.append(f"{database} 中的表 {MEMO_TABLE}")
        return
    for row in rows:
        key, content = str(row["user_id"]), str(row["content"] or "")
        scope = chat_scope(key)
        if not content.strip():
            continue  # an empty memo is no memo
        payload = ImportMemo(scope, content, "" if scope.is_group else scope.id) if scope else None
        found.items.append(_item("memo", MEMO_TABLE, key, content, payload, "" if scope else "no_owner"))


def _state(database: Path | str, found: SourceRead) -> None:
    rows = table_rows(database, STATE_TABLE, "uid, payload")
    for row in rows or []:
        try:
            payload = json.loads(row["payload"] or "{}")
        except json.JSONDecodeError as error:
            raise ImportSourceError(
                f"{database} 表 {STATE_TABLE} 的 {row['uid']} 不是合法的 JSON（{error.msg}）；未导入任何内容",
                en=f"{STATE_TABLE} row {row['uid']}: bad JSON ({error.msg}); nothing imported",
            ) from error
        # Knowledge suggestions carry no user to file them under (ours are per user and rate
        # limited); pending proactive messages, run counters and summaries have no counterpart.
        for position, suggestion in enumerate(payload.get("knowledge_suggestions") or []):
            content = json.dumps(suggestion, ensure_ascii=False, sort_keys=True)
            found.items.append(_item("suggestion", STATE_TABLE, f"{row['uid']}[{position}]", content, None, "no_owner"))
