"""Per-chat switch and per-user opt-out: what they forbid, decided without I/O.

* **Chat switch** (``/memory off|on``): while a chat's memory is off nothing of it is written
  (facts, notes, memo, pins, transcript turns), injected or extracted. No stored switch means on.
  Who may flip it is ``permissions.check_switch_chat``.
* **Opt-out** (``/memory optout|optin``), per bot account and user: from then on nothing new about
  that user is written in any chat, their own words included. A text is *about* a user when the
  user said it (its speaker, or the speaker of a turn it was taken from), when it is about them
  (its subject), or when it names them the way a delete-all finds them (``domain/people.py``):
  their QQ number in any writing (digits of any width, Chinese numerals, split into groups) or one
  of the nicknames they were seen with. What they already have stays until they delete it.

``SwitchState`` is one bot account's switches and opt-outs at one moment (the engine caches it per
process, ``engine/switches.py``); with nobody opted out its checks are set lookups, and no text
is read.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .people import PersonMatcher, numbers_in, without_messages
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


#: QQ numbers have five digits or more: shorter numbers in a text are no one's.
MIN_ID_DIGITS = 5


def ids_in(text: str) -> set[str]:
    """The QQ-number-like ids a text names, in any writing (``people.numbers_in``)."""
    return {number for number in numbers_in(text, MIN_ID_DIGITS) if len(number) >= MIN_ID_DIGITS}


def people_about(speaker_ids: Iterable[str], subject_id: str, texts: Sequence[str]) -> set[str]:
    """The users a text is about by number: who said it, whom it is about, and every QQ number it
    names in any writing (nicknames need to know whose: ``SwitchState.touches_opted_out``)."""
    people = {person for person in (*speaker_ids, subject_id) if person}
    for text in texts:
        people |= ids_in(text)
    return people


@dataclass(frozen=True, slots=True)
class SwitchState:
    """One bot account's switched-off chats (scope keys) and opted-out users, with the matcher
    that finds the opted-out users in a text (``people``: their QQ numbers in any writing and
    their nicknames; the numbers alone when not given)."""

    off_chats: frozenset[str] = frozenset()
    opted_out: frozenset[str] = frozenset()
    people: PersonMatcher = field(default=None)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.people is None or not self.people.ids >= self.opted_out:
            object.__setattr__(self, "people", PersonMatcher.numbers_only(self.opted_out))

    def chat_on(self, scope: Scope) -> bool:
        return scope.key not in self.off_chats

    def is_opted_out(self, user_id: str) -> bool:
        return user_id in self.opted_out

    def names_opted_out(self, text: str, beside: Iterable[str] = ()) -> bool:
        """Whether ``text`` names an opted-out user (their number in any writing, a nickname);
        ``beside``: the names of whom the text is by or about (``PersonMatcher.named_in``)."""
        return bool(self.opted_out) and bool(self.people.named_in(text, beside) & self.opted_out)

    def touches_opted_out(
        self, user_ids: Iterable[str] = (), texts: Sequence[str] = (), beside: Iterable[str] = ()
    ) -> bool:
        """Whether any of ``user_ids`` opted out, or any of ``texts`` names an opted-out user."""
        if not self.opted_out:  # the usual case: no text is scanned
            return False
        beside = tuple(beside)
        return bool(set(user_ids) & self.opted_out) or any(self.names_opted_out(text, beside) for text in texts)

    def without_opted_out(self, texts: list[str], beside: Iterable[str] = ()) -> list[str]:
        """``texts`` minus those that name an opted-out user (``texts`` itself when none opted out)."""
        if not self.opted_out:
            return texts
        beside = tuple(beside)
        return [text for text in texts if not self.names_opted_out(text, beside)]

    def without_opted_out_messages(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Context messages (``speaker_id``, ``speaker``, ``text``) minus those an opted-out user
        said or that name one, and the bot's reply right after such a message."""
        if not self.opted_out:
            return messages

        def drops(message: dict[str, Any]) -> bool:
            speaker = str(message.get("speaker_id", ""))
            return self.touches_opted_out([speaker], [str(message.get("text", ""))], [str(message.get("speaker", ""))])

        return without_messages(messages, drops)
