"""``ambot cognition knowledge list|show|delete|export|suggestions``: a bot account's knowledge
base (written by the consolidation cycle), its kept versions, and the suggestions chat users
filed for the next cycle to review."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .commands import _open_engine, cognition, emit, home_option, json_option, run_engine
from .failures import EXIT_USAGE, fail
from .params import QQ, ROW_ID

if TYPE_CHECKING:
    from ..api import ListedEntry, Suggestion

STATES = ("active", "stale")
SUGGESTION_STATES = ("pending", "accepted", "rejected", "all")


def entry_rows(listed: list[ListedEntry]) -> list[dict[str, Any]]:
    return [{**item.entry.as_dict(), "revisions": item.revisions} for item in listed]


def suggestion_rows(items: list[Suggestion]) -> list[dict[str, Any]]:
    return [
        {
            "id": item.id,
            "bot_id": item.bot_id,
            "user_id": item.user_id,
            "chat": item.chat,
            "content": item.content,
            "state": item.state,
            "review_note": item.review_note,
            "created_at": item.created_at.isoformat(),
        }
        for item in items
    ]


@cognition.group("knowledge")
def knowledge_group() -> None:
    """知识库：列出、查看（含历史版本）、删除、导出条目，查看用户提交的建议"""


@knowledge_group.command("list")
@home_option
@click.option("--bot", type=QQ, default=None, help="只看这个机器人 QQ 号的")
@click.option("--state", type=click.Choice(STATES), default=None, help="active 可查看；stale 来源被遗忘、待重新整理")
@click.option("--limit", type=click.IntRange(1, 1000), default=50, show_default=True, help="最多列出条数")
@json_option
def knowledge_list(home: Path | None, bot: str | None, state: str | None, limit: int, as_json: bool | None) -> None:
    """列出知识库条目（最近更新的在前），以及待审阅的建议数"""

    async def run() -> dict[str, Any]:
        engine = await _open_engine()
        listed = await engine.knowledge.list(bot, state, limit)
        pending = await engine.knowledge.suggestions(bot, "pending", 1000)
        return {"entries": entry_rows(listed), "pending_suggestions": len(pending)}

    from . import render_knowledge

    emit(run_engine(run, home), as_json, render_knowledge.entry_list)


@knowledge_group.command("show")
@click.argument("bot", type=QQ)
@click.argument("entry_id", metavar="ID", type=ROW_ID)
@click.option("--revisions", "list_revisions", is_flag=True, help="同时列出保留的历史版本")
@home_option
@json_option
def knowledge_show(bot: str, entry_id: int, list_revisions: bool, home: Path | None, as_json: bool | None) -> None:
    """显示一个条目的全文、来源记忆编号与状态"""

    async def run() -> dict[str, Any]:
        engine = await _open_engine()
        entry = await engine.knowledge.get(bot, entry_id)
        kept = await engine.knowledge.revisions(bot, entry_id) if list_revisions else []
        return {"entry": entry.as_dict(), "revisions": [item.as_dict() for item in kept]}

    from . import render_knowledge

    emit(run_engine(run, home), as_json, render_knowledge.shown)


@knowledge_group.command("delete")
@click.argument("bot", type=QQ)
@click.argument("entry_id", metavar="ID", type=ROW_ID)
@click.option("--yes", is_flag=True, help="不询问（否则需要在终端确认）")
@home_option
def knowledge_delete(bot: str, entry_id: int, yes: bool, home: Path | None) -> None:
    """删除一个条目及其历史版本（不可恢复）"""
    if not yes:
        if not sys.stdin.isatty():
            raise fail("删除不可恢复：请加 --yes 确认（stdin 不是终端，无法询问）", EXIT_USAGE)
        if not click.confirm(f"将不可恢复地删除机器人 {bot} 的知识条目 #{entry_id} 及其历史版本，确认吗？", err=True):
            raise fail("已取消")

    async def run() -> None:
        engine = await _open_engine()
        await engine.knowledge.delete(bot, entry_id, by="cli")

    run_engine(run, home)
    click.echo(f"已删除知识条目 #{entry_id}")


@knowledge_group.command("export")
@home_option
@click.option("--bot", type=QQ, default=None, help="只导出这个机器人 QQ 号的（默认：所有机器人账号）")
@click.option(
    "--output",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="写入这个文件：每行一个条目的 JSON（含状态、来源记忆编号和保留的历史版本）；已有文件会被覆盖",
)
def knowledge_export(home: Path | None, bot: str | None, output: Path) -> None:
    """把知识库导出为 JSON Lines 文件"""
    target = output.resolve()

    async def run() -> list[dict[str, Any]]:
        engine = await _open_engine()
        documents = []
        for item in await engine.knowledge.list(bot):
            kept = await engine.knowledge.revisions(item.entry.bot_id, item.entry.id)
            documents.append({**item.entry.as_dict(), "revisions": [version.as_dict() for version in kept]})
        return documents

    documents = run_engine(run, home)
    from ..api import json_lines

    target.write_text("".join(f"{line}\n" for line in json_lines(documents)), encoding="utf-8")
    click.echo(f"已导出 {len(documents)} 个知识条目到 {target}")


@knowledge_group.command("suggestions")
@home_option
@click.option("--bot", type=QQ, default=None, help="只看这个机器人 QQ 号的")
@click.option("--state", type=click.Choice(SUGGESTION_STATES), default="pending", show_default=True)
@click.option("--limit", type=click.IntRange(1, 1000), default=50, show_default=True, help="最多列出条数")
@json_option
def knowledge_suggestions(home: Path | None, bot: str | None, state: str, limit: int, as_json: bool | None) -> None:
    """列出用户提交的知识库建议（最早的在前），等待下一次整理审阅"""

    async def run() -> dict[str, Any]:
        engine = await _open_engine()
        items = await engine.knowledge.suggestions(bot, None if state == "all" else state, limit)
        return {"suggestions": suggestion_rows(items)}

    from . import render_knowledge

    emit(run_engine(run, home), as_json, render_knowledge.suggestion_list)
