"""The confirm step of destructive requests from chat: forget one memory (``/memory … delete`` or
the ``cognition_memory_delete`` tool), and every delete-all (``/memory user|group|bot clear``).

A request waits for its (bot, chat, user) for ``CONFIRM_SECONDS``, with the message that asked and
who asked (a command, or the model through the tool). From then on every message of that user in
that chat is judged by the plugin from its own text (``domain/consent.py``), never by the model:

* **no** (不, 别删, 不不不，别删, 算了, 取消, 不确定, 确定不删 …) cancels the request at once, and the
  plugin tells the user that nothing was deleted;
* **yes** (确认, 确定, 好的删吧, 嗯删掉吧, 同意删除 …) runs it, and the plugin replies with the result;
* **other** (a question such as 删了能恢复吗, other talk, a lone 嗯) leaves it waiting until the time
  limit, and the message goes on to the chat as usual. A yes after the limit is told so.

A message that is nothing but its answer stops here. A longer one, a yes or a no with other talk,
also goes on to the chat, so the rest of what the user said is answered; its answer is acted on
according to who asked:

* a **command** asked: the plugin acts on the yes itself. The chat model knows nothing of a
  command's request (commands never reach it) and there is no tool for a delete-all, so passing the
  yes on would leave it unheard until the limit;
* the **model** asked: the yes is left to the model, which reads the whole message, confirms with
  ``confirmed=true`` and tells the user in its own reply; the tool checks the same words again. The
  conversation the model keeps then holds the question, the answer and the result, and the model
  does not report a deletion it did not see. A group message not addressed to the bot (no @) may
  never reach the model: the plugin runs that yes itself, as for a command.

A no is never left to anyone: it cancels at once, whoever asked.

The tool's ``confirmed=true`` (``confirm_for_tool``) is honoured only when a request for the same
memory waits for this user in this chat, within the limit, the message the call answers arrived
after the question (this module notes every message of the user from the question on), and the
judge reads yes in what the user has said from that message on. When Amrita batches several
messages into one turn (its debounce window), the event of the turn is the batch's first message;
the others are later messages of the same user, so they are read too (each was also judged alone
when it arrived: a no among them has cancelled the request already). A no cancels; anything else is
refused with a reason the model can act on. The flag alone deletes nothing.

Only the last request of a user in a chat waits; a new one replaces it. Requests live in this
process only (a restart forgets them: the user asks again). The time limit and the clock are
parameters of ``Confirmations`` (tests move the clock instead of waiting).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

from nonebot import get_driver, on_message
from nonebot.adapters.onebot.v11 import MessageEvent
from nonebot.matcher import Matcher

from ..api import JUDGED_MAX_CHARS, clean_text
from ..api import ConsentAnswer as Answer
from ..api import ConsentVerdict as Verdict
from ..api import judge_consent as judge
from ..errors import CognitionError, InvalidInput
from ..logs import log_event

logger = logging.getLogger("cognition")

CONFIRM_SECONDS = 60
#: Messages of a user noted while their request waits (the newest are kept).
HEARD_KEEP = 20
INTERNAL_ERROR_MESSAGE = "记忆服务内部错误，已记录日志；本次操作未完成"
CANCELLED_MESSAGE = "已取消，没有删除任何内容"

AskedBy = Literal["command", "tool"]
OutcomeState = Literal["done", "cancelled", "expired", "failed"]


@dataclass(slots=True)
class Pending:
    #: What waits, e.g. ``forget:12`` or ``clear:user:10001`` (the tool must name the same thing).
    what: str
    #: Runs the request; returns the reply.
    run: Callable[[], Awaitable[str]]
    #: The message that asked: an answer must come in a later one.
    message_id: str
    parked_at: float
    asked_by: AskedBy
    #: The user's messages in this chat since the question (id, text), oldest first.
    heard: list[tuple[str, str]] = field(default_factory=list)

    @property
    def number(self) -> str | None:
        """The number a yes may name: a forget's memory id."""
        kind, _, rest = self.what.partition(":")
        return rest if kind == "forget" else None

    def said_from(self, message_id: str) -> list[str] | None:
        """What the user said from ``message_id`` on; None when that message came before the
        question (or is the question itself)."""
        for index, (heard_id, _) in enumerate(self.heard):
            if heard_id == message_id:
                return [text for _, text in self.heard[index:]]
        return None


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a request ended, kept for another time limit (so that a late answer or the model's
    confirmation is told what happened)."""

    what: str
    state: OutcomeState
    reply: str
    at: float


class Confirmations:
    def __init__(
        self, seconds: float = CONFIRM_SECONDS, clock: Callable[[], float] = time.monotonic, maxsize: int = 10_000
    ) -> None:
        self.seconds = seconds
        self.clock = clock
        self._maxsize = maxsize
        self._waiting: dict[str, Pending] = {}
        self._outcomes: dict[str, Outcome] = {}

    @staticmethod
    def key(bot_id: str, scope_key: str, user_id: str) -> str:
        return f"{bot_id}|{scope_key}|{user_id}"

    def park(self, key: str, what: str, run: Callable[[], Awaitable[str]], message_id: str, asked_by: AskedBy) -> None:
        self._forget_stale()
        self._waiting.pop(key, None)  # a new request replaces the last one (and goes to the end)
        self._outcomes.pop(key, None)
        self._waiting[key] = Pending(what, run, message_id, self.clock(), asked_by)
        while len(self._waiting) > self._maxsize:
            self._waiting.pop(next(iter(self._waiting)))

    def waiting(self, key: str) -> Pending | None:
        pending = self._waiting.get(key)
        if pending is not None and self.clock() - pending.parked_at > self.seconds:
            self._waiting.pop(key, None)
            self._outcomes[key] = Outcome(pending.what, "expired", "", pending.parked_at + self.seconds)
            log_event("confirm", what=pending.what, outcome="expired")
            return None
        return pending

    def heard(self, key: str, message_id: str, text: str) -> Pending | None:
        """Note a message of the user while their request waits; returns the request."""
        pending = self.waiting(key)
        if pending is not None and message_id != pending.message_id:
            pending.heard.append((message_id, text[: JUDGED_MAX_CHARS + 1]))
            del pending.heard[:-HEARD_KEEP]
        return pending

    def take(self, key: str) -> Pending | None:
        pending = self.waiting(key)
        return self._waiting.pop(key, None) if pending is not None else None

    def settle(self, key: str, pending: Pending, state: OutcomeState, reply: str = "") -> None:
        self._outcomes[key] = Outcome(pending.what, state, reply, self.clock())
        log_event("confirm", what=pending.what, asked_by=pending.asked_by, outcome=state)

    def outcome(self, key: str) -> Outcome | None:
        self.waiting(key)  # an expired request becomes its outcome
        outcome = self._outcomes.get(key)
        if outcome is not None and self.clock() - outcome.at > self.seconds:
            self._outcomes.pop(key, None)
            return None
        return outcome

    def _forget_stale(self) -> None:
        now = self.clock()
        for key in [key for key, pending in self._waiting.items() if now - pending.parked_at > self.seconds]:
            self.waiting(key)
        for key in [key for key, outcome in self._outcomes.items() if now - outcome.at > self.seconds]:
            self._outcomes.pop(key, None)

    def confirm_for_tool(self, key: str, what: str, message_id: str) -> Pending | Outcome:
        """The tool's ``confirmed=true`` for ``what``, answering message ``message_id``: the
        waiting request (taken: the caller runs it and settles it) when the user's own words agree,
        or the outcome when the plugin already ran it on the user's yes; otherwise
        ``InvalidInput`` with what the model should do (a no also cancels the request)."""
        pending = self.waiting(key)
        if pending is None:
            outcome = self.outcome(key)
            if outcome is None or outcome.what != what:
                raise InvalidInput(NOTHING_WAITS, en=f"confirmation refused: nothing waits for {what}")
            if outcome.state == "done":
                return outcome
            raise InvalidInput(
                OUTCOME_REFUSALS[outcome.state].format(seconds=round(self.seconds), reply=outcome.reply),
                en=f"confirmation refused: {what} was {outcome.state}",
            )
        if pending.what != what:
            raise InvalidInput(OTHER_WAITS, en=f"confirmation refused: {pending.what} waits, not {what}")
        said = pending.said_from(message_id)
        if said is None:
            raise InvalidInput(NOT_LATER, en=f"confirmation refused: message {message_id} is not after the question")
        verdict = judge("\n".join(said), pending.number)
        log_event("confirm", what=what, by="tool", answer=verdict.answer.value, reason=verdict.reason)
        if verdict.answer is Answer.NO:
            self._waiting.pop(key, None)
            self.settle(key, pending, "cancelled")
            raise InvalidInput(REFUSED, en="confirmation refused: the user said no; the request is cancelled")
        if verdict.answer is not Answer.YES:
            raise InvalidInput(
                NOT_AGREED.format(seconds=round(self.seconds)), en="confirmation refused: the user did not agree"
            )
        self._waiting.pop(key, None)
        return pending


#: Refusals of the tool's confirmation (Chinese, for the model to act on).
NOTHING_WAITS = (
    "没有等待用户确认的这项删除：请先不带 confirmed 调用本工具，把记忆内容告诉用户并询问，等用户在之后的消息里明确同意"
)
OTHER_WAITS = "等待用户确认的是另一项删除，不是这一条：请先不带 confirmed 调用本工具，向用户说明要删的是哪一条并询问"
NOT_LATER = (
    "同意必须来自用户在询问之后发出的消息；本次回答的消息是询问时或询问之前发的，不能算作同意，尚未删除。请等用户回复"
)
NOT_AGREED = (
    "用户的回复没有明确同意删除（要用户自己说“确认”“删吧”之类；提问、犹豫或别的话都不算），尚未删除，"
    "请求在 {seconds} 秒时限内继续等待用户的回复。不要替用户确认"
)
REFUSED = "用户拒绝了删除，请求已取消，没有删除任何内容；请如实告诉用户"
OUTCOME_REFUSALS: dict[str, str] = {
    "cancelled": "用户已拒绝这次删除，请求已取消，没有删除任何内容；请如实告诉用户",
    "expired": (
        "确认已超时（超过 {seconds} 秒），请求已作废，没有删除任何内容；"
        "如用户仍要删除，请重新不带 confirmed 调用本工具询问"
    ),
    "failed": "用户同意后删除没有完成：{reply}",
}

CONFIRMATIONS = Confirmations()


def event_key(event: MessageEvent) -> str:
    group_id = getattr(event, "group_id", None)
    scope_key = f"group:{group_id}" if group_id is not None else f"private:{event.user_id}"
    return Confirmations.key(str(event.self_id), scope_key, str(event.user_id))


def message_text(event: MessageEvent) -> str:
    """The text of the event's own message (what the hook recalls for and the transcript keeps)."""
    return clean_text(event.get_plaintext()).strip()


def _is_command(text: str) -> bool:
    starts = tuple(start for start in get_driver().config.command_start if start)
    return bool(starts) and text.startswith(starts)


def _acts_on(pending: Pending | None, verdict: Verdict, *, late: bool, to_model: bool) -> bool:
    """Whether the plugin answers this message itself (see the module doc); ``to_model``: the
    message is addressed to the bot, so the chat model will read it."""
    if pending is None:
        return late and verdict.answer is Answer.YES
    if verdict.answer is Answer.NO:
        return True
    if verdict.answer is not Answer.YES:
        return False
    return verdict.bare or pending.asked_by == "command" or not to_model


async def _answers_a_request(event: MessageEvent) -> bool:
    """Notes every message of a user whose request waits here, and takes those the plugin answers
    itself; every other message goes on to the chat as usual."""
    text = message_text(event)
    if _is_command(text):
        return False
    key = event_key(event)
    pending = CONFIRMATIONS.heard(key, str(event.message_id), text)
    if pending is None:
        outcome = CONFIRMATIONS.outcome(key)
        if outcome is None or outcome.state != "expired":
            return False
        return _acts_on(None, judge(text), late=True, to_model=False)
    return _acts_on(pending, judge(text, pending.number), late=False, to_model=event.is_tome())


confirm_matcher = on_message(rule=_answers_a_request, priority=4, block=False)


@confirm_matcher.handle()
async def _answer(event: MessageEvent, matcher: Matcher) -> None:
    key = event_key(event)
    text = message_text(event)
    pending = CONFIRMATIONS.take(key)
    verdict = judge(text, pending.number if pending is not None else None)
    if verdict.bare:
        matcher.stop_propagation()  # nothing else was said: the chat does not see it
    if pending is None:
        outcome = CONFIRMATIONS.outcome(key)
        if outcome is not None and outcome.state == "expired":
            await matcher.finish(
                f"确认已超时（超过 {round(CONFIRMATIONS.seconds)} 秒），没有删除任何内容；如仍要删除，请重新发起"
            )
        await matcher.finish(f"没有等待确认的操作（可能已超过 {round(CONFIRMATIONS.seconds)} 秒），请重新发起")
    log_event("confirm", what=pending.what, by="reply", answer=verdict.answer.value, reason=verdict.reason)
    if verdict.answer is Answer.NO:
        CONFIRMATIONS.settle(key, pending, "cancelled")
        await matcher.finish(CANCELLED_MESSAGE)
    try:
        reply = await pending.run()
        CONFIRMATIONS.settle(key, pending, "done", reply)
    except CognitionError as error:
        reply = error.zh
        CONFIRMATIONS.settle(key, pending, "failed", reply)
    except Exception:
        logger.exception("[cognition] stage=confirm what=%s failed", pending.what)
        reply = INTERNAL_ERROR_MESSAGE
        CONFIRMATIONS.settle(key, pending, "failed", reply)
    await matcher.finish(reply)
