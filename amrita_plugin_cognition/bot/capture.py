"""Transcript capture: after every reply, the turn (input and reply) joins the chat's transcript.

Turns that called the ``end`` tool are marked here (in memory, briefly), so that their transcript
row does not wait for extraction as well: a turn is never extracted twice. The write runs after
the reply in the background (``pending``; shutdown and tests wait for it), never in its way.
"""

from __future__ import annotations

import asyncio
import logging

from amrita_core import CompletionEvent, on_completion
from cachetools import TTLCache
from nonebot.adapters.onebot.v11 import MessageEvent

from ..api import InputMessage
from ..errors import EngineUnavailable, StoreUnavailable
from ..runtime import current_engine, warn_limited
from .batches import turn_events
from .context import chat_context, message_time, scope_of

logger = logging.getLogger("cognition")

#: Turns that called ``end`` ("bot|scope|message id"), for long enough to outlast any reply.
_ended: TTLCache[str, bool] = TTLCache(maxsize=50_000, ttl=3600)
#: Captures still being written.
pending: set[asyncio.Task[None]] = set()


def turn_key(event: MessageEvent) -> str:
    return f"{event.self_id}|{scope_of(event).key}|{event.message_id}"


def mark_ended(event: MessageEvent) -> None:
    _ended[turn_key(event)] = True


def input_message(event: MessageEvent, user_name: str) -> InputMessage:
    return InputMessage(
        message_id=str(event.message_id),
        user_id=str(event.user_id),
        user_name=user_name,
        text=event.get_plaintext().strip(),
        at=message_time(event),
    )


def input_messages(event: MessageEvent, user_name: str) -> list[InputMessage]:
    """Every message of the turn (a debounced batch: ``batches.py``), in order."""
    return [input_message(item, user_name) for item in turn_events(event)]


def turn_message(event: MessageEvent, user_name: str) -> InputMessage:
    """The turn as one transcript input: the texts of all its messages, under its first message
    (the id its traces and the facts drawn from it name)."""
    first = input_message(event, user_name)
    texts = [message.text for message in input_messages(event, user_name) if message.text]
    return InputMessage(first.message_id, first.user_id, user_name, "\n".join(texts), first.at)


async def _capture(nb_event: MessageEvent, reply: str) -> None:
    engine = current_engine()
    if engine is None:
        return
    try:
        context = await chat_context(None, nb_event, with_permissions=False)
        ended = _ended.pop(turn_key(nb_event), False)
        await engine.turns.record(context, turn_message(nb_event, context.user_name), reply, ended=ended)
    except EngineUnavailable:
        return
    except StoreUnavailable as error:  # said once a minute while it lasts (the hook says it too)
        warn_limited(
            "transcript:database",
            "[cognition] stage=transcript database=unreachable error=%s; turns are not logged meanwhile",
            error.reason,
        )
    except Exception:  # the reply is sent; a lost transcript row is logged, never raised
        logger.exception("[cognition] stage=transcript capture failed")


@on_completion(priority=20, block=False).handle()
async def capture_turn(event: CompletionEvent, nb_event: MessageEvent) -> None:
    reply = event.get_model_response() or ""
    task = asyncio.ensure_future(_capture(nb_event, reply if isinstance(reply, str) else str(reply)))
    pending.add(task)
    task.add_done_callback(pending.discard)


async def settle() -> None:
    while pending:
        await asyncio.gather(*list(pending), return_exceptions=True)
