"""``/memory expired | restore | keep | unkeep`` in the real Amrita chat flow (nonebug): a group's
admins list and restore what the decay sweep retired, members may not; a memory's own speaker keeps
it; everything answered in Chinese and nothing reaches the model."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from chat_helpers import SELF_ID, connect_bot, deliver, group_message, memory_engine, private_message
from nonebug import App
from sqlalchemy import select

from amrita_plugin_cognition.domain.clock import UTC
from amrita_plugin_cognition.domain.records import Importance, MemoryDraft, Scope
from amrita_plugin_cognition.store.models import MemoryRow

pytestmark = pytest.mark.chatflow

BOT = str(SELF_ID)
GROUP = 30091


async def _status(memory_id: int) -> tuple[str, bool]:
    engine = await memory_engine()
    async with engine.session() as session:
        row = (await session.execute(select(MemoryRow).where(MemoryRow.id == memory_id))).scalar_one()
    return row.status, row.keep


async def test_admins_list_and_restore_expired_memories_and_the_speaker_keeps_one(
    app: App, fake_openai, monkeypatch
) -> None:
    engine = await memory_engine()
    scope = Scope("group", str(GROUP))
    drafts = [
        MemoryDraft(
            "小陈把雨伞落在了会议室。", scope, speaker_id="10091", speaker_name="小陈", importance=Importance.LOW
        ),
        MemoryDraft("小陈周四请假去看牙。", scope, speaker_id="10091", speaker_name="小陈", importance=Importance.LOW),
    ]
    umbrella, dentist = (await engine.memories.remember(BOT, drafts)).record_ids.values()
    await engine.decay.sweep(now=datetime.now(UTC) + timedelta(days=8))
    assert (await _status(umbrella))[0] == (await _status(dentist))[0] == "expired"

    async with app.test_api() as ctx:
        bot, qq = await connect_bot(ctx, monkeypatch, BOT)
        await deliver(bot, group_message("/memory expired", GROUP, 10092, "小李"))
        assert qq.sent[-1] == "只有群管理员、群主或机器人管理员可以查看和恢复本群过期的记忆"
        await deliver(bot, group_message(f"/memory restore {umbrella}", GROUP, 10092, "小李"))
        assert "只有群管理员" in qq.sent[-1] and (await _status(umbrella))[0] == "expired"

        await deliver(bot, group_message("/memory expired", GROUP, 10093, "群主", role="owner"))
        listing = qq.sent[-1]
        assert listing.startswith("本群已过期的记忆（第 1/1 页，共 2 条")
        assert f"#{umbrella} " in listing and "小陈把雨伞落在了会议室。" in listing and "前可恢复）" in listing
        await deliver(bot, group_message(f"/memory restore {umbrella}", GROUP, 10093, "群主", role="owner"))
        assert qq.sent[-1].startswith(f"已恢复记忆 #{umbrella}")
        assert (await _status(umbrella))[0] == "active"
        await deliver(bot, group_message("/memory group list", GROUP, 10092, "小李"))
        assert f"#{umbrella} " in qq.sent[-1] and f"#{dentist} " not in qq.sent[-1]
        await deliver(bot, group_message(f"/memory restore {umbrella}", GROUP, 10093, "群主", role="owner"))
        assert qq.sent[-1] == f"记忆 #{umbrella} 没有过期，无需恢复"

        await deliver(bot, group_message(f"/memory keep {umbrella}", GROUP, 10092, "小李"))
        assert "只有群管理员、群主、机器人管理员或这条记忆的本人" in qq.sent[-1]
        await deliver(bot, group_message(f"/memory keep {umbrella}", GROUP, 10091, "小陈"))
        assert qq.sent[-1] == f"已设为保留：记忆 #{umbrella} 不会因时间过期"
        assert await _status(umbrella) == ("active", True)
        await deliver(bot, group_message(f"/memory unkeep {umbrella}", GROUP, 10091, "小陈"))
        assert await _status(umbrella) == ("active", False)
        await deliver(bot, group_message("/memory keep 十二", GROUP, 10091, "小陈"))
        assert "记忆编号必须是正整数" in qq.sent[-1]

        await deliver(bot, private_message("/memory expired", 10091, "小陈"))
        assert qq.sent[-1] == "本会话没有过期的记忆"  # the group's are listed in the group
    assert not fake_openai.chat_requests


async def test_the_bot_checks_every_ten_minutes_whether_a_pass_is_due(app: App) -> None:
    from nonebot_plugin_apscheduler import scheduler

    from amrita_plugin_cognition.bot.jobs import decay_sweep

    engine = await memory_engine()
    job = scheduler.get_job("cognition_decay_sweep")
    assert job is not None and job.trigger.interval == timedelta(minutes=10) and job.args == (engine,)
    await engine.decay.sweep()  # a pass just finished: the scheduled check does nothing now
    before = await engine.decay.status()
    await decay_sweep(engine)
    assert await engine.decay.status() == before
