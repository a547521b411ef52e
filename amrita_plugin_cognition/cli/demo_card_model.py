"""The replay model's answer to a card merge (``cognition_update_profile``), by rule from the
request: the card it is asked about, the current card and the new observations the prompt
carries (``prompt/profile_merge.jinja``). Nothing here knows the demo's script: whatever facts
the engine sends are what the card says, so a fact the engine did not hand over cannot appear.

The rule, as a careful model would do it in short:

- the body keeps the current card's lines and gains one line per new observation not on it yet
  (people written ``QQ号…（昵称…）`` become their nicknames; on a user's own card the leading
  name is dropped); over the body's limit the oldest lines go first;
- the tags are the themes the body's lines touch (摄影, 羽毛球, 出游);
- the evaluation names the themes and the newest line; the roast teases the newest line that
  has something to tease;
- no new line at all: ``skip``.

Past facts (【相关的历史记忆】) are context for a model that judges; this rule does not judge,
so it only writes what the merge brings as new.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

#: The function the merge makes the model call (``engine.profile_prompt.TOOL_NAME``).
PROFILE_TOOL = "cognition_update_profile"
TARGET = re.compile(r"entity_type=(user|group)，entity_id=(\d+)，部分=(group(?::\d+)?|private)")
LIMIT = re.compile(r"^- (?:评价（evaluation）|正文（body）|吐槽（roast）)：.*?不超过 (\d+) 字", re.MULTILINE)
NAMED = re.compile(r"QQ号(\d+)（昵称([^）]*)）")
NAMED_SHORT = re.compile(r"([^\s，。：；（）]{1,16})（QQ(\d+)）")
EMPTY = ("（无）", "（空）")
THEMES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("摄影", ("拍", "摄影", "相机", "镜头", "三脚架")),
    ("羽毛球", ("羽毛球",)),
    ("出游", ("西湖", "千岛湖", "杭州")),
)
#: (word, roast): the newest body line with one of these words (checked in this order) picks it.
ROASTS: tuple[tuple[str, str], ...] = (
    ("三脚架", "三脚架带得比人还齐，合影全靠它们撑场面。"),
    ("星空", "约拍星空是假，通宵聊天是真。"),
    ("雪景", "别人赏雪，这边趴在桥上找机位。"),
    ("羽毛球", "羽毛球新手一枚，先把发球打过网再说。"),
    ("日出", "为了日出能早起，为了上班可就难说了。"),
    ("拍", "快门按得比消息回得还勤。"),
)
FALLBACK_ROAST = "暂时没什么可吐槽的。"


@dataclass(slots=True)
class MergeRequest:
    """What a merge prompt says, as far as the rule needs it."""

    entity_type: str = ""
    entity_id: str = ""
    part: str = ""
    has_card: bool = False
    name: str = ""
    body: list[str] = field(default_factory=list)
    observations: list[str] = field(default_factory=list)
    limits: dict[str, int] = field(default_factory=dict)


def _value(line: str, label: str) -> str:
    text = line[len(label) :].strip()
    return "" if text in EMPTY else text


def parse_merge_request(system: str, user: str) -> MergeRequest:
    """The target, the current card and the new observations of a merge prompt."""
    request = MergeRequest()
    target = TARGET.search(user)
    if target is not None:
        request.entity_type, request.entity_id, request.part = target.groups()
    limits = [int(found) for found in LIMIT.findall(system)]
    if len(limits) == 3:
        request.limits = dict(zip(("evaluation", "body", "roast"), limits, strict=True))
    section = ""
    in_body = False
    for line in user.splitlines():
        stripped = line.strip()
        if stripped.startswith("【"):
            section, in_body = stripped, False
            request.has_card = request.has_card or (section.startswith("【当前卡片】") and "上次更新" in section)
            continue
        if section.startswith("【当前卡片】") and request.has_card:
            if stripped.startswith("吐槽："):
                in_body = False
            elif in_body:
                if stripped and stripped not in EMPTY:
                    request.body.append(stripped)
            elif stripped.startswith("名称："):
                request.name = _value(stripped, "名称：")
            elif stripped.startswith("正文："):
                in_body = True
        elif section.startswith("【新的观察】") and stripped.startswith("- "):
            request.observations.append(stripped[2:].strip())
    return request


def card_line(text: str, entity_type: str, entity_id: str) -> tuple[str, str]:
    """One observation as a body line, and the nickname it gives the card's own user ('')."""
    name = ""

    def nickname(found: re.Match[str]) -> str:
        nonlocal name
        if entity_type == "user" and found.group(1) == entity_id:
            name = found.group(2)
        return found.group(2)

    def short(found: re.Match[str]) -> str:
        nonlocal name
        if entity_type == "user" and found.group(2) == entity_id:
            name = name or found.group(1)
        return found.group(1)

    line = NAMED_SHORT.sub(short, NAMED.sub(nickname, text)).strip().rstrip("。")
    if name and line.startswith(name) and len(line) > len(name):
        line = line[len(name) :].lstrip("，, ")
    return line, name


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(1, limit - 1)] + "…"


def card_answer(system: str, user: str) -> dict[str, Any]:
    """The arguments of the ``cognition_update_profile`` call for this merge prompt."""
    request = parse_merge_request(system, user)
    limits = {"evaluation": 200, "body": 800, "roast": 80, **request.limits}
    body = list(request.body)
    name = request.name
    added: list[str] = []
    for observation in request.observations:
        line, nickname = card_line(observation, request.entity_type, request.entity_id)
        name = name or nickname
        if line and line not in body and line not in added:
            added.append(line)
    if not added:
        return {"action": "skip", "entity_type": request.entity_type, "entity_id": request.entity_id}
    body += added
    while len(body) > 1 and len("\n".join(body)) > limits["body"]:
        body.pop(0)  # the oldest line goes first
    tags = [theme for theme, words in THEMES if any(word in line for line in body for word in words)]
    who = name or (f"QQ群{request.entity_id}" if request.entity_type == "group" else f"QQ号{request.entity_id}")
    themes = "、".join(tags) or "日常"
    if request.entity_type == "group":
        evaluation = f"{who}里常聊{themes}。最新动态：{added[-1]}。"
    else:
        newest = added[-1] if added[-1].startswith(who) else who + added[-1]
        evaluation = f"{who}，常聊{themes}。最新印象：{newest}。"
    roast = next(
        (joke for line in reversed(body) for word, joke in ROASTS if word in line),
        FALLBACK_ROAST,
    )
    return {
        "action": "update_profile",
        "entity_type": request.entity_type,
        "entity_id": request.entity_id,
        "name": name,
        "tags": tags,
        "evaluation": _clip(evaluation, limits["evaluation"]),
        "body": "\n".join(body),
        "roast": _clip(roast, limits["roast"]),
    }
