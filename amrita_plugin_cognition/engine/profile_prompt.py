"""What a card merge asks the model and how its answer is checked (``profile_merge`` runs it).

The prompt (``prompt/profile_merge.jinja``) gets the current time, the entity (type, id, who it
is), which part of the card and where it is shown, the current card with its update time, the new
observations and the entity's past facts this part may show, the section limits, and, after a bad
answer, the problems to fix; for a rebuild, the card marked as possibly holding a forgotten fact.
The model answers through one forced tool call (``cognition_update_profile``): ``update_profile``
with the whole card, or ``skip``. ``candidate`` turns an answer into a card for the job's own
entity and part (the entity is never taken from the model), cutting a secret out of a section or
refusing it, and validating the limits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal
from zoneinfo import ZoneInfo

from pydantic import BaseModel, Field

from ..domain.admission import admit
from ..domain.profiles import SECTION_NAMES, SECTIONS, Card, CardLimits, part_group, validate_card
from ..domain.records import MemoryRecord
from ..errors import InvalidInput, LLMUnavailable
from . import profiles
from .historian_sources import when

if TYPE_CHECKING:
    from .service import CognitionEngine

TEMPLATE = "profile_merge.jinja"
TOOL_NAME = "cognition_update_profile"
UPDATE = "update_profile"
SKIP = "skip"
_VISIBILITY = {
    ("group", "group"): "这张卡片会在该群里展示。",
    ("user", "group"): "这部分卡片会在群聊中展示，只能写该用户在群里表现出来的内容。",
    ("user", "private"): "这部分卡片只在与该用户的私聊中使用。",
}


def visibility(entity_type: str, part: str) -> str:
    """Where the part is shown, as the prompt tells the model."""
    group_id = part_group(part)
    if entity_type == "user" and group_id is not None:
        return f"这部分卡片只在群{group_id}里展示，只能写该用户在这个群里表现出来的内容，下面的记忆也都来自这个群。"
    return _VISIBILITY[(entity_type, part)]


class ProfileAnswer(BaseModel):
    """提交画像卡片的新版本，或说明无需更新。"""

    action: Literal["update_profile", "skip"] = Field(
        description="update_profile：提交整张卡片的新版本；skip：新观察没有值得写进卡片的新信息"
    )
    entity_type: str = Field("", description="卡片属于谁的类型：照抄给定的 entity_type")
    entity_id: str = Field("", description="卡片属于谁的编号：照抄给定的 entity_id")
    name: str = Field("", description="称呼（昵称或群名）；不知道则留空")
    tags: list[str] = Field(default_factory=list, description="几个简短标签")
    evaluation: str = Field("", description="评价：一两句话的概括")
    body: str = Field("", description="正文：稳定的信息，分条，每条一行")
    roast: str = Field("", description="吐槽：一句犀利、简短的吐槽，不辱骂、不透露隐私")


def when_text(moment: datetime, zone: ZoneInfo) -> str:
    """A moment as the historian's prompts show it, in ``zone``."""
    return when(moment.astimezone(zone))


def who(entity_type: str, entity_id: str) -> str:
    return f"QQ群{entity_id}" if entity_type == "group" else f"用户 QQ号{entity_id}"


def prompt_context(
    engine: CognitionEngine,
    card: Card | None,
    entity_type: str,
    entity_id: str,
    part: str,
    observations: Sequence[str],
    facts: Sequence[MemoryRecord],
    now: datetime,
) -> dict[str, Any]:
    zone = ZoneInfo(engine.config.timezone)
    limits = profiles.card_limits(engine)
    return {
        "now": f"{when_text(now, zone)} ({zone.key})",
        "entity_type": entity_type,
        "entity_id": entity_id,
        "who": who(entity_type, entity_id),
        "part": part,
        "visibility": visibility(entity_type, part),
        "card": None
        if card is None
        else {
            "name": card.name,
            "tags": list(card.tags),
            "evaluation": card.evaluation,
            "body": card.body,
            "roast": card.roast,
            "updated_at": when_text(card.updated_at, zone),
        },
        "observations": list(observations),
        "facts": [{"id": fact.id, "when": when_text(fact.recorded_at, zone), "text": fact.text} for fact in facts],
        "limits": {"evaluation": limits.evaluation, "body": limits.body, "roast": limits.roast},
        "feedback": [],
        "rebuild": False,
    }


def candidate(answer: ProfileAnswer, base: Card, limits: CardLimits) -> tuple[Card | None, list[str]]:
    """The answer as a card for the job's entity and part, or the problems to feed back."""
    problems: list[str] = []
    if (answer.entity_type.strip(), answer.entity_id.strip()) != (base.entity_type, base.entity_id):
        problems.append(
            f"你提交的是 {answer.entity_type or '?'} {answer.entity_id or '?'} 的卡片，但这张卡片属于 "
            f"{base.entity_type} {base.entity_id}：entity_type 和 entity_id 必须照抄，内容只写这一个对象"
        )
    sections: dict[str, str] = {}
    for section in SECTIONS:
        text = str(getattr(answer, section))
        verdict = admit(text) if text.strip() else None
        if verdict is not None and verdict.reason == "credential":
            if verdict.redacted and verdict.text is not None:
                text = verdict.text  # the secret is cut out; the rest may stay
            else:
                problems.append(f"{SECTION_NAMES[section]}里有密码、密钥或验证码之类的机密，卡片不能写入机密")
        sections[section] = text
    card = replace(
        base,
        name=answer.name or base.name,
        tags=list(answer.tags) or list(base.tags),
        evaluation=sections["evaluation"],
        body=sections["body"],
        roast=sections["roast"],
    )
    try:
        card = validate_card(card, limits)
    except InvalidInput as error:
        problems.append(error.zh)
    return (None if problems else card), problems


def malformed(error: LLMUnavailable) -> bool:
    """Whether the call failed on the answer itself (no tool call, bad JSON, bad arguments)
    rather than on the model being unreachable."""
    return getattr(error.__cause__, "kind", "") == "invalid_output"


async def ask(engine: CognitionEngine, context: dict[str, Any]) -> ProfileAnswer:
    assert engine.llm is not None
    return await engine.llm.complete_structured(
        "profile_merge",
        TEMPLATE,
        context,
        output=ProfileAnswer,
        tool_name=TOOL_NAME,
        preset=engine.config.profiles.merge_preset or engine.config.historian.preset,
    )


async def answer_or_problems(
    engine: CognitionEngine, context: dict[str, Any]
) -> tuple[ProfileAnswer | None, list[str]]:
    """The model's answer; or, when the answer itself was unusable (no tool call, bad JSON), none
    and the problem to name in the next try. An unreachable or timing-out model raises: the job
    is retried later with backoff."""
    try:
        return await ask(engine, context), []
    except LLMUnavailable as error:
        if not malformed(error):
            raise
        return None, [f"上一次没有得到有效的函数调用（{error.zh}），请只调用一次 `{TOOL_NAME}`"]
