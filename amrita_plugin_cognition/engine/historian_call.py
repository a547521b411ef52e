"""The historian's one structured call: its templates, its function and the answer's schema; and
the same call on a one-observation batch, which is how the admission harness asks the model for
its flags (``ambot cognition eval admission FILE --model PRESET``).

Nothing here touches the database: a prompt is built from a job's payload alone, so the harness
runs without a bot or a store.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime, timezone
from typing import Any
from zoneinfo import ZoneInfo

from ..domain.admission import NO_OPINION, SecondOpinion
from ..domain.job_kinds import OBSERVATIONS_JOB
from ..domain.records import Scope
from ..llm.gateway import LLMGateway
from ..llm.settings import LLMSettings
from .historian_facts import RewriteAnswer
from .historian_sources import job_sources, prompt_context

REWRITE_TEMPLATE = "historian_rewrite.jinja"
EXTRACT_TEMPLATE = "historian_extract.jinja"
TOOL_NAME = "cognition_record_facts"
#: Who says the observation of a one-observation batch, and where (the harness's lines name nobody).
ONE_SPEAKER = ("10001", "用户")
ONE_CHAT = Scope("private", "10001")


async def ask(llm: LLMGateway, kind: str, context: dict[str, Any], preset: str = "") -> RewriteAnswer:
    """One call of the historian: rewrite a job's observations, or extract a transcript batch's facts."""
    extracting = kind != OBSERVATIONS_JOB
    return await llm.complete_structured(
        "historian_extract" if extracting else "historian_rewrite",
        EXTRACT_TEMPLATE if extracting else REWRITE_TEMPLATE,
        context,
        output=RewriteAnswer,
        tool_name=TOOL_NAME,
        preset=preset,
    )


def one_observation(text: str, now: datetime, zone: ZoneInfo) -> tuple[dict[str, Any], dict[str, Any]]:
    """The payload of an ``end`` job with one observation said at ``now``, and its prompt context."""
    local = now.astimezone(zone)
    payload: dict[str, Any] = {
        "observations": [text],
        "perspective": "",
        "speaker": {"id": ONE_SPEAKER[0], "name": ONE_SPEAKER[1]},
        "message_ids": [],
        "time": {"utc": now.isoformat(), "local": local.isoformat(), "epoch": now.timestamp(), "zone": zone.key},
        "batch": [],
        "recent": [],
    }
    sources = job_sources(OBSERVATIONS_JOB, payload, zone)
    return payload, prompt_context(OBSERVATIONS_JOB, ONE_CHAT, payload, sources, now, zone)


def opinion_of(answer: RewriteAnswer) -> SecondOpinion:
    """Every flag the answer gives any of its facts (one observation: all of them are about it)."""
    opinion = NO_OPINION
    for fact in answer.facts:
        opinion = opinion | fact.opinion
    return opinion


async def second_opinion(llm: LLMGateway, text: str, now: datetime, zone: ZoneInfo, preset: str = "") -> SecondOpinion:
    """The model's flags on one observation, asked with the historian's own prompt and function.
    Raises ``LLMUnavailable`` when every attempt failed."""
    _, context = one_observation(text, now, zone)
    return opinion_of(await ask(llm, OBSERVATIONS_JOB, context, preset))


def opinion_asker(
    preset: Any, zone: ZoneInfo, timeout_seconds: float, max_retries: int
) -> Callable[[str], Awaitable[SecondOpinion]]:
    """``ask(text)`` for the admission harness: the flags of one observation said now, asked of
    ``preset`` (an amrita_core ``ModelPreset``) through a gateway of its own with these limits."""

    async def resolve(_: str) -> Any:
        return preset

    gateway = LLMGateway(
        LLMSettings(preset=str(preset.name), timeout_seconds=timeout_seconds, max_retries=max_retries),
        resolve_preset=resolve,
    )

    async def ask_flags(text: str) -> SecondOpinion:
        return await second_opinion(gateway, text, datetime.now(timezone.utc), zone)

    return ask_flags
