"""Which cards a fact touches and which facts a card part may be built from (pure policy of the
merge, ``engine/profile_queue.py`` and ``engine/profile_merge.py``).

A fact said in group G touches the card of G and the group-visible part of its speaker's and
subject's cards; a fact said in user U's private chat touches U's private part only. A group's
card is built from its own chat; a user's group-visible part from what they said or what was said
about them in groups; their private part from that and their own private chat. Never another
user's private chat, and the bot account itself gets no card.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import InvalidInput
from .profiles import check_entity
from .records import MemoryRecord, Scope


def entity_scope(entity_type: str, entity_id: str) -> Scope:
    return Scope("group", entity_id) if entity_type == "group" else Scope("private", entity_id)


def merges_for(
    bot_id: str, scope: Scope, written: Sequence[MemoryRecord]
) -> dict[tuple[str, str], dict[str, list[int]]]:
    """Per entity (type, id), per part, the ids of the new facts that touch it (pure; see the
    module doc). The bot account itself gets no card."""
    wanted: dict[tuple[str, str], dict[str, list[int]]] = {}

    def add(entity_type: str, entity_id: str, part: str, memory_id: int) -> None:
        try:
            check_entity(entity_type, entity_id, part)
        except InvalidInput:  # not a QQ number (the bot's replies, a blank speaker): no card
            return
        if entity_type == "user" and entity_id == bot_id:
            return
        wanted.setdefault((entity_type, entity_id), {}).setdefault(part, []).append(memory_id)

    for record in written:
        if scope.is_group:
            add("group", scope.id, "group", record.id)
            for person in dict.fromkeys(person for person in (record.speaker_id, record.subject_id) if person):
                add("user", person, "group", record.id)
        else:
            add("user", scope.id, "private", record.id)
    return wanted


def visible_to(fact: MemoryRecord, entity_type: str, entity_id: str, part: str) -> bool:
    """Whether a card part may be built from ``fact`` (pure): a group's card from its own chat;
    a user's group-visible part from what they said or what was said about them in groups; their
    private part from that and their own private chat. Never another user's private chat."""
    if entity_type == "group":
        return fact.scope == Scope("group", entity_id)
    if fact.scope.is_group:
        return entity_id in (fact.speaker_id, fact.subject_id)
    return part == "private" and fact.scope == Scope("private", entity_id)
