"""A chat's last turns as the consolidation cycle may read them (the tool ``cycle_recent``).

The turns come from the transcript (``store/short_term.recent_turns``), the input and the bot's
reply of each. What an opted-out user said or what names one is left out with the bot's reply to
it (``SwitchState.without_opted_out_messages``, as a job's context leaves it out), and so is a
message that asks not to be remembered; every secret is redacted and each text clipped, so what
the model reads is what a historian job's context would carry. A switched-off chat has none.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..domain.admission import redact, requests_not_to_remember
from ..domain.clock import as_utc
from ..domain.job_kinds import BOT_SPEAKER
from ..domain.people import without_messages
from ..domain.records import Scope, normalise_text
from ..store import short_term
from .switches import chat_switches

if TYPE_CHECKING:
    from .service import CognitionEngine

#: Turns one read returns at most (each is up to two messages).
RECENT_MAX = 50


@dataclass(frozen=True, slots=True)
class RecentMessage:
    speaker_id: str
    speaker: str
    text: str
    at: datetime


def _messages(rows: list[Any], limit: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for row in rows:
        said = as_utc(row.said_at) or row.said_at
        if row.input_text:
            text = normalise_text(row.input_text)[:limit]
            messages.append(
                {"speaker_id": row.user_id, "speaker": row.user_name or row.user_id, "text": text, "at": said}
            )
        if row.reply_text:
            messages.append(
                {"speaker_id": "", "speaker": BOT_SPEAKER, "text": normalise_text(row.reply_text)[:limit], "at": said}
            )
    return messages


def _scrubbed(messages: list[dict[str, Any]]) -> list[RecentMessage]:
    """Without the requests not to remember (and the replies to them); secrets redacted (CPU work)."""
    kept = without_messages(messages, lambda message: requests_not_to_remember(str(message.get("text", ""))))
    return [RecentMessage(item["speaker_id"], item["speaker"], redact(item["text"]), item["at"]) for item in kept]


async def recent(engine: CognitionEngine, bot_id: str, scope: Scope, turns: int = 20) -> list[RecentMessage]:
    """The chat's last ``turns`` turns (at most ``RECENT_MAX``) as messages, oldest first (module doc)."""
    switches = await chat_switches(engine, bot_id, scope)
    if switches is None:
        return []
    async with engine.session() as session:
        rows = await short_term.recent_turns(session, bot_id, scope, max(0, min(turns, RECENT_MAX)))
    messages = switches.without_opted_out_messages(_messages(rows, engine.config.historian.source_message_max_chars))
    return await asyncio.to_thread(_scrubbed, messages)
