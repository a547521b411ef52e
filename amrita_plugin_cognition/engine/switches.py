"""The per-chat memory switch (``/memory off|on``) and the per-user opt-out (``/memory optout|optin``).

What they forbid is ``domain/governance.py``; who may flip a chat's switch is
``domain/permissions.py``; the rows are ``store/switches.py``. Here: the cached lookups every
path asks, and the changes, each in one unit of work with its audit record.

Who honours them:

* the per-turn hook injects nothing into a switched-off chat (``memory_on``);
* the ``end`` tool (``turns.end_turn``) and transcript capture (``turns.record_turn``) write
  nothing for a switched-off chat or an opted-out speaker, nor a text naming an opted-out user;
  waiting transcripts of a switched-off chat are not batched (``turns.flush_transcripts``);
* the tools refuse to run in a switched-off chat (``bot/tools/registry.py``); a write whose
  speaker, subject or text is an opted-out user is refused: facts in ``writes.remember`` (every
  fact write goes through it) and ``corrections.update_memory``, the memo and pins in ``notes``;
* the historian writes nothing for a job of a switched-off chat and drops every fact about an
  opted-out user (speaker of any of its sources, subject, or a QQ number in its text); it checks
  both again in SQL, under the chat's lock, in the transaction that writes the facts;
* profile merges (``profile_merge``) are not queued for opted-out users and not run for them,
  nor for a switched-off group or private chat's card part; past and new facts about or naming an
  opted-out user are kept out of every merge, the current card is shown to the model without
  them, and what an answer still says of them is cut before it is saved
  (``card_without_opted_out``), so no card, a group's or another user's, grows with them.

"Naming" is the person matcher's (``domain/people.py``), the one a delete-all uses: the QQ
number in any writing (full-width, Chinese numerals, split by spaces or dashes) and the nicknames
the user was seen with. The ``end`` job's context (the input batch, the recent messages) leaves
out what an opted-out user said or what names them, and the bot's replies to it.

Switching a chat off also calls off its waiting extraction work (queued jobs are deleted, waiting
turns released); opting out releases the user's waiting turns in every chat. Existing memories
stay either way, until someone deletes them.

Lookups are per process and cheap (principle 4): one ``SwitchState`` per bot account (its
switched-off chats and opted-out users, which exist only by someone's explicit command), loaded
with two small queries and kept for ``CHAT_TTL_SECONDS``. A change made in this process drops
the entry after its commit (``SwitchesChanged``); a change made by another process drops it at
the next read of the change counters (``freshness``, at most every 2 s), and within the TTL anyway.
With someone opted out, the state carries the person matcher that finds them in a
text (``domain/people.py``: their QQ number in any writing, their nicknames), the same matcher a
delete-all uses; their nicknames are read from the short tables and kept for
``NICKNAMES_TTL_SECONDS`` (a new opt-out, here or seen from another process, reads them at once).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING

from cachetools import TTLCache
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain import permissions
from ..domain.clock import aware_or_now
from ..domain.events import Event, StoreReplaced, SwitchesChanged
from ..domain.governance import CHAT_OFF_MESSAGE, OTHER_OPTED_OUT_MESSAGE, SELF_OPTED_OUT_MESSAGE, SwitchState
from ..domain.job_kinds import EXTRACTION_JOBS
from ..domain.people import CardText, PersonMatcher
from ..domain.permissions import Actor
from ..domain.profiles import SECTIONS, Card
from ..domain.records import ChatContext, Scope
from ..errors import InvalidInput
from ..logs import log_event
from ..store import audit
from ..store import switches as store
from ..store.unit_of_work import take_write_lock
from .caches import BANK_CACHE_SIZE, CHAT_TTL_SECONDS

if TYPE_CHECKING:
    from .service import CognitionEngine

SWITCH_OFF = "switch_off"
SWITCH_ON = "switch_on"
OPT_OUT = "optout"
OPT_IN = "optin"


#: How long the opted-out users' nicknames are kept (they change rarely; a new opt-out reloads).
NICKNAMES_TTL_SECONDS = 300.0


class SwitchCache:
    """Per bot account, its ``SwitchState``: bounded, short-lived, dropped after local changes."""

    def __init__(self, size: int = BANK_CACHE_SIZE, ttl: float = CHAT_TTL_SECONDS) -> None:
        self._states: TTLCache[str, SwitchState] = TTLCache(maxsize=size, ttl=ttl)
        #: Per bot account, the opted-out users a matcher was built for, and the matcher.
        self._matchers: TTLCache[str, tuple[frozenset[str], PersonMatcher]] = TTLCache(
            maxsize=size, ttl=NICKNAMES_TTL_SECONDS
        )
        #: Bumped by every local change, so that a load that raced a change is not kept.
        self._epoch = 0

    def apply(self, events: Sequence[Event]) -> None:
        """After-commit handler."""
        for event in events:
            if isinstance(event, SwitchesChanged):
                self._states.pop(event.bot_id, None)
                self._matchers.pop(event.bot_id, None)
                self._epoch += 1
            elif isinstance(event, StoreReplaced):
                self._states.clear()
                self._matchers.clear()
                self._epoch += 1

    def drop(self, bot_id: str | None) -> None:
        """Another process changed this bot account (``None``: every one): read it again."""
        if bot_id is None:
            self._states.clear()
        else:
            self._states.pop(bot_id, None)
        self._epoch += 1

    async def state(self, engine: CognitionEngine, bot_id: str) -> SwitchState:
        cached = self._states.get(bot_id)
        if cached is not None:
            return cached
        started = time.perf_counter()
        epoch = self._epoch
        async with engine.unit_of_work() as uow:
            loaded = await self.fresh(uow.session, bot_id)
        if epoch == self._epoch:
            self._states[bot_id] = loaded
        log_event(
            "switches",
            started,
            level=logging.DEBUG,
            bot=bot_id,
            off_chats=len(loaded.off_chats),
            opted_out=len(loaded.opted_out),
        )
        return loaded

    async def fresh(self, session: AsyncSession, bot_id: str) -> SwitchState:
        """The switches as they are in SQL now, in the caller's transaction (the historian reads
        them under the chat's lock before it writes); the matcher of the same opted-out users is
        reused (kept for ``NICKNAMES_TTL_SECONDS``), so a job does not read their nicknames again."""
        epoch = self._epoch
        off_chats, opted_out = await store.load(session, bot_id)
        users = frozenset(opted_out)
        known = self._matchers.get(bot_id)
        matcher = known[1] if known is not None and known[0] == users else None
        if users and matcher is None:
            matcher = await store.opted_out_matcher(session, bot_id, users)
            if epoch == self._epoch:
                self._matchers[bot_id] = (users, matcher)
        return SwitchState(frozenset(off_chats), users, matcher)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------ lookups


async def switch_state(engine: CognitionEngine, bot_id: str) -> SwitchState:
    """A bot account's switched-off chats and opted-out users (cached)."""
    return await engine.switches.state(engine, bot_id)


def chat_open(engine: CognitionEngine, state: SwitchState, scope: Scope) -> bool:
    """Whether the chat's own memory is on: not in the configured ``disabled_scopes`` and not
    switched off by command (the master switch ``enable`` is the entry points' business)."""
    return scope.key not in engine.config.disabled_scopes and state.chat_on(scope)


async def chat_switches(engine: CognitionEngine, bot_id: str, scope: Scope) -> SwitchState | None:
    """The bot account's switches when memory is on for this chat (the master switch, the
    configured list and the chat's own switch), else None."""
    config = engine.config
    if not config.enable or scope.key in config.disabled_scopes:
        return None
    state = await engine.switches.state(engine, bot_id)
    return state if state.chat_on(scope) else None


async def memory_on(engine: CognitionEngine, bot_id: str, scope: Scope) -> bool:
    """Whether memory is on for this chat: nothing is written, injected or extracted when not."""
    return await chat_switches(engine, bot_id, scope) is not None


def refuse_unwritable(
    engine: CognitionEngine,
    switches: SwitchState,
    context: ChatContext | None,
    scope: Scope,
    people: Iterable[str] = (),
    texts: Sequence[str] = (),
    names: Iterable[str] = (),
) -> None:
    """``InvalidInput`` (with the reason in Chinese) when ``context``'s speaker (None: the
    operator, such as the consolidation cycle) may not write ``texts`` about ``people`` (called
    ``names``) into ``scope``: the chat is off, or someone involved opted out. The speaker's own
    name in a text is the speaker's."""
    if not chat_open(engine, switches, scope):
        raise InvalidInput(CHAT_OFF_MESSAGE, en=f"memory is off in {scope.key}")
    if context is not None and switches.is_opted_out(context.user_id):
        raise InvalidInput(SELF_OPTED_OUT_MESSAGE, en="the speaker opted out of memory")
    speaker = (context.user_name,) if context is not None else ()
    if switches.touches_opted_out(people, texts, (*speaker, *names)):
        raise InvalidInput(OTHER_OPTED_OUT_MESSAGE, en="the text is about a user who opted out of memory")


def card_without_opted_out(switches: SwitchState, card: Card, beside: Iterable[str] = ()) -> Card:
    """A card part without what names an opted-out user: a group card's name, the tags and the
    sentences of its sections that do are cut (``domain/people.CardText.cut``); the card
    itself when nobody opted out or nothing names them. A user card's name is its owner's, and
    where it stands in the card it is them, not someone else who shares it. A merge answer goes
    through this before it is saved (``beside``: the people of the facts it was written from, whose
    names in it are theirs), and so does the current card before the model reads it."""
    if not switches.opted_out:
        return card
    owner = (card.name,) if card.entity_type == "user" else ()
    people = (*owner, *beside)
    shown = CardText(card.name, tuple(card.tags), {section: getattr(card, section) for section in SECTIONS})
    kept = shown.cut(lambda text: switches.names_opted_out(text, people), keep_name=bool(owner))
    if kept == shown:
        return card
    evaluation, body, roast = (kept.sections[section] for section in SECTIONS)
    return replace(card, name=kept.name, tags=list(kept.tags), evaluation=evaluation, body=body, roast=roast)


async def check_writable(engine: CognitionEngine, context: ChatContext, texts: Sequence[str] = ()) -> SwitchState:
    """``refuse_unwritable`` in the speaker's own chat; returns the switches for further checks."""
    switches = await switch_state(engine, context.bot_id)
    refuse_unwritable(engine, switches, context, context.scope, (), texts)
    return switches


# ------------------------------------------------------------------------------------ changes


@dataclass(frozen=True, slots=True)
class SwitchChange:
    #: False when it already was so (then nothing was written, not even an audit record).
    changed: bool
    #: Rows the change touched: the switch or opt-out row, and the waiting work it called off.
    count: int = 0


async def set_chat_memory(
    engine: CognitionEngine, bot_id: str, scope: Scope, on: bool, actor: Actor, now: datetime | None = None
) -> SwitchChange:
    """Switch a chat's memory on or off, if ``actor`` may (``permissions.check_set_chat_memory``).
    Off also calls off the chat's waiting work."""
    permissions.check_set_chat_memory(actor, bot_id, scope)
    actor_id = permissions.actor_name(actor)
    now = aware_or_now(now)
    async with engine.unit_of_work() as uow:
        await uow.lock_scope(bot_id, scope)  # ordered with the historian's writes to this chat
        if not await store.set_chat(uow.session, bot_id, scope, on, actor_id, now):
            return SwitchChange(False)
        count = 1 if on else 1 + await store.drop_waiting_work(uow.session, bot_id, scope, EXTRACTION_JOBS)
        action = SWITCH_ON if on else SWITCH_OFF
        audit.record(uow.session, bot_id, action, actor_id, scope.key, count, now)
        uow.record(SwitchesChanged(bot_id))
        await uow.commit()
    log_event("switch", bot=bot_id, action=action, scope=scope.key, actor=actor_id, count=count)
    return SwitchChange(True, count)


async def switch_chat_memory(
    engine: CognitionEngine, context: ChatContext, on: bool, now: datetime | None = None
) -> SwitchChange:
    """``/memory off|on`` in the chat it is typed in, by whoever may (``permissions``)."""
    return await set_chat_memory(engine, context.bot_id, context.scope, on, context, now)


async def set_opt_out(
    engine: CognitionEngine, bot_id: str, user_id: str, out: bool, actor: Actor, now: datetime | None = None
) -> SwitchChange:
    """Opt a user out of this bot account's memory (or back in), if ``actor`` may
    (``permissions.check_opt_out``: the user themselves, or the operator). Out also releases their
    turns waiting for extraction; their existing memories stay."""
    permissions.check_opt_out(actor, bot_id, user_id)
    actor_id = permissions.actor_name(actor)
    now = aware_or_now(now)
    async with engine.unit_of_work() as uow:
        await take_write_lock(uow.session, f"cognition:optout:{bot_id}:{user_id}")
        if out:
            changed = await store.opt_out(uow.session, bot_id, user_id, now)
            count = 1 + await store.release_waiting_turns(uow.session, bot_id, user_id) if changed else 0
        else:
            changed = await store.opt_in(uow.session, bot_id, user_id)
            count = 1 if changed else 0
        if not changed:
            return SwitchChange(False)
        action = OPT_OUT if out else OPT_IN
        audit.record(uow.session, bot_id, action, actor_id, f"user:{user_id}", count, now)
        uow.record(SwitchesChanged(bot_id))
        await uow.commit()
    log_event("switch", bot=bot_id, action=action, actor=actor_id, count=count)
    return SwitchChange(True, count)
