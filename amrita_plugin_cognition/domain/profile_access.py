"""Which card parts a chat may see (pure): the one predicate of every card read a chat makes
(the injected block, ``/profile``, the ``cognition_profile_get`` and ``cognition_profile_search``
tools).

In a group: the group's own card, and of a user who is the speaker or whom the group's facts name
(``member``) the one part the scope policy gives that group (``profile_policy.group_part``: under
``strict`` their part in this group, built from this group's facts only; under ``open`` their
cross-group part); never another group's card or part, never a private part. In a private chat:
only the user's own card, their private part and their cross-group part (both built from facts
that chat may see); never a part kept for one group. Always within the chat's bot account (the
caller reads that account's cards only).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from .profile_policy import group_part
from .profiles import part_group
from .records import ChatContext
from .visibility import ScopePolicy

_ID = re.compile(r"[0-9]{1,20}")


@dataclass(frozen=True, slots=True)
class CardAccess:
    """The parts of one entity's card a chat may see (the one kept longest first), or why none."""

    parts: tuple[str, ...]
    #: The Chinese reason when ``parts`` is empty.
    refusal: str = ""


def needs_membership(context: ChatContext, entity_type: str, entity_id: str) -> bool:
    """Whether ``card_access`` needs to know if the user is named by this group's facts."""
    return context.scope.is_group and entity_type == "user" and entity_id != context.user_id


def card_access(
    context: ChatContext, entity_type: str, entity_id: str, policy: ScopePolicy, member: bool = False
) -> CardAccess:
    """The parts of the card of (``entity_type``, ``entity_id``) this chat may see under
    ``policy``. ``member``: the user is named by a fact of this group (only asked when
    ``needs_membership``)."""
    if context.scope.is_group:
        if entity_type == "group":
            if entity_id != context.scope.id:
                return CardAccess((), "只能查看本群的画像")
            return CardAccess(("group",))
        if entity_id != context.user_id and not member:
            return CardAccess((), "只能查看本群成员的画像（说话人本人，或本群记忆里提到的人）")
        return CardAccess((group_part(policy, context.scope.id),))
    if entity_type != "user" or entity_id != context.user_id or context.scope.id != context.user_id:
        return CardAccess((), "私聊里只能查看说话人本人的画像")
    return CardAccess(("private", "group"))


def chat_card_keys(context: ChatContext, policy: ScopePolicy) -> list[tuple[str, str, str]]:
    """The card parts a turn of this chat injects ((entity type, entity id, part)), the one kept
    longest first: in a group the speaker's part that group sees, then the group's card; in a
    private chat the user's private part, then their cross-group part. Each is one that
    ``card_access`` allows."""
    keys: list[tuple[str, str, str]] = []
    user = context.user_id if _ID.fullmatch(context.user_id or "") else ""
    if context.scope.is_group:
        if user:
            keys += [("user", user, part) for part in card_access(context, "user", user, policy).parts]
        if _ID.fullmatch(context.scope.id):
            keys.append(("group", context.scope.id, "group"))
    elif user and context.scope.id == user:
        keys += [("user", user, part) for part in card_access(context, "user", user, policy).parts]
    return keys


def shown_part(context: ChatContext, policy: ScopePolicy, filled: dict[str, datetime]) -> str | None:
    """Which of the caller's own card parts ``/profile`` shows, given the parts that hold text
    (part -> when it was updated): the first part ``card_access`` allows. In the user's own
    private chat, when neither the private nor the cross-group part exists (under ``strict`` a
    user who only talks in groups grows neither), the newest of their per-group parts: that
    chat may see every group fact by or about them, so it may see a card built from them."""
    for part in card_access(context, "user", context.user_id, policy).parts:
        if part in filled:
            return part
    if context.scope.is_group or context.scope.id != context.user_id:
        return None
    in_groups = [part for part in filled if part_group(part) is not None]
    return max(in_groups, key=lambda part: filled[part]) if in_groups else None
