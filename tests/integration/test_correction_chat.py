"""A correction made in chat (``cognition_memory_update``) goes through what a historian fact goes
through: its relative times are anchored at the correction's message time, its event date is the
one it names, the gate judges it, and its source is the correction (the message it answered), not
the old fact's historian job. Driven through the real Amrita chat flow (nonebug)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from chat_helpers import SELF_ID, connect_bot, deliver, group_message, memory_engine, tool_results
from fake_openai import tool_call
from nonebug import App
from sqlalchemy import select

from amrita_plugin_cognition.domain.records import MemoryDraft, Provenance, Scope
from amrita_plugin_cognition.store.models import MemoryRow

pytestmark = pytest.mark.chatflow

BOT = str(SELF_ID)
WEEKDAYS = "一二三四五六日"


async def _historian_fact(group_id: str, text: str) -> int:
    """A fact as the historian writes it: inferred, from job 77, dated a week ago."""
    engine = await memory_engine()
    draft = MemoryDraft(
        text=text, scope=Scope("group", group_id), speaker_id="10001", speaker_name="小明", subject_id="10001",
        provenance=Provenance.INFERRED, happened_at=datetime.now(ZoneInfo("Asia/Shanghai")) - timedelta(days=7),
        source={"via": "historian", "job": 77, "job_kind": "observations", "messages": ["m1"], "sources": [1],
                "absolute": True, "happened": "day"},
    )  # fmt: skip
    result = await engine.memories.remember(BOT, [draft])
    return result.record_ids[0]


async def _row(memory_id: int) -> MemoryRow:
    engine = await memory_engine()
    async with engine.session() as session:
        return (await session.execute(select(MemoryRow).where(MemoryRow.id == memory_id))).scalar_one()


async def test_a_correction_in_chat_is_anchored_gated_and_sourced_as_itself(app: App, fake_openai, monkeypatch) -> None:
    old_id = await _historian_fact("30451", "QQ号10001（昵称小明）在成都吃了火锅。")
    corrected = "QQ号10001（昵称小明）前天在重庆吃了火锅。"
    fake_openai.script.append(tool_call("cognition_memory_update", {"memory_id": old_id, "content": corrected}))
    event = group_message("说错了，我是前天在重庆吃的火锅", 30451, 10001, "小明")
    async with app.test_api() as ctx:
        bot, _ = await connect_bot(ctx, monkeypatch, BOT)
        await deliver(bot, event)
    (result,) = tool_results(fake_openai.chat_requests[-1])
    assert result["ok"] is True and result["supersedes"] == old_id

    engine = await memory_engine()
    said = datetime.fromtimestamp(event.time, ZoneInfo(engine.config.timezone))
    day = said.date() - timedelta(days=2)  # 前天, from the correction's own message time
    row = await _row(result["memory_id"])
    assert row.text == f"QQ号10001（昵称小明）{day.isoformat()}（周{WEEKDAYS[day.weekday()]}）在重庆吃了火锅。"
    assert row.happened_at is not None and row.happened_at.date() == day  # not the old fact's date
    source = json.loads(row.source)
    assert source["via"] == "correction" and "job" not in source  # not the old fact's job
    assert source["messages"] == [str(event.message_id)] and source["supersedes"] == old_id
    assert datetime.fromisoformat(source["said_at"]).timestamp() == event.time
    assert source["absolute"] is True and source["happened"] == "day"
    assert row.provenance == Provenance.USER_STATED.value
    assert (await _row(old_id)).status == "superseded"


async def test_a_correction_the_gate_cannot_pass_is_kept_not_absolute(app: App, fake_openai, monkeypatch) -> None:
    old_id = await _historian_fact("30452", "QQ号10001（昵称小明）养了一只猫。")
    fake_openai.script.append(
        tool_call("cognition_memory_update", {"memory_id": old_id, "content": "他在这里养了两只猫。"})
    )
    async with app.test_api() as ctx:
        bot, _ = await connect_bot(ctx, monkeypatch, BOT)
        await deliver(bot, group_message("不对，是两只", 30452, 10001, "小明"))
    (result,) = tool_results(fake_openai.chat_requests[-1])
    row = await _row(result["memory_id"])
    source = json.loads(row.source)
    assert row.text == "他在这里养了两只猫。" and row.happened_at is None  # names no time: no date, not the old one
    assert source["absolute"] is False and "他" in source["warning"] and "这里" in source["warning"]
