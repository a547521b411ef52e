"""``/memory dmn`` in the real Amrita chat flow (nonebug): a bot admin (a superuser) runs this
chat's consolidation cycle now and is told what it did, in Chinese (the pre-pass's merges, the
judgement step's end, rounds, tokens, changes and summary); anyone else is refused; the command is
not in the usage text. The bot's periodic cycle check delivers a message a cycle left for a
private chat's user there, once, and never while ``allow_send_to_user`` is off.

The judgement step's agent is the runner of ``test_judgement.py`` over its tiny tools (the real
driver and tools are tested where they live)."""

from __future__ import annotations

import pytest
from chat_helpers import SELF_ID, connect_bot, deliver, group_message, memory_engine
from nonebug import App
from sqlalchemy import select
from test_judgement import Runner, use_tiny_tools

from amrita_plugin_cognition.domain.records import MemoryDraft, Scope
from amrita_plugin_cognition.engine import judgement
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


def _agent(engine, monkeypatch, runner: Runner) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(engine.llm, "run_agent", runner, raising=False)
    monkeypatch.setattr(judgement, "_desk_and_tools", use_tiny_tools)


def _consolidation(engine, monkeypatch, **values) -> None:  # type: ignore[no-untyped-def]
    settings = engine.config.consolidation.model_copy(update=values)
    monkeypatch.setattr(engine, "config", engine.config.model_copy(update={"consolidation": settings}))


async def test_a_bot_admin_runs_the_cycle_now_and_is_told_what_it_did(app: App, fake_openai, monkeypatch) -> None:
    engine = await memory_engine()
    runner = Runner(
        script=[("cycle_context", {}), ("test_change", {"kind": "updated"})], spend=1500, summary="统一了开黑的标签"
    )
    _agent(engine, monkeypatch, runner)
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
        assert "模型判断（新记忆）：模型完成并停止，2 轮，输入 1200 / 输出 300 tokens，工具调用 2 次" in answer
        assert "改动：修改 1" in answer and "总结：统一了开黑的标签" in answer
        assert await _statuses(ids) == ["superseded", "superseded", "active"]
        await deliver(bot, group_message("/memory dmn", GROUP, SUPERUSER, "主人", to_me=False))
        assert "没有完全相同的重复记忆需要合并" in qq.sent[-1]
        assert "没有调用模型：没有需要模型判断的内容" in qq.sent[-1] and len(runner.runs) == 1


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


async def test_the_cycle_check_delivers_a_cycles_message_in_its_private_chat_once(app: App, monkeypatch) -> None:
    from amrita_plugin_cognition.bot.jobs import cycle_check
    from amrita_plugin_cognition.domain.permissions import Operator

    engine = await memory_engine()
    _agent(
        engine, monkeypatch, Runner(script=[("cycle_context", {}), ("test_message", {"text": "周五的开黑别忘了。"})])
    )
    _consolidation(engine, monkeypatch, allow_send_to_user=True)
    user, chat = "10611", Scope("private", "10611")
    await engine.memories.remember(
        BOT, [MemoryDraft(text="QQ号10611（昵称阿丁）每周五晚上开黑。", scope=chat, speaker_id=user)]
    )
    report = await engine.consolidation.run_now(Operator(), BOT, chat)
    assert report.model_step is not None and report.model_step.message_to_user == "周五的开黑别忘了。"
    async with app.test_api() as ctx:
        _bot, qq = await connect_bot(ctx, monkeypatch, BOT)
        _consolidation(engine, monkeypatch, allow_send_to_user=False)  # off when it would go: nothing goes
        await cycle_check(engine)
        assert [call for call in qq.calls if call[0] == "send_private_msg"] == []

        _consolidation(engine, monkeypatch, allow_send_to_user=True)
        await cycle_check(engine)
        sent = [data for api, data in qq.calls if api == "send_private_msg"]
        assert len(sent) == 1 and sent[0]["user_id"] == int(user) and qq.sent[-1] == "周五的开黑别忘了。"
        await cycle_check(engine)  # once
        assert len([call for call in qq.calls if call[0] == "send_private_msg"]) == 1
        assert not [api for api, _ in qq.calls if api in ("send_group_msg", "send_msg")]
