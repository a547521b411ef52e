"""The outbox's lease: a drain takes its rows for ``outbox_lease_seconds``, so a drain in another
process passes them by; what it cannot finish it gives back; the rows of a drain that died are due
again when the lease ends, no attempt counted. (The outbox is one table for every bot of the test
process: each test looks at its own bot's rows only.)"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

from engine_helpers import make_engine, new_bot
from sqlalchemy import select

from amrita_plugin_cognition.domain.clock import UTC
from amrita_plugin_cognition.domain.records import MemoryDraft, Scope
from amrita_plugin_cognition.store import outbox
from amrita_plugin_cognition.store.models import MemoryRow, OutboxRow

LEASE = 300.0


async def _rows_to_index(engine, bot: str, count: int) -> set[int]:  # type: ignore[no-untyped-def]
    """``count`` stored facts of ``bot``, each with index work waiting (as after a write whose
    drain has not run): the ids of those outbox rows."""
    drafts = [
        MemoryDraft(text=f"小明第{n}次说起羽毛球。", scope=Scope("group", "20001"), speaker_id="10001")
        for n in range(count)
    ]
    await engine.memories.remember(bot, drafts, now=datetime.now(UTC))
    await engine.settle()
    now = datetime.now(UTC)
    async with engine.unit_of_work() as uow:
        for row in (await uow.session.execute(select(MemoryRow).where(MemoryRow.bot_id == bot))).scalars():
            outbox.enqueue(uow.session, row, "upsert", now)
        await uow.commit()
    return await _waiting(engine, bot)


async def _waiting(engine, bot: str) -> set[int]:  # type: ignore[no-untyped-def]
    async with engine.session() as session:
        return set((await session.execute(select(OutboxRow.id).where(OutboxRow.bot_id == bot))).scalars())


async def _claim(engine, bot: str, now: datetime) -> set[int]:  # type: ignore[no-untyped-def]
    async with engine.unit_of_work() as uow:
        claimed = await outbox.claim(uow.session, now, 10_000, LEASE)
        await uow.commit()
    return {row.id for row in claimed if row.bot_id == bot}


async def test_a_claimed_row_is_nobody_elses_until_given_back_or_its_lease_ends(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    rows = await _rows_to_index(engine, bot, 6)
    now = datetime.now(UTC)

    # two drains at once (two connections): each row goes to one of them
    first, second = await asyncio.gather(_claim(engine, bot, now), _claim(engine, bot, now))
    assert first | second == rows and not first & second
    assert await _claim(engine, bot, now + timedelta(seconds=LEASE - 1)) == set()

    # the drains died: when the lease ends the rows are due again, no attempt counted
    again = await _claim(engine, bot, now + timedelta(seconds=LEASE + 1))
    assert again == rows
    async with engine.unit_of_work() as uow:
        held = list((await uow.session.execute(select(OutboxRow).where(OutboxRow.id.in_(again)))).scalars())
        assert {row.attempts for row in held} == {0}
        # given back unfinished: due at once
        await outbox.release(uow.session, held[:2])
        await uow.commit()
    assert await _claim(engine, bot, now + timedelta(seconds=LEASE + 2)) == {row.id for row in held[:2]}


async def test_a_drain_passes_by_rows_another_drain_holds_and_applies_them_after_its_lease(
    tmp_root, chroma_port
) -> None:
    engine = await make_engine(tmp_root, chroma_port, outbox_lease_seconds=LEASE)
    bot = new_bot()
    rows = await _rows_to_index(engine, bot, 3)
    now = datetime.now(UTC)
    assert await _claim(engine, bot, now) == rows  # another process's drain, which then died

    await engine.index.drain(now=now + timedelta(seconds=1))
    assert await _waiting(engine, bot) == rows  # held: not applied twice
    await engine.index.drain(now=now + timedelta(seconds=LEASE + 1))
    assert await _waiting(engine, bot) == set()  # its lease ended: applied, and done
