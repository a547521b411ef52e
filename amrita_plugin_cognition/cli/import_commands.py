"""``ambot cognition import amrita-plugin-memory|undefined``: another memory plugin's records,
written through the engine's normal write paths (``engine.imports``), each once."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from . import render_import
from .commands import _open_engine, cognition, emit, home_option, json_option, run_engine
from .params import CHAT, QQ

#: The audit row's actor for an import from the command line.
ACTOR = "cli"


@cognition.group("import")
def import_group() -> None:
    """从其他记忆插件导入（准入、遗忘屏障、退出记忆与作用域规则照常适用；重复运行不会重复导入）"""


def _common(command: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed(
        [
            click.option("--bot", type=QQ, required=True, help="导入到这个机器人 QQ 号名下"),
            click.option("--dry-run", is_flag=True, help="只检查：列出会导入和会被拒绝的记录，不写入"),
            home_option,
            json_option,
        ]
    ):
        command = option(command)
    return command


def _run_import(importer: str, source: Path, home: Path | None, bot: str, dry_run: bool, read: Callable[[], Any]):  # type: ignore[no-untyped-def]
    """Read the source (everything, before anything is written), then import with a progress bar.
    ``read`` imports its reader only once the engine is open: the items must be built from the
    package the loaded bot imported (the boot may load it anew), or the engine does not know them."""

    async def run():  # type: ignore[no-untyped-def]
        engine = await _open_engine()
        with render_import.reading(importer):
            found = await asyncio.to_thread(read)
        with render_import.progress(len(found.items), dry_run) as step:
            report = await engine.imports.run(
                bot, importer, str(source), found.items, dry_run=dry_run, actor=ACTOR, progress=step
            )
        data = report.as_dict()
        data["missing"] = list(found.missing)
        return data

    return run_engine(run, home)


@import_group.command("amrita-plugin-memory")
@click.option(
    "--from",
    "source",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="它的数据目录（默认：本项目的 data/amrita_plugin_memory）",
)
@click.option(
    "--database",
    default=None,
    help="存放它的备忘录与状态的数据库：SQLite 文件，或 PostgreSQL 地址 postgresql://…"
    "（默认：数据目录旁的 nonebot_plugin_orm/db.sqlite3）",
)
@click.option("--profile-user", type=QQ, default=None, help="它的用户画像（user_profile.md）属于哪个 QQ 号")
@click.option(
    "--chroma-url",
    default="",
    help="它的长期记忆在 Chroma 服务器上时（它的 vector_db_type = remote）的地址，如 http://127.0.0.1:8000",
)
@_common
def import_amrita_memory(
    source: Path | None,
    database: str | None,
    profile_user: str | None,
    chroma_url: str,
    bot: str,
    dry_run: bool,
    home: Path | None,
    as_json: bool | None,
) -> None:
    """导入 amrita-plugin-memory 的长期记忆、备忘录、知识库与用户画像"""
    folder = (source or Path("data") / "amrita_plugin_memory").resolve()

    def read() -> Any:
        from ..importers import amrita_memory

        where = (
            database
            if database and database.startswith("postgresql")
            else Path(database).resolve()
            if database
            else None
        )
        return amrita_memory.read(folder, where, profile_user or "", chroma_url)

    emit(_run_import("amrita-plugin-memory", folder, home, bot, dry_run, read), as_json, render_import.report)


@import_group.command("undefined")
@click.option(
    "--from",
    "source",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("data") / "cognitive",
    show_default=True,
    help="它的认知记忆目录（end_summaries.json 与 memory.json 在它的上一级）",
)
@click.option(
    "--pins-chat",
    type=CHAT,
    default=None,
    help="它的置顶备忘（memory.json，不属于任何会话）放进哪个会话，如 private:10001",
)
@_common
def import_undefined(
    source: Path, pins_chat: str | None, bot: str, dry_run: bool, home: Path | None, as_json: bool | None
) -> None:
    """导入 Undefined 的认知记忆：事件、用户与群侧写（含历史版本）、结束摘要、置顶备忘与待处理任务"""
    folder = source.resolve()

    def read() -> Any:
        from ..api import parse_chat_key
        from ..importers import undefined

        return undefined.read(folder, parse_chat_key(pins_chat) if pins_chat else None)

    emit(_run_import("undefined", folder, home, bot, dry_run, read), as_json, render_import.report)
