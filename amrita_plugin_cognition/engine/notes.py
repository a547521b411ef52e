"""The pinned memo and the pins of a chat: small documents the bot keeps for itself."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime

from ..domain.admission import admit
from ..domain.records import ChatContext, normalise_text
from ..errors import InvalidInput, LimitExceeded, NotFound
from ..store import repository
from .service import CognitionEngine, aware_or_now

PIN_MAX_CHARS = 200
#: How long the hook may serve a chat's memo and pins without asking the database.
NOTES_CACHE_SECONDS = 10.0


@dataclass(slots=True)
class Pin:
    id: int
    content: str
    updated_at: datetime


def _admitted(text: str) -> str:
    verdict = admit(text)
    if not verdict.admit:
        raise InvalidInput(verdict.message)
    return text


async def read_memo(engine: CognitionEngine, context: ChatContext) -> str:
    async with engine.session() as session:
        row = await repository.get_memo(session, context.bot_id, context.scope)
    return row.content if row else ""


def cached_memo_and_pins(engine: CognitionEngine, context: ChatContext) -> tuple[str, list[Pin]] | None:
    """A chat's memo and pins from the short-lived per-chat cache (None on a miss). This
    process's own memo and pin writes clear the entry at once; writes by another process show
    within ``NOTES_CACHE_SECONDS``."""
    cached = engine.notes_cache.get(_notes_key(context))
    if cached is None or cached[0] <= time.monotonic():
        return None
    return cached[1], list(cached[2])


def cache_memo_and_pins(engine: CognitionEngine, context: ChatContext, memo: str, pins: list[Pin]) -> None:
    engine.notes_cache[_notes_key(context)] = (time.monotonic() + NOTES_CACHE_SECONDS, memo, tuple(pins))


def _notes_key(context: ChatContext) -> str:
    return f"{context.bot_id}|{context.scope.key}"


def _changed(engine: CognitionEngine, context: ChatContext) -> None:
    engine.notes_cache.pop(_notes_key(context), None)
    engine.forget_emptiness()


def _pin(row: repository.PinRow) -> Pin:
    return Pin(row.id, row.content, repository.as_utc(row.updated_at))  # type: ignore[arg-type]


async def update_memo(engine: CognitionEngine, context: ChatContext, content: str, now: datetime | None = None) -> str:
    """Replace the whole memo. Too long: refused with the current and the maximum length."""
    value = content.strip()
    limit = engine.config.memo_max_chars
    if len(value) > limit:
        current = len(await read_memo(engine, context))
        raise LimitExceeded(f"备忘录最多 {limit} 字，新内容 {len(value)} 字；当前备忘录 {current} 字，请精简后整体替换")
    _admitted(value)
    async with engine.session() as session:
        await repository.set_memo(session, context.bot_id, context.scope, value, context.user_id, aware_or_now(now))
        await session.commit()
    _changed(engine, context)
    return value


async def append_memo(engine: CognitionEngine, context: ChatContext, addition: str, now: datetime | None = None) -> str:
    value = addition.strip()
    if not value:
        raise InvalidInput("追加内容不能为空")
    _admitted(value)
    limit = engine.config.memo_max_chars
    async with engine.scope_lock(context.bot_id, context.scope), engine.session() as session:
        await repository.lock_scope(session, context.bot_id, context.scope)
        row = await repository.get_memo(session, context.bot_id, context.scope)
        current = row.content if row else ""
        combined = f"{current}\n{value}" if current else value
        if len(combined) > limit:
            raise LimitExceeded(
                f"追加后备忘录将有 {len(combined)} 字，超过上限 {limit} 字（当前 {len(current)} 字）；"
                "请用整体替换精简备忘录"
            )
        await repository.set_memo(session, context.bot_id, context.scope, combined, context.user_id, aware_or_now(now))
        await session.commit()
    _changed(engine, context)
    return combined


def _pin_text(content: str) -> str:
    value = normalise_text(content)
    if not value:
        raise InvalidInput("提醒内容不能为空")
    if len(value) > PIN_MAX_CHARS:
        raise LimitExceeded(f"提醒内容 {len(value)} 字，超过上限 {PIN_MAX_CHARS} 字")
    return _admitted(value)


async def list_pins(engine: CognitionEngine, context: ChatContext) -> list[Pin]:
    async with engine.session() as session:
        rows = await repository.list_pins(session, context.bot_id, context.scope)
    return [_pin(row) for row in rows]


async def add_pin(engine: CognitionEngine, context: ChatContext, content: str, now: datetime | None = None) -> Pin:
    value = _pin_text(content)
    now = aware_or_now(now)
    limit = engine.config.pins_max_per_scope
    async with engine.scope_lock(context.bot_id, context.scope), engine.session() as session:
        await repository.lock_scope(session, context.bot_id, context.scope)
        existing = await repository.list_pins(session, context.bot_id, context.scope)
        if len(existing) >= limit:
            raise LimitExceeded(f"本会话的提醒已达上限 {limit} 条，请先删除已完成的提醒")
        row = repository.PinRow(
            bot_id=context.bot_id,
            scope_kind=context.scope.kind,
            scope_id=context.scope.id,
            content=value,
            created_at=now,
            updated_at=now,
            created_by=context.user_id,
        )
        session.add(row)
        await session.commit()
        _changed(engine, context)
        return Pin(row.id, row.content, now)


async def update_pin(
    engine: CognitionEngine, context: ChatContext, pin_id: int, content: str, now: datetime | None = None
) -> Pin:
    value = _pin_text(content)
    now = aware_or_now(now)
    async with engine.session() as session:
        row = await repository.get_pin(session, context.bot_id, context.scope, pin_id)
        if row is None:
            raise NotFound(f"没有找到编号为 {pin_id} 的提醒")
        row.content = value
        row.updated_at = now
        await session.commit()
        _changed(engine, context)
        return Pin(row.id, row.content, now)


async def delete_pin(engine: CognitionEngine, context: ChatContext, pin_id: int) -> None:
    async with engine.session() as session:
        row = await repository.get_pin(session, context.bot_id, context.scope, pin_id)
        if row is None:
            raise NotFound(f"没有找到编号为 {pin_id} 的提醒")
        await session.delete(row)
        await session.commit()
    _changed(engine, context)
