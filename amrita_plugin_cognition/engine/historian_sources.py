"""What the historian's model reads about one job: the numbered sources (observations, or the
turns of a transcript batch) with what is derived from each (the time resolver's anchors, the
explicit ids), and the prompt's context (the chat, the time, the recent messages, the sources),
every stored or said text made inert."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from ..domain.gate import explicit_ids
from ..domain.inert import NAME_MAX_CHARS, inert_line
from ..domain.job_kinds import BOT_SPEAKER, OBSERVATIONS_JOB
from ..domain.records import Scope
from ..domain.timeresolve import anchor_hints
from ..logs import log_event

if TYPE_CHECKING:
    from .service import CognitionEngine

_WEEKDAYS = "一二三四五六日"


@dataclass(slots=True)
class Source:
    """One numbered thing the facts come from: an observation, or a transcript turn."""

    number: int
    text: str
    speaker_id: str
    speaker_name: str
    at: datetime
    message_ids: list[str]
    hints: list[str]
    ids: set[str]


async def without_removed_turns(engine: CognitionEngine, bot_id: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The job's context messages whose transcript turns are still kept: a forget, an erasure (in
    any process) or the chat's trimming removed the others after the job was queued, and the model
    never reads them. Messages that name no turn (queued before turns were named) are kept."""
    recent = payload.get("recent")
    if not isinstance(recent, list):
        return payload
    turns = {
        message["turn"] for message in recent if isinstance(message, dict) and isinstance(message.get("turn"), int)
    }
    if not turns:
        return payload
    from ..store import short_term  # here: building a prompt needs no database (the admission harness)

    async with engine.unit_of_work() as uow:
        present = await short_term.present_turns(uow.session, bot_id, turns)
    if present >= turns:
        return payload
    gone = turns - present
    kept = [message for message in recent if not (isinstance(message, dict) and message.get("turn") in gone)]
    log_event("historian", dropped_context=len(recent) - len(kept))
    return {**payload, "recent": kept}


def moment_of(value: str, fallback: datetime) -> datetime:
    try:
        moment = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        return fallback
    return moment if moment.tzinfo else moment.replace(tzinfo=fallback.tzinfo)


def local_time(payload: dict[str, Any], zone: ZoneInfo) -> datetime:
    return moment_of(str(payload.get("time", {}).get("utc", "")), datetime.now(zone)).astimezone(zone)


def numbered_source(
    number: int, text: str, speaker_id: str, speaker_name: str, at: datetime, message_ids: list[str]
) -> Source:
    """A numbered source with what is derived from its text: the resolver's anchors and its ids."""
    return Source(number, text, speaker_id, speaker_name, at, message_ids, anchor_hints(text, at), explicit_ids(text))


def job_sources(kind: str, payload: dict[str, Any], zone: ZoneInfo) -> list[Source]:
    said = local_time(payload, zone)
    if kind == OBSERVATIONS_JOB:
        speaker = payload.get("speaker", {})
        message_ids = [str(item) for item in payload.get("message_ids", [])]
        return [
            numbered_source(number, text, str(speaker.get("id", "")), str(speaker.get("name", "")), said, message_ids)
            for number, text in enumerate(payload.get("observations", []), start=1)
        ]
    return [
        numbered_source(
            number,
            str(turn.get("input", "")),
            str(turn.get("speaker_id", "")),
            str(turn.get("speaker", "")),
            moment_of(str(turn.get("at", "")), said).astimezone(zone),
            [str(turn["message_id"])] if turn.get("message_id") else [],
        )
        for number, turn in enumerate(payload.get("turns", []), start=1)
    ]


def when(moment: datetime) -> str:
    return f"{moment:%Y-%m-%d %H:%M} 星期{_WEEKDAYS[moment.weekday()]}"


def person(person_id: str, name: str) -> str:
    name = inert_line(name, NAME_MAX_CHARS)
    return f"QQ号{person_id}（昵称{name}）" if person_id else name or "未知"


def chat_label(scope: Scope) -> str:
    return f"QQ群{scope.id}" if scope.is_group else f"与QQ号{scope.id}的私聊"


def prompt_context(
    kind: str, scope: Scope, payload: dict[str, Any], sources: list[Source], now: datetime, zone: ZoneInfo
) -> dict[str, Any]:
    recent = [
        {
            "when": when(moment_of(str(message.get("at", "")), now).astimezone(zone)),
            "speaker": person(str(message.get("speaker_id", "")), str(message.get("speaker", ""))),
            "text": inert_line(str(message.get("text", ""))),
        }
        for message in [*payload.get("recent", []), *payload.get("batch", [])]
    ]
    items = [
        {
            "id": source.number,
            "when": when(source.at),
            "speaker": person(source.speaker_id, source.speaker_name),
            "text": inert_line(source.text, None),
            "hints": source.hints,
            "ids": sorted(source.ids),
        }
        for source in sources
    ]
    context: dict[str, Any] = {
        "now": f"{when(now.astimezone(zone))} ({zone.key})",
        "chat": chat_label(scope),
        "messages": recent,
        "perspective": str(payload.get("perspective", "")),
        "feedback": [],
        "previous": [],
    }
    if kind == OBSERVATIONS_JOB:
        context["observations"] = items
    else:
        turns = payload.get("turns", [])
        context["turns"] = [
            {**item, "reply": inert_line(str(turns[index].get("reply", ""))) if index < len(turns) else ""}
            for index, item in enumerate(items)
        ]
        context["bot"] = BOT_SPEAKER
    return context
