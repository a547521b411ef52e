"""The Markdown document of a profile card (pure): ``render_document`` and ``parse_document``.

The document is the seed's four parts, each separated by a line ``---``::

    ---
    bot_id: "90001"
    entity_type: "user"
    entity_id: "10001"
    part: "group"
    name: "小明"
    tags: ["羽毛球", "猫"]
    updated_at: "2026-11-30T12:00:00+00:00"
    source_ids: [12, 15]
    ---
    evaluation (who they are, in a few sentences)
    ---
    body (what they care about, their habits and plans)
    ---
    roast (one short, sharp line)

* The meta is YAML front matter (so Markdown tools show it as metadata), written as the subset of
  YAML that is also JSON: one key per line, every value a JSON literal. Any YAML reader reads it;
  ``parse_document`` also reads plain scalars (``name: 小明``), single-quoted strings, ``[a, b]``
  and block lists (``- a``), comments and blank lines, so a hand-edited file still parses.
  Unknown or repeated keys are refused. ``part`` may be left out of a group's card only.
* A section line that would read as a separator (``---``, trailing blanks allowed) is escaped
  with a backslash (``\\---``, which Markdown also shows as ``---``); a line that already looks
  like an escaped one gets one more backslash, so every text round-trips.
* Sections are kept with their inner line breaks, without surrounding blank lines, with ``\\n``
  line ends (``validate_card`` normalises a card so): for such a card
  ``parse_document(render_document(card)) == card``.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from ..errors import InvalidInput
from .clock import as_utc
from .profiles import SECTIONS, Card, check_entity

_SEPARATOR = re.compile(r"---[ \t]*")
#: A section line that reads as a separator once one leading backslash is taken off.
_ESCAPED = re.compile(r"\\*---[ \t]*")
#: Characters outside YAML's printable set (besides those JSON escapes itself), or that YAML
#: reads as a line break: written as ``\uXXXX`` so that a YAML reader takes the value as is.
_NOT_YAML_PRINTABLE = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff\ufffe\uffff]")
META_KEYS: tuple[str, ...] = (
    "bot_id",
    "entity_type",
    "entity_id",
    "part",
    "name",
    "tags",
    "updated_at",
    "source_ids",
)
_REQUIRED = ("bot_id", "entity_type", "entity_id", "updated_at")


def _literal(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return _NOT_YAML_PRINTABLE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def _escape_section(text: str) -> str:
    return "\n".join(f"\\{line}" if _ESCAPED.fullmatch(line) else line for line in text.split("\n"))


def _unescape_line(line: str) -> str:
    return line[1:] if line.startswith("\\") and _ESCAPED.fullmatch(line) else line


def render_document(card: Card) -> str:
    """The card as the seed's Markdown document (see the module docstring)."""
    meta = {
        "bot_id": card.bot_id,
        "entity_type": card.entity_type,
        "entity_id": card.entity_id,
        "part": card.part,
        "name": card.name,
        "tags": list(card.tags),
        "updated_at": (as_utc(card.updated_at) or card.updated_at).isoformat(),
        "source_ids": list(card.source_ids),
    }
    lines = ["---", *(f"{key}: {_literal(value)}" for key, value in meta.items())]
    for section in SECTIONS:
        lines += ["---", _escape_section(getattr(card, section))]
    return "\n".join(lines) + "\n"


def _bad(message: str) -> InvalidInput:
    return InvalidInput(f"画像文档格式有误：{message}")


def _plain(raw: str) -> Any:
    """One YAML scalar or flow list as a hand-edited file may write it."""
    raw = raw.strip()
    if raw.startswith(('"', "[", "{")):
        try:
            return json.loads(raw)
        except ValueError:
            if not (raw.startswith("[") and raw.endswith("]")):
                raise
            inner = raw[1:-1].strip()
            return [_plain(item) for item in inner.split(",")] if inner else []
    if len(raw) >= 2 and raw[0] == raw[-1] == "'":
        return raw[1:-1].replace("''", "'")
    raw = raw.split(" #", 1)[0].strip()
    if raw in ("", "~", "null"):
        return None
    return int(raw) if re.fullmatch(r"-?[0-9]+", raw) else raw


def _meta(lines: list[str]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    listing: str | None = None  # the key whose block list ("- item") is being read
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if listing is not None and stripped.startswith("- "):
            meta[listing].append(_value(listing, stripped[2:]))
            continue
        key, colon, raw = line.partition(":")
        key = key.strip()
        if not colon or line[:1].isspace():
            raise _bad(f"元数据第 {number} 行应为“键: 值”")
        if key not in META_KEYS:
            raise _bad(f"未知的元数据键 {key}（可用：{', '.join(META_KEYS)}）")
        if key in meta:
            raise _bad(f"元数据键 {key} 出现了两次")
        if not raw.strip() and key in ("tags", "source_ids"):
            meta[key], listing = [], key
            continue
        meta[key], listing = _value(key, raw), None
    return meta


def _value(key: str, raw: str) -> Any:
    try:
        return _plain(raw)
    except ValueError as error:
        raise _bad(f"元数据 {key} 的值无法解析：{raw.strip()[:40]}") from error


def _text(meta: dict[str, Any], key: str) -> str:
    value = meta.get(key)
    if value is None:
        return ""
    if isinstance(value, (dict, list, bool)):
        raise _bad(f"元数据 {key} 应为文字")
    return str(value)


def _list(meta: dict[str, Any], key: str) -> list[Any]:
    value = meta.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise _bad(f"元数据 {key} 应为列表，如 [1, 2]")
    return value


def _source_ids(meta: dict[str, Any]) -> list[int]:
    found: list[int] = []
    for item in _list(meta, "source_ids"):
        if isinstance(item, str) and item.isdigit():
            item = int(item)
        if isinstance(item, bool) or not isinstance(item, int):
            raise _bad(f"source_ids 应为记忆编号（整数），不是 {item!r}")
        found.append(item)
    return found


def _moment(meta: dict[str, Any]) -> datetime:
    text = _text(meta, "updated_at").strip()
    try:
        moment = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
    except ValueError as error:
        raise _bad(f"updated_at 应为 ISO 8601 时间，如 2026-11-30T12:00:00+00:00，不是 {text[:40]!r}") from error
    return as_utc(moment) or moment  # naive: UTC, as everything stored is


def parse_document(text: str) -> Card:
    """The card a document describes; ``InvalidInput`` naming what is wrong. The identity is
    checked (``check_entity``); the length limits and the empty-card rule are ``validate_card``'s."""
    lines = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    if lines and _SEPARATOR.fullmatch(lines[0]):
        lines.pop(0)  # front matter's opening line
    parts: list[list[str]] = [[]]
    for line in lines:
        if _SEPARATOR.fullmatch(line):
            parts.append([])
        else:
            parts[-1].append(line)
    if len(parts) != 4:
        raise _bad(
            f"应有四部分（元数据、评价、正文、吐槽），各以单独一行 --- 分隔，读到 {len(parts)} 部分"
            "（正文里单独成行的 --- 要写成 \\---）"
        )
    meta = _meta(parts[0])
    missing = [key for key in _REQUIRED if meta.get(key) in (None, "")]
    if missing:
        raise _bad(f"缺少元数据 {', '.join(missing)}")
    entity_type, entity_id = _text(meta, "entity_type"), _text(meta, "entity_id")
    check_entity(entity_type, entity_id)
    part = _text(meta, "part") or ("group" if entity_type == "group" else "")
    if not part:
        raise _bad("用户画像必须写明 part：group（群内可见）或 private（仅私聊）")
    check_entity(entity_type, entity_id, part)
    sections = {
        section: "\n".join(_unescape_line(line) for line in section_lines).strip()
        for section, section_lines in zip(SECTIONS, parts[1:], strict=True)
    }
    return Card(
        bot_id=_text(meta, "bot_id"),
        entity_type=entity_type,
        entity_id=entity_id,
        part=part,
        name=_text(meta, "name"),
        tags=[str(tag) for tag in _list(meta, "tags") if tag is not None],
        updated_at=_moment(meta),
        source_ids=_source_ids(meta),
        **sections,
    )
