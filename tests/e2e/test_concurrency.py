"""Races the unit of work must win: on one fact (corrections, forgets), and across processes
(per-chat limits, memo appends), on both databases."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from engine_helpers import NOW, group, make_engine, new_bot, private

from amrita_plugin_cognition.domain.records import MemoryStatus, Scope
from amrita_plugin_cognition.errors import ConcurrentChange, InvalidInput, NotFound

HERE = Path(__file__).parents[1]  # the helper scripts beside tests/conftest.py


async def _active_versions(engine, bot: str, scope: Scope) -> list[str]:  # type: ignore[no-untyped-def]
    from sqlalchemy import select

    from amrita_plugin_cognition.store.models import MemoryRow

    async with engine.session() as session:
        rows = await session.execute(
            select(MemoryRow.text).where(
                MemoryRow.bot_id == bot,
                MemoryRow.scope_kind == scope.kind,
                MemoryRow.scope_id == scope.id,
                MemoryRow.status == MemoryStatus.ACTIVE.value,
            )
        )
        return [row[0] for row in rows]


def _lost(error: ConcurrentChange | NotFound) -> bool:
    assert "已被修改" in error.zh or "已被删除" in error.zh, error.zh
    return False


async def _correct(engine, context, memory_id: int, text: str) -> bool:  # type: ignore[no-untyped-def]
    try:
        await engine.memories.update(context, memory_id, text, now=NOW)
    except (ConcurrentChange, NotFound) as error:
        return _lost(error)
    return True


async def _forget(engine, context, memory_id: int) -> bool:  # type: ignore[no-untyped-def]
    try:
        await engine.governance.forget(context, memory_id, now=NOW)
    except (ConcurrentChange, NotFound) as error:
        return _lost(error)
    return True


async def test_two_corrections_of_one_fact_leave_one_successor(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    for trial in range(10):
        bot = new_bot()
        context = group(bot, "20001", "10001")
        record = await engine.memories.write(context, "group", f"群20001的聚餐定在第{trial}个周五。", now=NOW)
        outcomes = await asyncio.gather(
            _correct(engine, context, record.id, "聚餐改到周六。"),
            _correct(engine, context, record.id, "聚餐改到周日。"),
        )
        assert sorted(outcomes) == [False, True]
        assert len(await _active_versions(engine, bot, context.scope)) == 1


async def test_a_correction_racing_a_forget_never_leaves_a_forgotten_fact_active(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    for trial in range(30):
        bot = new_bot()
        context = group(bot, "20001", "10001")
        record = await engine.memories.write(context, "group", f"群友小明第{trial}次说他住在海淀。", now=NOW)
        moved = f"群友小明第{trial}次说他搬到了朝阳。"
        corrected, forgotten = await asyncio.gather(
            _correct(engine, context, record.id, moved), _forget(engine, context, record.id)
        )
        assert corrected != forgotten, "exactly one of them wins"
        active = await _active_versions(engine, bot, context.scope)
        assert active == ([] if forgotten else [moved])


async def test_forgetting_a_corrected_fact_removes_its_whole_lineage_and_restore_honours_it(
    tmp_root, chroma_port
) -> None:
    from amrita_plugin_cognition.engine import backup
    from amrita_plugin_cognition.store import repository

    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    context = private(bot, "10001")
    first = await engine.memories.write(context, "user", "QQ号10001（昵称小明）的生日是3月1日。", now=NOW)
    info = await backup.create_backup(engine)  # made before the correction
    second = await engine.memories.update(context, first.id, "QQ号10001（昵称小明）的生日是3月2日。", now=NOW)
    third = await engine.memories.update(context, second.id, "QQ号10001（昵称小明）的生日是3月3日。", now=NOW)
    await engine.governance.forget(context, third.id, now=NOW)
    async with engine.session() as session:
        assert await repository.get_rows(session, bot, [first.id, second.id, third.id]) == {}
        for memory_id in (first.id, second.id, third.id):
            assert await repository.barrier_for(session, memory_id)
    await backup.restore_backup(engine, info.path)
    assert await _active_versions(engine, bot, context.scope) == []
    assert (await engine.memories.recall(context, ["小明的生日"], now=NOW)).hits == []


async def test_text_typed_in_a_private_chat_never_corrects_a_group_fact(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    in_group = group(bot, "20001", "10001")
    fact = await engine.memories.write(in_group, "user", "群友小明喜欢吃辣。", now=NOW)
    try:
        await engine.memories.update(private(bot, "10001"), fact.id, "小明的私事：他欠了一大笔钱。", now=NOW)
    except InvalidInput as error:
        assert "私聊" in error.zh and "群" in error.zh
    else:
        raise AssertionError("a private chat corrected a group fact")
    assert await _active_versions(engine, bot, in_group.scope) == ["群友小明喜欢吃辣。"]
    # forgetting one's own group fact from the private chat is allowed: it reveals nothing
    await engine.governance.forget(private(bot, "10001"), fact.id, now=NOW)
    assert await _active_versions(engine, bot, in_group.scope) == []


async def test_limits_and_memo_appends_hold_across_two_processes(tmp_root, chroma_port) -> None:
    from booting import STATE

    from amrita_plugin_cognition.engine import notes

    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    workers = [
        subprocess.Popen(
            [sys.executable, str(HERE / "process_writer.py"), str(STATE["database_url"]),
             str(tmp_root / f"writer-{bot}-{tag}"), bot, tag, "14"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for tag in ("1", "2")
    ]  # fmt: skip
    reports = []
    for worker in workers:
        out, err = await asyncio.to_thread(worker.communicate, timeout=300)
        assert worker.returncode == 0, err[-2000:]
        reports.append(json.loads(out.strip().splitlines()[-1]))
    context = group(bot, "20001", "10001")
    assert sum(report["memories"] for report in reports) == 10
    assert len(await _active_versions(engine, bot, context.scope)) == 10
    assert sum(report["pins"] for report in reports) == 5
    assert len(await notes.list_pins(engine, context)) == 5
    memo = (await notes.read_memo(engine, context)).splitlines()
    acknowledged = [line for report in reports for line in report["appended"]]
    assert sorted(memo) == sorted(acknowledged)
