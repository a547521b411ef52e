"""``ambot cognition …`` (entry point ``ambot.commands``) and ``python -m amrita_plugin_cognition``.

Nothing heavy is imported or loaded until a command needs it (``boot``): ``--help``, usage errors
and the pure evaluations answer at once. Under ``ambot`` the commands that act on memory load the
bot project first and act on the bot's own database and Chroma; run as a module outside a bot,
they act on a standalone folder (``--home``, default ``./cognition-home``). ``eval recall`` always
runs in a throw-away folder of its own.

Output: stdout carries the answer only (sentences and tables, or one JSON document with
``--json``); progress, notes and logs go to stderr. Every failure goes through ``failures``:
one line on stderr, exit 1 (2 for bad input or usage).
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import sys
from collections.abc import Callable, Coroutine, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from . import render
from .boot import DEBUG_KEY
from .failures import EXIT_USAGE, fail, guarded
from .params import CHAT, QQ, ROW_ID

PACKAGE = __name__.split(".")[0]
#: A command waits this long for the engine to let go of the vector index before it exits.
CLOSE_TIMEOUT_SECONDS = 30.0
#: The first line of every backup file names this format (``engine.backup.FORMAT``).
BACKUP_FORMAT = "amrita_plugin_cognition.backup"


# ---------------------------------------------------------------------------- shared helpers


def run_engine(
    main: Callable[[], Coroutine[Any, Any, Any]], home: Path | None = None, *, read_only: bool = False
) -> Any:
    """Load what the engine needs (``boot.prepare_engine``; ``boot.prepare_reading`` for a
    ``read_only`` command, whose ``main`` opens the engine with ``_open_engine(read_only=True)``),
    then run ``main`` on a fresh event loop. Anything printed meanwhile goes to stderr; the
    command prints its answer afterwards. Every failure ends the command through ``failures``."""

    def work() -> Any:
        from . import boot

        if read_only:
            boot.prepare_reading(home)
        else:
            boot.prepare_engine(home)
        with contextlib.redirect_stdout(sys.stderr):
            return asyncio.run(_closing(main))

    return guarded(work)


async def _closing(main: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    """Run ``main``; an engine it started is closed afterwards (the index folder is released)."""
    runtime = sys.modules.get(f"{PACKAGE}.runtime")
    started_here = runtime is None or runtime.current_engine() is None
    try:
        return await main()
    finally:
        if started_here:
            await _close_engine()


async def _close_engine() -> None:
    runtime = sys.modules.get(f"{PACKAGE}.runtime")
    if runtime is None:
        return
    # Best effort: the command's work is committed; the exit releases what a close could not.
    with contextlib.suppress(asyncio.TimeoutError, Exception):
        await asyncio.wait_for(runtime.close_reader(), CLOSE_TIMEOUT_SECONDS)
    engine = runtime.current_engine()
    if engine is None:
        return
    with contextlib.suppress(asyncio.TimeoutError, Exception):
        await asyncio.wait_for(engine.close(), CLOSE_TIMEOUT_SECONDS)


async def _open_engine(read_only: bool = False):  # type: ignore[no-untyped-def]
    """The started engine: the bot's under ambot, the standalone folder's under ``python -m``;
    with ``read_only``, the engine of a read command (``runtime.open_for_reading``: the same
    stores, checked but not started, nothing written). The configuration is read first so that
    an error in it names the file and the key, and the data folder is created first so that a
    folder that cannot be created is named."""
    from .. import logs, runtime

    # every command says what is wrong with the vector index itself (status shows it, one that
    # needs it fails naming it): the engine's start-up warning would only repeat that line
    logs.reported_elsewhere("vector_index")
    config = runtime.plugin_config()
    render.use_timezone(config.timezone)  # times shown as the chat shows them
    folder = runtime.data_dir(config)
    try:
        await asyncio.to_thread(folder.mkdir, parents=True, exist_ok=True)
    except OSError as error:
        source = f"配置文件 {runtime.config_file()} 中的 data_dir" if config.data_dir else "数据目录的权限"
        raise fail(f"无法创建数据目录 {folder}（{error.strerror or error}）：请检查{source}") from error
    from .boot import full_boot_forced

    if read_only and not full_boot_forced():
        return await runtime.open_for_reading()
    return await runtime.get_engine()


def emit(data: Any, as_json: bool | None, show: Callable[[Any], None]) -> None:
    """The answer: one JSON document (``--json``, the default when stdout is not a terminal),
    or sentences and tables."""
    use_json = as_json if as_json is not None else not sys.stdout.isatty()
    if use_json:
        click.echo(json.dumps(data, ensure_ascii=False))
    else:
        show(data)


json_option = click.option(
    "--json/--table", "as_json", default=None, help="输出一个 JSON 文档（stdout 不是终端时的默认）或表格"
)


@contextlib.contextmanager
def rebuild_progress() -> Iterator[Callable[[int, int], None]]:
    """A progress bar on stderr for a vector-index rebuild; yields the engine's callback."""
    with click.progressbar(length=1, label="重建向量索引", file=sys.stderr) as bar:
        state = {"done": 0}

        def progress(done: int, total: int) -> None:
            bar.length = max(1, total)
            bar.update(done - state["done"])
            state["done"] = done

        yield progress


def confirm_or_stop(question: str, default: bool) -> None:
    if not click.confirm(question, default=default, err=True):
        raise fail("已取消")


# ---------------------------------------------------------------------------- the group


class CognitionGroup(click.Group):
    """The root group: ``--debug`` is accepted anywhere on the command line (``status --debug``
    as well as ``--debug status``)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        end = args.index("--") if "--" in args else len(args)
        if "--debug" in args[:end]:
            ctx.meta[DEBUG_KEY] = True
            args = [arg for arg in args[:end] if arg != "--debug"] + args[end:]
        return super().parse_args(ctx, args)


@click.group(name="cognition", cls=CognitionGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="出错时在终端显示完整的错误堆栈与日志详情（默认写入日志文件）")
@click.pass_context
def cognition(ctx: click.Context, debug: bool) -> None:
    """amrita_plugin_cognition 长期记忆维护命令

    \b
    在机器人项目里：ambot cognition 命令 …（作用于机器人自己的数据）
    在机器人之外：python -m amrita_plugin_cognition 命令 … --home 目录

    \b
    退出码：0 成功；1 失败（stderr 上一行说明原因）；2 输入或用法有误。
    --json 时 stdout 只有一个 JSON 文档，进度与日志都在 stderr。
    """
    ctx.meta[DEBUG_KEY] = debug or bool(ctx.meta.get(DEBUG_KEY))


home_option = click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="独立运行（python -m amrita_plugin_cognition）时的数据目录，默认 ./cognition-home；机器人项目中不可用",
)


# ---------------------------------------------------------------------------- status, index


@cognition.command("status")
@home_option
@json_option
@click.option(
    "--full",
    is_flag=True,
    help="会话很多时也逐个核对每个会话的向量（默认超过 200 个会话时只抽查最近写入的会话约 0.3 秒）",
)
def status_command(home: Path | None, as_json: bool | None, full: bool) -> None:
    """显示记忆数量、嵌入模型、向量索引健康、索引外发队列与史官任务积压"""

    async def run() -> dict[str, Any]:
        engine = await _open_engine(read_only=True)
        return await engine.index.status(full=full)

    emit(run_engine(run, home, read_only=True), as_json, render.status)


@cognition.command("reindex")
@home_option
@click.option("--yes", is_flag=True, help="不询问，直接重建")
def reindex_command(home: Path | None, yes: bool) -> None:
    """从数据库重建向量索引到新集合并原子切换（换模型或维度后使用）"""
    if not yes:
        confirm_or_stop("将从数据库重建全部向量索引，继续吗？", default=True)

    async def run():  # type: ignore[no-untyped-def]
        engine = await _open_engine()
        with rebuild_progress() as progress:
            return await engine.index.reindex(progress=progress)

    report = run_engine(run, home)
    click.echo(
        f"重建完成：第 {report.generation_before} 代 → 第 {report.generation_after} 代；"
        f"数据库有效记忆 {report.sql_active} 条，重建前向量 {report.vectors_before} 条，"
        f"重建后向量 {report.vectors_after} 条，画像 {report.cards} 份、画像向量 {report.card_vectors} 条，"
        f"期间变更补写 {report.reapplied} 条，用时 {report.seconds:.1f} 秒"
    )
    if report.vectors_after != report.sql_active:
        raise fail(f"重建后向量数 {report.vectors_after} 与数据库 {report.sql_active} 不一致")
    if report.card_vectors != report.cards:
        raise fail(f"重建后画像向量数 {report.card_vectors} 与数据库画像 {report.cards} 份不一致")


@cognition.command("repair")
@home_option
def repair_command(home: Path | None) -> None:
    """按编号核对向量索引与数据库：补排缺失的向量，删除多余的向量"""

    async def run():  # type: ignore[no-untyped-def]
        engine = await _open_engine()
        report = await engine.index.repair()
        applied = await engine.index.drain()
        return report, applied

    report, applied = run_engine(run, home)
    click.echo(
        f"核对第 {report.generation} 代：缺 {report.missing_count} 条（已补排 {report.requeued} 条，"
        f"已写入 {applied} 条），多余 {report.extra_count} 条（已删除 {report.deleted} 条）"
    )


@cognition.group("outbox")
def outbox_group() -> None:
    """向量索引外发队列"""


@outbox_group.command("retry")
@home_option
def outbox_retry(home: Path | None) -> None:
    """重试所有已放弃（多次失败）的向量索引任务"""

    async def run():  # type: ignore[no-untyped-def]
        engine = await _open_engine()
        revived = await engine.index.retry_dead()
        return revived, await engine.index.drain()

    revived, applied = run_engine(run, home)
    click.echo(f"已重新排队 {revived} 条，本次写入索引 {applied} 条")


# ---------------------------------------------------------------------------- backups


@cognition.group("backup")
def backup_group() -> None:
    """备份与恢复（记忆、备忘录、提醒与遗忘屏障）"""


@backup_group.command("create")
@home_option
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), default=None, help="备份文件路径")
def backup_create(home: Path | None, output: Path | None) -> None:
    """创建一份完整备份（默认写入数据目录下的 backups/）"""

    async def run():  # type: ignore[no-untyped-def]
        engine = await _open_engine()
        return await engine.governance.create_backup(output)

    info = run_engine(run, home)
    click.echo(f"备份完成：{info.path}（{render.size_text(info.size)}；{render.backup_counts(info.counts)}）")


@backup_group.command("list")
@home_option
@json_option
def backup_list(home: Path | None, as_json: bool | None) -> None:
    """列出数据目录中的备份：文件、创建时间、大小与各类记录数"""

    async def run():  # type: ignore[no-untyped-def]
        engine = await _open_engine()
        return await engine.governance.list_backups()

    infos = run_engine(run, home)
    listed = [
        {
            "file": info.path.name,
            "path": str(info.path),
            "created_at": info.created_at,
            "size": info.size,
            "counts": info.counts,
        }
        for info in infos
    ]
    emit(listed, as_json, lambda _listed: render.backup_list(infos))


def check_backup_file(path: Path) -> None:
    """Refuse, before anything is loaded, a file that is no backup of this plugin (exit 2)."""
    try:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            header = json.loads(handle.readline())
    except (OSError, EOFError, ValueError) as error:
        raise fail(f"{path} 不是本插件的备份文件（无法读取：{error}）", EXIT_USAGE) from error
    if not isinstance(header, dict) or header.get("format") != BACKUP_FORMAT:
        raise fail(f"{path} 不是本插件的备份文件", EXIT_USAGE)


@backup_group.command("restore")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@home_option
@click.option("--yes", is_flag=True, help="不询问，直接恢复")
def backup_restore(file: Path, home: Path | None, yes: bool) -> None:
    """用备份 FILE 替换当前数据（此后遗忘、删除的内容不会恢复），并用当前模型重建向量索引"""
    check_backup_file(file)
    if not yes:
        confirm_or_stop("恢复会替换当前全部记忆数据，继续吗？", default=False)

    async def run():  # type: ignore[no-untyped-def]
        engine = await _open_engine()
        with rebuild_progress() as progress:
            return await engine.governance.restore_backup(file, progress)

    report = run_engine(run, home)
    click.echo(
        f"恢复完成：记忆 {report['memory']} 条（已遗忘而跳过 {report['skipped_forgotten']} 条），"
        f"备忘录 {report['memo']} 份，提醒 {report['pin']} 条，"
        f"遗忘屏障 {report['barrier']} 条，画像卡片 {report['profile']} 份、历史版本 {report['profile_revision']} 份"
        f"（因来源已遗忘而未恢复 {report['cards_dropped']} 份），"
        f"知识库条目 {report['knowledge']} 个（来源已遗忘而未恢复 {report['knowledge_dropped']} 个、"
        f"待重新整理 {report['knowledge_hidden']} 个）、建议 {report['knowledge_suggestion']} 条，"
        f"会话开关 {report['chat_switch']} 条、不被记住 {report['optout']} 条、"
        f"审计记录 {report['audit']} 条（与现有的合并），"
        f"重放了备份之后的删除全部 {report['erasures_replayed']} 次，向量 {report['vectors']} 条"
    )


# ---------------------------------------------------------------------------- memo


@cognition.group("memo")
def memo_group() -> None:
    """会话置顶备忘录的历史版本"""


def _scope_argument(value: str):  # type: ignore[no-untyped-def]
    """A chat key as a ``Scope`` (checked by ``params.CHAT`` already; parsed here with the package
    the bot project loaded, whose classes the engine takes)."""
    from ..api import parse_chat_key

    try:
        return parse_chat_key(value)
    except ValueError as error:
        raise click.BadParameter("会话写作 group:<群号> 或 private:<QQ号>", param_hint="SCOPE") from error


@memo_group.command("history")
@click.argument("bot", type=QQ)
@click.argument("scope", type=CHAT)
@home_option
def memo_history(bot: str, scope: str, home: Path | None) -> None:
    """列出某会话备忘录的历史版本（BOT 为机器人 QQ 号，SCOPE 如 group:20001）"""
    target = _scope_argument(scope)

    async def run():  # type: ignore[no-untyped-def]

        # parsed again: the engine's own Scope, from the package as the loaded bot imported it
        engine = await _open_engine()
        return await engine.notes.memo_revisions(bot, _scope_argument(scope))

    revisions = run_engine(run, home)
    if not revisions:
        click.echo(f"{target.key} 的备忘录没有历史版本")
        return
    render.memo_history(revisions)


@memo_group.command("restore")
@click.argument("bot", type=QQ)
@click.argument("scope", type=CHAT)
@click.argument("revision", type=ROW_ID)
@home_option
def memo_restore(bot: str, scope: str, revision: int, home: Path | None) -> None:
    """把某会话备忘录恢复为历史版本 REVISION（当前内容会先存为一个历史版本）"""
    target = _scope_argument(scope)

    async def run():  # type: ignore[no-untyped-def]
        engine = await _open_engine()
        return await engine.notes.restore_memo(bot, _scope_argument(scope), revision)

    content = run_engine(run, home)
    click.echo(f"已恢复 {target.key} 的备忘录（{len(content)} 字）")


# ---------------------------------------------------------------------------- demo


@cognition.command("demo")
@click.option("--preset", default=None, help="与这个模型预设对话（预设名或 JSON 文件路径）；不填则用内置回放模型")
@click.option(
    "--start",
    type=click.DateTime(formats=["%Y-%m-%d"]),
    default=None,
    help="模拟的第一天（YYYY-MM-DD），默认让最后一天是今天",
)
@click.option("--keep", is_flag=True, help="保留临时数据目录以便检查")
def demo_command(preset: str | None, start: datetime | None, keep: bool) -> None:
    """在真实的 Amrita 聊天流程中演示长期记忆：脚本化的多日群聊与私聊，逐轮显示工具调用与注入的记忆"""
    from . import boot

    day = start.date() if start else None
    if not boot.standalone():
        # Under ambot the demo boots a NoneBot of its own in a fresh process; only a preset given
        # by name needs the bot project (its Amrita model folder) to be looked up.
        if preset is not None and not Path(preset).expanduser().is_file():
            guarded(boot.load_bot_project)
        from . import demo

        try:
            code = demo.run_in_subprocess(preset, day, keep)
        except demo.DemoError as error:
            raise fail(str(error)) from error
        sys.exit(code)
    if preset is not None and Path(preset).expanduser().is_file():
        preset = str(Path(preset).expanduser().resolve())  # the demo changes the working directory
    guarded(boot.start_demo_bot)
    from . import demo

    sys.exit(demo.main(preset, day, keep))


def main(args: list[str] | None = None) -> None:
    cognition.main(args=args, prog_name="python -m amrita_plugin_cognition")


from . import (  # noqa: E402,F401  (register their commands on the group above)
    consolidate_commands,
    decay_commands,
    eval_command,
    governance_commands,
    import_commands,
    job_commands,
    knowledge_commands,
    profile_commands,
)
