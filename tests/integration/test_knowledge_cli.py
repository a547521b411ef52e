"""``ambot cognition knowledge …`` as an operator runs it (``python -m amrita_plugin_cognition``
in its own process, on a standalone home): list with the pending suggestions, show with the kept
versions, delete only when confirmed, export as JSON lines, suggestions by state."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from engine_helpers import NOW

from amrita_plugin_cognition.domain.knowledge import KnowledgeDraft
from amrita_plugin_cognition.domain.records import Scope

BOT = "90001"


async def _seed_home(database: Path) -> tuple[int, int]:
    """Two entries (the first with one kept version, the second stale) and one suggestion,
    written with the store functions the engine uses (no engine in this process)."""
    from sqlalchemy.ext.asyncio import async_sessionmaker, create_async_engine

    from amrita_plugin_cognition.store import knowledge, knowledge_suggestions

    sql = create_async_engine(f"sqlite+aiosqlite:///{database}")
    try:
        async with async_sessionmaker(sql, expire_on_commit=False)() as session:
            rule = await knowledge.create(
                session, BOT, KnowledgeDraft("群规：周五开黑", "每周五", "周五晚八点开黑。"), "test", NOW
            )
            await knowledge.update(
                session, rule, KnowledgeDraft("群规：周六开黑", "改到周六", "周六晚八点开黑。"), "test", NOW, 5
            )
            faq = await knowledge.create(
                session, BOT, KnowledgeDraft("维护时间", "", "每周二凌晨维护。", (7,)), "test", NOW
            )
            faq.state = "stale"  # as a forget of one of two sources leaves it
            knowledge_suggestions.add(session, BOT, "10001", Scope("group", "20001"), "建议写明新人教程在群文件。", NOW)
            await session.commit()
            return rule.id, faq.id
    finally:
        await sql.dispose()


@pytest.mark.slow  # starts other processes: runs with tests/e2e (-m slow)
@pytest.mark.embedded_only
def test_the_cli_lists_shows_deletes_and_exports(tmp_path: Path) -> None:
    from processes import one_line_error, only_json, run_cli

    home = ["--home", str(tmp_path / "home")]
    missing = run_cli("knowledge", "show", BOT, "1", *home)
    assert missing.returncode == 1 and "没有知识条目 #1" in one_line_error(missing)
    rule, faq = asyncio.run(_seed_home(tmp_path / "home" / "cognition.sqlite3"))

    listed = only_json(run_cli("knowledge", "list", *home).stdout)
    titles = [entry["title"] for entry in listed["entries"]]
    assert titles == ["维护时间", "群规：周六开黑"]  # written at the same time: the newest id first
    assert listed["pending_suggestions"] == 1
    states = {entry["id"]: (entry["state"], entry["version"], entry["revisions"]) for entry in listed["entries"]}
    assert states == {rule: ("active", 2, 1), faq: ("stale", 1, 0)}
    table = run_cli("knowledge", "list", "--table", "--state", "stale", *home)
    assert table.returncode == 0 and "维护时间" in table.stdout and "待重新整理" in table.stdout
    assert "周六开黑" not in table.stdout and "待审阅的建议 1 条" in table.stdout

    shown = only_json(run_cli("knowledge", "show", BOT, str(rule), "--revisions", *home).stdout)
    assert shown["entry"]["body"] == "周六晚八点开黑。"
    assert [item["body"] for item in shown["revisions"]] == ["周五晚八点开黑。"]
    suggestions = only_json(run_cli("knowledge", "suggestions", *home).stdout)["suggestions"]
    assert [(item["user_id"], item["chat"], item["state"]) for item in suggestions] == [
        ("10001", "group:20001", "pending")
    ]

    output = tmp_path / "knowledge.jsonl"
    exported = run_cli("knowledge", "export", "--output", str(output), *home)
    assert exported.returncode == 0 and "已导出 2 个知识条目" in exported.stdout
    documents = {doc["id"]: doc for doc in map(json.loads, output.read_text(encoding="utf-8").splitlines())}
    assert documents[rule]["revisions"][0]["version"] == 1 and documents[faq]["source_ids"] == [7]

    unconfirmed = run_cli("knowledge", "delete", BOT, str(rule), *home)
    assert unconfirmed.returncode == 2 and "--yes" in unconfirmed.stderr
    deleted = run_cli("knowledge", "delete", BOT, str(rule), "--yes", *home)
    assert deleted.returncode == 0 and f"已删除知识条目 #{rule}" in deleted.stdout
    assert [entry["id"] for entry in only_json(run_cli("knowledge", "list", *home).stdout)["entries"]] == [faq]
