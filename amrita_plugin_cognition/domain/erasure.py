"""What a delete-all covers (pure policy; the SQL is ``store/erasure.py``).

Three targets, each within one bot account:

* a **chat**: everything learned in it (facts and their older versions, memo and its history,
  pins, short-term notes, the transcript, queued historian jobs);
* a **user**: everything of theirs in every chat: facts they said or that are about them, their
  notes and transcript turns, their private chat entirely, and every queued job that carries
  their words or their QQ number (a job not yet run would bring them back);
* the **bot** account: everything it holds.

A group's memo and pins belong to the group: a user's delete-all leaves them.

Profile cards: a chat takes the group's card (a private chat: its user's private part); a user
takes both parts of their card and every other card (and kept version) of the bot that names
their QQ number, which the next merge rebuilds from the facts that are left; the bot takes all.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from .governance import ids_in
from .records import Scope

ErasureKind = Literal["chat", "user", "bot"]


@dataclass(frozen=True, slots=True)
class ErasureTarget:
    kind: ErasureKind
    bot_id: str
    scope: Scope | None = None
    user_id: str = ""

    def __post_init__(self) -> None:
        if not self.bot_id:
            raise ValueError("an erasure needs the bot account")
        if self.kind == "chat" and self.scope is None:
            raise ValueError("a chat erasure needs the chat")
        if self.kind == "user" and not self.user_id:
            raise ValueError("a user erasure needs the user")

    @classmethod
    def chat(cls, bot_id: str, scope: Scope) -> ErasureTarget:
        return cls("chat", bot_id, scope=scope)

    @classmethod
    def user(cls, bot_id: str, user_id: str) -> ErasureTarget:
        return cls("user", bot_id, user_id=str(user_id))

    @classmethod
    def bot(cls, bot_id: str) -> ErasureTarget:
        return cls("bot", bot_id)

    @property
    def label(self) -> str:
        """What the audit record names as the target: ``group:123``, ``user:456`` or ``bot``."""
        if self.kind == "chat":
            assert self.scope is not None
            return self.scope.key
        return f"user:{self.user_id}" if self.kind == "user" else "bot"

    @property
    def private_chat(self) -> Scope | None:
        """The chat erased whole: the chat itself, or a user's private chat."""
        if self.kind == "chat":
            return self.scope
        return Scope("private", self.user_id) if self.kind == "user" else None

    @property
    def action(self) -> str:
        return f"delete_all_{self.kind}"


def names_user(text: str, user_id: str) -> bool:
    """Whether ``text`` names this QQ number as a whole number (not inside a longer one)."""
    return user_id in ids_in(text)


def _said_by(item: Any, user_id: str) -> bool:
    return isinstance(item, dict) and (
        str(item.get("speaker_id", "")) == user_id or names_user(json.dumps(item, ensure_ascii=False), user_id)
    )


def scrub_job(payload: dict[str, Any], user_id: str) -> dict[str, Any] | None:
    """A queued historian job without this user: ``None`` when the job is theirs or about them
    (their observations, or only their turns), else the payload with their messages and turns
    taken out of its context (the same object when nothing of theirs was in it)."""
    speaker = payload.get("speaker")
    if isinstance(speaker, dict) and str(speaker.get("id", "")) == user_id:
        return None
    if any(names_user(str(text), user_id) for text in payload.get("observations", []) or []):
        return None
    if names_user(str(payload.get("memo", "")), user_id):
        return None
    scrubbed = dict(payload)
    changed = False
    for key in ("turns", "batch", "recent"):
        items = payload.get(key)
        if isinstance(items, list):
            kept = [item for item in items if not _said_by(item, user_id)]
            if len(kept) != len(items):
                scrubbed[key] = kept
                changed = True
    if "turns" in payload and not scrubbed.get("turns"):
        return None
    return scrubbed if changed else payload
