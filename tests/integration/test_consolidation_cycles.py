"""Consolidation cycles as jobs of the SQL queue on a real engine: one per chat with new memories,
due at the chat's idle window, moved by a message (never a second job), run by the queue's
workers, yielding to a message mid-cycle and resuming at the next window.

Runs on SQLite + embedded Chroma by default and on PostgreSQL + a Chroma server with
COGNITION_TEST_BACKEND=server.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from engine_helpers import NOW, make_engine, new_bot
from sqlalchemy import select

from amrita_plugin_cognition.domain.job_kinds import CONSOLIDATION_JOB
from amrita_plugin_cognition.domain.records import MemoryDraft, MemoryStatus, Scope
from amrita_plugin_cognition.store.models import MemoryRow

CHAT, SMALL = Scope("group", "20001"), Scope("group", "20002")
U = "10001"
PAIRS = [
    ("QQ号10002（昵称小红）于2026-11-20领养了一只橘猫。", "QQ号10002（昵称小红）于2026-11-20领养了一只橘猫！"),
    ("QQ号10004（昵称老王）每天早上六点起床跑步。", "QQ号10004（昵称老王）每天早上六点起床跑步！"),
    ("QQ号10006（昵称小美）于2026-11-22开始学做广式早茶。", "QQ号10006（昵称小美）于2026-11-22开始学做广式早茶！"),
]


#: The cycles as jobs, with the pre-pass only: the judgement step is off (test_judgement.py tests it).
PREPASS_ONLY = {"daily_token_budget": 0}


@pytest.fixture
async def engine(tmp_root, chroma_port):  # type: ignore[no-untyped-def]
    return await make_engine(tmp_root, chroma_port, consolidation=PREPASS_ONLY)


async def _write(engine, bot: str, scope: Scope, *texts: str) -> None:  # type: ignore[no-untyped-def]
    drafts = [MemoryDraft(text=text, scope=scope, speaker_id=U, speaker_name="小明") for text in texts]
    result = await engine.memories.remember(bot, drafts, now=NOW - timedelta(days=1))
    assert len(result.written) == len(texts), result.refused
    await engine.index.drain()


async def _cycles(engine, bot: str):  # type: ignore[no-untyped-def]
    return [job for job in await engine.jobs.queued() if job.bot_id == bot and job.kind == CONSOLIDATION_JOB]


async def _active(engine, bot: str) -> int:  # type: ignore[no-untyped-def]
    async with engine.session() as session:
        rows = await session.execute(
            select(MemoryRow.id).where(MemoryRow.bot_id == bot, MemoryRow.status == MemoryStatus.ACTIVE.value)
        )
        return len(rows.all())


async def test_one_cycle_per_chat_at_its_window_cheapest_first_and_a_message_moves_it(tmp_root, chroma_port) -> None:  # type: ignore[no-untyped-def]
    # the back-off planner: each message since the last cycle lengthens the wait (with the heat
    # maps and no history the window is the fixed 03:00 one, which a message does not move)
    engine = await make_engine(tmp_root, chroma_port, consolidation={**PREPASS_ONLY, "use_idle_window_planner": False})
    bot = new_bot()
    await _write(engine, bot, CHAT, *(text for pair in PAIRS for text in pair))
    await _write(engine, bot, SMALL, *PAIRS[0])
    assert await engine.consolidation.refresh(now=NOW) >= 2
    cycles = await _cycles(engine, bot)
    assert [job.scope for job in cycles] == [SMALL.key, CHAT.key]  # the smaller chat first
    window = await engine.idle_windows.plan(bot, CHAT, NOW)
    assert cycles[1].next_attempt_at == window.start and cycles[1].state == "pending"
    await engine.consolidation.refresh(now=NOW)  # planned again: still one job per chat
    assert len(await _cycles(engine, bot)) == 2

    # messages before the window: the waiting job moves later, no second job
    talk = window.start - timedelta(minutes=5)
    for _ in range(5):
        engine.idle_windows.observe(bot, CHAT, U, talk)
    await engine.consolidation.flush_and_refresh(now=talk)
    moved = {job.scope: job for job in await _cycles(engine, bot)}
    assert len(moved) == 2 and len(await _cycles(engine, bot)) == 2
    assert moved[CHAT.key].id == cycles[1].id
    assert moved[CHAT.key].next_attempt_at >= (await engine.idle_windows.plan(bot, CHAT, talk)).start
    assert moved[CHAT.key].next_attempt_at > window.start
    assert moved[SMALL.key].next_attempt_at == cycles[0].next_attempt_at  # the quiet chat kept its window


async def test_a_cycle_yields_to_a_message_and_resumes_at_the_next_window(engine) -> None:  # type: ignore[no-untyped-def]
    bot = new_bot()
    await _write(engine, bot, CHAT, *(text for pair in PAIRS for text in pair))
    await engine.consolidation.refresh(now=NOW)
    (job,) = await _cycles(engine, bot)
    due = job.next_attempt_at
    # someone talks a minute into the window: the run merges one cluster, then yields
    engine.idle_windows.observe(bot, CHAT, U, due + timedelta(minutes=1))
    await engine.jobs.run_until_idle(now=due, flush=False)
    assert await _active(engine, bot) == 5  # one pair merged, committed
    (again,) = await _cycles(engine, bot)
    assert again.id != job.id and again.state == "pending"
    assert again.payload == {"runs": 1, "merged": 1}
    assert again.next_attempt_at >= due + timedelta(minutes=16)
    await engine.jobs.run_until_idle(now=due, flush=False)  # not due yet: nothing runs
    assert await _active(engine, bot) == 5

    # at its next window the rest is merged, the cycle recorded, no job left
    await engine.jobs.run_until_idle(now=again.next_attempt_at, flush=False)
    assert await _active(engine, bot) == 3
    assert await _cycles(engine, bot) == []
    activity = await engine.idle_windows.state(bot, CHAT)
    assert activity.last_cycle_at is not None and activity.messages_since_cycle == 0
    # recorded as of the run's end (what it wrote is not new for the next cycle)
    assert again.next_attempt_at <= activity.last_cycle_at < again.next_attempt_at + timedelta(minutes=1)
    await engine.consolidation.refresh(now=again.next_attempt_at)  # nothing new since: no cycle
    assert await _cycles(engine, bot) == []
    summary = await engine.consolidation.summary()
    assert summary.merged >= 3 and summary.merged_sources >= 6


async def test_cycles_switched_off_plan_and_run_nothing(tmp_root, chroma_port) -> None:  # type: ignore[no-untyped-def]
    engine = await make_engine(tmp_root, chroma_port, consolidation={**PREPASS_ONLY, "cycle": False})
    bot = new_bot()
    await _write(engine, bot, CHAT, *PAIRS[0])
    assert await engine.consolidation.refresh(now=NOW) == 0
    assert await _cycles(engine, bot) == []
    engine.idle_windows.observe(bot, CHAT, U, NOW)
    await engine.consolidation.flush_and_refresh(now=NOW)
    assert await _cycles(engine, bot) == []
    assert await _active(engine, bot) == 2


async def test_a_waiting_cycle_survives_a_forget_and_a_users_delete_all_in_its_chat(engine) -> None:  # type: ignore[no-untyped-def]
    from engine_helpers import group

    from amrita_plugin_cognition.domain.erasure import ErasureTarget
    from amrita_plugin_cognition.domain.permissions import Operator

    bot = new_bot()
    await _write(engine, bot, CHAT, *PAIRS[0], *PAIRS[1])
    await engine.consolidation.refresh(now=NOW)
    (job,) = await _cycles(engine, bot)
    async with engine.session() as session:
        first = (await session.execute(select(MemoryRow.id).where(MemoryRow.bot_id == bot).limit(1))).scalar_one()
    await engine.governance.forget(group(bot, CHAT.id, U), first, now=NOW)
    await engine.governance.delete_all(ErasureTarget.user(bot, "10002"), Operator(), now=NOW)  # names 10002: a pair
    (after,) = await _cycles(engine, bot)
    assert (after.id, after.payload, after.next_attempt_at) == (job.id, job.payload, job.next_attempt_at)
    # the chat's own delete-all takes its cycle with everything else
    await engine.governance.delete_all(ErasureTarget.chat(bot, CHAT), Operator(), now=NOW)
    assert await _cycles(engine, bot) == []
