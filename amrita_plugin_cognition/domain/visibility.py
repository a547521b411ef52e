"""Which stored facts a chat may see. Resolved from the event in code, never from the LLM."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .records import ChatContext, MemoryRecord, Scope

ScopePolicy = Literal["strict", "open"]


@dataclass(frozen=True, slots=True)
class Visibility:
    bot_id: str
    current: Scope
    #: Scopes whose every fact is visible.
    scopes: tuple[Scope, ...]
    #: In a private chat: group facts said by or about this user are visible too.
    person_in_groups: str | None = None
    #: ``open`` policy in a group: every group fact of the bot is visible (private ones never).
    all_groups: bool = False

    def allows(self, record: MemoryRecord) -> bool:
        """The final check every recalled or listed fact passes, whatever index produced it."""
        return self.allows_fact(record.bot_id, record.scope, record.speaker_id, record.subject_id)

    def allows_fact(self, bot_id: str, scope: Scope, speaker_id: str, subject_id: str) -> bool:
        """``allows`` on the fields it reads (recall checks raw rows before building records)."""
        if bot_id != self.bot_id:
            return False
        if scope in self.scopes:
            return True
        if not scope.is_group:
            return False
        if self.all_groups:
            return True
        return self.person_in_groups is not None and self.person_in_groups in (speaker_id, subject_id)


def visibility_for(context: ChatContext, policy: ScopePolicy) -> Visibility:
    """strict: a group sees itself; a private chat sees itself plus group facts by/about its user.
    open: groups also see other groups. Private facts are visible only in their own chat."""
    if context.scope.is_group:
        return Visibility(
            bot_id=context.bot_id,
            current=context.scope,
            scopes=(context.scope,),
            all_groups=policy == "open",
        )
    return Visibility(
        bot_id=context.bot_id,
        current=context.scope,
        scopes=(context.scope,),
        person_in_groups=context.user_id,
    )
