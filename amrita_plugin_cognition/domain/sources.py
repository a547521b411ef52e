"""Where a fact came from (pure): how it is described, and what of it the short-term record and
the queue hold.

A fact's ``source`` says how it was written (``via``: the historian, with its ``job`` and the
``job_kind`` it read; the memory tool; a correction, with who ``edited_by``) and names the
messages it was drawn from (``messages``: the chat's message ids). A correction's source names its
own message, not its old version's: the versions it replaced stay reachable through the lineage,
and a forget takes every version. ``describe`` says all this in one line, the same for the chat's
``/memory ... show`` and the CLI's ``inspect``.

The same message ids are on the traces those messages left: the ``end`` note of the turn (its
batch's message ids), the transcript turn (its message id) and the historian jobs made from that
turn (an ``end`` job's ``message_ids``, a transcript batch's turns). A forget takes those traces
with it (``engine/corrections.py``): a note or a turn is the unit it was written in, so one that
holds the forgotten fact goes whole, even when it said something else too; an ``end`` job of that
turn goes whole, a transcript batch loses that turn (``job_without_messages``), and a batch a
worker is running is rewritten and run again (``store/jobs.drop_message_sources``). That other
content is not lost as memory: facts drawn from the same message are facts of their own and stay
until forgotten one by one; the note and the turn only ever held it as a short-term trace.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

#: How a fact was written (``source["via"]``), and what the historian read (``source["job_kind"]``).
VIA_NAMES = {"historian": "由史官整理", "tool": "由记忆工具写入", "correction": "由更正写入"}
JOB_KIND_NAMES = {"observations": "本轮观察", "transcript": "聊天记录"}


def describe(source: Mapping[str, object], *, message_ids: bool = False) -> str:
    """How a fact was written, in Chinese, from whatever its source holds: the historian's job and
    what it read, or the tool or correction that wrote it; the messages it was drawn from (how many;
    ``message_ids``: which, for the owner's view); who corrected it. Imported and restored facts
    may hold none of these: "" then."""
    parts = []
    job = source.get("job")
    via = VIA_NAMES.get(str(source.get("via", "")), "")
    if job and not isinstance(job, bool) and isinstance(job, int | str):
        kind = JOB_KIND_NAMES.get(str(source.get("job_kind", "")), "")
        parts.append(f"由史官整理（任务 #{job}{'，读的是' + kind if kind else ''}）")
    elif via:
        parts.append(via)
    messages = source.get("messages")
    if isinstance(messages, list) and messages:
        ids = [str(item) for item in messages]
        parts.append("来自消息 " + ",".join(ids) if message_ids else f"来自 {len(ids)} 条消息")
    editor = str(source.get("edited_by") or "")
    if editor:  # a chat user by their QQ number, an operator (the CLI, the WebUI's page) by name
        parts.append(f"经 QQ号{editor} 更正" if editor.isdigit() else f"经 {editor} 更正")
    return "，".join(parts)


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
