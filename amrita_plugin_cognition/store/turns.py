"""Conversation turns and their windows: a turn's neighbours in the same chat (closer than
``TURN_WINDOW_SECONDS``) are its context, in the keyword index (half weight) and in its vector.
A new, changed or removed turn re-indexes its neighbours (no commit here: the caller's unit of
work)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import and_, select
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.clock import as_utc
from ..domain.records import TURN_WINDOW_SECONDS, MemoryKind, MemoryStatus, Scope, strip_speaker
from . import keyword, outbox
from .models import MemoryRow


def scope_clause(bot_id: str, scope: Scope):  # type: ignore[no-untyped-def]
    return and_(MemoryRow.bot_id == bot_id, MemoryRow.scope_kind == scope.kind, MemoryRow.scope_id == scope.id)


def keyword_document(row: MemoryRow, context: str = "") -> keyword.KeywordDocument:
    return keyword.KeywordDocument(
        memory_id=row.id,
        bot_id=row.bot_id,
        scope=Scope(row.scope_kind, row.scope_id),  # type: ignore[arg-type]
        text=row.text,
        people=[row.speaker_id, row.subject_id],
        context=context,
    )


@dataclass(slots=True)
class TurnWindow:
    """A conversation turn with its neighbours in the same chat (closer than the window)."""

    row: MemoryRow
    previous: MemoryRow | None
    following: MemoryRow | None

    @property
    def keyword_context(self) -> str:
        return " ".join(strip_speaker(row.text) for row in (self.previous, self.following) if row is not None)

    @property
    def embedding_text(self) -> str:
        return "\n".join(row.text for row in (self.previous, self.row, self.following) if row is not None)


async def turn_windows(
    session: AsyncSession, bot_id: str, scope: Scope, since: datetime, until: datetime
) -> list[TurnWindow]:
    """Every active turn of a chat that happened in [since, until], with its neighbours."""
    since, until = as_utc(since) or since, as_utc(until) or until
    margin = timedelta(seconds=TURN_WINDOW_SECONDS)
    result = await session.execute(
        select(MemoryRow)
        .where(
            scope_clause(bot_id, scope),
            MemoryRow.status == MemoryStatus.ACTIVE.value,
            MemoryRow.kind == MemoryKind.TURN.value,
            MemoryRow.happened_at >= since - margin,
            MemoryRow.happened_at <= until + margin,
        )
        .order_by(MemoryRow.happened_at, MemoryRow.id)
    )
    turns = list(result.scalars())
    windows = []
    for index, row in enumerate(turns):
        when = as_utc(row.happened_at)
        if when is None or not since <= when <= until:
            continue
        previous = turns[index - 1] if index > 0 else None
        following = turns[index + 1] if index + 1 < len(turns) else None
        windows.append(
            TurnWindow(
                row=row,
                previous=previous if previous is not None and _close(previous, row) else None,
                following=following if following is not None and _close(row, following) else None,
            )
        )
    return windows


def _close(earlier: MemoryRow, later: MemoryRow) -> bool:
    first, second = as_utc(earlier.happened_at), as_utc(later.happened_at)
    return first is not None and second is not None and (second - first).total_seconds() < TURN_WINDOW_SECONDS


async def index_keywords(session: AsyncSession, rows: Sequence[MemoryRow]) -> list[TurnWindow]:
    """Write the keyword rows of active ``rows``: facts as they are, conversation turns with their
    neighbours' words, and those neighbours again with the new turn's words. Returns the turn
    windows written (the neighbours' included: their vectors change too)."""
    await keyword.index_documents(session, [keyword_document(row) for row in rows if row.kind != MemoryKind.TURN.value])
    windows = await _turn_neighbourhood(session, turn_places(rows), {row.id for row in rows})
    await _index_windows(session, windows)
    return windows


async def _index_windows(session: AsyncSession, windows: Sequence[TurnWindow]) -> None:
    """Each turn's keyword row with its neighbours' words as context."""
    await keyword.index_documents(session, [keyword_document(item.row, item.keyword_context) for item in windows])


async def _turn_neighbourhood(
    session: AsyncSession, places: Sequence[TurnPlace], changed_ids: set[int]
) -> list[TurnWindow]:
    """The windows of the turns at ``places`` that are still stored and of the turns next to
    them; for a place whose turn is gone (forgotten, superseded), of the turns on either side
    of the gap, which are now next to each other."""
    margin = timedelta(seconds=TURN_WINDOW_SECONDS)
    grouped: dict[tuple[str, Scope], list[TurnPlace]] = {}
    for place in places:
        grouped.setdefault((place.bot_id, place.scope), []).append(place)
    picked: dict[int, TurnWindow] = {}
    for (bot_id, scope), group in grouped.items():
        times = [as_utc(place.happened_at) or place.happened_at for place in group]
        windows = await turn_windows(session, bot_id, scope, min(times) - margin, max(times) + margin)
        stored = {item.row.id for item in windows}
        for item in windows:
            if {item.row.id, getattr(item.previous, "id", None), getattr(item.following, "id", None)} & changed_ids:
                picked[item.row.id] = item
        for place, when in zip(group, times, strict=True):
            if place.memory_id in stored:
                continue
            before = [item for item in windows if (as_utc(item.row.happened_at) or when) <= when]
            after = [item for item in windows if (as_utc(item.row.happened_at) or when) >= when]
            for item in before[-1:] + after[:1]:
                picked[item.row.id] = item
    return list(picked.values())


@dataclass(frozen=True, slots=True)
class TurnPlace:
    """Where a conversation turn sat (kept before the row is changed or deleted)."""

    memory_id: int
    bot_id: str
    scope: Scope
    happened_at: datetime

    @staticmethod
    def of(row: MemoryRow) -> TurnPlace:
        scope = Scope(row.scope_kind, row.scope_id)  # type: ignore[arg-type]
        return TurnPlace(row.id, row.bot_id, scope, row.happened_at)  # type: ignore[arg-type]


def turn_places(rows: Sequence[MemoryRow]) -> list[TurnPlace]:
    return [TurnPlace.of(row) for row in rows if row.kind == MemoryKind.TURN.value and row.happened_at is not None]


async def refresh_turn_windows(
    session: AsyncSession, places: Sequence[TurnPlace], now: datetime, changed_ids: set[int] | None = None
) -> None:
    """After turns were edited (their ids in ``changed_ids``), replaced or forgotten: the turns
    next to them get their keyword context again and are re-embedded (outbox), so that no window
    keeps the words of a turn that is gone or changed."""
    if not places:
        return
    await session.flush()
    windows = await _turn_neighbourhood(session, places, changed_ids or set())
    await _index_windows(session, windows)
    for item in windows:
        outbox.enqueue(session, item.row, "upsert", now)
