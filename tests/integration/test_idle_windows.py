"""Each chat's activity and its next consolidation window on a real store (SQLite, and PostgreSQL
in server mode): counted in memory, flushed in one unit of work, kept across a restart, reset by a
cycle, kept out for switched-off chats and opted-out users, erased with the chat; and, in the real
Amrita flow, counted for group messages not addressed to the bot."""

from __future__ import annotations

import logging
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from engine_helpers import make_engine, new_bot
from log_capture import CognitionLog, capturing
from sqlalchemy import select

from amrita_plugin_cognition.domain.chat_activity import cell_of
from amrita_plugin_cognition.domain.clock import UTC
from amrita_plugin_cognition.domain.erasure import ErasureTarget
from amrita_plugin_cognition.domain.permissions import Operator
from amrita_plugin_cognition.domain.records import Scope
from amrita_plugin_cognition.store.models import ChatActivityRow

SHANGHAI_START = datetime(2026, 11, 2, 0, 0, tzinfo=UTC) - timedelta(hours=8)  # Monday 00:00 in Shanghai


def office_hours(engine, bot: str, scope: Scope, days: int, start: datetime = SHANGHAI_START) -> int:  # type: ignore[no-untyped-def]
    """Weekday messages 09:00-18:00 (Shanghai), one every 20 minutes; how many were counted."""
    counted = 0
    for minute in range(0, days * 24 * 60, 20):
        moment = start + timedelta(minutes=minute)
        local = moment + timedelta(hours=8)
        if local.weekday() < 5 and 9 <= local.hour < 18:
            counted += engine.idle_windows.observe(bot, scope, "10001", moment)
    return counted


async def stored(engine, bot: str, scope: Scope) -> ChatActivityRow | None:  # type: ignore[no-untyped-def]
    async with engine.session() as session:
        return await session.get(ChatActivityRow, (bot, scope.kind, scope.id))


async def stored_penalty(engine, bot: str, scope: Scope) -> int | None:  # type: ignore[no-untyped-def]
    """The chat's stored messages since the last cycle (None: no row)."""
    row = await stored(engine, bot, scope)
    return None if row is None else row.messages_since_cycle


async def test_counts_are_kept_in_memory_until_a_flush_and_survive_a_restart(tmp_root: Path, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot, scope = new_bot(), Scope("group", "70001")
    counted = office_hours(engine, bot, scope, days=28)
    assert counted > 0
    assert await stored(engine, bot, scope) is None  # nothing written per message
    now = SHANGHAI_START + timedelta(days=28, hours=2 + 8)  # Monday 10:00 in Shanghai (busy)
    window = await engine.idle_windows.plan(bot, scope, now)  # the waiting counts are read too
    assert window.reason == "quiet_run" and window.tier in ("mid", "fine")
    assert await engine.idle_windows.flush(now) == 1
    assert await stored_penalty(engine, bot, scope) == counted
    # a new engine (a restart) plans from the row alone, to the same window
    fresh = await make_engine(tmp_root, chroma_port)
    assert await fresh.idle_windows.plan(bot, scope, now) == window
    local_start = window.start.astimezone(UTC) + timedelta(hours=8)
    assert local_start.hour >= 18 or local_start.hour < 9  # never inside office hours
    state = await fresh.idle_windows.state(bot, scope)
    assert sum(state.fine) == pytest.approx(sum(state.coarse), rel=0.5)
    assert state.fine[cell_of(SHANGHAI_START + timedelta(hours=1), UTC)] == 0  # Monday 01:00 Shanghai: none


async def test_a_changed_zone_reads_the_stored_maps_where_their_moments_fall(tmp_root: Path, chroma_port) -> None:
    shanghai = await make_engine(tmp_root, chroma_port, consolidation={"idle_timezone": "Asia/Shanghai"})
    bot, scope = new_bot(), Scope("group", "70005")
    office_hours(shanghai, bot, scope, days=28)
    now = SHANGHAI_START + timedelta(days=28)
    assert await shanghai.idle_windows.flush(now) == 1
    assert (await stored(shanghai, bot, scope)).zone == "Asia/Shanghai"
    busy = SHANGHAI_START + timedelta(days=21, hours=10)  # a Monday, 10:00 in Shanghai, 02:00 UTC
    quiet = SHANGHAI_START + timedelta(days=21, hours=20)  # the same Monday, 20:00 in Shanghai, 12:00 UTC
    before = await shanghai.idle_windows.state(bot, scope)
    utc = await make_engine(tmp_root, chroma_port, consolidation={"idle_timezone": "UTC"})
    after = await utc.idle_windows.state(bot, scope)
    assert after.zone == "UTC" and sum(after.fine) == pytest.approx(sum(before.fine))
    assert before.fine[cell_of(busy, ZoneInfo("Asia/Shanghai"))] > 0
    assert after.fine[cell_of(busy, UTC)] == pytest.approx(before.fine[cell_of(busy, ZoneInfo("Asia/Shanghai"))])
    assert before.fine[cell_of(quiet, UTC)] > 0 and after.fine[cell_of(quiet, UTC)] == 0  # 12:00 UTC was noon there
    # the next flush writes them moved, in the new zone's name; the plan still avoids office hours
    utc.idle_windows.observe(bot, scope, "10001", now)
    assert await utc.idle_windows.flush(now) == 1
    row = await stored(utc, bot, scope)
    assert row.zone == "UTC"
    window = await utc.idle_windows.plan(bot, scope, now + timedelta(hours=2))
    local_start = window.start.astimezone(UTC) + timedelta(hours=8)
    assert local_start.weekday() >= 5 or local_start.hour >= 18 or local_start.hour < 9


async def test_a_chat_without_history_gets_the_target_hour_in_the_planner_zone(tmp_root: Path, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port, consolidation={"idle_timezone": "Europe/Berlin"})
    window = await engine.idle_windows.plan(new_bot(), Scope("private", "70002"), datetime(2026, 12, 6, 12, tzinfo=UTC))
    assert window.reason == "no_history"
    assert window.start == datetime(2026, 12, 7, 2, tzinfo=UTC)  # 03:00 in Berlin (UTC+1 in December)


async def test_an_unknown_zone_falls_back_to_the_plugin_zone_with_one_warning(tmp_root: Path, chroma_port) -> None:
    unknown = f"Nowhere/{uuid.uuid4().hex[:8]}"
    engine = await make_engine(tmp_root, chroma_port, consolidation={"idle_timezone": unknown})
    bot, scope = new_bot(), Scope("group", "70003")
    with capturing(CognitionLog(logging.WARNING)) as log:
        for _ in range(3):
            window = await engine.idle_windows.plan(bot, scope, datetime(2026, 12, 6, 12, tzinfo=UTC))
            engine.idle_windows.observe(bot, scope, "1", datetime(2026, 12, 6, 12, tzinfo=UTC))
    assert window.start == datetime(2026, 12, 6, 19, tzinfo=UTC)  # 03:00 in Asia/Shanghai, the plugin's zone
    warnings = [record.getMessage() for record in log.records if unknown in record.getMessage()]
    assert len(warnings) == 1 and "using=Asia/Shanghai" in warnings[0]


async def test_a_cycle_resets_the_penalty_and_later_messages_count_again(tmp_root: Path, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot, scope = new_bot(), Scope("group", "70004")
    office_hours(engine, bot, scope, days=7)
    await engine.idle_windows.flush()
    engine.idle_windows.observe(bot, scope, "10001", SHANGHAI_START + timedelta(days=7, hours=2))  # waits in memory
    done_at = SHANGHAI_START + timedelta(days=7, hours=3)
    state = await engine.idle_windows.record_cycle(bot, scope, done_at)
    assert state.messages_since_cycle == 0 and state.last_cycle_at == done_at
    assert sum(state.fine) > 0  # the counts stay: only the penalty starts again
    engine.idle_windows.observe(bot, scope, "10001", SHANGHAI_START + timedelta(days=7, hours=4))
    await engine.idle_windows.flush()
    assert await stored_penalty(engine, bot, scope) == 1


async def test_switched_off_chats_and_opted_out_users_are_not_counted(tmp_root: Path, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    off, on = Scope("group", "70005"), Scope("group", "70006")
    await engine.governance.set_chat_memory(bot, off, False, Operator())
    await engine.governance.set_opt_out(bot, "20002", True, Operator())
    at = datetime(2026, 12, 6, 12, tzinfo=UTC)
    for scope in (off, on):
        engine.idle_windows.observe(bot, scope, "20001", at)
        engine.idle_windows.observe(bot, scope, "20002", at)  # opted out
    assert await engine.idle_windows.flush() == 1
    assert await stored(engine, bot, off) is None
    assert await stored_penalty(engine, bot, on) == 1


async def test_a_delete_all_takes_the_chats_counts_stored_and_waiting(tmp_root: Path, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    private, group = Scope("private", "30003"), Scope("group", "70007")
    at = datetime(2026, 12, 6, 12, tzinfo=UTC)
    for scope in (private, group):
        engine.idle_windows.observe(bot, scope, "30003", at)
    await engine.idle_windows.flush()
    engine.idle_windows.observe(bot, private, "30003", at + timedelta(minutes=1))  # waiting when erased
    await engine.governance.delete_all(ErasureTarget.user(bot, "30003"), Operator())
    await engine.idle_windows.flush()
    assert await stored(engine, bot, private) is None
    assert await stored(engine, bot, group) is not None  # a group's rhythm is no one person's
    await engine.governance.delete_all(ErasureTarget.chat(bot, group), Operator())
    assert await stored(engine, bot, group) is None


async def test_a_flush_that_fails_keeps_its_counts_for_the_next_one(tmp_root: Path, chroma_port, monkeypatch) -> None:
    from amrita_plugin_cognition.engine import idle_windows
    from amrita_plugin_cognition.errors import StoreUnavailable

    engine = await make_engine(tmp_root, chroma_port)
    bots, scope = [new_bot(), new_bot()], Scope("group", "70008")  # two bot accounts: two units of work
    at = datetime(2026, 12, 6, 12, tzinfo=UTC)
    for bot in bots:
        engine.idle_windows.observe(bot, scope, "1", at)
        engine.idle_windows.observe(bot, scope, "2", at)
    real = idle_windows.store.save

    async def unreachable(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise StoreUnavailable("connection refused")

    monkeypatch.setattr(idle_windows.store, "save", unreachable)
    with pytest.raises(StoreUnavailable):
        await engine.idle_windows.flush()
    monkeypatch.setattr(idle_windows.store, "save", real)
    engine.idle_windows.observe(bots[0], scope, "3", at + timedelta(minutes=1))
    assert await engine.idle_windows.flush() == 2
    assert [await stored_penalty(engine, bot, scope) for bot in bots] == [3, 2]


async def test_the_tally_is_bounded(tmp_root: Path, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    engine.activity_tally.max_chats = 3
    bot = new_bot()
    at = datetime(2026, 12, 6, 12, tzinfo=UTC)
    counted = [engine.idle_windows.observe(bot, Scope("group", str(80000 + n)), "1", at) for n in range(5)]
    assert counted == [True, True, True, False, False]
    assert engine.idle_windows.observe(bot, Scope("group", "80000"), "1", at)  # a waiting chat still counts
    assert await engine.idle_windows.flush() == 3
    assert engine.idle_windows.observe(bot, Scope("group", "80004"), "1", at)  # room again after the flush
    async with engine.session() as session:
        rows = (await session.execute(select(ChatActivityRow).where(ChatActivityRow.bot_id == bot))).scalars().all()
    assert sorted(row.messages_since_cycle for row in rows) == [1, 1, 2]


@pytest.mark.chatflow
async def test_group_messages_not_addressed_to_the_bot_are_counted(app, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from chat_helpers import SELF_ID, connect_bot, deliver, group_message, memory_engine

    engine = await memory_engine()
    group_id = 70000 + uuid.uuid4().int % 10_000
    scope = Scope("group", str(group_id))
    async with app.test_api() as ctx:
        bot, _ = await connect_bot(ctx, monkeypatch, str(SELF_ID))
        for text in ("早上好", "今天谁去吃饭", "我去"):
            await deliver(bot, group_message(text, group_id, 10001, to_me=False))
    state = await engine.idle_windows.state(str(SELF_ID), scope)
    assert state.messages_since_cycle == 3 and sum(state.fine) == pytest.approx(3)
