"""The per-chat memory switch and the per-user opt-out in SQL (``cognition_chat_switch``,
``cognition_optout``), and the waiting extraction work they call off.

A chat without a switch row is on; a row keeps who switched it last, either way. A user is opted
out of a bot account while their row exists. Every function works in the caller's transaction.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from datetime import datetime

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.people import PersonMatcher
from ..domain.records import Scope
from . import people
from .jobs import PENDING
from .models import ChatSwitchRow, JobRow, OptOutRow, TranscriptRow


async def load(session: AsyncSession, bot_id: str) -> tuple[set[str], set[str]]:
    """A bot account's switched-off chats (scope keys) and opted-out users."""
    chats = await session.execute(
        select(ChatSwitchRow.scope_kind, ChatSwitchRow.scope_id).where(
            ChatSwitchRow.bot_id == bot_id, ChatSwitchRow.memory_on.is_(False)
        )
    )
    users = await session.execute(select(OptOutRow.user_id).where(OptOutRow.bot_id == bot_id))
    return {f"{kind}:{scope_id}" for kind, scope_id in chats.all()}, set(users.scalars())


async def opted_out_matcher(session: AsyncSession, bot_id: str, opted_out: Iterable[str]) -> PersonMatcher:
    """Finds the opted-out users in a text (``domain/people.py``): their QQ numbers in any writing
    and the nicknames they were seen with; the other users' nicknames come from the tables kept
    short (transcript, notes, cards, queued jobs), never from a walk over every fact: this runs on
    the turn's path, and reading every fact's name columns and text took about 250 ms on a SQLite
    bank of 100,000 facts. Someone known only from facts who shares an opted-out nickname is told
    apart by whom a text is by or about (``PersonMatcher.named_in``'s ``beside``)."""
    users = set(opted_out)
    if not users:
        return PersonMatcher({})
    theirs = await people.nicknames(session, bot_id, users, facts=False)
    others = await people.nicknames(session, bot_id, facts=False)
    for user in users:
        others.pop(user, None)
    return PersonMatcher({user: theirs.get(user, set()) for user in users}, others)


async def chat_on(session: AsyncSession, bot_id: str, scope: Scope) -> bool:
    row = await session.get(ChatSwitchRow, (bot_id, scope.kind, scope.id))
    return row is None or row.memory_on


async def set_chat(session: AsyncSession, bot_id: str, scope: Scope, on: bool, by: str, at: datetime) -> bool:
    """Switch a chat's memory on or off; False when it already was (nothing is written then)."""
    row = await session.get(ChatSwitchRow, (bot_id, scope.kind, scope.id))
    if (row is None or row.memory_on) == on:
        return False
    if row is None:
        session.add(
            ChatSwitchRow(
                bot_id=bot_id, scope_kind=scope.kind, scope_id=scope.id, memory_on=on, changed_by=by, changed_at=at
            )
        )
    else:
        row.memory_on, row.changed_by, row.changed_at = on, by, at
    return True


async def opted_out_among(session: AsyncSession, bot_id: str, user_ids: Iterable[str]) -> set[str]:
    """Which of ``user_ids`` opted out of this bot account."""
    wanted = sorted({user_id for user_id in user_ids if user_id})
    if not wanted:
        return set()
    rows = await session.execute(
        select(OptOutRow.user_id).where(OptOutRow.bot_id == bot_id, OptOutRow.user_id.in_(wanted))
    )
    return set(rows.scalars())


async def opt_out(session: AsyncSession, bot_id: str, user_id: str, at: datetime) -> bool:
    """False when the user had already opted out."""
    if await session.get(OptOutRow, (bot_id, user_id)) is not None:
        return False
    session.add(OptOutRow(bot_id=bot_id, user_id=user_id, opted_out_at=at))
    return True


async def opt_in(session: AsyncSession, bot_id: str, user_id: str) -> bool:
    """False when the user had not opted out."""
    result = await session.execute(
        delete(OptOutRow)
        .where(OptOutRow.bot_id == bot_id, OptOutRow.user_id == user_id)
        .execution_options(synchronize_session=False)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


async def drop_waiting_work(session: AsyncSession, bot_id: str, scope: Scope, kinds: Collection[str]) -> int:
    """A chat's queued extraction jobs (of ``kinds``) are deleted and its turns waiting for
    extraction released (they stay in the transcript, never extracted). A job already running is
    left to the historian, which checks the switch again before it writes; card jobs stay (a
    rebuild after a forget must still take the forgotten fact out of a switched-off chat's card).
    Returns the rows touched."""
    in_chat = (JobRow.bot_id == bot_id) & (JobRow.scope_kind == scope.kind) & (JobRow.scope_id == scope.id)
    jobs = await session.execute(
        delete(JobRow)
        .where(in_chat, JobRow.state == PENDING, JobRow.kind.in_(sorted(kinds)))
        .execution_options(synchronize_session=False)
    )
    turns = await session.execute(
        update(TranscriptRow)
        .where(
            TranscriptRow.bot_id == bot_id,
            TranscriptRow.scope_kind == scope.kind,
            TranscriptRow.scope_id == scope.id,
            TranscriptRow.pending.is_(True),
        )
        .values(pending=False)
        .execution_options(synchronize_session=False)
    )
    return int(jobs.rowcount or 0) + int(turns.rowcount or 0)  # type: ignore[attr-defined]


async def release_waiting_turns(session: AsyncSession, bot_id: str, user_id: str) -> int:
    """A user's turns waiting for extraction, in every chat of the bot account, are released
    (they stay in the transcript, never extracted). Returns the rows touched."""
    result = await session.execute(
        update(TranscriptRow)
        .where(TranscriptRow.bot_id == bot_id, TranscriptRow.user_id == user_id, TranscriptRow.pending.is_(True))
        .values(pending=False)
        .execution_options(synchronize_session=False)
    )
    return int(result.rowcount or 0)  # type: ignore[attr-defined]
