"""The pinned memo and the pins of a chat: small documents the bot keeps for itself.

Who may do what is ``domain/permissions.py``: everyone reads and appends to the memo and adds
pins; replacing the memo in a group, and changing or deleting someone else's pin, needs the
author (pins), a group admin, the owner or a bot admin. Every write takes the chat's write lock
first (``UnitOfWork.lock_scope``), so an append never races a replacement and the pin limit
holds across processes. Each replaced memo version is kept (``memo_revisions_keep``) and can be
restored. The consolidation cycle replaces a memo as the operator (``replace_memo_in_chat``), only
while it is still the version its model read (``memo_version``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from ..domain import permissions
from ..domain.admission import admit
from ..domain.clock import as_utc, aware_or_now
from ..domain.events import NotesChanged
from ..domain.permissions import Operator
from ..domain.records import ChatContext, Scope, normalise_text
from ..errors import ConcurrentChange, InvalidInput, LimitExceeded, NotFound, PermissionDenied
from ..logs import log_event
from ..store import notes as store
from ..store.unit_of_work import UnitOfWork
from .caches import notes_key
from .switches import check_writable, refuse_unwritable, switch_state
from .writes import refuse_if_asked_not_to_remember

if TYPE_CHECKING:
    from ..store.models import MemoRevisionRow, PinRow
    from .service import CognitionEngine

PIN_MAX_CHARS = 200


@dataclass(slots=True)
class Pin:
    id: int
    content: str
    updated_at: datetime
    created_by: str = ""


@dataclass(slots=True)
class MemoRevision:
    id: int
    content: str
    written_at: datetime
    written_by: str
    replaced_at: datetime
    replaced_by: str


def _admitted(text: str) -> str:
    verdict = admit(text)
    if not verdict.admit:
        raise InvalidInput(verdict.message)
    return verdict.text  # a secret inside is replaced by [已隐去]


def _pin(row: PinRow) -> Pin:
    return Pin(row.id, row.content, as_utc(row.updated_at), row.created_by)  # type: ignore[arg-type]


def _revision(row: MemoRevisionRow) -> MemoRevision:
    return MemoRevision(
        row.id,
        row.content,
        as_utc(row.written_at),  # type: ignore[arg-type]
        row.written_by,
        as_utc(row.replaced_at),  # type: ignore[arg-type]
        row.replaced_by,
    )


async def read_memo(engine: CognitionEngine, context: ChatContext) -> str:
    return await memo_of(engine, context.bot_id, context.scope)


async def memo_of(engine: CognitionEngine, bot_id: str, scope: Scope) -> str:
    async with engine.unit_of_work() as uow:
        row = await store.get_memo(uow.session, bot_id, scope)
    return row.content if row else ""


@dataclass(frozen=True, slots=True)
class ShortNote:
    """A short-term note of the chat (the ``end`` tool's memo of one turn)."""

    content: str
    at: datetime


@dataclass(frozen=True, slots=True)
class ChatDocuments:
    """What every turn of a chat reads: its memo, its pins and its last short-term notes."""

    memo: str
    pins: tuple[Pin, ...]
    notes: tuple[ShortNote, ...]


def cached_documents(engine: CognitionEngine, context: ChatContext) -> ChatDocuments | None:
    """A chat's memo, pins and notes from the short-lived per-chat cache (None on a miss). This
    process's own writes clear the entry at once (after commit); writes by another process show
    within the cache's lifetime."""
    return engine.caches.notes.get(notes_key(context.bot_id, context.scope))


def cache_documents(engine: CognitionEngine, context: ChatContext, documents: ChatDocuments) -> None:
    engine.caches.notes[notes_key(context.bot_id, context.scope)] = documents


async def _write_memo(
    uow: UnitOfWork, engine: CognitionEngine, bot_id: str, scope: Scope, value: str, by: str, now: datetime
) -> None:
    await store.write_memo(uow.session, bot_id, scope, value, by, now, engine.config.memo_revisions_keep)
    uow.record(NotesChanged(bot_id, scope))
    await uow.commit()


async def update_memo(
    engine: CognitionEngine, context: ChatContext, content: str, now: datetime | None = None, said: Sequence[str] = ()
) -> str:
    """Replace the whole memo. Too long: refused with the current and the maximum length.
    ``said``: the messages the call answers (one that asks not to remember refuses it)."""
    permissions.check_replace_memo(context)
    refuse_if_asked_not_to_remember(said)
    value = normalise_text_block(content)
    await check_writable(engine, context, [value])  # not in a switched-off chat, nor by or about an opted-out user
    limit = engine.config.memo_max_chars
    if len(value) > limit:
        current = len(await read_memo(engine, context))
        raise LimitExceeded(f"备忘录最多 {limit} 字，新内容 {len(value)} 字；当前备忘录 {current} 字，请精简后整体替换")
    _admitted(value)
    async with engine.unit_of_work() as uow:
        await uow.lock_scope(context.bot_id, context.scope)
        await _write_memo(uow, engine, context.bot_id, context.scope, value, context.user_id, aware_or_now(now))
    return value


def memo_version(content: str) -> str:
    """A short fingerprint of a memo's text: the version a reader saw, checked when it replaces it."""
    return hashlib.sha256(content.encode()).hexdigest()[:12]


async def replace_memo_in_chat(
    engine: CognitionEngine,
    actor: Operator,
    bot_id: str,
    scope: Scope,
    content: str,
    expected_version: str,
    now: datetime | None = None,
) -> str:
    """The operator's replacement of a chat's memo (the consolidation cycle moving details into
    memories and leaving a pointer): refused like any memo write (the chat's switch, a text naming
    an opted-out user, admission, the limit), and with ``ConcurrentChange`` unless the memo is
    still the version read (``memo_version``); the replaced version is kept as a revision."""
    value = normalise_text_block(content)
    refuse_unwritable(engine, await switch_state(engine, bot_id), None, scope, (), [value])
    limit = engine.config.memo_max_chars
    if len(value) > limit:
        raise LimitExceeded(f"备忘录最多 {limit} 字，新内容 {len(value)} 字，请精简")
    value = _admitted(value) if value else value
    async with engine.unit_of_work() as uow:
        await uow.lock_scope(bot_id, scope)
        row = await store.get_memo(uow.session, bot_id, scope)
        if memo_version(row.content if row else "") != expected_version:
            raise ConcurrentChange(
                "备忘录在读取后已被修改，请重新读取后再改", en=f"memo of {scope.key} changed meanwhile"
            )
        await _write_memo(uow, engine, bot_id, scope, value, actor.name, aware_or_now(now))
    log_event("memo_replace", scope=scope.key, chars=len(value), by=actor.name)
    return value


async def append_memo(
    engine: CognitionEngine, context: ChatContext, addition: str, now: datetime | None = None, said: Sequence[str] = ()
) -> str:
    value = normalise_text_block(addition)
    if not value:
        raise InvalidInput("追加内容不能为空")
    refuse_if_asked_not_to_remember(said)
    await check_writable(engine, context, [value])
    _admitted(value)
    limit = engine.config.memo_max_chars
    async with engine.unit_of_work() as uow:
        await uow.lock_scope(context.bot_id, context.scope)
        row = await store.get_memo(uow.session, context.bot_id, context.scope)
        current = row.content if row else ""
        combined = f"{current}\n{value}" if current else value
        if len(combined) > limit:
            raise LimitExceeded(
                f"追加后备忘录将有 {len(combined)} 字，超过上限 {limit} 字（当前 {len(current)} 字）；"
                "请用整体替换精简备忘录"
            )
        await _write_memo(uow, engine, context.bot_id, context.scope, combined, context.user_id, aware_or_now(now))
    return combined


async def memo_revisions(engine: CognitionEngine, bot_id: str, scope: Scope) -> list[MemoRevision]:
    """A chat's kept memo versions, newest first."""
    async with engine.unit_of_work() as uow:
        return [_revision(row) for row in await store.memo_revisions(uow.session, bot_id, scope)]


async def restore_memo(
    engine: CognitionEngine, bot_id: str, scope: Scope, revision_id: int, by: str = "cli", now: datetime | None = None
) -> str:
    """Make a kept version the current memo again (the current one becomes a revision, so the
    restore can itself be undone). Bot admins only: the CLI and the Python API."""
    async with engine.unit_of_work() as uow:
        await uow.lock_scope(bot_id, scope)
        revision = await store.memo_revision(uow.session, bot_id, scope, revision_id)
        if revision is None:
            raise NotFound(f"{scope.key} 没有编号为 {revision_id} 的备忘录版本")
        content = revision.content
        await store.write_memo(
            uow.session, bot_id, scope, content, by, aware_or_now(now), max(1, engine.config.memo_revisions_keep)
        )
        uow.record(NotesChanged(bot_id, scope))
        await uow.commit()
    return content


def normalise_text_block(text: str) -> str:
    """A memo keeps its lines; each line is normalised like any stored text."""
    return "\n".join(line for line in (normalise_text(part) for part in text.strip().splitlines()) if line)


def _pin_text(content: str) -> str:
    value = normalise_text(content)
    if not value:
        raise InvalidInput("提醒内容不能为空")
    if len(value) > PIN_MAX_CHARS:
        raise LimitExceeded(f"提醒内容 {len(value)} 字，超过上限 {PIN_MAX_CHARS} 字")
    return _admitted(value)


async def list_pins(engine: CognitionEngine, context: ChatContext) -> list[Pin]:
    async with engine.unit_of_work() as uow:
        rows = await store.list_pins(uow.session, context.bot_id, context.scope)
    return [_pin(row) for row in rows]


async def pins_of(engine: CognitionEngine, bot_id: str, scope: Scope) -> list[Pin]:
    """A chat's pins read by the operator (the owner's page), in order."""
    async with engine.unit_of_work() as uow:
        return [_pin(row) for row in await store.list_pins(uow.session, bot_id, scope)]


async def add_pin(
    engine: CognitionEngine, context: ChatContext, content: str, now: datetime | None = None, said: Sequence[str] = ()
) -> Pin:
    value = _pin_text(content)
    refuse_if_asked_not_to_remember(said)
    await check_writable(engine, context, [value])
    limit = engine.config.pins_max_per_scope
    async with engine.unit_of_work() as uow:
        await uow.lock_scope(context.bot_id, context.scope)
        if await store.count_pins(uow.session, context.bot_id, context.scope) >= limit:
            raise LimitExceeded(f"本会话的提醒已达上限 {limit} 条，请先删除已完成的提醒")
        row = await store.add_pin(uow.session, context.bot_id, context.scope, value, context.user_id, aware_or_now(now))
        uow.record(NotesChanged(context.bot_id, context.scope))
        await uow.commit()
        return _pin(row)


async def _changeable_pin(uow: UnitOfWork, context: ChatContext, pin_id: int) -> PinRow:
    row = await store.get_pin(uow.session, context.bot_id, context.scope, pin_id)
    if row is None:
        raise NotFound(f"没有找到编号为 {pin_id} 的提醒")
    permissions.check_change_pin(context, pin_id, row.created_by)
    return row


async def update_pin(
    engine: CognitionEngine,
    context: ChatContext,
    pin_id: int,
    content: str,
    now: datetime | None = None,
    said: Sequence[str] = (),
) -> Pin:
    value = _pin_text(content)
    refuse_if_asked_not_to_remember(said)
    await check_writable(engine, context, [value])
    async with engine.unit_of_work() as uow:
        await uow.lock_scope(context.bot_id, context.scope)
        row = await _changeable_pin(uow, context, pin_id)
        store.update_pin(row, value, aware_or_now(now))
        uow.record(NotesChanged(context.bot_id, context.scope))
        await uow.commit()
        return _pin(row)


async def delete_pin(engine: CognitionEngine, context: ChatContext, pin_id: int) -> None:
    async with engine.unit_of_work() as uow:
        await uow.lock_scope(context.bot_id, context.scope)
        row = await _changeable_pin(uow, context, pin_id)
        await store.delete_pin(uow.session, row)
        uow.record(NotesChanged(context.bot_id, context.scope))
        await uow.commit()


async def delete_pin_in_chat(engine: CognitionEngine, actor: Operator, bot_id: str, scope: Scope, pin_id: int) -> None:
    """The operator's delete of a pin of one chat (the WebUI's page; the operator may change every pin)."""
    if not isinstance(actor, Operator):
        raise PermissionDenied("无法确认操作者的身份，已拒绝")
    async with engine.unit_of_work() as uow:
        await uow.lock_scope(bot_id, scope)
        row = await store.get_pin(uow.session, bot_id, scope, pin_id)
        if row is None:
            raise NotFound(f"没有找到编号为 {pin_id} 的提醒")
        await store.delete_pin(uow.session, row)
        uow.record(NotesChanged(bot_id, scope))
        await uow.commit()
