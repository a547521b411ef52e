"""What to search for: the views of the current input that recall runs and averages.

One message is one view. A batch of several messages gives the whole batch plus each message.
A transcript (lines such as ``<小明>:"…"`` or ``小明：…``, e.g. recent conversation with the
bot's own lines) gives three views, measured best on the dialogue benchmark: the whole
transcript, the people's lines without the bot's, and the last line a person said.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_LINE = re.compile(r"^\s*(?:<(?P<tagged>[^<>]{1,32})>|(?P<plain>[^\s:：<>]{1,32}))\s*[:：]\s*(?P<text>.*)$")
BOT_SPEAKERS = frozenset({"assistant", "bot", "机器人", "助手", "ai"})


def _strip_quotes(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] in "\"“「'" and text[-1] in "\"”」'":
        return text[1:-1].strip()
    return text


def transcript_lines(text: str, bot_names: frozenset[str] = BOT_SPEAKERS) -> list[tuple[bool, str]] | None:
    """(said by a person, utterance) per line, or None when ``text`` is not a transcript."""
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) < 2:
        return None
    parsed: list[tuple[bool, str]] = []
    for line in lines:
        match = _LINE.match(line)
        if match is None:
            return None
        speaker = (match.group("tagged") or match.group("plain") or "").strip()
        parsed.append((speaker.lower() not in bot_names, _strip_quotes(match.group("text"))))
    return parsed


def query_views(messages: Sequence[str], bot_names: frozenset[str] = BOT_SPEAKERS) -> list[str]:
    """Distinct, non-empty search texts for the current input."""
    texts = [message.strip() for message in messages if message and message.strip()]
    if not texts:
        return []
    views: list[str] = []
    if len(texts) > 1:
        views = ["\n".join(texts), *texts]
    else:
        views = [texts[0]]
        lines = transcript_lines(texts[0], bot_names)
        if lines:
            people = [utterance for by_person, utterance in lines if by_person and utterance]
            if people:
                views += [" ".join(people), people[-1]]
    return list(dict.fromkeys(view for view in views if view))
