"""``/memory dmn`` in the real Amrita chat flow (nonebug): a bot admin (a superuser) runs this
chat's consolidation cycle now and is told what it did, in Chinese; anyone else is refused; the
command is not in the usage text."""

from __future__ import annotations

import pytest
from chat_helpers import SELF_ID, connect_bot, deliver, group_message, memory_engine
from nonebug import App
from sqlalchemy import select

from amrita_plugin_cognition.domain.records import MemoryDraft, Scope
from amrita_plugin_cognition.store.models import MemoryRow

pytestmark = pytest.mark.chatflow

BOT = str(SELF_ID)
GROUP = 30601
SUPERUSER = 90001
TEXTS = ["群30601每周五晚上八点组织开黑。", "群30601每周五晚上八点组织开黑！", "群30601的群主是阿强。"]


async def _statuses(ids: list[int]) -> list[str]:
    engine = await memory_engine()
    async with engine.session() as session:
        rows = await session.execute(select(MemoryRow.id, MemoryRow.status).where(MemoryRow.id.in_(ids)))
        found = dict(rows.all())
    return [found.get(memory_id, "gone") for memory_id in ids]


async def test_a_bot_admin_runs_the_cycle_now_and_is_told_what_it_did(app: App, fake_openai, monkeypatch) -> None:
    engine = await memory_engine()
    scope = Scope("group", str(GROUP))
    written = await engine.memories.remember(
        BOT, [MemoryDraft(text=text, scope=scope, speaker_id="10601", speaker_name="阿甲") for text in TEXTS]
    )
    ids = [record.id for record in written.written]
    await engine.index.drain()
    async with app.test_api() as ctx:
        bot, qq = await connect_bot(ctx, monkeypatch, BOT)
        await deliver(bot, group_message("/memory", GROUP, 10602, "阿乙", to_me=False))
        assert "dmn" not in qq.sent[-1]  # hidden from the usage text
        await deliver(bot, group_message("/memory dmn", GROUP, 10602, "阿乙", role="admin", to_me=False))
        assert qq.sent[-1] == "只有机器人管理员可以立即整理记忆"
        assert await _statuses(ids) == ["active", "active", "active"]

        await deliver(bot, group_message("/memory dmn", GROUP, SUPERUSER, "主人", to_me=False))
        answer = qq.sent[-1]
        assert "已整理本会话的记忆" in answer and "合并了 1 组完全相同的重复记忆（2 条合为 1 条）" in answer
        assert f"#{ids[0]}、#{ids[1]} → #" in answer and "衰减扫描" in answer
        assert await _statuses(ids) == ["superseded", "superseded", "active"]
        await deliver(bot, group_message("/memory dmn", GROUP, SUPERUSER, "主人", to_me=False))
        assert "没有完全相同的重复记忆需要合并" in qq.sent[-1]


async def test_the_bot_plans_cycles_every_ten_minutes_and_a_message_moves_one(app: App, monkeypatch) -> None:
    from datetime import datetime, timedelta, timezone

    from nonebot_plugin_apscheduler import scheduler

    from amrita_plugin_cognition.bot.jobs import activity_flush, cycle_check
    from amrita_plugin_cognition.store import cycles

    engine = await memory_engine()
    job = scheduler.get_job("cognition_cycle_check")
    assert job is not None and job.trigger.interval == timedelta(minutes=10) and job.args == (engine,)
    scope = Scope("group", "30602")
    await engine.memories.remember(BOT, [MemoryDraft(text="群30602每周六下午踢球。", scope=scope, speaker_id="10601")])
    await cycle_check(engine)
    (cycle,) = [item for item in await engine.jobs.queued() if item.kind == "consolidation" and item.scope == scope.key]
    far = datetime(2099, 1, 1, tzinfo=timezone.utc)  # a due time no plan gives: the flush must re-plan it
    async with engine.unit_of_work() as uow:
        assert await cycles.move_due(uow.session, cycle.id, far, far)
        await uow.commit()
    async with app.test_api() as ctx:
        bot, _ = await connect_bot(ctx, monkeypatch, BOT)
        await deliver(
            bot, group_message("今天谁来踢球", 30602, 10603, "阿丙", to_me=False)
        )  # counted by the preprocessor
    await activity_flush(engine)
    (moved,) = [item for item in await engine.jobs.queued() if item.kind == "consolidation" and item.scope == scope.key]
    assert moved.id == cycle.id and moved.next_attempt_at < far  # the same job moved, never a second one
    assert moved.next_attempt_at == (await engine.consolidation.window(BOT, scope)).start
    activity = await engine.idle_windows.state(BOT, scope)
    assert activity.last_observed_at is not None
    assert moved.next_attempt_at >= activity.last_observed_at + timedelta(
        minutes=engine.config.consolidation.idle_buffer_minutes
    )
