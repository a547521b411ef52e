"""A resolved time mention becomes a fact's event date the same way in the historian and in a
correction (``domain/happened.from_mention``): a day as a day, a month as a month, and a week
(which no precision says) as no date at all, never as its first day."""

from __future__ import annotations

import json
from datetime import date
from zoneinfo import ZoneInfo

import pytest
from engine_helpers import NOW, group, historian_llm, make_engine, new_bot, register_preset
from fake_openai import FakeOpenAI, tool_call
from sqlalchemy import select

from amrita_plugin_cognition.domain.happened import Precision, from_mention
from amrita_plugin_cognition.engine.historian import TOOL_NAME
from amrita_plugin_cognition.engine.turns import InputMessage
from amrita_plugin_cognition.store.models import MemoryRow

PRESET = "cognition-happened-test"
SHANGHAI = ZoneInfo("Asia/Shanghai")
#: Said on Monday 2026-11-30 (NOW, 20:00 in Shanghai): each mention, the date and precision it gives.
MENTIONS = [
    ("明天", date(2026, 12, 1), "day"),
    ("下个月", date(2026, 12, 1), "month"),
    ("下周", None, None),
]


#: The job queue and the transcript are one table each for every bot: empty before and after.
pytestmark = pytest.mark.usefixtures("clean_job_queue")


def _dated(row: MemoryRow) -> tuple[date | None, str | None]:
    when = row.happened_at.astimezone(SHANGHAI).date() if row.happened_at is not None else None
    return when, json.loads(row.source).get("happened")


async def _row(engine, memory_id: int) -> MemoryRow:  # type: ignore[no-untyped-def]
    async with engine.session() as session:
        return (await session.execute(select(MemoryRow).where(MemoryRow.id == memory_id))).scalar_one()


def test_from_mention_keeps_what_was_said_and_no_more() -> None:
    assert from_mention(date(2026, 12, 1), "day", SHANGHAI).precision is Precision.DAY  # type: ignore[union-attr]
    assert from_mention(date(2026, 12, 1), "month", SHANGHAI).precision is Precision.MONTH  # type: ignore[union-attr]
    assert from_mention(date(2027, 1, 1), "year", SHANGHAI).precision is Precision.YEAR  # type: ignore[union-attr]
    assert from_mention(date(2026, 12, 7), "week", SHANGHAI, date(2026, 12, 13)) is None
    assert from_mention(date(2026, 12, 1), "day", SHANGHAI, date(2026, 12, 3)) is None  # several days
    assert from_mention(date(2026, 12, 1), "day", SHANGHAI, date(2026, 12, 1)) is not None


@pytest.mark.parametrize(("said", "day", "precision"), MENTIONS, ids=["day", "month", "week"])
async def test_the_historian_dates_a_fact_at_the_mentions_precision(
    tmp_root, chroma_port, fake_openai: FakeOpenAI, said: str, day: date | None, precision: str | None
) -> None:
    register_preset(PRESET, fake_openai.base_url)
    engine = await make_engine(tmp_root, chroma_port, llm=historian_llm(PRESET), profiles={"merge": False})
    bot = new_bot()
    chat = group(bot, "38731", "10875", "阿杉")
    batch = [InputMessage("h1", "10875", "阿杉", f"我{said}去上海出差", NOW)]
    await engine.turns.end(chat, "", [f"QQ号10875（昵称阿杉）{said}去上海出差"], batch=batch, now=NOW)
    # the model gives no date: the resolver's reading of the source decides
    fact = {"text": "QQ号10875（昵称阿杉）要去上海出差。", "sources": [1], "happened_on": "", "kind": "plan"}
    fake_openai.script.append(tool_call(TOOL_NAME, {"facts": [fact]}))
    await engine.historian.run_until_idle(NOW)
    async with engine.session() as session:
        (row,) = (await session.execute(select(MemoryRow).where(MemoryRow.bot_id == bot))).scalars().all()
    assert _dated(row) == (day, precision)


@pytest.mark.parametrize(("said", "day", "precision"), MENTIONS, ids=["day", "month", "week"])
async def test_a_correction_dates_its_text_at_the_mentions_precision(
    tmp_root, chroma_port, said: str, day: date | None, precision: str | None
) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    chat = group(new_bot(), "38732", "10876", "阿柏")
    old = await engine.memories.write(chat, "user", "QQ号10876（昵称阿柏）要去上海出差。", now=NOW)
    new = await engine.memories.update(chat, old.id, f"QQ号10876（昵称阿柏）{said}去上海出差。", now=NOW)
    assert _dated(await _row(engine, new.id)) == (day, precision)
