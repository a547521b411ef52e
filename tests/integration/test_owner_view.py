"""A new bot owner's view (issue 20, item 16): what ``status`` says before ``ambot orm upgrade``,
times in the bot's zone and at the precision they were said with (a month stays a month: in the
CLI, the chat commands, the injected block and the tools), tables that keep every column at 80
columns, LLM counters that are the bot's and not the command's own, and no warning line that
repeats what the report says."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from chat_helpers import connect_bot, deliver, group_message, memory_engine, system_text
from engine_helpers import (
    NOW,
    chroma_settings,
    empty_job_queue,
    group,
    historian_llm,
    make_engine,
    new_bot,
    register_preset,
    shared_local_embedder,
)
from fake_openai import FakeOpenAI, tool_call
from nonebug import App
from rich.console import Console

from amrita_plugin_cognition.cli import render, render_governance
from amrita_plugin_cognition.config import CognitionConfig
from amrita_plugin_cognition.domain.records import MemoryDraft, Scope
from amrita_plugin_cognition.engine.factory import build_engine
from amrita_plugin_cognition.errors import LLMUnavailable

SHANGHAI = ZoneInfo("Asia/Shanghai")
#: Said as a month (``2027-01``) and as a day: stored at noon, Shanghai time, of their first day.
MONTH = datetime(2027, 1, 1, 12, tzinfo=SHANGHAI)
DAY = datetime(2026, 11, 30, 12, tzinfo=SHANGHAI)  # 04:00 UTC


# ------------------------------------------------------------------------ before `ambot orm upgrade`


async def _empty_database(tmp_path: Path, backend: str) -> tuple[str, dict[str, Any], Any]:
    """A database without the plugin's tables: an SQLite file, or a fresh PostgreSQL schema."""
    if backend != "server":
        return f"sqlite+aiosqlite:///{tmp_path / 'empty.sqlite3'}", {}, None
    from booting import STATE
    from sqlalchemy import text
    from sqlalchemy.ext.asyncio import create_async_engine

    schema = f"empty_{uuid.uuid4().hex[:8]}"
    url = str(STATE["database_url"])
    admin = create_async_engine(url)
    async with admin.begin() as connection:
        await connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    return url, {"server_settings": {"search_path": schema}}, (admin, schema)


@pytest.mark.parametrize("lacking", ["tables", "a column"])
async def test_before_orm_upgrade_the_engine_names_what_is_missing_and_the_command(
    tmp_path: Path, backend: str, chroma_port: int | None, lacking: str
) -> None:
    from sqlalchemy import text
    from sqlalchemy.ext.asyncio import async_sessionmaker, create_async_engine

    from amrita_plugin_cognition.cli import failures
    from amrita_plugin_cognition.errors import EngineUnavailable
    from amrita_plugin_cognition.store.models import MemoryRow

    url, connect_args, cleanup = await _empty_database(tmp_path, backend)
    database = create_async_engine(url, connect_args=connect_args)
    try:
        if lacking == "a column":  # the plugin upgraded, `ambot orm upgrade` not run again
            async with database.begin() as connection:
                await connection.run_sync(lambda sync: MemoryRow.metadata.create_all(sync))
                await connection.execute(text("ALTER TABLE cognition_memory DROP COLUMN invalid_at"))
        config = CognitionConfig.model_validate({"chroma": chroma_settings(chroma_port)})
        factory = async_sessionmaker(database, expire_on_commit=False)
        engine = build_engine(config, tmp_path / "data", factory, embedder=shared_local_embedder())
        with pytest.raises(Exception) as refused:
            await engine.start()
        said = getattr(refused.value, "zh", str(refused.value))
        assert "ambot orm upgrade" in said, said
        assert ("cognition_memory" in said) and (("invalid_at" in said) == (lacking == "a column")), said
        assert ("还没有建立" in said) == (lacking == "tables") and ("不是最新版本" in said) == (lacking == "a column")
        # what `ambot cognition status` and a chat's /memory say of it: the same reason
        line = failures.translate(EngineUnavailable(said)).message
        assert line == f"记忆功能暂不可用：{said}" and "OperationalError" not in line
    finally:
        await database.dispose()
        if cleanup is not None:
            admin, schema = cleanup
            async with admin.begin() as connection:
                await connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
            await admin.dispose()


# ------------------------------------------------------------------------ times: zone and precision


def test_a_stated_date_keeps_its_precision() -> None:
    from amrita_plugin_cognition.domain.happened import Precision, label, when_happened

    said = datetime(2026, 11, 30, 20, tzinfo=SHANGHAI)
    month = when_happened("2027-01", [], SHANGHAI)
    assert month is not None and (month.at, month.precision) == (MONTH, Precision.MONTH)
    resolved = when_happened("", [("小明明年一月要去日本旅行", said)], SHANGHAI)  # the resolver's month
    assert resolved is not None and (resolved.at, resolved.precision) == (MONTH, Precision.MONTH)
    day = when_happened("2026-11-30", [], SHANGHAI)
    assert day is not None and day.precision is Precision.DAY
    year = when_happened("2027", [], SHANGHAI)
    assert year is not None and year.precision is Precision.YEAR
    assert label(MONTH, Precision.MONTH, ZoneInfo("UTC")) == "2027-01"  # never a day of it, in any zone
    assert label(DAY, Precision.DAY, SHANGHAI) == "2026-11-30"  # never 04:00:00
    assert label(DAY, None, SHANGHAI) == "2026-11-30 12:00"


PRESET = "cognition-owner-view-test"


async def test_the_historian_keeps_a_month_said_as_a_month(tmp_root, chroma_port, fake_openai: FakeOpenAI) -> None:
    import json as json_module

    from sqlalchemy import select

    from amrita_plugin_cognition.engine.historian import TOOL_NAME
    from amrita_plugin_cognition.engine.turns import InputMessage
    from amrita_plugin_cognition.store.models import MemoryRow

    register_preset(PRESET, fake_openai.base_url)
    await empty_job_queue()  # one queue for every bot: no other test's job takes this model answer
    engine = await make_engine(tmp_root, chroma_port, llm=historian_llm(PRESET), profiles={"merge": False})
    bot = new_bot()
    chat = group(bot, "30401", "10001", "小明")
    said = "我明年一月要去日本旅行，后年去冰岛"
    batch = [InputMessage("m1", chat.user_id, chat.user_name, said, NOW)]
    await engine.turns.end(chat, "", ["QQ号10001（昵称小明）明年一月要去日本旅行"], batch=batch, now=NOW)
    fake_openai.script.append(
        tool_call(
            TOOL_NAME,
            {
                "facts": [
                    {
                        "text": "QQ号10001（昵称小明）计划于2027年1月去日本旅行。",
                        "sources": [1],
                        "happened_on": "2027-01",
                        "kind": "plan",
                    }
                ]
            },
        )
    )
    await engine.historian.run_until_idle(NOW)
    await empty_job_queue()
    async with engine.session() as session:
        row = (await session.execute(select(MemoryRow).where(MemoryRow.bot_id == bot))).scalar_one()
    assert json_module.loads(row.source)["happened"] == "month"
    assert row.happened_at is not None and row.happened_at.astimezone(SHANGHAI) == MONTH


async def _seed_dated(engine: Any, bot: str, scope: Scope) -> tuple[int, int]:
    drafts = [
        MemoryDraft(
            text="暗号壬：小明计划于2027年1月去日本旅行。",
            scope=scope,
            speaker_id="10001",
            speaker_name="小明",
            happened_at=MONTH,
            source={"happened": "month"},
        ),
        MemoryDraft(
            text="暗号癸：小明于2026年11月30日体检。",
            scope=scope,
            speaker_id="10001",
            speaker_name="小明",
            happened_at=DAY,
            source={"happened": "day"},
        ),
    ]
    result = await engine.memories.remember(bot, drafts, now=NOW)
    await engine.index.drain()
    return result.record_ids[0], result.record_ids[1]


@pytest.mark.chatflow
async def test_a_month_is_a_month_in_the_chat_list_the_block_and_the_tools(app: App, fake_openai, monkeypatch) -> None:
    group_id = 30402
    engine = await memory_engine()
    month_id, day_id = await _seed_dated(engine, "42", Scope("group", str(group_id)))
    async with app.test_api() as ctx:
        bot, qq = await connect_bot(ctx, monkeypatch, "42")
        await deliver(bot, group_message("/memory group list", group_id, 10003, "路人", to_me=False))
        listed = qq.sent[-1]
        assert f"#{month_id} [2027-01] 暗号壬" in listed and f"#{day_id} [" in listed, listed
        assert "01-01" not in listed
        fake_openai.reset()
        fake_openai.script.append(tool_call("cognition_memory_read", {"query": "暗号", "scope": "group"}, "call_r"))
        await deliver(bot, group_message("暗号都有哪些", group_id, 10003, "路人"))
    block = system_text(fake_openai.chat_requests[0])
    month_line = next(line for line in block.splitlines() if "暗号壬" in line)
    day_line = next(line for line in block.splitlines() if "暗号癸" in line)
    assert f"[记忆#{month_id}] 2027-01 小明：" in month_line, month_line
    assert f"[记忆#{day_id}] 2026-11-30 小明：" in day_line, day_line
    read = json.loads([m["content"] for m in fake_openai.chat_requests[-1]["messages"] if m["role"] == "tool"][-1])
    times = {memory["memory_id"]: memory["time"] for memory in read["memories"]}
    assert times[month_id] == "2027-01" and times[day_id] == "2026-11-30"


def _printed(show: Any, *arguments: Any, width: int = 80) -> str:
    """What a renderer prints on a terminal ``width`` columns wide."""
    buffer = io.StringIO()
    original = render.console
    narrow = lambda: Console(file=buffer, width=width, highlight=False, soft_wrap=True)  # noqa: E731
    render.console = narrow  # type: ignore[assignment]
    render_governance.console = narrow  # type: ignore[assignment]
    try:
        show(*arguments)
    finally:
        render.console = original  # type: ignore[assignment]
        render_governance.console = original  # type: ignore[assignment]
    return buffer.getvalue()


async def test_inspect_shows_the_bot_s_zone_and_each_date_at_its_precision_at_80_columns(tmp_root, chroma_port) -> None:
    from amrita_plugin_cognition.engine import inspection

    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    month_id, day_id = await _seed_dated(engine, bot, Scope("group", "30403"))
    items, total = await inspection.inspect(engine, inspection.InspectFilter(bot_id=bot), 0, 20)
    report = {"page": 1, "per_page": 20, "total": total, "memories": [inspection.memory_document(i) for i in items]}
    by_id = {memory["id"]: memory for memory in report["memories"]}
    assert by_id[month_id]["happened_precision"] == "month" and by_id[day_id]["happened_precision"] == "day"
    render.use_timezone(engine.config.timezone)  # what every command does once it read the configuration
    try:
        out = _printed(render_governance.inspected, report)
    finally:
        render._ZONE.clear()
    assert "2027-01" in out and "2027-01-01" not in out
    assert "2026-11-30" in out and "04:00" not in out and "12:00:00" not in out
    assert "2026-11-30 20:00" in out  # recorded at 12:00 UTC, shown in the bot's zone
    assert "Asia/Shanghai（UTC+08:00）" in out
    for header in ("编号", "状态", "会话", "内容", "类型/来源方式", "说话人", "发生", "记录", "来源", "更正链"):
        assert header in out, header
    for memory in report["memories"]:
        assert f"#{memory['id']}" in out and memory["text"] in out.replace("\n", "").replace(" ", "")
    assert max(len(line) for line in out.splitlines()) <= 80


def test_jobs_list_keeps_every_column_at_80_columns() -> None:
    job = {
        "id": 98765,
        "state": "dead",
        "kind": "observations",
        "bot_id": "1234567890",
        "scope": "group:1234567890",
        "enqueued_at": "2026-11-30T12:34:56+00:00",
        "attempts": 3,
        "last_error": "llm unavailable: historian_rewrite failed after 3 attempt(s) on preset 'x': timeout",
    }
    render.use_timezone("Asia/Shanghai")
    try:
        out = _printed(render.jobs_list, [job, {**job, "id": 98766, "state": "pending", "attempts": 0}])
    finally:
        render._ZONE.clear()
    flat = out.replace("\n", "").replace(" ", "")
    for header in ("编号", "状态", "类型", "机器人", "会话", "入队时间", "尝试", "最近的错误"):
        assert header in out, header
    for value in ("#98765", "#98766", "已放弃", "待处理", "observations", "1234567890", "group:1234567890"):
        assert value in out, value
    assert "2026-11-3020:34" in flat and job["last_error"].replace(" ", "") in flat
    assert "Asia/Shanghai" in out


# ------------------------------------------------------------------------ LLM counters and warnings


async def test_status_counts_the_llm_calls_of_every_process(tmp_root, chroma_port) -> None:
    """Two engines are two processes (the bot and a command) sharing one database: the status of
    a third sees both engines' calls, today and in all."""
    settings = {"preset": "no-such-preset-anywhere", "max_retries": 0}
    bot_process = await make_engine(tmp_root, chroma_port, llm=settings)
    other_process = await make_engine(tmp_root, chroma_port, llm=settings)
    command = await make_engine(tmp_root, chroma_port)
    before = (await command.index.status(check_ids=False))["llm"]
    context = {"tool_name": "x", "problem": "p", "arguments": "a"}
    for engine in (bot_process, other_process, bot_process):
        assert engine.llm is not None
        with pytest.raises(LLMUnavailable):
            await engine.llm.complete_text("profile_merge", "structured_retry.jinja", context)
    after = (await command.index.status(check_ids=False))["llm"]
    assert after["total"]["calls"] - before["total"]["calls"] == 3
    assert after["total"]["failures"] - before["total"]["failures"] == 3
    today_before = before["purposes"].get("profile_merge", {}).get("calls", 0)
    assert after["purposes"]["profile_merge"]["calls"] - today_before == 3
    assert "no-such-preset-anywhere" in after["purposes"]["profile_merge"]["last_error"]
    sentence = render._llm_sentence(after)
    assert "所有进程" in sentence and f"共 {after['total']['calls']} 次" in sentence


@pytest.mark.slow  # starts another process: runs with tests/e2e (-m slow)
@pytest.mark.embedded_only  # its processes use their own SQLite home: the backend does not reach them
def test_status_beside_the_running_bot_says_once_who_holds_the_index(tmp_path: Path) -> None:
    """The bot holds the embedded index: status names the holder in its report, and no warning line
    on stderr says it again."""
    from processes import start_index_holder

    home = tmp_path / "home"
    holder = start_index_holder(home / "data" / "amrita_plugin_cognition" / "chroma")
    try:
        env = {key: value for key, value in os.environ.items() if not key.startswith("COGNITION_")}
        result = subprocess.run(
            [sys.executable, "-m", "amrita_plugin_cognition", "status", "--table", "--home", str(home)],
            capture_output=True,
            text=True,
            timeout=300,
            env={**env, "ANONYMIZED_TELEMETRY": "False"},
        )
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.flush()
        holder.wait(30)
    assert result.returncode == 0, result.stderr[-2000:]
    assert f"进程号 {holder.pid}" in result.stdout
    assert str(holder.pid) not in result.stderr and "stage=vector_index" not in result.stderr, result.stderr
