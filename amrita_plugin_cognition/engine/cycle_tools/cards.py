"""Profile cards from the cycle: ``cycle_card_read`` (what this chat may see of a card, by the
one predicate of every card read: ``engine.profiles.visible_parts``) and ``cycle_card_update``
(the part this chat's facts grow, ``domain/cycle_rules.cycle_card_part``, saved with the
revision check of ``engine.profiles.save``: the version read, else refused).

The cycle reads as the chat would with nobody speaking: in a group its own card and the part it
sees of a user its facts name; in a private chat the user's parts. Never another chat's part, never
the card of a user who opted out; a card shown has what names an opted-out user cut out (as a
merge shows it), and an update may not name one, carry a secret or a forgotten fact's words."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ...domain.cycle_rules import cycle_card_part
from ...domain.governance import OTHER_OPTED_OUT_MESSAGE
from ...domain.inert import inert_line, inert_lines
from ...domain.profile_policy import group_part
from ...domain.profiles import SECTION_NAMES, SECTIONS, Card, card_label
from ...domain.records import ChatContext
from ...errors import ConcurrentChange, InvalidInput
from ...llm.agent_types import AgentTool
from ..profile_facts import kept_sources
from ..profiles import ProfileFilter
from ..switches import card_without_opted_out, switch_state
from .arguments import CardReadArguments, CardUpdateArguments
from .common import FEW, admission_refusal, changed, chat_facts, minute, refusal, tool, zone
from .desk import CycleDesk

if TYPE_CHECKING:
    from ..service import CognitionEngine

#: The version of a part that does not exist yet.
NO_VERSION = "none"
OPTED_OUT_CARD = "该用户已选择不被记忆，不能查看或修改其画像"


def reader(desk: CycleDesk) -> ChatContext:
    """The chat as the cycle reads it: nobody speaking in a group, its user in a private chat."""
    return ChatContext(desk.bot_id, desk.scope, "" if desk.scope.is_group else desk.scope.id)


def version(card: Card | None) -> str:
    return card.updated_at.isoformat() if card is not None else NO_VERSION


async def _parts(engine: CognitionEngine, desk: CycleDesk, entity_type: str, entity_id: str) -> list[str]:
    """The parts this chat may see (``InvalidInput`` with the reason when none; the bot has no card)."""
    if entity_type == "user" and entity_id == desk.bot_id:
        raise InvalidInput("机器人自己没有画像")
    if entity_type == "user" and (await switch_state(engine, desk.bot_id)).is_opted_out(entity_id):
        raise InvalidInput(OPTED_OUT_CARD)
    return await engine.profiles.visible_parts(reader(desk), entity_type, entity_id)


async def touched_cards(engine: CognitionEngine, desk: CycleDesk) -> list[str]:
    """Labels of the card parts this chat's cycle may refine that changed since its last cycle
    (newest first, at most ``FEW``)."""
    policy = engine.config.scope_policy
    if desk.scope.is_group:
        wanted = [
            ProfileFilter(desk.bot_id, "group", desk.scope.id),
            ProfileFilter(desk.bot_id, "user", None, group_part(policy, desk.scope.id)),
        ]
    else:
        wanted = [ProfileFilter(desk.bot_id, "user", desk.scope.id, "private")]
    cards: list[Card] = []
    for query in wanted:
        listed, _ = await engine.profiles.list(query, limit=50)
        cards += [item.card for item in listed]
    labels: list[str] = []
    where = zone(engine)
    for card in sorted(cards, key=lambda item: item.updated_at, reverse=True):
        if desk.last_cycle_at is not None and card.updated_at <= desk.last_cycle_at:
            continue
        try:
            if card.part not in await _parts(engine, desk, card.entity_type, card.entity_id):
                continue
        except InvalidInput:
            continue
        labels.append(f"{card_label(card.entity_type, card.entity_id, card.part)}（{minute(card.updated_at, where)}）")
        if len(labels) == FEW:
            break
    return labels


def _shown(card: Card) -> str:
    lines = [f"{card.label}（版本 {version(card)}）"]
    if card.name:
        lines.append(f"名称：{inert_line(card.name, 64)}")
    if card.tags:
        lines.append("标签：" + "、".join(inert_line(tag, 24) for tag in card.tags))
    for section in SECTIONS:
        text = getattr(card, section)
        if text.strip():
            lines.append(f"{SECTION_NAMES[section]}：\n{inert_lines(text, None)}")
    if card.source_ids:
        lines.append("来源记忆：" + "、".join(f"#{source}" for source in card.source_ids[:50]))
    return "\n".join(lines)


def card_tools(engine: CognitionEngine, desk: CycleDesk) -> list[AgentTool]:
    async def read(args: CardReadArguments) -> str:
        parts = await _parts(engine, desk, args.entity_type, args.entity_id)
        cards = await engine.profiles.get_parts(desk.bot_id, args.entity_type, args.entity_id, parts)
        switches = await switch_state(engine, desk.bot_id)
        writable = cycle_card_part(desk.scope, engine.config.scope_policy, args.entity_type, args.entity_id)
        shown = [_shown(card_without_opted_out(switches, card)) for card in cards]
        if writable in parts and writable not in {card.part for card in cards}:
            label = card_label(args.entity_type, args.entity_id, writable)
            shown.append(f"{label}：还没有（版本 {NO_VERSION}）")
        return "\n\n".join(shown) or "这张画像还没有内容"

    async def update(args: CardUpdateArguments) -> str:
        part = cycle_card_part(desk.scope, engine.config.scope_policy, args.entity_type, args.entity_id)
        if part is None or part not in await _parts(engine, desk, args.entity_type, args.entity_id):
            return refusal("本会话的整理不能修改这部分画像（只能修改本会话自己的画像部分）")
        current = await engine.profiles.get(desk.bot_id, args.entity_type, args.entity_id, part)
        if version(current) != args.expected_version:
            raise ConcurrentChange("画像在读取后已被修改，请重新读取")
        base = current or Card(desk.bot_id, args.entity_type, args.entity_id, part)
        values = {
            key: value
            for key, value in (
                ("name", args.name),
                ("tags", args.tags),
                ("evaluation", args.evaluation),
                ("body", args.body),
                ("roast", args.roast),
            )
            if value is not None
        }
        if not values:
            return refusal("没有要修改的内容")
        # the facts it draws on become the card's sources, so that forgetting one re-checks the card
        _, why = await chat_facts(engine, desk, args.source_ids)
        if why:
            return why
        new_texts = [
            text
            for value in values.values()
            for text in (value if isinstance(value, list) else [value])
            if text.strip()
        ]
        for text in new_texts:
            why = await admission_refusal(text)
            if why:
                return refusal(why)
        switches = await switch_state(engine, desk.bot_id)
        owner = (args.name or base.name,) if args.entity_type == "user" else ()
        if switches.touches_opted_out((), new_texts, owner):
            return refusal(OTHER_OPTED_OUT_MESSAGE)
        if await engine.governance.barred_in(desk.bot_id, desk.scope, new_texts):
            return refusal("画像包含此前被要求遗忘的内容，不能写入")
        # what the rest of the card still says of an opted-out user is cut, as a merge cuts it
        sources = kept_sources(base.source_ids, args.source_ids)
        card = card_without_opted_out(switches, replace(base, **values, source_ids=sources))  # type: ignore[arg-type]
        saved = await engine.profiles.save(card, by="consolidation", now=desk.now, expected=current)
        if not saved.changed:
            return "画像没有变化"
        changed(desk, "cards", card=f"{card.entity_type}:{card.entity_id}", part=part)
        return f"已更新{card.label}（新版本 {version(saved.card)}）"

    return [
        tool(
            engine,
            desk,
            "cycle_card_read",
            "读取画像：group 为本群画像，user 为成员在本会话可见的那部分。",
            CardReadArguments,
            read,
        ),
        tool(
            engine,
            desk,
            "cycle_card_update",
            "精炼本会话自己的那部分画像（只给要改的字段）。不写敏感或已遗忘的内容。",
            CardUpdateArguments,
            update,
        ),
    ]
