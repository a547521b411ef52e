"""Every message of every chat the bot sees counts toward the chat's activity: the heat maps the
idle-window planner reads to find the chat's quiet hours.

Observed in a NoneBot event preprocessor, not in Amrita's chat flow: the chat flow (and so the
precompletion hook) sees only the messages addressed to the bot, while a group's rhythm is every
message in it, addressed or not, and a preprocessor runs before any matcher can block the event
(a command, another plugin). The bot's own messages are not counted. The preprocessor does no SQL
and no await: it adds one to a dict in this process (``engine.idle_windows.observe``), written to
SQL on a timer (``bot/jobs.activity_flush``); a failure is logged, never in the way of the event.
"""

from __future__ import annotations

import logging

from nonebot.adapters import Event
from nonebot.adapters.onebot.v11 import MessageEvent
from nonebot.message import event_preprocessor

from ..runtime import current_engine
from .context import message_time, scope_of

logger = logging.getLogger("cognition")


@event_preprocessor
async def observe_message(event: Event) -> None:
    if not isinstance(event, MessageEvent) or event.user_id == event.self_id:
        return
    engine = current_engine()
    if engine is None or not engine.config.enable:
        return
    try:
        engine.idle_windows.observe(str(event.self_id), scope_of(event), str(event.user_id), message_time(event))
    except Exception:  # the event goes on; a lost count is logged, never raised
        logger.exception("[cognition] stage=activity_observe failed")
