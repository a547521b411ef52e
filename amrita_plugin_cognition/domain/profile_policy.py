"""Which cards a fact touches and which facts a card part may be built from (pure policy of the
merge, ``engine/profile_queue.py``, ``engine/profile_merge.py`` and ``engine/profile_rebuild.py``).

What a group sees of a user is one card part, chosen by the scope policy (``group_part``):

* ``strict`` ("群只看本群"): the user's part *in that group*, ``group:<id>``, built only from
  the facts of that group said by or about them. A card part is a summary the model wrote; once
  facts of two groups are merged into one text, no sentence of it can be traced back to one
  group, so filtering at read time cannot keep group A's facts out of group B. Only a part built
  from one group's facts can be shown in that group.
* ``open``: the user's cross-group part ``group``, built from what they said or what was said
  about them in every group (the documented cross-group view).

A fact said in group G touches the card of G and, for its speaker and its subject, the part
``group_part(policy, G)``; a fact said in user U's private chat touches U's private part only.
The private part is built from U's private chat and their group facts (only U sees it, in their
private chat, which may see all of those facts). Never another user's private chat, and the
bot account itself gets no card.

What a part may be built from depends on the part alone, never on the policy (``visible_to``):
so a switch of the policy can never make a group see a part built from another group's facts.
Under ``strict`` a group reads only ``group:<id>`` parts, which were never built from anything
else; the ``group`` parts built under ``open`` stay in the table, unshown in groups, and grow
again if the policy is switched back.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import InvalidInput
from .profiles import check_entity, in_group_part, part_group
from .records import MemoryRecord, Scope
from .visibility import ScopePolicy


def entity_scope(entity_type: str, entity_id: str) -> Scope:
    return Scope("group", entity_id) if entity_type == "group" else Scope("private", entity_id)


def group_part(policy: ScopePolicy, group_id: str) -> str:
    """The part of a user's card that group ``group_id`` sees, and that its facts grow."""
    return "group" if policy == "open" else in_group_part(group_id)


def merges_for(
    bot_id: str, scope: Scope, written: Sequence[MemoryRecord], policy: ScopePolicy
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
                add("user", person, group_part(policy, scope.id), record.id)
        else:
            add("user", scope.id, "private", record.id)
    return wanted


def visible_to(fact: MemoryRecord, entity_type: str, entity_id: str, part: str) -> bool:
    """Whether a card part may be built from ``fact`` (pure): a group's card from its own chat;
    a user's part in group G from what they said or what was said about them in G; their
    cross-group part from that in every group; their private part from that and their own
    private chat. Never another user's private chat."""
    if entity_type == "group":
        return fact.scope == Scope("group", entity_id)
    by_or_about = entity_id in (fact.speaker_id, fact.subject_id)
    group_id = part_group(part)
    if group_id is not None:
        return fact.scope == Scope("group", group_id) and by_or_about
    if fact.scope.is_group:
        return by_or_about
    return part == "private" and fact.scope == Scope("private", entity_id)
