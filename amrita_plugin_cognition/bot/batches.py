"""The messages of a turn. With Amrita's debounce window several messages of one user become one
turn: the turn's event (the one the hook, the tools and the completion see) is the batch's first
message; the others reach the chat flow only as part of the merged user input.

Amrita dispatches a ``ChatEntryEvent`` for each message of a batch, in order, and then one
``ChatRequestEvent`` with the batch's first message, before the model is asked. The entries are
noted per chat and user; the request closes the batch: its messages from the first one on are kept
under the turn's key until the turn is long over. ``turn_events`` gives them to whatever reads
what the user said in this turn (the ``end`` tool, the write tools' check of a request not to be
remembered, transcript capture), the first message alone when no batch was noted (no debounce,
or a flow outside Amrita's chat plugin).
"""

from __future__ import annotations

from typing import Any

from cachetools import TTLCache
from nonebot import get_plugin_by_module_name
from nonebot.adapters.onebot.v11 import MessageEvent

from .context import scope_of

#: Messages noted on entry, per "bot|chat|user", until their batch's request closes it.
_entries: TTLCache[str, list[ChatEntryEvent]] = TTLCache(maxsize=10_000, ttl=600)
#: The messages of each turn by its key ("bot|chat|first message id"), long enough to outlast any reply.
_batches: TTLCache[str, list[MessageEvent]] = TTLCache(maxsize=10_000, ttl=3600)


def turn_key(event: MessageEvent) -> str:
    return f"{event.self_id}|{scope_of(event).key}|{event.message_id}"


def _speaker_key(event: MessageEvent) -> str:
    return f"{event.self_id}|{scope_of(event).key}|{event.user_id}"


def turn_events(event: Any) -> list[Any]:
    """The messages of the turn whose event is ``event``, in the order they were sent."""
    if not isinstance(event, MessageEvent):
        return [event] if event is not None else []
    return list(_batches.get(turn_key(event), [event]))


def turn_texts(event: Any) -> list[str]:
    """The plain text of each message of the turn."""
    return [item.get_plaintext() for item in turn_events(event) if hasattr(item, "get_plaintext")]


#: Amrita's chat plugin, whose events say which messages a turn holds. Without it (the engine
#: alone, as the CLI and the storage tests load it) no message is noted and a turn is its event;
#: importing it here otherwise would load it as a part of this plugin (localstore's caller check).
CHAT_PLUGIN = "amrita.plugins.chat"

if get_plugin_by_module_name(CHAT_PLUGIN) is not None:
    from amrita.plugins.chat.events import ChatEntryEvent, ChatRequestEvent, on_chat_entry, on_chat_request

    @on_chat_entry(priority=1, block=False).handle()
    async def note_entry(entry: ChatEntryEvent) -> None:
        if isinstance(entry.event, MessageEvent):
            key = _speaker_key(entry.event)
            _entries[key] = [*_entries.get(key, []), entry]

    @on_chat_request(priority=1, block=False).handle()
    async def close_batch(request: ChatRequestEvent) -> None:
        first = request.event
        if not isinstance(first, MessageEvent):
            return
        # a message another entry handler vetoed is not part of the turn (decided by now)
        noted = [entry.event for entry in _entries.pop(_speaker_key(first), []) if not entry.cancelled]
        ids = [item.message_id for item in noted]
        # entries of an earlier turn that never reached its request (vetoed) come before this one
        batch = noted[ids.index(first.message_id) :] if first.message_id in ids else [first]
        if len(batch) > 1:
            _batches[turn_key(first)] = batch
