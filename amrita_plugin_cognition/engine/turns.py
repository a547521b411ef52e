"""The end of a turn: the ``end`` tool's note and job, and transcript capture of every turn.

``end_turn`` is the hot path (principle 4): a message of the batch that asks not to be
remembered withholds the whole turn; otherwise admission on the memo and observations, then ONE
local transaction that adds the note and enqueues the historian job, and nothing else. The job
carries what the historian needs to anchor and disambiguate: the observations, who said them and
where, the message time in UTC, local time, epoch and zone, the current input batch and the chat's
recent messages (each clipped). Recent messages come from a per-process cache of the chat's last
turns, loaded from SQL once per chat and dropped when a change elsewhere is learned of (at most
2 s late: ``freshness``); each names its turn, and the historian leaves out the turns that are
gone by the time it runs.

``record_turn`` runs after the reply: the turn (input and reply) joins the chat's transcript.
With ``historian.capture`` "transcript" or "both", a turn that did not call ``end`` waits
there, and ``flush_transcripts`` turns a chat's waiting turns into one extraction job once the
batch is full or the chat has paused. A turn that called ``end`` is never extracted again.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from cachetools import LRUCache

from ..domain.clock import as_utc, aware_or_now
from ..domain.events import Event, JobsQueued, NoteAdded, StoreReplaced, TranscriptChanged
from ..domain.job_kinds import BOT_SPEAKER, OBSERVATIONS_JOB, TRANSCRIPT_JOB
from ..domain.records import ChatContext, Scope, normalise_text
from ..logs import log_event
from ..store import jobs, short_term
from ..store.row_insert import insert_rows
from .lazy import LazyModule
from .switches import chat_switches, memory_on

if TYPE_CHECKING:
    from ..domain import admission
else:  # on first use (``engine/lazy.py``): a read command of the CLI imports this module, never admits
    admission = LazyModule(f"{__package__.rpartition('.')[0]}.domain.admission")

if TYPE_CHECKING:
    from .service import CognitionEngine


@dataclass(frozen=True, slots=True)
class InputMessage:
    """One message of the input batch a turn answers."""

    message_id: str
    user_id: str
    user_name: str
    text: str
    at: datetime


@dataclass(slots=True)
class EndResult:
    note_written: bool = False
    #: Observations handed to the historian (after admission).
    queued: int = 0
    #: (text, reason) of what admission kept out.
    refused: list[tuple[str, str]] = field(default_factory=list)
    #: The speaker opted out (``/memory optout``): nothing of the turn was written.
    opted_out: bool = False
    #: A message of the batch asked not to remember it: nothing of the turn was written.
    withheld: bool = False


def clip(text: str, limit: int) -> str:
    text = normalise_text(text)
    return text if len(text) <= limit else f"{text[: limit - 1]}…"


def time_fields(moment: datetime, zone_name: str) -> dict[str, Any]:
    """A message time as a job carries it: UTC, local, epoch and the IANA zone."""
    utc = as_utc(moment) or moment
    return {
        "utc": utc.isoformat(),
        "local": utc.astimezone(ZoneInfo(zone_name)).isoformat(),
        "epoch": utc.timestamp(),
        "zone": zone_name,
    }


def _message(speaker_id: str, speaker: str, text: str, at: datetime, limit: int) -> dict[str, Any]:
    return {"speaker_id": speaker_id, "speaker": speaker, "text": clip(text, limit), "at": at.isoformat()}


class RecentTurns:
    """The last turns of each chat, as recent messages for jobs (bounded; loaded once per chat).

    Each message names its transcript turn (``turn``: the row id), so what a forget or an erasure
    removed after the job was queued is left out before the historian's model reads it
    (``historian_sources.without_removed_turns``). A chat's turns are dropped when this process
    removes some of them (``TranscriptChanged``) and, through the change counters, when another
    process changes the bot (``drop_bot``: read before every job is built, at most every 2 s)."""

    def __init__(self, size: int = 2_000) -> None:
        self._chats: LRUCache[str, deque[dict[str, Any]]] = LRUCache(maxsize=size)
        #: Moves with every drop: a load that raced one is not kept.
        self._epoch = 0

    @staticmethod
    def key(bot_id: str, scope: Scope) -> str:
        return f"{bot_id}|{scope.key}"

    async def messages(self, engine: CognitionEngine, bot_id: str, scope: Scope) -> list[dict[str, Any]]:
        settings = engine.config.historian
        await engine.changes.refresh(engine)  # another process's erase drops what is cached of the bot
        key = self.key(bot_id, scope)
        cached = self._chats.get(key)
        if cached is None:
            epoch = self._epoch
            async with engine.unit_of_work() as uow:
                rows = await short_term.recent_turns(uow.session, bot_id, scope, settings.recent_messages_k)
            cached = deque(maxlen=max(1, settings.recent_messages_k))
            for row in rows:
                said = as_utc(row.said_at) or row.said_at
                limit = settings.source_message_max_chars
                cached.extend(
                    _turn_messages(row.id, row.user_id, row.user_name, row.input_text, row.reply_text, said, limit)
                )
            if epoch == self._epoch:
                self._chats[key] = cached
        return list(cached)[-settings.recent_messages_k :] if settings.recent_messages_k else []

    def apply(self, events: Sequence[Event]) -> None:
        """After-commit handler: turns removed in this process (a forget), a restore."""
        for event in events:
            if isinstance(event, TranscriptChanged):
                self.drop(event.bot_id, None if event.scope is None else [event.scope])
            elif isinstance(event, StoreReplaced):
                self.drop_bot(None)

    def drop(self, bot_id: str, scopes: Iterable[Scope] | None) -> None:
        """Forget cached turns: of these chats, or (``None``) of the whole bot."""
        if scopes is None:
            self.drop_bot(bot_id)
            return
        for scope in scopes:
            self._chats.pop(self.key(bot_id, scope), None)
        self._epoch += 1

    def drop_bot(self, bot_id: str | None) -> None:
        """Forget the cached turns of a bot account (``None``: of every one)."""
        if bot_id is None:
            self._chats.clear()
        else:
            for key in [key for key in self._chats if key.startswith(f"{bot_id}|")]:
                self._chats.pop(key, None)
        self._epoch += 1

    def add(self, key: str, messages: Sequence[dict[str, Any]], keep: int) -> None:
        cached = self._chats.get(key)
        if cached is None:
            return  # loaded from SQL (which holds this turn) on the next use
        if cached.maxlen != max(1, keep):
            cached = self._chats[key] = deque(cached, maxlen=max(1, keep))
        cached.extend(messages)


def _turn_messages(
    turn_id: int, user_id: str, user_name: str, input_text: str, reply_text: str, at: datetime, limit: int
) -> list[dict[str, Any]]:
    """A transcript turn as recent messages: the input and the bot's reply, each naming the turn."""
    messages = []
    if input_text:
        messages.append({**_message(user_id, user_name or user_id, input_text, at, limit), "turn": turn_id})
    if reply_text:
        messages.append({**_message("", BOT_SPEAKER, reply_text, at, limit), "turn": turn_id})
    return messages


def _admitted(texts: Sequence[str], result: EndResult) -> list[str]:
    kept = []
    for text in texts:
        value = normalise_text(text)
        if not value:
            continue
        verdict = admission.admit(value)
        if not verdict.admit:
            result.refused.append((admission.redact(value), verdict.reason))
            log_event("end", refused=verdict.reason)
            continue
        kept.append(verdict.text)  # a secret inside is replaced by [已隐去]
    return kept


async def end_turn(
    engine: CognitionEngine,
    context: ChatContext,
    memo: str,
    observations: Sequence[str],
    *,
    batch: Sequence[InputMessage],
    perspective: str = "",
    force: bool = False,
    now: datetime | None = None,
) -> EndResult:
    """The ``end`` tool: the memo joins the chat's notes and the observations become a job, in
    one transaction. Both empty (or refused by admission): nothing is written.

    A message of the batch that asks not to remember (the check transcript capture makes,
    ``requests_not_to_remember``) withholds the whole turn: no note, no job, so no fact and no
    card merge (merges are queued from a job's facts). The model's memo and observations are not
    tied to single messages, so no part of them can be shown to be free of what that message
    said; in a batch of several people's messages the others' words of that turn are not
    remembered either (they can say them again), never the reverse."""
    started = time.perf_counter()
    now = aware_or_now(now)
    result = EndResult()
    await engine.changes.refresh(engine)  # at most every 2 s: another process's switch or opt-out is seen
    switches = await chat_switches(engine, context.bot_id, context.scope)  # cached; None: memory off here
    if switches is None or switches.is_opted_out(context.user_id):
        result.opted_out = switches is not None
        return result
    if asked_not_to_remember(batch):
        result.withheld = True
        log_event("end", withheld="do_not_remember", scope=context.scope.key)
        return result
    settings = engine.config.historian
    # a text naming an opted-out user is not written either (engine/switches.py)
    # (the speaker's own name in them is the speaker, whoever else shares it)
    by = (context.user_name,)
    kept_memo = switches.without_opted_out(_admitted([memo], result), by)
    kept_observations = (
        switches.without_opted_out(_admitted(observations, result), by) if settings.capture != "transcript" else []
    )
    if not kept_memo and not kept_observations:
        return result
    payload: dict[str, Any] | None = None
    if kept_observations:
        limit = settings.source_message_max_chars
        payload = {
            "observations": kept_observations,
            "perspective": clip(admission.redact(perspective), 200),
            "force": force,
            "memo": kept_memo[0] if kept_memo else "",
            "speaker": {"id": context.user_id, "name": context.user_name},
            "message_ids": [message.message_id for message in batch if message.message_id],  # the turn's source
            "time": time_fields(now, engine.config.timezone),
            # context for the historian, never a place a secret may rest in (redacted whole, then clipped),
            # nor what an opted-out user said or what names them
            "batch": switches.without_opted_out_messages(
                [
                    _message(
                        message.user_id,
                        message.user_name,
                        admission.redact(normalise_text(message.text)),
                        message.at,
                        limit,
                    )
                    for message in batch
                ]
            ),
            "recent": switches.without_opted_out_messages(
                await engine.recent_turns.messages(engine, context.bot_id, context.scope)
            ),
        }
    message_ids = [message.message_id for message in batch if message.message_id]
    rows = []
    if kept_memo:
        rows.append(
            short_term.note_row(
                context.bot_id, context.scope, context.user_id, context.user_name, kept_memo[0], now, message_ids
            )
        )
    if payload is not None:
        # FIFO by when it was enqueued (the message time, which may be late or skewed, is in the payload)
        rows.append(jobs.job_row(OBSERVATIONS_JOB, context.bot_id, context.scope, payload, aware_or_now(None)))
    async with engine.unit_of_work() as uow:
        await insert_rows(uow.session, rows)  # at once, in as few driver calls as the database allows
        if kept_memo:
            uow.record(NoteAdded(context.bot_id, context.scope))
        if payload is not None:
            uow.record(JobsQueued())
        await uow.commit()
    result.note_written = bool(kept_memo)
    result.queued = len(kept_observations)
    log_event("end", started, scope=context.scope.key, note=int(result.note_written), observations=result.queued)
    return result


def asked_not_to_remember(batch: Sequence[InputMessage]) -> bool:
    """Whether a message of the batch asks the bot not to remember it."""
    return any(admission.requests_not_to_remember(normalise_text(message.text)) for message in batch)


async def record_turn(
    engine: CognitionEngine,
    context: ChatContext,
    message: InputMessage,
    reply: str,
    *,
    ended: bool,
) -> bool:
    """After the reply: the turn joins the chat's transcript; it waits for extraction when the
    configuration captures transcripts and the turn did not call ``end`` (in "transcript" mode,
    every turn). Returns whether it waits."""
    await engine.changes.refresh(engine)  # at most every 2 s: another process's switch or opt-out is seen
    switches = await chat_switches(engine, context.bot_id, context.scope)  # cached; None: memory off here
    if switches is None or switches.is_opted_out(context.user_id):
        return False
    settings = engine.config.historian
    pending = settings.capture == "transcript" or (settings.capture == "both" and not ended)
    limit = settings.source_message_max_chars
    input_text, reply_text = normalise_text(message.text), normalise_text(reply)
    if (not input_text and not reply_text) or switches.touches_opted_out(
        texts=(input_text, reply_text), beside=(message.user_name,)
    ):
        return False
    # judged whole, then clipped: a cut could split a secret or drop the "do not remember"
    kept = []
    for text in (input_text, reply_text):
        verdict = admission.admit(text)
        if not verdict.admit:  # a "do not remember", or a bare secret, keeps the turn out of the log
            log_event("transcript", refused=verdict.reason, scope=context.scope.key)
            return False
        kept.append(clip(verdict.text, limit))  # a secret inside is replaced by [已隐去]
    input_text, reply_text = kept
    async with engine.unit_of_work() as uow:
        row = short_term.add_turn(
            uow.session, context.bot_id, context.scope, context.user_id, context.user_name,
            message.message_id, input_text, reply_text, message.at, pending,
        )  # fmt: skip
        await uow.commit()
    engine.recent_turns.add(
        RecentTurns.key(context.bot_id, context.scope),
        _turn_messages(row.id, context.user_id, context.user_name, input_text, reply_text, message.at, limit),
        settings.recent_messages_k,
    )
    return pending  # the queue poll batches it (full batch or pause): no wake-up per turn


async def flush_transcripts(engine: CognitionEngine, now: datetime | None = None, *, everything: bool = False) -> int:
    """Turn each chat's waiting turns into extraction jobs: a full batch at once, the rest once
    the chat has been quiet for ``transcript_pause_seconds`` (``everything``: now). Returns the
    number of jobs enqueued."""
    now = aware_or_now(now)
    settings = engine.config.historian
    pause = timedelta(seconds=settings.transcript_pause_seconds)
    async with engine.unit_of_work() as uow:
        waiting = await short_term.pending_chats(uow.session)
    queued = 0
    for chat in waiting:
        if not await memory_on(engine, chat.bot_id, chat.scope):
            continue
        quiet = everything or now - chat.last_at >= pause
        batches = chat.turns // settings.transcript_batch_turns + (
            1 if quiet and chat.turns % settings.transcript_batch_turns else 0
        )
        for _ in range(batches):
            async with engine.unit_of_work() as uow:
                await uow.lock_scope(chat.bot_id, chat.scope)
                rows = await short_term.take_pending(
                    uow.session, chat.bot_id, chat.scope, settings.transcript_batch_turns
                )
                if not rows:
                    break
                payload = {
                    "turns": [
                        {
                            "message_id": row.message_id,
                            "speaker_id": row.user_id,
                            "speaker": row.user_name or row.user_id,
                            "input": row.input_text,
                            "reply": row.reply_text,
                            "at": (as_utc(row.said_at) or row.said_at).isoformat(),
                        }
                        for row in rows
                    ],
                    "time": time_fields(as_utc(rows[-1].said_at) or now, engine.config.timezone),
                }
                await jobs.enqueue(uow.session, TRANSCRIPT_JOB, chat.bot_id, chat.scope, payload, now)
                uow.record(JobsQueued())
                await uow.commit()
                queued += 1
    if queued:
        log_event("transcript", batches=queued)
    return queued
