"""What an importer hands the engine, and what it gets back: one item per source record (its
kind, where it came from, its fingerprint and what it would become) and the run's tally per kind
(imported, skipped as already imported or a duplicate, refused with the reason). Pure: readers of
foreign formats build items, ``engine/imports.py`` writes them through the normal write paths."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime

from .records import MemoryDraft, Scope

#: The kinds of record, in the order a report lists them.
KINDS: tuple[str, ...] = ("memory", "memo", "note", "pin", "profile", "knowledge", "suggestion", "job")

KIND_NAMES = {
    "memory": "记忆",
    "memo": "备忘录",
    "note": "短期笔记",
    "pin": "置顶提醒",
    "profile": "画像",
    "knowledge": "知识库",
    "suggestion": "知识建议",
    "job": "待处理任务",
}

#: Why a record was not imported (Chinese, for the report); the admission, barrier and switch
#: reasons are those of the normal write path (``engine/writes.py``).
REASON_NAMES = {
    "imported_before": "此前已导入",
    "duplicate": "已有相同内容",
    "credential": "含密钥或口令",
    "do_not_remember": "要求不要记住",
    "forgotten": "此前已被要求遗忘",
    "switched_off": "该会话已关闭记忆",
    "opted_out": "涉及已退出记忆的用户",
    "too_long": "过长",
    "empty": "内容为空",
    "over_limit": "会话记忆已满",
    "card_exists": "已有画像（不覆盖）",
    "policy": "不符合知识库规则",
    "no_owner": "无法确定属于哪个用户或群",
    "not_mapped": "本插件没有对应的数据",
    "unreadable": "源文件缺失或无法读取",
}


@dataclass(frozen=True, slots=True)
class MemoText:
    """A line for a chat's pinned memo (``memo``), a short-term note (``note``) or a pin (``pin``)."""

    scope: Scope
    text: str
    #: The user it is about or was written by ("" for a group's), for opt-out.
    user_id: str = ""


@dataclass(frozen=True, slots=True)
class KnowledgeText:
    title: str
    summary: str
    body: str


@dataclass(frozen=True, slots=True)
class CardText:
    """A profile for one user or group, as sections of our card."""

    entity_type: str
    entity_id: str
    #: "private" for what was learned of a user outside any one group; "group" for a group's card.
    part: str
    evaluation: str = ""
    body: str = ""
    name: str = ""
    roast: str = ""
    tags: tuple[str, ...] = ()
    #: Earlier versions, oldest first, as (evaluation, body, roast): kept as the card's revisions.
    revisions: tuple[tuple[str, str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class TurnText:
    """A turn's end as the ``end`` tool records it: ``memo`` becomes a short-term note of the chat
    (kind ``note``), ``observations`` a pending job of the historian (kind ``job``)."""

    scope: Scope
    user_id: str
    user_name: str = ""
    memo: str = ""
    observations: tuple[str, ...] = ()
    #: When it was said (the note's time, the job's message time); None: now.
    at: datetime | None = None
    #: The message the turn answered, as the historian's source (``message_id`` may be "").
    source_message: str = ""
    message_id: str = ""


Payload = MemoryDraft | MemoText | KnowledgeText | CardText | TurnText


@dataclass(slots=True)
class ImportItem:
    """One source record: ``record`` names it for people (``path#id``); ``fingerprint`` identifies
    it across runs; ``payload`` is what it becomes (None: it is refused with ``refusal``)."""

    kind: str
    record: str
    fingerprint: str
    payload: Payload | None
    refusal: str = ""


def fingerprint(importer: str, path: str, record_id: str, content: str) -> str:
    """The stable identity of a source record: the same record, unchanged, always gives the same
    value (``path`` relative to the source folder, so a moved folder imports nothing twice)."""
    digest = hashlib.sha256()
    for part in (importer, path, record_id, content):
        digest.update(part.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()


@dataclass(slots=True)
class KindTally:
    imported: int = 0
    #: Already imported by an earlier run, or the same content is already stored.
    skipped: int = 0
    refused: dict[str, int] = field(default_factory=dict)

    @property
    def refused_total(self) -> int:
        return sum(self.refused.values())


@dataclass(slots=True)
class ImportReport:
    """A run's outcome per kind; ``examples``: (kind, record, reason) of the first refusals."""

    importer: str
    source: str
    dry_run: bool
    kinds: dict[str, KindTally] = field(default_factory=dict)
    examples: list[tuple[str, str, str]] = field(default_factory=list)

    def tally(self, kind: str) -> KindTally:
        return self.kinds.setdefault(kind, KindTally())

    def count(self, kind: str, outcome: str, reason: str = "", record: str = "") -> None:
        """Add one record's outcome: "imported", "skipped" or "refused" (with ``reason``)."""
        tally = self.tally(kind)
        if outcome == "imported":
            tally.imported += 1
        elif outcome == "skipped":
            tally.skipped += 1
        else:
            tally.refused[reason] = tally.refused.get(reason, 0) + 1
            if len(self.examples) < 50:
                self.examples.append((kind, record, reason))

    @property
    def imported(self) -> int:
        return sum(tally.imported for tally in self.kinds.values())

    def as_dict(self) -> dict[str, object]:
        return {
            "importer": self.importer,
            "source": self.source,
            "dry_run": self.dry_run,
            "kinds": {
                kind: {"imported": tally.imported, "skipped": tally.skipped, "refused": dict(tally.refused)}
                for kind, tally in sorted(self.kinds.items(), key=lambda pair: _order(pair[0]))
            },
            "refusals": [{"kind": kind, "record": record, "reason": reason} for kind, record, reason in self.examples],
        }


def _order(kind: str) -> int:
    return KINDS.index(kind) if kind in KINDS else len(KINDS)
