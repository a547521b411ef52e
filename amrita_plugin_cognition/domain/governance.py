"""Per-chat switch and per-user opt-out: what they forbid, decided without I/O.

* **Chat switch** (``/memory off|on``): while a chat's memory is off nothing of it is written
  (facts, notes, memo, pins, transcript turns), injected or extracted. No stored switch means on.
  Who may flip it is ``permissions.check_switch_chat``.
* **Opt-out** (``/memory optout|optin``), per bot account and user: from then on nothing new about
  that user is written in any chat, their own words included. A text is *about* a user when the
  user said it (its speaker, or the speaker of a turn it was taken from), when it is about them
  (its subject), or when it names their QQ number: an explicit numeric id of the text
  (``gate.explicit_ids``: a run of five or more digits, full-width digits folded). What they
  already have stays until they delete it.

``SwitchState`` is one bot account's switches and opt-outs at one moment (the engine caches it per
process, ``engine/switches.py``); its checks are set lookups, cheap enough for every turn.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .gate import explicit_ids
from .records import Scope

#: The longest actor a governance action names (``--actor``): it goes into the audit record's
#: ``actor`` and into every barrier's ``reason`` as ``delete_all_<kind>:<actor>``, both 64
#: characters in SQL (PostgreSQL refuses a longer value; SQLite would store it), and
#: ``delete_all_chat:`` takes 16 of them.
ACTOR_MAX_CHARS = 48

#: The refusal reason of a write into a switched-off chat, and of a write about an opted-out user.
SWITCHED_OFF = "switched_off"
OPTED_OUT = "opted_out"

#: Chinese messages for chat users and the LLM.
CHAT_OFF_MESSAGE = "本会话的记忆已关闭（/memory off），不会记录、使用或整理任何内容；可用 /memory on 重新开启"
SELF_OPTED_OUT_MESSAGE = "对方已选择不被记忆（/memory optout），不会记录关于 TA 的新内容；TA 可发送 /memory optin 恢复"
OTHER_OPTED_OUT_MESSAGE = "这段内容涉及已选择不被记忆的用户，不予记录"


def ids_in(text: str) -> set[str]:
    """The QQ-number-like ids a text names (full-width digits read as ASCII)."""
    return {unicodedata.normalize("NFKC", found) for found in explicit_ids(text)}


def people_about(speaker_ids: Iterable[str], subject_id: str, texts: Sequence[str]) -> set[str]:
    """The users a text is about: who said it, whom it is about, and every QQ number it names."""
    people = {person for person in (*speaker_ids, subject_id) if person}
    for text in texts:
        people |= ids_in(text)
    return people


@dataclass(frozen=True, slots=True)
class SwitchState:
    """One bot account's switched-off chats (scope keys) and opted-out users."""

    off_chats: frozenset[str] = frozenset()
    opted_out: frozenset[str] = frozenset()

    def chat_on(self, scope: Scope) -> bool:
        return scope.key not in self.off_chats

    def is_opted_out(self, user_id: str) -> bool:
        return user_id in self.opted_out

    def touches_opted_out(self, user_ids: Iterable[str] = (), texts: Sequence[str] = ()) -> bool:
        """Whether any of ``user_ids`` opted out, or any of ``texts`` names an opted-out user."""
        if not self.opted_out:  # the usual case: no text is scanned
            return False
        return bool(people_about(user_ids, "", texts) & self.opted_out)

    def without_opted_out(self, texts: list[str]) -> list[str]:
        """``texts`` minus those that name an opted-out user (``texts`` itself when none opted out)."""
        if not self.opted_out:
            return texts
        return [text for text in texts if not ids_in(text) & self.opted_out]
