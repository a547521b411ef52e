"""Reading Undefined's cognitive memory (``data/cognitive``, ``--from``) into import items. Its
layout, learned from its code and documentation (docs/cognitive-memory.md):

* ``chromadb/``: a Chroma folder; collection ``cognitive_events`` holds the historian's facts:
  the text as the document; metadata ``request_type`` ("group" / "private"), ``group_id``,
  ``user_id``, ``sender_id``, ``timestamp_utc`` / ``timestamp_epoch``, ``perspective``, and in
  older releases ``is_absolute``. Vectors are not carried: our embedder re-embeds.
* ``profiles/users/<qq>.md``, ``profiles/groups/<id>.md``: YAML front matter (``name``, ``tags``)
  then evaluation, body and roast separated by ``---`` lines (one separator: all body; two:
  evaluation and body); ``profiles/history/<user|group>/<id>/<time>.md``: earlier versions.
* ``queues/pending/*.json`` (and ``processing/``, left by a stop mid-job): the historian's jobs
  (``observations``, ``memo``, sender, chat, time, ``source_message``); ``failed/`` is not taken.
* Beside the folder: ``end_summaries.json`` (each turn's memo with its time and the chat's *name*)
  and ``memory.json`` (the bot's own pinned reminders, of no chat).

Scope: a private chat's event or job stays in that user's private chat; a group's in the group. A
user's card was built from every chat they spoke in, so it is imported as the part shown only in
private chat; a group's card as the group's. End summaries name their chat by its name: the name
is matched to an id through the cards and the jobs, and an unknown or ambiguous name is refused.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..api import ImportCard, ImportItem, ImportMemo, ImportTurn, MemoryDraft, Scope
from .chroma_source import records_of
from .source import ImportSourceError, SourceRead, item, json_list

IMPORTER = "undefined"
EVENTS = "cognitive_events"
_SEPARATOR = re.compile(r"^---\s*$")
_GROUP_NAME = re.compile(r"^群([0-9]+)$")
_NUMBER = re.compile(r"^[0-9]+$")


def read(cognitive: Path, pins_chat: Scope | None = None) -> SourceRead:
    """Every record of the source as import items (blocking: call it on a thread)."""
    if not cognitive.is_dir():
        raise ImportSourceError(f"找不到目录 {cognitive}", en=f"no folder {cognitive}")
    found = SourceRead()
    names: dict[tuple[str, str], set[str]] = {}
    _events(cognitive, found)
    _profiles(cognitive, found, names)
    _jobs(cognitive, found, names)
    _summaries(cognitive.parent / "end_summaries.json", found, names)
    _pins(cognitive.parent / "memory.json", pins_chat, found)
    return found


def _item(kind: str, path: str, record_id: str, content: str, payload: Any, refusal: str = "") -> ImportItem:
    return item(IMPORTER, kind, path, record_id, content, payload, refusal)


def _scope(request_type: object, group_id: object, user_id: object) -> Scope | None:
    group, user = str(group_id or "").strip(), str(user_id or "").strip()
    if request_type == "group" and _NUMBER.match(group):
        return Scope("group", group)
    if request_type == "private" and _NUMBER.match(user):
        return Scope("private", user)
    return None


def _utc(value: object, epoch: object = None) -> datetime | None:
    if isinstance(value, str) and value.strip():
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            moment = None
        if moment is not None:
            return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
    if isinstance(epoch, (int, float)) and epoch > 0:
        return datetime.fromtimestamp(epoch, timezone.utc)
    return None


def _events(cognitive: Path, found: SourceRead) -> None:
    folder = cognitive / "chromadb"
    for record_id, text, metadata, content in records_of(folder, EVENTS, found):
        scope = _scope(metadata.get("request_type"), metadata.get("group_id"), metadata.get("user_id"))
        if scope is None:
            found.items.append(_item("memory", "chromadb", record_id, content, None, "no_owner"))
            continue
        when = _utc(metadata.get("timestamp_utc"), metadata.get("timestamp_epoch"))
        source: dict[str, object] = {"importer": IMPORTER, "path": str(folder), "record": record_id}
        if when is not None:
            source["recorded_at"] = when.isoformat()
        for key in ("is_absolute", "perspective"):
            if key in metadata:
                source[key] = metadata[key]
        speaker = str(metadata.get("sender_id") or metadata.get("user_id") or "")
        draft = MemoryDraft(
            text=text,
            scope=scope,
            speaker_id=speaker,
            subject_id="" if scope.is_group else scope.id,
            source=source,
        )
        found.items.append(_item("memory", "chromadb", record_id, content, draft))


def _sections(text: str) -> tuple[dict[str, Any], tuple[str, str, str]]:
    """(front matter, (evaluation, body, roast)) of a profile file; ``ValueError`` when unreadable."""
    import yaml

    lines = text.replace("\r\n", "\n").split("\n")
    if not lines or not _SEPARATOR.match(lines[0]):
        raise ValueError("no front matter")
    parts: list[list[str]] = [[]]
    for line in lines[1:]:
        if _SEPARATOR.match(line):
            parts.append([])
        else:
            parts[-1].append(line)
    meta = yaml.safe_load("\n".join(parts[0])) or {}
    if not isinstance(meta, dict):
        raise ValueError("front matter is not a mapping")
    sections = ["\n".join(part).strip() for part in parts[1:]]
    if len(sections) == 1:
        return meta, ("", sections[0], "")
    if len(sections) == 2:
        return meta, (sections[0], sections[1], "")
    return meta, (sections[0], "\n---\n".join(sections[1:-1]), sections[-1])


def _profiles(cognitive: Path, found: SourceRead, names: dict[tuple[str, str], set[str]]) -> None:
    base = cognitive / "profiles"
    if not base.exists():
        found.missing.append(str(base))
        return
    for entity_type in ("user", "group"):
        for file in sorted((base / f"{entity_type}s").glob("*.md")):
            entity_id = file.stem
            path = f"profiles/{entity_type}s/{file.name}"
            text = file.read_text(encoding="utf-8")
            history = sorted((base / "history" / entity_type / entity_id).glob("*.md"))
            old_texts = [old.read_text(encoding="utf-8") for old in history]
            content = json.dumps([text, *old_texts], ensure_ascii=False)
            try:
                meta, current = _sections(text)
                revisions = tuple(_sections(old)[1] for old in old_texts)
            except Exception:  # YAML raises its own tree; any unreadable file is refused, named
                found.items.append(_item("profile", path, "", content, None, "unreadable"))
                continue
            if not _NUMBER.match(entity_id):
                found.items.append(_item("profile", path, "", content, None, "no_owner"))
                continue
            name = str(meta.get("name") or "").strip()
            if name:
                names.setdefault((entity_type, name), set()).add(entity_id)
            tags = tuple(str(tag).strip() for tag in meta.get("tags") or [] if str(tag).strip())
            card = ImportCard(
                entity_type,
                entity_id,
                "private" if entity_type == "user" else "group",
                evaluation=current[0],
                body=current[1],
                roast=current[2],
                name=name,
                tags=tags,
                revisions=revisions,
            )
            found.items.append(_item("profile", path, "", content, card))


def _jobs(cognitive: Path, found: SourceRead, names: dict[tuple[str, str], set[str]]) -> None:
    queues = cognitive / "queues"
    if not queues.exists():
        found.missing.append(str(queues))
        return
    for state in ("pending", "processing"):
        for file in sorted((queues / state).glob("*.json")):
            path = f"queues/{state}/{file.name}"
            text = file.read_text(encoding="utf-8", errors="replace")
            try:
                job = json.loads(text)
            except json.JSONDecodeError:
                found.items.append(_item("job", path, "", text, None, "unreadable"))
                continue
            if not isinstance(job, dict):
                found.items.append(_item("job", path, "", text, None, "unreadable"))
                continue
            scope = _scope(job.get("request_type"), job.get("group_id"), job.get("user_id"))
            sender = str(job.get("sender_id") or job.get("user_id") or "")
            sender_name, group_name = str(job.get("sender_name") or ""), str(job.get("group_name") or "")
            if group_name and scope is not None and scope.is_group:
                names.setdefault(("group", group_name), set()).add(scope.id)
            if sender_name and _NUMBER.match(sender):
                names.setdefault(("user", sender_name), set()).add(sender)
            observations = tuple(str(item).strip() for item in job.get("observations") or [] if str(item).strip())
            if scope is None:
                found.items.append(_item("job", path, "", text, None, "no_owner"))
                continue
            if not observations:  # its memo is in end_summaries.json (Undefined writes both)
                found.items.append(_item("job", path, "", text, None, "empty"))
                continue
            message_ids = job.get("message_ids") or [""]
            turn = ImportTurn(
                scope,
                sender,
                sender_name,
                observations=observations,
                at=_utc(job.get("timestamp_utc"), job.get("timestamp_epoch")),
                source_message=str(job.get("source_message") or ""),
                message_id=str(message_ids[0]),
            )
            found.items.append(_item("job", path, "", text, turn))


def _summary_scope(location: object, names: dict[tuple[str, str], set[str]]) -> Scope | None:
    if not isinstance(location, dict):
        return None
    kind, name = location.get("type"), str(location.get("name") or "").strip()
    if kind == "group":
        number = _GROUP_NAME.match(name)
        ids = {number.group(1)} if number else names.get(("group", name), set())
        return Scope("group", next(iter(ids))) if len(ids) == 1 else None
    if kind == "private":
        ids = {name} if _NUMBER.match(name) else names.get(("user", name), set())
        return Scope("private", next(iter(ids))) if len(ids) == 1 else None
    return None


def _summaries(path: Path, found: SourceRead, names: dict[tuple[str, str], set[str]]) -> None:
    for position, record in enumerate(json_list(path, found, "摘要")):
        content = json.dumps(record, ensure_ascii=False, sort_keys=True)
        summary = record if isinstance(record, str) else record.get("summary") if isinstance(record, dict) else None
        if not isinstance(summary, str) or not summary.strip():
            found.items.append(_item("note", path.name, f"[{position}]", content, None, "empty"))
            continue
        location = record.get("location") if isinstance(record, dict) else None
        scope = _summary_scope(location, names)
        if scope is None:
            found.items.append(_item("note", path.name, f"[{position}]", content, None, "no_owner"))
            continue
        at = _utc(record.get("timestamp")) if isinstance(record, dict) else None
        user = scope.id if not scope.is_group else ""
        note = ImportTurn(scope, user, memo=summary.strip(), at=at)
        found.items.append(_item("note", path.name, f"[{position}]", content, note))


def _pins(path: Path, chat: Scope | None, found: SourceRead) -> None:
    for position, record in enumerate(json_list(path, found, "提醒")):
        fact = str(record.get("fact") or "") if isinstance(record, dict) else ""
        record_id = str(record.get("uuid") or f"[{position}]") if isinstance(record, dict) else f"[{position}]"
        content = json.dumps(record, ensure_ascii=False, sort_keys=True)
        if not fact.strip():
            found.items.append(_item("pin", path.name, record_id, content, None, "empty"))
        elif chat is None:
            found.items.append(_item("pin", path.name, record_id, content, None, "no_owner"))
        else:
            pin = ImportMemo(chat, fact.strip(), "" if chat.is_group else chat.id)
            found.items.append(_item("pin", path.name, record_id, content, pin))
