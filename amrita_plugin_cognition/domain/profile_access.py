"""Which card parts a chat may see (pure): the one predicate of every card read a chat makes
(the ``cognition_profile_get`` and ``cognition_profile_search`` tools, ``engine/profile_search.py``).

In a group: the group's own card, and the group-visible part of a user who is the speaker or whom
the group's facts name (``member``); never another group's card, never a private part. In a
private chat: only the user's own card, both parts. Always within the chat's bot account (the
caller reads that account's cards only).
"""

from __future__ import annotations

from dataclasses import dataclass

from .records import ChatContext


@dataclass(frozen=True, slots=True)
class CardAccess:
    """The parts of one entity's card a chat may see (the one kept longest first), or why none."""

    parts: tuple[str, ...]
    #: The Chinese reason when ``parts`` is empty.
    refusal: str = ""


def needs_membership(context: ChatContext, entity_type: str, entity_id: str) -> bool:
    """Whether ``card_access`` needs to know if the user is named by this group's facts."""
    return context.scope.is_group and entity_type == "user" and entity_id != context.user_id


def card_access(context: ChatContext, entity_type: str, entity_id: str, member: bool = False) -> CardAccess:
    """The parts of the card of (``entity_type``, ``entity_id``) this chat may see. ``member``:
    the user is named by a fact of this group (only asked when ``needs_membership``)."""
    if context.scope.is_group:
        if entity_type == "group":
            if entity_id != context.scope.id:
                return CardAccess((), "只能查看本群的画像")
            return CardAccess(("group",))
        if entity_id != context.user_id and not member:
            return CardAccess((), "只能查看本群成员的画像（说话人本人，或本群记忆里提到的人）")
        return CardAccess(("group",))
    if entity_type != "user" or entity_id != context.user_id or context.scope.id != context.user_id:
        return CardAccess((), "私聊里只能查看说话人本人的画像")
    return CardAccess(("private", "group"))
