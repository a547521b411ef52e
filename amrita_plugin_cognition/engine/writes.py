"""Writing facts: the one write path (admission, chat switch and opt-out, barrier, dedupe, limit,
authority + indices)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from ..domain.clock import aware_or_now
from ..domain.events import IndexWorkQueued, MemoriesChanged
from ..domain.governance import (
    CHAT_OFF_MESSAGE,
    OPTED_OUT,
    OTHER_OPTED_OUT_MESSAGE,
    SELF_OPTED_OUT_MESSAGE,
    SWITCHED_OFF,
    SwitchState,
)
from ..domain.records import (
    ChatContext,
    Importance,
    MemoryDraft,
    MemoryKind,
    MemoryRecord,
    Scope,
    content_hash,
    is_conversation_turn,
    normalise_text,
    origin_hashes,
)
from ..errors import InvalidInput, LimitExceeded, NotFound
from ..logs import log_event
from ..store import decay as decay_store
from ..store import repository
from ..store.unit_of_work import UnitOfWork
from .lazy import LazyModule
from .switches import chat_open, switch_state

if TYPE_CHECKING:
    from ..domain import admission
    from ..domain.admission import SecondOpinion
else:  # on first use (``engine/lazy.py``): a read command of the CLI imports this module, never writes
    admission = LazyModule(f"{__package__.rpartition('.')[0]}.domain.admission")

if TYPE_CHECKING:
    from .service import CognitionEngine


@dataclass(slots=True)
class WriteResult:
    written: list[MemoryRecord] = field(default_factory=list)
    #: (draft index, text, reason) of every refused draft; reasons: credential, do_not_remember,
    #: forgotten, duplicate, too_long, empty, over_limit (the chat is full: ``remember_within``
    #: writes what fits), switched_off, opted_out, and the model's flags (``FLAGGED_REASONS``:
    #: a historian fact; these three without the text).
    refused: list[tuple[int, str, str]] = field(default_factory=list)
    #: draft index -> id of the record that holds it (new, or the existing duplicate).
    record_ids: dict[int, int] = field(default_factory=dict)


#: A draft left out because the chat's memories reached ``memories_max_per_scope``.
OVER_LIMIT = "over_limit"

REFUSAL_MESSAGES = {
    "forgotten": "这条内容此前已被要求遗忘，不会再记录",
    "duplicate": "已有一条相同的记忆，无需重复记录",
    SWITCHED_OFF: CHAT_OFF_MESSAGE,
    OPTED_OUT: OTHER_OPTED_OUT_MESSAGE,
}


def checked_text(engine: CognitionEngine, text: str) -> str:
    value = normalise_text(text)
    if not value:
        raise InvalidInput("内容不能为空")
    if len(value) > engine.config.memory_max_chars:
        raise LimitExceeded(f"内容过长：{len(value)} 字，单条记忆上限 {engine.config.memory_max_chars} 字")
    return value


def _screen(
    engine: CognitionEngine,
    drafts: Sequence[MemoryDraft],
    result: WriteResult,
    switches: SwitchState,
    opinions: Sequence[SecondOpinion] = (),
) -> dict[Scope, list]:
    """Drafts that pass the switches, the text checks and admission (with the model's flags on a
    historian fact, ``opinions`` by draft: ``admission.judge``), by scope; the others are refused."""
    by_scope: dict[Scope, list[tuple[int, MemoryDraft]]] = {}
    for index, draft in enumerate(drafts):
        if not chat_open(engine, switches, draft.scope):
            result.refused.append((index, "", SWITCHED_OFF))
            continue
        if switches.touches_opted_out(
            (draft.speaker_id, draft.subject_id), (draft.text,), (draft.speaker_name, draft.subject_name)
        ):
            result.refused.append((index, "", OPTED_OUT))
            continue
        try:
            draft.text = checked_text(engine, draft.text)
        except InvalidInput as error:
            # reported without a secret, like admission's refusals (the text was never admitted)
            reason = "too_long" if isinstance(error, LimitExceeded) else "empty"
            result.refused.append((index, admission.redact(draft.text), reason))
            continue
        verdict = admission.judge(draft.text, opinions[index] if index < len(opinions) else admission.NO_OPINION)
        if not verdict.admit:
            # a flagged fact is reported without its text: the model may have seen what no rule can redact
            text = "" if verdict.reason in admission.FLAGGED_REASONS else admission.redact(draft.text)
            result.refused.append((index, text, verdict.reason))
            continue
        draft.text = verdict.text  # a secret inside is replaced by [已隐去]
        if draft.kind == MemoryKind.FACT and is_conversation_turn(draft.text, draft.speaker_name):
            draft.kind = MemoryKind.TURN
        by_scope.setdefault(draft.scope, []).append((index, draft))
    return by_scope


async def remember(
    engine: CognitionEngine, bot_id: str, drafts: Sequence[MemoryDraft], now: datetime | None = None
) -> WriteResult:
    """Write facts. Each scope's drafts are one unit of work that takes the chat's write lock
    before it counts, so the per-chat limit holds under concurrent writers in any process."""
    started = time.perf_counter()
    now = aware_or_now(now)
    result = WriteResult()
    switches = await switch_state(engine, bot_id)
    screened = await asyncio.to_thread(_screen, engine, drafts, result, switches)  # admission: CPU work
    for scope, scope_drafts in screened.items():
        async with engine.unit_of_work() as uow:
            await uow.lock_scope(bot_id, scope)
            if await _insert_scope(engine, uow, bot_id, scope_drafts, now, result):
                await uow.commit()
    log_event("remember", started, written=len(result.written), refused=len(result.refused))
    return result


async def remember_within(
    engine: CognitionEngine,
    uow: UnitOfWork,
    bot_id: str,
    scope: Scope,
    drafts: Sequence[MemoryDraft],
    now: datetime,
    opinions: Sequence[SecondOpinion] = (),
) -> WriteResult:
    """``remember`` for drafts of one chat inside the caller's unit of work, which has locked
    that chat (``uow.lock_scope``, before anything else) and commits: the historian writes a
    job's facts and completes the job in one transaction. A chat with less room than the drafts
    need gets what fits, in order; the rest is refused as ``over_limit`` (nothing is retried:
    the chat stays full until someone deletes). ``opinions``: the historian model's flags on
    each draft, judged with the rules (``admission.judge``)."""
    result = WriteResult()
    switches = await switch_state(engine, bot_id)
    # admission on a worker thread (the session stays with the loop; nothing here touches it)
    screened = await asyncio.to_thread(_screen, engine, drafts, result, switches, opinions)
    if set(screened) - {scope}:
        raise ValueError("remember_within writes the drafts of one chat only")
    if scope in screened:
        await _insert_scope(engine, uow, bot_id, screened[scope], now, result, partial=True)
    return result


async def _insert_scope(
    engine: CognitionEngine,
    uow: UnitOfWork,
    bot_id: str,
    scope_drafts: Sequence[tuple[int, MemoryDraft]],
    now: datetime,
    result: WriteResult,
    partial: bool = False,
) -> bool:
    """Barrier, dedupe and limit checks, then the insert (no commit). False when nothing changed
    (a duplicate said again restarts the existing memory's decay clock: that is a change).
    Past the chat's limit: ``LimitExceeded``, or with ``partial`` the drafts that fit and the rest
    refused as ``over_limit``."""
    session = uow.session
    scope = scope_drafts[0][1].scope
    hashes = [content_hash(bot_id, scope, draft.text) for _, draft in scope_drafts]
    origins = [origin_hashes(bot_id, draft.source) for _, draft in scope_drafts]
    barred = await repository.barred_hashes(session, [*hashes, *(digest for keys in origins for digest in keys)])
    existing = await repository.find_active_duplicate(session, bot_id, hashes)
    accepted: list[tuple[int, MemoryDraft]] = []
    first_of_hash: dict[str, int] = {}
    repeats: list[tuple[int, str]] = []
    for (index, draft), digest, origin in zip(scope_drafts, hashes, origins, strict=True):
        if digest in barred or barred.intersection(origin):
            result.refused.append((index, draft.text, "forgotten"))
        elif digest in existing:
            result.refused.append((index, draft.text, "duplicate"))
            result.record_ids[index] = existing[digest]
        elif digest in first_of_hash:
            result.refused.append((index, draft.text, "duplicate"))
            repeats.append((index, digest))
        else:
            first_of_hash[digest] = index
            accepted.append((index, draft))
    # a fact said again is alive: its decay clock restarts (``domain/decay.py``)
    renewed = await decay_store.renew(session, sorted(set(result.record_ids.values()) & set(existing.values())), now)
    if not accepted:
        return renewed > 0
    active = await repository.count_active(session, bot_id, scope)
    room = max(0, engine.config.memories_max_per_scope - active)
    if partial and len(accepted) > room:
        result.refused.extend((index, draft.text, OVER_LIMIT) for index, draft in accepted[room:])
        left_out = {index for index, _ in accepted[room:]}
        repeats = [(index, digest) for index, digest in repeats if first_of_hash[digest] not in left_out]
        accepted = accepted[:room]
        if not accepted:
            return False
    if active + len(accepted) > engine.config.memories_max_per_scope:
        raise LimitExceeded(
            f"本会话记忆已达上限 {engine.config.memories_max_per_scope} 条（现有 {active} 条），请先删除不需要的记忆"
        )
    rows = await repository.insert_memories(session, bot_id, [draft for _, draft in accepted], now)
    uow.record(IndexWorkQueued(), MemoriesChanged(bot_id))
    for (index, _), row in zip(accepted, rows, strict=True):
        result.record_ids[index] = row.id
        result.written.append(repository.to_record(row))
    for index, digest in repeats:
        result.record_ids[index] = result.record_ids[first_of_hash[digest]]
    return True


def target_scope(context: ChatContext, target: str) -> Scope:
    """The scope a tool's ``user``/``group`` target means here. "user" facts learned in a group
    stay in that group (a private fact never reaches a group; a group fact is visible from the
    user's private chat through person matching)."""
    if target not in ("user", "group"):
        raise InvalidInput("scope 只能是 user 或 group")
    if target == "group" and not context.scope.is_group:
        raise InvalidInput("当前是私聊，没有群记忆；请使用 scope=user")
    return context.scope


def refuse_if_asked_not_to_remember(said: Sequence[str]) -> None:
    """Refuse a write from a tool call when a message it answers (``said``) asks not to remember,
    whatever the model wrote: the check ``end`` and transcript capture make of the same messages.
    Every tool that stores text calls it (the memory write, the memo, the pins)."""
    if any(admission.requests_not_to_remember(normalise_text(text)) for text in said):
        refusal = admission.AdmissionVerdict(False, "do_not_remember").message
        raise InvalidInput(refusal, en="the message being answered asked not to remember")


async def write_memory(
    engine: CognitionEngine,
    context: ChatContext,
    target: Literal["user", "group"],
    text: str,
    importance: Importance = Importance.MEDIUM,
    tags: Sequence[str] = (),
    now: datetime | None = None,
    message_id: str = "",
    said: Sequence[str] = (),
) -> MemoryRecord:
    """An explicit memory from a tool call, in the chat's own scope (``message_id``: the message
    being answered, kept as the fact's source). ``said``: the texts of the messages the call
    answers; one that asks not to remember refuses the write, whatever the model wrote (the check
    the ``end`` tool and transcript capture make of the same messages)."""
    scope = target_scope(context, target)
    refuse_if_asked_not_to_remember(said)
    draft = MemoryDraft(
        text=text,
        scope=scope,
        speaker_id=context.user_id,
        speaker_name=context.user_name,
        subject_id=context.user_id if target == "user" else "",
        subject_name=context.user_name if target == "user" else "",
        importance=importance,
        tags=[tag.strip() for tag in tags if tag.strip()],
        source={"via": "tool", "messages": [message_id]} if message_id else {"via": "tool"},
    )
    checked_text(engine, text)
    result = await remember(engine, context.bot_id, [draft], now=now)
    if result.written:
        return result.written[0]
    reason = result.refused[0][2] if result.refused else "unknown"
    if reason in ("credential", "do_not_remember"):
        raise InvalidInput(admission.admit(text).message)
    if reason == OPTED_OUT and (await switch_state(engine, context.bot_id)).is_opted_out(context.user_id):
        raise InvalidInput(SELF_OPTED_OUT_MESSAGE)
    raise InvalidInput(REFUSAL_MESSAGES.get(reason, f"未能记录：{reason}"))


async def supersede(
    engine: CognitionEngine, bot_id: str, old_id: int, new_id: int, now: datetime | None = None
) -> None:
    """Mark ``old_id`` as replaced by ``new_id`` (importers and the harness; same bot only)."""
    async with engine.unit_of_work() as uow:
        rows = await repository.get_rows(uow.session, bot_id, [old_id, new_id])
        if old_id not in rows or new_id not in rows:
            raise NotFound(f"没有找到编号为 {old_id if old_id not in rows else new_id} 的记忆")
        if not await repository.supersede(uow.session, rows[old_id], rows[new_id], aware_or_now(now)):
            raise NotFound(f"记忆 #{old_id} 已不是有效记忆（已被更正或删除）")
        uow.record(IndexWorkQueued(), MemoriesChanged(bot_id))
        await uow.commit()
