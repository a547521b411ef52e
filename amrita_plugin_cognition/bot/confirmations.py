"""The confirm step of destructive requests from chat (forget a memory, delete everything of a
chat or a user).

A request is parked for its (bot, chat, user) for ``CONFIRM_SECONDS``; then either

* the same user answers ``确认`` in the same chat: the confirm matcher below runs it and replies
  (``取消`` drops it), before Amrita's chat sees the message; or
* the chat model calls the forget tool again with ``confirmed=true`` in a LATER message of that
  user (``take_confirmed``): the flag alone, set in the turn that asked, is refused, so the model
  cannot confirm on the user's behalf.

Only the last request of a user in a chat waits; a new one replaces it. Parked requests live in
this process only (a restart forgets them: the user asks again).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from cachetools import TTLCache
from nonebot import on_message
from nonebot.adapters.onebot.v11 import MessageEvent
from nonebot.matcher import Matcher

from ..domain.records import clean_text
from ..errors import CognitionError

logger = logging.getLogger("cognition")

CONFIRM_SECONDS = 60
CONFIRM_WORDS = frozenset({"确认", "确定", "确认删除"})
CANCEL_WORDS = frozenset({"取消", "算了", "不删了"})
INTERNAL_ERROR_MESSAGE = "记忆服务内部错误，已记录日志；本次操作未完成"


@dataclass(frozen=True, slots=True)
class Pending:
    #: What waits, e.g. ``forget:12`` (the tool's confirmation must name the same thing).
    what: str
    #: Runs the request; returns the reply.
    run: Callable[[], Awaitable[str]]
    #: The message that asked: a confirmation must come in a later one.
    message_id: str
    parked_at: float


class Confirmations:
    def __init__(self, seconds: float = CONFIRM_SECONDS) -> None:
        self._waiting: TTLCache[str, Pending] = TTLCache(maxsize=10_000, ttl=seconds)

    @staticmethod
    def key(bot_id: str, scope_key: str, user_id: str) -> str:
        return f"{bot_id}|{scope_key}|{user_id}"

    def park(self, key: str, what: str, run: Callable[[], Awaitable[str]], message_id: str) -> None:
        self._waiting[key] = Pending(what, run, message_id, time.monotonic())

    def waiting(self, key: str) -> Pending | None:
        return self._waiting.get(key)

    def take(self, key: str) -> Pending | None:
        return self._waiting.pop(key, None)

    def take_confirmed(self, key: str, what: str, message_id: str) -> bool:
        """Whether ``what`` was asked for in an earlier message of this user and still waits
        (then it is taken: a confirmation is used once)."""
        pending = self._waiting.get(key)
        if pending is None or pending.what != what or pending.message_id == message_id:
            return False
        self._waiting.pop(key, None)
        return True


CONFIRMATIONS = Confirmations()


def event_key(event: MessageEvent) -> str:
    group_id = getattr(event, "group_id", None)
    scope_key = f"group:{group_id}" if group_id is not None else f"private:{event.user_id}"
    return Confirmations.key(str(event.self_id), scope_key, str(event.user_id))


def _answer_word(event: MessageEvent) -> str:
    return clean_text(event.get_plaintext()).strip().strip("。.!！")


async def _answers_a_request(event: MessageEvent) -> bool:
    """Only a confirm or cancel word of a user with a request waiting here: every other message
    goes on to the chat as usual."""
    word = _answer_word(event)
    return (word in CONFIRM_WORDS or word in CANCEL_WORDS) and CONFIRMATIONS.waiting(event_key(event)) is not None


confirm_matcher = on_message(rule=_answers_a_request, priority=4, block=True)


@confirm_matcher.handle()
async def _confirm(event: MessageEvent, matcher: Matcher) -> None:
    pending = CONFIRMATIONS.take(event_key(event))
    if pending is None:  # expired between the rule and here
        await matcher.finish(f"没有等待确认的操作（可能已超过 {CONFIRM_SECONDS} 秒），请重新发起")
    if _answer_word(event) in CANCEL_WORDS:
        await matcher.finish("已取消，没有删除任何内容")
    try:
        reply = await pending.run()
    except CognitionError as error:
        reply = error.zh
    except Exception:
        logger.exception("[cognition] stage=confirm what=%s failed", pending.what)
        reply = INTERNAL_ERROR_MESSAGE
    await matcher.finish(reply)
