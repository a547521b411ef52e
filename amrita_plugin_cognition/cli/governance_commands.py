"""``ambot cognition inspect | export | delete-all | audit``: what is kept, one user's data, and
erasure with its audit trail."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from .commands import _open_engine, _scope_argument, cognition, emit, home_option, json_option, run_engine
from .failures import EXIT_USAGE, fail
from .params import ACTOR, CHAT, PAGE, QQ, ROW_ID

STATUSES = ("active", "superseded", "expired")


@cognition.command("inspect")
@home_option
@click.option("--bot", type=QQ, default=None, help="只看这个机器人 QQ 号的记忆")
@click.option("--user", type=QQ, default=None, help="只看这个 QQ 号说的或关于他的记忆（所有会话）")
@click.option("--chat", type=CHAT, default=None, help="只看这个会话，写作 group:<群号> 或 private:<QQ号>")
@click.option("--status", type=click.Choice(STATUSES), default=None, help="只看有效的、已被更正取代的或已过期的")
@click.option("--id", "memory_id", type=ROW_ID, default=None, help="只看这一条")
@click.option("--page", type=PAGE, default=1, show_default=True, help="页码")
@click.option("--per-page", type=click.IntRange(1, 200), default=20, show_default=True, help="每页条数")
@json_option
def inspect_command(
    home: Path | None,
    bot: str | None,
    user: str | None,
    chat: str | None,
    status: str | None,
    memory_id: int | None,
    page: int,
    per_page: int,
    as_json: bool | None,
) -> None:
    """查看记忆：编号、内容、类型、来源（消息编号、史官任务）、发生与记录时间、状态与更正链"""

    async def run() -> dict[str, Any]:
        from ..api import InspectFilter, MemoryStatus, memory_document

        wanted = InspectFilter(
            bot_id=bot,
            user_id=user,
            scope=_scope_argument(chat) if chat is not None else None,
            status=MemoryStatus(status) if status else None,
            memory_id=memory_id,
        )
        engine = await _open_engine(read_only=True)
        items, total = await engine.governance.inspect(wanted, (page - 1) * per_page, per_page)
        return {
            "page": page,
            "per_page": per_page,
            "total": total,
            "memories": [memory_document(item) for item in items],
        }

    from . import render_governance

    emit(run_engine(run, home, read_only=True), as_json, render_governance.inspected)


@cognition.command("export")
@home_option
@click.option("--user", type=QQ, required=True, help="导出这个 QQ 号的全部数据")
@click.option("--bot", type=QQ, default=None, help="只导出这个机器人 QQ 号下的（默认：所有机器人账号）")
@click.option(
    "--output", type=click.Path(dir_okay=False, path_type=Path), default=None, help="写入这个文件（默认 stdout）"
)
def export_command(home: Path | None, user: str, bot: str | None, output: Path | None) -> None:
    """把一个用户的数据导出为 JSON Lines：他的记忆（含历史版本）、笔记、对话记录、私聊备忘录与提醒、画像、设置"""
    user_id = user

    async def run() -> list[dict[str, Any]]:
        engine = await _open_engine()
        return await engine.governance.export_user(user_id, bot)

    documents = run_engine(run, home)
    from ..api import json_lines

    lines = "".join(f"{line}\n" for line in json_lines(documents))
    if output is None:
        sys.stdout.write(lines)
    else:
        try:
            output.write_text(lines, encoding="utf-8")
        except OSError as error:
            raise fail(f"无法写入 {output}（{error.strerror or error}）") from error
        counts: dict[str, int] = {}
        for document in documents[1:]:
            counts[document["type"]] = counts.get(document["type"], 0) + 1
        summary = "，".join(f"{kind} {count}" for kind, count in sorted(counts.items()))
        click.echo(f"已导出 QQ {user_id} 的数据到 {output}（{summary or '没有数据'}）", err=True)


@cognition.command("delete-all")
@home_option
@click.option("--bot", type=QQ, required=True, help="机器人 QQ 号（删除只作用于这个机器人账号）")
@click.option("--chat", type=CHAT, default=None, help="删除这个会话的全部记忆：group:<群号> 或 private:<QQ号>")
@click.option("--user", type=QQ, default=None, help="删除这个 QQ 号在所有会话中的全部数据")
@click.option("--everything", is_flag=True, help="删除这个机器人账号的全部记忆")
@click.option("--actor", type=ACTOR, default="cli", show_default=True, help="审计记录里的操作者（最多 48 个字符）")
@click.option("--yes", is_flag=True, help="不询问（否则需要在终端输入目标确认）")
@json_option
def delete_all_command(
    home: Path | None,
    bot: str,
    chat: str | None,
    user: str | None,
    everything: bool,
    actor: str,
    yes: bool,
    as_json: bool | None,
) -> None:
    """不可恢复地删除一个会话、一个用户或整个机器人账号的记忆，并留下审计记录（谁、何时、多少条，不含内容）"""
    bot_id = bot
    chosen = [name for name, given in (("--chat", chat), ("--user", user), ("--everything", everything)) if given]
    if len(chosen) != 1:
        raise click.UsageError("请只给出 --chat、--user、--everything 中的一个")
    user_id = user
    label = chat or (f"user:{user_id}" if user_id else "bot")
    if not yes:
        if not sys.stdin.isatty():
            raise fail("删除不可恢复：请加 --yes 确认（stdin 不是终端，无法询问）", EXIT_USAGE)
        typed = click.prompt(f"将不可恢复地删除机器人 {bot_id} 下 {label} 的全部记忆；请输入 {label} 确认", err=True)
        if typed.strip() != label:
            raise fail("输入不符，已取消")

    async def run() -> dict[str, Any]:
        from ..api import ErasureTarget, Operator

        if chat is not None:
            target = ErasureTarget.chat(bot_id, _scope_argument(chat))
        elif user_id is not None:
            target = ErasureTarget.user(bot_id, user_id)
        else:
            target = ErasureTarget.bot(bot_id)
        engine = await _open_engine()
        report = await engine.governance.delete_all(target, Operator(actor))  # the bot's owner
        return {
            "bot_id": bot_id,
            "target": report.target,
            "counts": report.counts,
            "kept": report.kept(),
            "kept_names": [{"name": item.name, "reason": item.reason} for item in report.kept_names],
            "log_truncated": report.log_truncated,
            "amrita_history": report.amrita_history(),
        }

    from . import render_governance

    emit(run_engine(run, home), as_json, render_governance.erased)


@cognition.command("audit")
@home_option
@click.option("--bot", type=QQ, default=None, help="只看这个机器人 QQ 号的")
@click.option("--limit", type=click.IntRange(1, 10000), default=50, show_default=True, help="最多列出条数")
@json_option
def audit_command(home: Path | None, bot: str | None, limit: int, as_json: bool | None) -> None:
    """列出治理操作的审计记录（删除全部、开关、退出记录）：谁、何时、对象、条数"""

    async def run() -> list[dict[str, Any]]:
        engine = await _open_engine()
        entries = await engine.governance.audit(bot, limit)
        return [
            {
                "id": entry.id,
                "bot_id": entry.bot_id,
                "action": entry.action,
                "actor": entry.actor,
                "target": entry.target,
                "count": entry.count,
                "at": entry.at.isoformat(),
            }
            for entry in entries
        ]

    from . import render_governance

    emit(run_engine(run, home), as_json, render_governance.audit_list)
