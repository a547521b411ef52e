"""The per-turn context: pinned memo, pins, the profile cards of the speaker and the group, the
chat's recent notes and recalled memories, rendered into one block.

Cards (``turn_card_keys``, ``domain/profile_access.chat_card_keys``): in a group, the speaker's
part that group sees (under ``strict`` their part in that group, built from its facts only; under
``open`` their cross-group part) and the group's card; in a private chat, the user's private part
and their own cross-group part. Never another user's card, never a private part in a group.
Over the token budget, cards are dropped last (after the older notes, the recalled memories and
the remaining notes), the card listed last first; the memo and the pins are never dropped.

The block is reference material, framed as data from the past that never instructs and yields to
the current input. Its tags carry a token drawn afresh for every rendering
(``<cognition_memory id="…">`` … ``</cognition_memory id="…">``), and the framing says that only
text between the tags with that token is memory: stored text cannot know the token. Every stored
field goes through ``domain.inert`` before rendering: no tag can be opened or closed from it (not
even after NFKC folding), no line or header of the block can be forged (single-line fields have
their line breaks folded; the memo keeps its lines, none able to pass for a header), invisible
format characters are dropped and very long lines are clipped.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

import jinja2

from ..domain.clock import aware_or_now
from ..domain.happened import label as happened_label
from ..domain.happened import precision_of
from ..domain.inert import LINE_MAX_CHARS, inert_line, inert_lines, inert_name, new_block_token
from ..domain.profile_access import chat_card_keys
from ..domain.profiles import SECTION_NAMES, Card
from ..domain.records import ChatContext, MemoryRecord
from ..domain.tokenize import estimate_tokens
from ..errors import TIMEOUTS
from ..logs import log_event
from ..store import notes as notes_store
from ..store import profiles as profiles_store
from .caches import card_key
from .notes import ChatDocuments, Pin, ShortNote, cache_documents, cached_documents
from .ranking import RecallResult
from .recall import recall

if TYPE_CHECKING:
    from .service import CognitionEngine

TEMPLATE_NAME = "memory_block.jinja"
#: Share of the turn's budget recall may use; the rest is the margin for rendering the block.
RECALL_BUDGET_SHARE = 0.9


@lru_cache(maxsize=1)
def _template() -> jinja2.Template:
    folder = resources.files("amrita_plugin_cognition").joinpath("prompt")
    source = folder.joinpath(TEMPLATE_NAME).read_text(encoding="utf-8")
    environment = jinja2.Environment(autoescape=False, keep_trailing_newline=False, undefined=jinja2.StrictUndefined)
    return environment.from_string(source)


@dataclass(slots=True)
class BuiltContext:
    text: str
    memories: int
    recall_mode: str
    elapsed_ms: float


def _record_when(record: MemoryRecord, zone: ZoneInfo) -> str:
    """A fact's time at the precision it was said with: ``2027-01`` for a month, the date alone
    for a day (``domain.happened``), else the time to the minute."""
    precision = precision_of(record.source)
    if record.happened_at is not None and precision is not None:
        return happened_label(record.happened_at, precision, zone)
    return _when(record.when, zone)


def _when(moment: datetime, zone: ZoneInfo) -> str:
    return moment.astimezone(zone).strftime("%Y-%m-%d %H:%M")


def _speaker(record: MemoryRecord) -> str:
    """Who said it, on one line: the name (a QQ card may hold anything), else the id."""
    name = inert_name(record.speaker_name) if record.speaker_name else ""
    return name or inert_name(record.speaker_id or "") or "未知"


_NOTHING = ChatDocuments("", (), ())
#: Notes this recent are kept longest when the block is over its budget.
NOTES_KEPT_LONGEST = 5


async def _turn_documents(
    engine: CognitionEngine, context: ChatContext, want_recall: bool
) -> tuple[ChatDocuments, bool, list[Card]]:
    """The memo, the pins, the recent notes, whether any memory is visible and the turn's cards
    (``turn_card_keys``): from the per-process caches, else read in one unit of work (one
    statement for the chat's documents, one for the cards the cache did not know). A chat that
    sees no memory skips recall and the query embedding altogether; on a bank known to be empty
    the turn touches no database. The caches are checked against other processes' changes first
    (``freshness``: one small read at most every 2 s)."""
    if engine.bank_known_empty(context.bot_id):
        return _NOTHING, False, []
    await engine.changes.refresh(engine)  # at most every 2 s: another process's changes drop the caches
    epoch = engine.caches.epoch
    documents = cached_documents(engine, context)
    wanted = _cached_cards(engine, context)
    key, sees, probe = engine.emptiness_probe(context) if want_recall else ("", False, None)
    if documents is not None and probe is None and not wanted.missing:
        return documents, bool(sees), wanted.cards()
    async with engine.unit_of_work() as uow:
        read = None
        if documents is None or probe is not None:
            read = await notes_store.turn_documents(
                uow.session, context.bot_id, context.scope, probe, engine.config.recent_notes_inject_k
            )
        if wanted.missing:
            cards = await profiles_store.turn_cards(uow.session, context.bot_id, wanted.missing)
            _cache_cards(engine, context, wanted, cards, keep=engine.caches.epoch == epoch)
    if read is None:
        assert documents is not None
        return documents, bool(sees), wanted.cards()
    if documents is None:
        documents = ChatDocuments(
            read.memo,
            tuple(Pin(pin_id, content, at) for pin_id, content, at in read.pins),
            tuple(ShortNote(content, at) for _, content, at in read.notes),
        )
        if engine.caches.epoch == epoch:  # not when a change was learned of while reading
            cache_documents(engine, context, documents)
    if probe is not None:
        sees = bool(read.sees_memories)
        if engine.caches.epoch == epoch:
            engine.remember_chat_sees(key, sees)
    return documents, bool(sees), wanted.cards()


_MISSING = object()


def turn_card_keys(engine: CognitionEngine, context: ChatContext) -> list[tuple[str, str, str]]:
    """The card parts this turn may inject ((entity type, entity id, part)), the one kept
    longest first, under the scope policy in force (``profile_access.chat_card_keys``)."""
    return chat_card_keys(context, engine.config.scope_policy)


@dataclass(slots=True)
class _TurnCards:
    """The turn's card parts: those the cache answered, and those still to read."""

    keys: list[tuple[str, str, str]]
    found: dict[tuple[str, str, str], Card | None]
    missing: list[tuple[str, str, str]]

    def cards(self) -> list[Card]:
        return [card for card in (self.found.get(key) for key in self.keys) if card is not None and not card.is_empty]


def _cached_cards(engine: CognitionEngine, context: ChatContext) -> _TurnCards:
    keys = turn_card_keys(engine, context)
    found: dict[tuple[str, str, str], Card | None] = {}
    missing = []
    for key in keys:
        cached = engine.caches.cards.get(card_key(context.bot_id, *key), _MISSING)
        if cached is _MISSING:
            missing.append(key)
        else:
            found[key] = cached  # type: ignore[assignment]
    return _TurnCards(keys, found, missing)


def _cache_cards(
    engine: CognitionEngine, context: ChatContext, wanted: _TurnCards, read: list[Card], keep: bool
) -> None:
    by_key = {(card.entity_type, card.entity_id, card.part): card for card in read}
    for key in wanted.missing:
        wanted.found[key] = by_key.get(key)
        if keep:
            engine.caches.cards[card_key(context.bot_id, *key)] = wanted.found[key]
    wanted.missing = []


def _card_values(card: Card, text_limit: int) -> dict[str, object]:
    """One card as inert single-line fields (a body's lines folded: no line of the block forged)."""
    return {
        "label": card.label,
        "name": inert_name(card.name) if card.name else "",
        "tags": "、".join(inert_name(tag) for tag in card.tags if tag),
        "sections": [
            (SECTION_NAMES[section], inert_line(getattr(card, section), text_limit))
            for section in ("evaluation", "roast", "body")
            if getattr(card, section).strip()
        ],
    }


async def _recall_within_budget(
    engine: CognitionEngine, context: ChatContext, queries: list[str], now: datetime, started: float
) -> RecallResult:
    """Recall in what is left of the turn's budget (``hook_timeout_seconds``, minus a margin so
    that the memo and pins already read are always injected). The vector side has its own,
    shorter deadline inside recall; past the whole budget the turn goes on with no recalled
    memory rather than losing the memo and pins too."""
    budget = engine.config.hook_timeout_seconds
    remaining = budget * RECALL_BUDGET_SHARE - (time.perf_counter() - started)
    try:
        return await asyncio.wait_for(
            recall(engine, context, queries, now=now, vector_deadline=budget * engine.config.vector_budget_share),
            timeout=max(0.0, remaining),
        )
    except TIMEOUTS:
        log_event("build_context", level=logging.WARNING, recall="timeout", budget_s=budget, scope=context.scope.key)
        return RecallResult([], "timeout")


async def build_context(
    engine: CognitionEngine,
    context: ChatContext,
    queries: list[str],
    now: datetime | None = None,
) -> BuiltContext:
    """Everything memory contributes to this turn's system prompt ('' when there is nothing)."""
    started = time.perf_counter()
    now = aware_or_now(now)
    zone = ZoneInfo(engine.config.timezone)
    documents, seen, cards = await _turn_documents(engine, context, bool(queries))
    recalled = await _recall_within_budget(engine, context, queries, now, started) if seen else RecallResult([])
    if not documents.memo and not documents.pins and not documents.notes and not recalled.hits and not cards:
        return BuiltContext("", 0, recalled.mode, (time.perf_counter() - started) * 1000)
    text_limit = max(LINE_MAX_CHARS, engine.config.memory_max_chars)
    card_values = [_card_values(card, text_limit) for card in cards]
    memories = [
        {
            "id": hit.record.id,
            "when": _record_when(hit.record, zone),
            "speaker": _speaker(hit.record),
            "text": inert_line(hit.record.text, text_limit),
        }
        for hit in recalled.hits
    ]
    notes = [{"when": _when(note.at, zone), "text": inert_line(note.content)} for note in documents.notes]
    values = {
        "token": new_block_token(),
        "memo": inert_lines(documents.memo, max(LINE_MAX_CHARS, engine.config.memo_max_chars)),
        "pins": [{"id": pin.id, "content": inert_line(pin.content)} for pin in documents.pins],
        "cards": card_values,
        "notes": notes,
        "memories": memories,
    }
    text = _template().render(**values)
    budget = engine.config.recall.token_budget
    # Over budget: the least relevant goes first. Older notes beyond the newest few, then the
    # lowest-ranked memories, then the remaining notes, oldest first, then the cards (the one
    # listed last first: the speaker's own card is kept longest).
    while estimate_tokens(text) > budget and (memories or notes or card_values):
        if len(notes) > NOTES_KEPT_LONGEST or (notes and not memories):
            notes.pop(0)
        elif memories:
            memories.pop()
        else:
            card_values.pop()
        text = _template().render(**values)
    elapsed = (time.perf_counter() - started) * 1000
    log_event(
        "build_context",
        started,
        memories=len(memories),
        cards=len(card_values),
        mode=recalled.mode,
        scope=context.scope.key,
    )
    return BuiltContext(text, len(memories), recalled.mode, elapsed)
