"""The per-turn hook: memory context into the system prompt, never in the way of the reply."""

from __future__ import annotations

import asyncio
import logging
import time

from amrita_core import PreCompletionEvent, on_precompletion
from amrita_core.types import TextContent
from nonebot.adapters.onebot.v11 import MessageEvent

from ..api import BuiltContext, ChatContext, CognitionEngine
from ..errors import TIMEOUTS, EngineUnavailable, StoreUnavailable
from ..runtime import current_engine, get_engine, warn_limited
from .batches import turn_texts
from .context import chat_context, message_time

logger = logging.getLogger("cognition")

#: While memory is not up yet, a turn waits at most this long for it to start (the start goes
#: on in the background; later turns find it ready).
START_WAIT_SECONDS = 5.0


def recall_queries(engine: CognitionEngine, context: ChatContext, text: str, short_chars: int) -> list[str]:
    """The current input as recall queries; a short one is prefixed with the chat's previous
    input. The inputs are kept by the engine's turn caches (bounded, and dropped with the rest of
    what the engine caches of the bot when another process changes it)."""
    return engine.turns.recall_queries(context.bot_id, context.scope, text, short_chars)


def inject(event: PreCompletionEvent, block: str) -> None:
    """Append ``block`` to the system message in place (a new message object would be lost)."""
    train = event.message.train
    if isinstance(train.content, str):
        train.content = f"{train.content}\n\n{block}"
    elif isinstance(train.content, list):
        train.content.append(TextContent(type="text", text=f"\n\n{block}"))
    else:
        train.content = f"{train.content}\n\n{block}"


async def memory_block(engine: CognitionEngine, context: ChatContext, nb_event: MessageEvent) -> BuiltContext | None:
    """The turn's memory block; None when memory is off in this chat (configured, or ``/memory
    off``: a cached lookup, so the common turn waits on no database for it). What is cached was
    checked against other processes' changes at most ``freshness.POLL_SECONDS`` ago."""
    await engine.refresh_caches(context.bot_id)
    if not await engine.governance.memory_on(context.bot_id, context.scope):
        return None
    short = engine.config.recall.short_query_chars
    # every message of a debounced batch is recalled for, in order (a short one read with the one before)
    queries = [query for text in turn_texts(nb_event) for query in recall_queries(engine, context, text.strip(), short)]
    return await engine.turns.context(context, list(dict.fromkeys(queries)), now=message_time(nb_event))


@on_precompletion(priority=20, block=False).handle()
async def inject_memory(event: PreCompletionEvent, nb_event: MessageEvent) -> None:
    started = time.perf_counter()
    try:
        try:
            if current_engine() is not None:  # the usual case: no timer around a ready engine
                engine = await get_engine()
            else:
                engine = await asyncio.wait_for(get_engine(), timeout=START_WAIT_SECONDS)
        except EngineUnavailable as error:  # expected until the cause is fixed: no traceback
            warn_limited(error.reason, "[cognition] stage=hook available=0 error=%s; turns go on without memory", error)
            return
        except TIMEOUTS:
            warn_limited(
                "hook:starting", "[cognition] stage=hook available=0 starting=1; this turn goes on without memory"
            )
            return
        context = await chat_context(None, nb_event, with_permissions=False)
        try:
            built = await asyncio.wait_for(
                memory_block(engine, context, nb_event), timeout=engine.config.hook_timeout_seconds
            )
        except TIMEOUTS:
            logger.warning(
                "[cognition] stage=hook timeout_s=%.1f scope=%s; this turn goes on without memory",
                engine.config.hook_timeout_seconds,
                context.scope.key,
            )
            return
        if built is None:
            return
        if built.text:
            inject(event, built.text)
        logger.info(
            "[cognition] stage=hook elapsed_ms=%.1f scope=%s memories=%d mode=%s",
            (time.perf_counter() - started) * 1000,
            context.scope.key,
            built.memories,
            built.recall_mode,
        )
    except StoreUnavailable as error:
        warn_limited(
            "hook:database",
            "[cognition] stage=hook available=0 database=unreachable error=%s; turns go on without memory "
            "(logged once a minute while it lasts)",
            error.reason,
        )
    except Exception:  # the reply must go on without memory, but never silently
        logger.exception("[cognition] stage=hook failed; this turn goes on without memory")
