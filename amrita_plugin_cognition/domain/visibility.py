"""Which stored facts a chat may see. Resolved from the event in code, never from the LLM.

The one decision: ``visibility_for`` (and ``listing_visibility``, what ``/memory … list`` shows,
always within it) says what a chat sees as a short list of ``Grant`` s. ``Visibility.allows`` is
that list read in Python (recall's final check, ``/memory … show``, corrections); the store's
``repository.visibility_clause`` is the same list written as SQL (listing, the emptiness probe).
Neither side has a rule of its own, so they cannot drift (``tests/integration/test_visibility_sql.py``
compares them over generated facts and chats on the suite's backend).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .records import ChatContext, MemoryRecord, Scope, ScopeKind

ScopePolicy = Literal["strict", "open"]
#: Every value the configuration allows (``scope_policy``).
SCOPE_POLICIES: tuple[ScopePolicy, ...] = ("strict", "open")
ListTarget = Literal["user", "group"]


@dataclass(frozen=True, slots=True)
class Grant:
    """One kind of fact a chat sees: of chats of ``scope_kind``, of the chat ``scope_id`` only
    (None: of every such chat), said by or about ``person`` only (None: by anyone)."""

    scope_kind: ScopeKind
    scope_id: str | None = None
    person: str | None = None

    def admits(self, scope: Scope, speaker_id: str, subject_id: str) -> bool:
        if scope.kind != self.scope_kind:
            return False
        if self.scope_id is not None and scope.id != self.scope_id:
            return False
        return self.person is None or self.person in (speaker_id, subject_id)


@dataclass(frozen=True, slots=True)
class Visibility:
    bot_id: str
    current: Scope
    #: What is visible: a fact of ``bot_id`` that any grant admits.
    grants: tuple[Grant, ...]

    def allows(self, record: MemoryRecord) -> bool:
        """The final check every recalled or listed fact passes, whatever index produced it."""
        return self.allows_fact(record.bot_id, record.scope, record.speaker_id, record.subject_id)

    def allows_fact(self, bot_id: str, scope: Scope, speaker_id: str, subject_id: str) -> bool:
        """``allows`` on the fields it reads (recall checks raw rows before building records)."""
        return bot_id == self.bot_id and any(grant.admits(scope, speaker_id, subject_id) for grant in self.grants)

    # What the indices (keyword tokens, vector collections) read of the grants, to narrow their
    # candidates before ``allows`` decides.

    @property
    def scopes(self) -> tuple[Scope, ...]:
        """Scopes whose every fact is visible."""
        return tuple(
            Scope(grant.scope_kind, grant.scope_id)
            for grant in self.grants
            if grant.scope_id is not None and grant.person is None
        )

    @property
    def person_in_groups(self) -> str | None:
        """The user whose group facts (said by or about them) are visible in every group."""
        for grant in self.grants:
            if grant.scope_kind == "group" and grant.scope_id is None and grant.person is not None:
                return grant.person
        return None

    @property
    def all_groups(self) -> bool:
        """Every group fact of the bot is visible (``open`` policy in a group)."""
        return any(
            grant.scope_kind == "group" and grant.scope_id is None and grant.person is None for grant in self.grants
        )


def visibility_for(context: ChatContext, policy: ScopePolicy) -> Visibility:
    """strict: a group sees itself; a private chat sees itself plus group facts by/about its user.
    open: groups also see other groups. Private facts are visible only in their own chat."""
    own = Grant(context.scope.kind, context.scope.id)
    if context.scope.is_group:
        grants = (own, Grant("group")) if policy == "open" else (own,)
    elif context.user_id:  # an unknown user (no id) is nobody's group facts
        grants = (own, Grant("group", person=context.user_id))
    else:
        grants = (own,)
    return Visibility(context.bot_id, context.scope, grants)


def listing_visibility(context: ChatContext, target: ListTarget) -> Visibility:
    """What ``/memory user|group list`` shows here, always a part of what the chat sees under
    either policy: ``group``, the group's own facts; ``user``, the speaker's facts (said by or
    about them) of this chat, and in a private chat their group facts too."""
    scope = context.scope
    if target == "group":
        return Visibility(context.bot_id, scope, (Grant(scope.kind, scope.id),))
    if not context.user_id:
        return Visibility(context.bot_id, scope, ())
    grants = [Grant(scope.kind, scope.id, context.user_id)]
    if not scope.is_group:
        grants.append(Grant("group", person=context.user_id))
    return Visibility(context.bot_id, scope, tuple(grants))
