"""Human output of ``knowledge list|show|suggestions`` (rich tables; an entry's text as it is)."""

from __future__ import annotations

from typing import Any

import click

from .render import DASH, _escape, _table, console, local_time

STATE_NAMES = {
    "active": "可查看",
    "stale": "待重新整理",
    "pending": "待审阅",
    "accepted": "已采纳",
    "rejected": "未采纳",
}
PREVIEW_CHARS = 40


def _preview(text: str) -> str:
    line = " / ".join(part for part in text.splitlines() if part.strip())
    return line if len(line) <= PREVIEW_CHARS else f"{line[: PREVIEW_CHARS - 1]}…"


def _sources(ids: list[int]) -> str:
    return " ".join(f"#{item}" for item in ids) or DASH


def entry_list(report: dict[str, Any]) -> None:
    out = console()
    entries = report["entries"]
    if not entries:
        out.print("知识库没有条目")
    else:
        table = _table("机器人", "编号", "标题", "状态", "版本", "来源记忆", "更新时间", "更新者", "摘要", wrap=(8,))
        for entry in entries:
            table.add_row(
                _escape(entry["bot_id"]),
                f"#{entry['id']}",
                _escape(entry["title"]),
                STATE_NAMES.get(entry["state"], entry["state"]),
                f"{entry['version']}（历史 {entry['revisions']}）",
                _escape(_sources(entry["source_ids"])),
                local_time(entry["updated_at"]),
                _escape(entry["updated_by"] or DASH),
                _escape(_preview(entry["summary"] or entry["body"])),
            )
        out.print(table)
        out.print("用 knowledge show BOT ID 查看全文")
    if report["pending_suggestions"]:
        out.print(f"待审阅的建议 {report['pending_suggestions']} 条：knowledge suggestions")


def _document(entry: dict[str, Any]) -> str:
    head = (
        f"# {entry['title']}\n"
        f"编号 #{entry['id']} · 版本 {entry['version']} · {STATE_NAMES.get(entry['state'], entry['state'])} · "
        f"来源记忆 {_sources(entry['source_ids'])} · {local_time(entry['updated_at'])} {entry['updated_by']}\n"
    )
    summary = f"\n> {entry['summary']}\n" if entry["summary"] else ""
    return f"{head}{summary}\n{entry['body']}\n"


def shown(report: dict[str, Any]) -> None:
    click.echo(_document(report["entry"]))
    for version in report["revisions"]:
        click.echo("--- 历史版本 ---")
        click.echo(_document(version))


def suggestion_list(report: dict[str, Any]) -> None:
    out = console()
    items = report["suggestions"]
    if not items:
        out.print("没有建议")
        return
    table = _table("机器人", "编号", "提交者", "会话", "时间", "状态", "内容", "审阅说明", wrap=(6, 7))
    for item in items:
        table.add_row(
            _escape(item["bot_id"]),
            f"#{item['id']}",
            _escape(item["user_id"]),
            _escape(item["chat"]),
            local_time(item["created_at"]),
            STATE_NAMES.get(item["state"], item["state"]),
            _escape(item["content"]),
            _escape(item["review_note"] or DASH),
        )
    out.print(table)
