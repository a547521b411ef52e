"""What a turn may skip, remembered briefly and in bounded memory.

The hook runs on every message, so three answers are cached per process:

* per bot account, whether its bank holds anything at all (checked in the background, never in
  a turn's path; ``bank_known_empty``);
* per chat, whether it sees any fact (a chat that sees none skips recall and the embedding);
* per chat, its pinned memo, pins and last short-term notes;
* per (bot, entity, part), the profile card part a turn injects (or that there is none);
* per chat, its last few inputs (a short query is recalled with the line before it).

Every cache is a ``cachetools`` TTL/LRU cache with a fixed size, so the process's memory stays
flat whatever the number of chats (``bench/cache_memory.py``). Local writes invalidate through
the unit of work's after-commit events; another process's change drops everything cached of
its bot account within ``freshness.POLL_SECONDS`` (``drop_bot``), and what is not dropped
expires after ``CHAT_TTL_SECONDS`` anyway.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from cachetools import LRUCache, TTLCache

from ..domain.events import (
    Event,
    MemoriesChanged,
    NoteAdded,
    NotesChanged,
    ProfilesChanged,
    StoreReplaced,
    TranscriptChanged,
)
from ..domain.records import Scope
from ..logs import log_event

#: How long a chat's answers (sees facts or not, memo and pins) are trusted.
CHAT_TTL_SECONDS = 10.0
#: Chats whose answers are kept at once (each entry is a few hundred bytes at most).
CHAT_CACHE_SIZE = 20_000
BANK_CACHE_SIZE = 1_024
PROBE_WARN_SECONDS = 60.0
#: Inputs kept per chat for short queries.
RECENT_INPUTS_KEEP = 3


class TurnCaches:
    def __init__(self) -> None:
        #: Visibility key -> whether the chat sees some fact.
        self.chat_sees: TTLCache[str, bool] = TTLCache(maxsize=CHAT_CACHE_SIZE, ttl=CHAT_TTL_SECONDS)
        #: "bot|scope" -> the memo, pins and short-term notes of a chat (``notes.ChatDocuments``).
        self.notes: TTLCache[str, Any] = TTLCache(maxsize=CHAT_CACHE_SIZE, ttl=CHAT_TTL_SECONDS)
        #: "bot|type|id|part" -> that card part (``domain.profiles.Card``), or None: there is none.
        self.cards: TTLCache[str, Any] = TTLCache(maxsize=CHAT_CACHE_SIZE, ttl=CHAT_TTL_SECONDS)
        #: "bot|scope" -> the chat's last few inputs (the hook's short-query context).
        self.recent_inputs: LRUCache[str, deque[str]] = LRUCache(maxsize=CHAT_CACHE_SIZE)
        #: Bot id -> (bank holds nothing, monotonic time of the check).
        self.bank_state: LRUCache[str, tuple[bool, float]] = LRUCache(maxsize=BANK_CACHE_SIZE)
        self._bank_probes: dict[str, asyncio.Task[None]] = {}
        #: Bumped by every local write, so that a probe that raced a write is not believed.
        self._write_epoch = 0
        #: When a failing probe was last logged (one warning per ``PROBE_WARN_SECONDS``).
        self._probe_warned = -PROBE_WARN_SECONDS

    # ---------------------------------------------------------------- invalidation

    def apply(self, events: Sequence[Event]) -> None:
        """After-commit handler: drop what the committed change may have made stale."""
        for event in events:
            if isinstance(event, StoreReplaced):
                self.drop_bot(None)
            elif isinstance(event, MemoriesChanged):
                self.facts_changed()
            elif isinstance(event, NotesChanged | NoteAdded | TranscriptChanged):
                if event.scope is None:  # a person erased: their words may be in any chat's cache
                    self.drop_bot(event.bot_id)
                    continue
                # a memo, pin or note changes no chat's view of facts; it may fill an empty bank
                key = notes_key(event.bot_id, event.scope)
                self.notes.pop(key, None)
                if not isinstance(event, NoteAdded):  # something was replaced or removed in this chat
                    self.recent_inputs.pop(key, None)
                self.bank_state.pop(event.bot_id, None)
                self._write_epoch += 1
            elif isinstance(event, ProfilesChanged):
                self.cards_changed(event)

    def cards_changed(self, event: ProfilesChanged) -> None:
        """A card was saved, restored or erased: drop its cached parts (every card of the bot
        when the event names none); a new card may fill an empty bank."""
        if event.entity_type and event.entity_id:  # every part: a user has one per group too
            prefix = card_key(event.bot_id, event.entity_type, event.entity_id, "")
        else:
            prefix = f"{event.bot_id}|"
        for key in [key for key in self.cards if key.startswith(prefix)]:
            self.cards.pop(key, None)
        self.bank_state.pop(event.bot_id, None)
        self._write_epoch += 1

    def drop_bot(self, bot_id: str | None) -> None:
        """Forget everything cached of a bot account (``None``: of every one): another process
        changed it (``freshness.ChangeWatch``), or a restore replaced the store."""
        caches: tuple[Any, ...] = (self.chat_sees, self.notes, self.cards, self.recent_inputs)
        if bot_id is None:
            for cache in caches:
                cache.clear()
            self.bank_state.clear()
        else:
            prefix = f"{bot_id}|"
            for cache in caches:
                for key in [key for key in cache if key.startswith(prefix)]:
                    cache.pop(key, None)
            self.bank_state.pop(bot_id, None)
        self._write_epoch += 1

    @property
    def epoch(self) -> int:
        """Changes with every invalidation: a value read before an await and cached after it is
        kept only when this did not move meanwhile."""
        return self._write_epoch

    def recall_queries(self, bot_id: str, scope: Scope, text: str, short_chars: int) -> list[str]:
        """The current input as recall queries; a short one is prefixed with the chat's previous
        input (kept here, dropped with the chat's other cached content)."""
        key = notes_key(bot_id, scope)
        history = self.recent_inputs.get(key)
        if history is None:
            history = self.recent_inputs[key] = deque(maxlen=RECENT_INPUTS_KEEP)
        previous = history[-1] if history else ""
        if text:
            history.append(text)
        if not text:
            return []
        if len(text) <= short_chars and previous:
            return [f"{previous}\n{text}"]
        return [text]

    def facts_changed(self) -> None:
        """A local write may fill a chat (or a whole bank) that was known to be empty."""
        for key in [key for key, sees in self.chat_sees.items() if not sees]:
            self.chat_sees.pop(key, None)
        self.bank_state.clear()
        self._write_epoch += 1

    # ---------------------------------------------------------------- per chat

    def chat_sees_known(self, key: str) -> bool | None:
        return self.chat_sees.get(key)

    def remember_chat_sees(self, key: str, sees: bool) -> None:
        self.chat_sees[key] = sees

    # ---------------------------------------------------------------- per bot account

    def bank_known_empty(self, bot_id: str, probe: Callable[[], Awaitable[bool]]) -> bool:
        """True when this bot's bank held nothing at the last check (then the turn needs no
        database). The check (``probe``: does the bank hold anything?) runs in the background at
        a bot's first turn, then once the answer is older than ``CHAT_TTL_SECONDS``."""
        state = self.bank_state.get(bot_id)
        if state is None or time.monotonic() - state[1] > CHAT_TTL_SECONDS:
            self._probe_soon(bot_id, probe)
        return state is not None and state[0]

    async def settle(self) -> None:
        """Wait for the background bank checks (before shutdown: none may hold a connection)."""
        while self._bank_probes:
            await asyncio.gather(*list(self._bank_probes.values()), return_exceptions=True)

    @property
    def probing(self) -> bool:
        return bool(self._bank_probes)

    def _probe_soon(self, bot_id: str, probe: Callable[[], Awaitable[bool]]) -> None:
        running = self._bank_probes.get(bot_id)
        if running is not None and not running.done() and running.get_loop() is asyncio.get_running_loop():
            return
        self._bank_probes[bot_id] = asyncio.ensure_future(self._probe(bot_id, probe))

    async def _probe(self, bot_id: str, probe: Callable[[], Awaitable[bool]]) -> None:
        epoch = self._write_epoch
        try:
            holds = await probe()
        except Exception as error:  # a probe failing only keeps the slow, correct path
            self.bank_state.pop(bot_id, None)
            now = time.monotonic()
            if now - self._probe_warned >= PROBE_WARN_SECONDS:  # a database that is down fails each one
                self._probe_warned = now
                log_event("bank_probe", level=logging.WARNING, error=str(error)[:200])
        else:
            if epoch == self._write_epoch:
                self.bank_state[bot_id] = (not holds, time.monotonic())
        finally:
            if self._bank_probes.get(bot_id) is asyncio.current_task():
                del self._bank_probes[bot_id]


def notes_key(bot_id: str, scope: Scope) -> str:
    return f"{bot_id}|{scope.key}"


def card_key(bot_id: str, entity_type: str, entity_id: str, part: str) -> str:
    return f"{bot_id}|{entity_type}|{entity_id}|{part}"
