"""Profile cards: one per user and per group (pure, no I/O).

A **group** has one card (part ``group``). A **user** has parts: ``group``, built from what the
user showed in every group and shown in groups under the ``open`` scope policy; ``group:<id>``
(one per group, ``in_group_part``), built only from that group's facts by or about them and
shown only in that group, which is what a group sees of them under ``strict``; and ``private``,
used only in that user's private chat. Which part a chat sees is ``profile_access``'s, which
facts a part is built from ``profile_policy``'s. Each part is a separate ``Card``, keyed by
(bot account, entity type, entity id, part). ``validate_card`` is the one place that decides what
a storable card is; the Markdown document a card is shown and exported as is ``profile_document``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from ..errors import InvalidInput, LimitExceeded
from .clock import UTC, as_utc

ENTITY_TYPES: tuple[str, ...] = ("user", "group")
#: The fixed parts; a user also has one ``group:<id>`` part per group (``in_group_part``).
PARTS: tuple[str, ...] = ("group", "private")
SECTIONS: tuple[str, ...] = ("evaluation", "body", "roast")
SECTION_NAMES = {"evaluation": "评价", "body": "正文", "roast": "吐槽"}
PART_NAMES = {"group": "群内可见", "private": "仅私聊"}
ENTITY_NAMES = {"user": "用户", "group": "群"}

NAME_MAX_CHARS = 64
TAG_MAX_CHARS = 24
TAGS_MAX = 16
_BOT_ID = re.compile(r"[0-9A-Za-z_-]{1,32}")
_ENTITY_ID = re.compile(r"[0-9]{1,20}")
_IN_GROUP = re.compile(r"group:([0-9]{1,20})")
#: Longest part name (``group:`` and a 20-digit group id; the column holds 32).
PART_MAX_CHARS = 26


def in_group_part(group_id: str) -> str:
    """A user's part as seen in one group (built from that group's facts only): ``group:<id>``."""
    return f"group:{group_id}"


def part_group(part: str) -> str | None:
    """The group of a per-group part (``group:<id>``); None for the fixed parts."""
    found = _IN_GROUP.fullmatch(part) if isinstance(part, str) else None
    return found.group(1) if found else None


def part_name(part: str) -> str:
    """``群内可见``, ``仅私聊``, ``仅群 20001 可见``."""
    group_id = part_group(part)
    return f"仅群 {group_id} 可见" if group_id else PART_NAMES.get(part, part)


def part_order(part: str) -> tuple[int, str]:
    """Parts in the order they are listed: ``group``, the per-group parts by group id, ``private``."""
    if part == "group":
        return (0, "")
    group_id = part_group(part)
    return (1, group_id.zfill(20)) if group_id else (2, part)


@dataclass(frozen=True, slots=True)
class CardLimits:
    """Length limits of the three sections (``[profiles]`` in the configuration)."""

    evaluation: int = 200
    body: int = 800
    roast: int = 80


@dataclass(frozen=True, slots=True)
class Card:
    """One part of one entity's card, as stored and as the document shows it."""

    bot_id: str
    entity_type: str
    entity_id: str
    part: str = "group"
    name: str = ""
    tags: list[str] = field(default_factory=list)
    evaluation: str = ""
    body: str = ""
    roast: str = ""
    #: When this version was written (aware, UTC).
    updated_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    #: The memory ids it was built from.
    source_ids: list[int] = field(default_factory=list)

    @property
    def is_empty(self) -> bool:
        return not any(getattr(self, section).strip() for section in SECTIONS)

    @property
    def label(self) -> str:
        return card_label(self.entity_type, self.entity_id, self.part)

    def as_dict(self) -> dict[str, Any]:
        """The card as JSON (``updated_at`` in ISO 8601)."""
        return {
            "bot_id": self.bot_id,
            "entity_type": self.entity_type,
            "entity_id": self.entity_id,
            "part": self.part,
            "name": self.name,
            "tags": list(self.tags),
            "evaluation": self.evaluation,
            "body": self.body,
            "roast": self.roast,
            "updated_at": self.updated_at.isoformat(),
            "source_ids": list(self.source_ids),
        }


def card_label(entity_type: str, entity_id: str, part: str | None = None) -> str:
    """``用户 10001 的群内可见画像``, ``用户 10001 在群 20001 的画像``, ``用户 10001 的画像``
    (every part), ``群 20001 的画像``."""
    who = f"{ENTITY_NAMES.get(entity_type, entity_type)} {entity_id}"
    if entity_type == "user" and part is not None:
        group_id = part_group(part)
        if group_id:
            return f"{who} 在群 {group_id} 的画像"
        return f"{who} 的{PART_NAMES.get(part, part)}画像"
    return f"{who} 的画像"


def same_content(first: Card, second: Card) -> bool:
    """Whether two versions say the same (``updated_at`` aside)."""
    return replace(first, updated_at=second.updated_at) == second


# ---------------------------------------------------------------------------- validation


def check_entity(entity_type: str, entity_id: str, part: str | None = None) -> None:
    """Refuse an entity or part that cannot exist (``InvalidInput``, Chinese)."""
    if entity_type not in ENTITY_TYPES:
        raise InvalidInput(f"画像类型只能是 user（用户）或 group（群），不是 {entity_type!r}")
    if not isinstance(entity_id, str) or not _ENTITY_ID.fullmatch(entity_id):
        raise InvalidInput(f"{ENTITY_NAMES[entity_type]}写作{'QQ 号' if entity_type == 'user' else '群号'}（纯数字）")
    if part is None:
        return
    if entity_type == "group":
        if part != "group":
            raise InvalidInput("群的画像只有 group 部分")
    elif part not in PARTS and part_group(part) is None:
        raise InvalidInput("用户画像的部分只能是 group（群内可见）、private（仅私聊）或 group:群号（仅该群可见）")


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _section_text(text: str) -> str:
    return str(text).replace("\r\n", "\n").replace("\r", "\n").strip()


def validate_card(card: Card, limits: CardLimits) -> Card:
    """The card normalised (one-line name and tags, sections trimmed, ``\\n`` line ends, UTC time,
    each source id once), or ``InvalidInput`` / ``LimitExceeded`` saying what is wrong. The one
    place that decides what a storable card is; an all-blank card is refused."""
    if not isinstance(card.bot_id, str) or not _BOT_ID.fullmatch(card.bot_id):
        raise InvalidInput("机器人账号无效")
    check_entity(card.entity_type, card.entity_id, card.part)
    name = _one_line(card.name)
    if len(name) > NAME_MAX_CHARS:
        raise LimitExceeded(f"名称 {len(name)} 字，超过上限 {NAME_MAX_CHARS} 字")
    tags = list(dict.fromkeys(tag for tag in (_one_line(item) for item in card.tags) if tag))
    if len(tags) > TAGS_MAX:
        raise LimitExceeded(f"标签 {len(tags)} 个，超过上限 {TAGS_MAX} 个")
    for tag in tags:
        if len(tag) > TAG_MAX_CHARS:
            raise LimitExceeded(f"标签“{tag[:TAG_MAX_CHARS]}…”超过 {TAG_MAX_CHARS} 字")
    sections = {section: _section_text(getattr(card, section)) for section in SECTIONS}
    if not any(sections.values()):
        raise InvalidInput("画像的评价、正文、吐槽不能全部为空")
    for section, text in sections.items():
        limit = getattr(limits, section)
        if len(text) > limit:
            raise LimitExceeded(f"画像的{SECTION_NAMES[section]} {len(text)} 字，超过上限 {limit} 字，请精简")
    for source in card.source_ids:
        if isinstance(source, bool) or not isinstance(source, int) or source < 1:
            raise InvalidInput(f"来源记忆编号应为正整数，不是 {source!r}")
    moment = card.updated_at
    if moment.tzinfo is None:
        raise InvalidInput("画像的更新时间必须带时区")
    return replace(
        card,
        name=name,
        tags=tags,
        updated_at=as_utc(moment) or moment,
        source_ids=list(dict.fromkeys(card.source_ids)),
        **sections,
    )


def export_path(card: Card) -> str:
    """Where ``profile export`` writes a card, below the output folder: the seed's layout per bot
    account, ``<bot>/profiles/users/<id>.md`` (a user's group-visible part),
    ``<bot>/profiles/users/<id>.group-<group>.md`` (their part in one group),
    ``<bot>/profiles/users/<id>.private.md`` (their private part), ``<bot>/profiles/groups/<id>.md``."""
    if card.entity_type == "group":
        return f"{card.bot_id}/profiles/groups/{card.entity_id}.md"
    group_id = part_group(card.part)
    suffix = ".private" if card.part == "private" else f".group-{group_id}" if group_id else ""
    return f"{card.bot_id}/profiles/users/{card.entity_id}{suffix}.md"
