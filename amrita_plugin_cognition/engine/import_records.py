"""Importing the records that are not facts (``engine/imports.py`` drives): a line of a chat's
memo, a pin, a card, a knowledge entry. Each goes through the chat switches, opt-out, admission
and the forget barrier first (a dry run stops there), then through its normal write path; its
fingerprint is stored right after. A record whose content is already there (the memo holds the
line, an entry has the title and summary) is skipped and fingerprinted, so a run interrupted
between a write and its fingerprint does not write it twice."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from ..domain.admission import admit
from ..domain.imports import CardText, ImportItem, ImportReport, KnowledgeText, MemoText, Payload, TurnText
from ..domain.profiles import Card, validate_card
from ..domain.records import ChatContext, Scope, normalise_text
from ..errors import ConcurrentChange, InvalidInput, LimitExceeded
from ..store import imports as store
from . import knowledge, notes, profiles, turns
from .chat_memories import barred_in
from .switches import chat_open, switch_state
from .turns import InputMessage

if TYPE_CHECKING:
    from .service import CognitionEngine

#: Who an imported memo line, pin, card or entry was written by (revisions and audit show it).
IMPORT_ACTOR = "import"


class _Refused(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


async def write(
    engine: CognitionEngine,
    bot_id: str,
    importer: str,
    item: ImportItem,
    report: ImportReport,
    dry_run: bool,
    now: datetime,
) -> None:
    """Check and (unless ``dry_run``) write one record; count it in ``report``."""
    payload = item.payload
    assert payload is not None
    try:
        await _check(engine, bot_id, payload)
        target = await _present(engine, bot_id, item.kind, payload)
        if target:
            outcome = "skipped"
        elif dry_run:
            outcome, target = "imported", ""
        else:
            outcome, target = "imported", await _write(engine, bot_id, item.kind, payload, now)
    except _Refused as refused:
        report.count(item.kind, "refused", refused.reason, item.record)
        return
    if not dry_run:
        async with engine.unit_of_work() as uow:
            store.add(uow.session, bot_id, importer, item.kind, item.fingerprint, target, now)
            await uow.commit()
    report.count(item.kind, outcome)


def _texts(payload: Payload) -> list[str]:
    if isinstance(payload, MemoText):
        return [payload.text]
    if isinstance(payload, CardText):
        return [payload.evaluation, payload.body]
    if isinstance(payload, KnowledgeText):
        return [payload.title, payload.summary, payload.body]
    if isinstance(payload, TurnText):
        return [payload.memo, *payload.observations]
    return [getattr(payload, "text", "")]


def _scope(payload: Payload) -> Scope | None:
    if isinstance(payload, MemoText):
        return payload.scope
    if isinstance(payload, CardText):
        return Scope("group" if payload.entity_type == "group" else "private", payload.entity_id)
    return getattr(payload, "scope", None)


async def _check(engine: CognitionEngine, bot_id: str, payload: Payload) -> None:
    """The write path's refusals, as reasons: chat switched off, someone opted out, a secret or a
    "don't remember this", a forgotten fact inside."""
    texts = [text for text in _texts(payload) if text.strip()]
    if not texts:
        raise _Refused("empty")
    switches = await switch_state(engine, bot_id)
    scope = _scope(payload)
    if scope is not None and not chat_open(engine, switches, scope):
        raise _Refused("switched_off")
    people = [getattr(payload, "user_id", "")] + ([payload.entity_id] if isinstance(payload, CardText) else [])
    if switches.touches_opted_out([person for person in people if person], texts):
        raise _Refused("opted_out")
    verdicts = [admit(normalise_text(text)) for text in texts]
    refusals = [verdict.reason for verdict in verdicts if not verdict.admit]
    # a turn keeps what admission lets through (as ``end`` does); any other record is one text
    if refusals and (not isinstance(payload, TurnText) or len(refusals) == len(verdicts)):
        raise _Refused(refusals[0])
    if scope is not None and await barred_in(engine, bot_id, scope, texts):
        raise _Refused("forgotten")
    if isinstance(payload, CardText):  # each version as ``profiles.save`` will check it
        try:
            for card in _cards(bot_id, payload):
                validate_card(card, profiles.card_limits(engine))
        except LimitExceeded:
            raise _Refused("too_long") from None
        except InvalidInput:
            raise _Refused("policy") from None


async def _present(engine: CognitionEngine, bot_id: str, kind: str, payload: Payload) -> str:
    """What already holds this record's content ("" when nothing does)."""
    if isinstance(payload, MemoText) and kind == "memo":
        memo = await notes.memo_of(engine, bot_id, payload.scope)
        block = notes.normalise_text_block(payload.text)
        if block and block in memo:
            return "memo"
        if len(f"{memo}\n{block}" if memo else block) > engine.config.memo_max_chars:
            raise _Refused("too_long")
        return ""
    if isinstance(payload, MemoText) and kind == "pin":
        context = ChatContext(bot_id, payload.scope, IMPORT_ACTOR, is_bot_admin=True)
        pins = await notes.list_pins(engine, context)
        line = normalise_text(payload.text)
        return next((f"pin:{pin.id}" for pin in pins if normalise_text(pin.content) == line), "")
    if isinstance(payload, KnowledgeText):
        for listed in await knowledge.list_entries(engine, bot_id):
            if listed.entry.title == payload.title.strip() and listed.entry.summary == payload.summary.strip():
                return f"knowledge:{listed.entry.id}"
    return ""


async def _write(engine: CognitionEngine, bot_id: str, kind: str, payload: Payload, now: datetime) -> str:
    try:
        if isinstance(payload, MemoText):
            context = ChatContext(bot_id, payload.scope, IMPORT_ACTOR, is_bot_admin=True)
            if kind == "pin":
                pin = await notes.add_pin(engine, context, payload.text, now)
                return f"pin:{pin.id}"
            await notes.append_memo(engine, context, payload.text, now)
            return "memo"
        if isinstance(payload, KnowledgeText):
            entry = await knowledge.create(
                engine, bot_id, payload.title, payload.summary, payload.body, by=IMPORT_ACTOR, now=now
            )
            return f"knowledge:{entry.id}"
        if isinstance(payload, CardText):
            await _save_card(engine, bot_id, payload, now)
            return "profile"
        if isinstance(payload, TurnText):
            return await _end_turn(engine, bot_id, kind, payload, now)
    except ConcurrentChange:
        raise _Refused("card_exists") from None
    except LimitExceeded:
        raise _Refused("too_long") from None
    except InvalidInput:
        raise _Refused("policy") from None
    raise _Refused("not_mapped")


async def _save_card(engine: CognitionEngine, bot_id: str, payload: CardText, now: datetime) -> None:
    """The card's earlier versions first (each kept as a revision by the next), then the current one;
    only where the bot keeps no card of that part yet."""
    expected: Card | None = None
    for card in _cards(bot_id, payload):
        expected = (await profiles.save(engine, card, by=IMPORT_ACTOR, now=now, expected=expected)).card


def _cards(bot_id: str, payload: CardText) -> list[Card]:
    """The card's versions, oldest first (the current one last)."""
    versions = (*payload.revisions, (payload.evaluation, payload.body, payload.roast))
    return [
        Card(
            bot_id,
            payload.entity_type,
            payload.entity_id,
            payload.part,
            name=payload.name,
            tags=list(payload.tags),
            evaluation=evaluation,
            body=body,
            roast=roast,
        )
        for evaluation, body, roast in versions
    ]


async def _end_turn(engine: CognitionEngine, bot_id: str, kind: str, payload: TurnText, now: datetime) -> str:
    """A note or a job through the ``end`` tool's own path (its opt-out, withholding and admission)."""
    context = ChatContext(bot_id, payload.scope, payload.user_id, payload.user_name)
    at = payload.at or now
    batch = (
        [InputMessage(payload.message_id, payload.user_id, payload.user_name, payload.source_message, at)]
        if payload.source_message
        else []
    )
    result = await turns.end_turn(engine, context, payload.memo, payload.observations, batch=batch, now=at)
    if result.opted_out:
        raise _Refused("opted_out")
    if result.withheld:
        raise _Refused("do_not_remember")
    if not result.note_written and not result.queued:
        raise _Refused(result.refused[0][1] if result.refused else "empty")
    return kind
