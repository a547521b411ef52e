"""Where a fact came from, as far as the short-term record and the queue know it (pure).

A fact's ``source`` names the messages it was drawn from (``messages``: the chat's message ids;
the historian's facts, the write tool's, a correction's, which keeps its old version's). The same
ids are on the traces those messages left: the ``end`` note of the turn (its batch's message ids),
the transcript turn (its message id) and the historian jobs made from that turn (an ``end`` job's
``message_ids``, a transcript batch's turns). A forget takes those traces with it
(``engine/corrections.py``): a note or a turn is the unit it was written in, so one that holds the
forgotten fact goes whole, even when it said something else too. That other content is not lost as
memory: facts drawn from the same message are facts of their own and stay until forgotten one by
one; the note and the turn only ever held it as a short-term trace.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any


def source_messages(source: Mapping[str, object]) -> set[str]:
    """The message ids a fact was drawn from (none for imports, the CLI, consolidation)."""
    messages = source.get("messages")
    if not isinstance(messages, list):
        return set()
    return {str(item) for item in messages if isinstance(item, str | int) and str(item)}


def job_without_messages(
    payload: dict[str, Any], message_ids: Collection[str], turn_ids: Collection[int] = ()
) -> dict[str, Any] | None:
    """A historian job without what these messages said: ``None`` when the job was made from one
    of them (an ``end`` job of that turn: its observations are not tied to single messages), else
    the payload without those turns (a transcript batch; ``None`` when none is left) and without
    the recent messages of the removed ``turn_ids``. The same object when nothing of them is in it
    (also for a job of another kind)."""
    wanted = {str(item) for item in message_ids}
    if "observations" in payload:
        own = payload.get("message_ids")
        if isinstance(own, list) and wanted.intersection(str(item) for item in own):
            return None
    scrubbed = dict(payload)
    changed = False
    turns = payload.get("turns")
    if isinstance(turns, list):
        kept = [turn for turn in turns if not (isinstance(turn, dict) and str(turn.get("message_id", "")) in wanted)]
        if len(kept) != len(turns):
            if not kept:
                return None
            scrubbed["turns"], changed = kept, True
    recent = payload.get("recent")
    if isinstance(recent, list) and turn_ids:
        removed = set(turn_ids)
        kept = [message for message in recent if not (isinstance(message, dict) and message.get("turn") in removed)]
        if len(kept) != len(recent):
            scrubbed["recent"], changed = kept, True
    return scrubbed if changed else payload
