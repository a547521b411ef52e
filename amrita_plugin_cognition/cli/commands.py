"""``ambot cognition …`` (entry point ``ambot.commands``) and ``python -m amrita_plugin_cognition``.

Under ``ambot`` the bot project is fully loaded first, so commands act on the bot's own database
and Chroma. Run as a module outside a bot, they act on a standalone folder (``--home``,
default ``./cognition-home``). ``eval`` always runs in a throw-away folder of its own.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import click


def _in_bot_process() -> bool:
    """True under ``ambot`` (full load): NoneBot is initialised on the bot's own database."""
    from .runtime import standalone_home

    return standalone_home() is None


def _fail(message: str) -> None:
    click.echo(f"错误: {message}", err=True)
    sys.exit(1)


def _run(main: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    """Run a command's coroutine; a plugin error ends the command with its one-line reason."""
    from ..errors import CognitionError

    try:
        return asyncio.run(main())
    except CognitionError as error:
        _fail(error.zh)


def _emit(report: dict[str, Any], as_json: bool | None, render) -> None:  # type: ignore[no-untyped-def]
    use_json = as_json if as_json is not None else not sys.stdout.isatty()
    click.echo(json.dumps(report, ensure_ascii=False) if use_json else render(report))


async def _open_engine():  # type: ignore[no-untyped-def]
    """The bot's engine under ambot; the standalone folder's engine under ``python -m``
    (localstore points into that folder, and its database is migrated first)."""
    from .. import runtime
    from .runtime import standalone_home, upgrade_database_async

    if standalone_home() is not None:
        await upgrade_database_async()
    return await runtime.get_engine()


@contextmanager
def rebuild_progress() -> Iterator[Callable[[int, int], None]]:
    """A progress bar on stderr for a vector-index rebuild; yields the engine's callback."""
    with click.progressbar(length=1, label="重建向量索引", file=sys.stderr) as bar:
        state = {"done": 0}

        def progress(done: int, total: int) -> None:
            bar.length = max(1, total)
            bar.update(done - state["done"])
            state["done"] = done

        yield progress


@click.group(name="cognition")
def cognition() -> None:
    """amrita_plugin_cognition 长期记忆维护命令"""


home_option = click.option(
    "--home",
    type=click.Path(path_type=Path),
    default=None,
    help="独立运行（python -m amrita_plugin_cognition）时的数据目录，默认 ./cognition-home",
)


@cognition.command("status")
@home_option
@click.option("--json/--table", "as_json", default=None, help="输出 JSON（非终端时默认）或表格")
def status_command(home: Path | None, as_json: bool | None) -> None:
    """显示嵌入指纹、记忆数量、索引外发队列积压与向量索引健康状况"""

    async def run() -> dict[str, Any]:
        engine = await _open_engine()
        return await engine.status()

    _emit(_run(run), as_json, _render_status)


def _render_status(report: dict[str, Any]) -> str:
    index = report["index"]
    lines = [
        f"嵌入指纹: {report['fingerprint']}",
        f"当前嵌入器: {report['configured_embedder']}",
        f"有效记忆: {report['active_total']}  按类别: {report['memories']}",
        f"外发队列: 待处理 {report['outbox']['pending']} 条，失败重试中 {report['outbox']['failing']} 条，"
        f"已放弃 {report['outbox']['dead']} 条"
        + (f"，最早 {report['outbox']['oldest']}" if report["outbox"]["oldest"] else ""),
        f"向量索引: {index['backend']} 第 {index['generation']} 代，"
        + (
            f"健康，向量 {index.get('vectors')} 条，缺 {index.get('missing')} 条，多余 {index.get('stale')} 条"
            if index.get("healthy")
            else f"不可用: {index.get('error')}"
        ),
    ]
    for label, ids in {**index.get("missing_ids", {}), **index.get("stale_ids", {})}.items():
        kind = "缺" if label in index.get("missing_ids", {}) else "多余"
        lines.append(f"  {kind} {label}: {', '.join(f'#{memory_id}' for memory_id in ids)}")
    if index.get("missing") or index.get("stale"):
        lines.append("  运行 ambot cognition repair 修复")
    if report["outbox"]["dead"]:
        lines.append("  运行 ambot cognition outbox retry 重试已放弃的索引任务")
    queue = report["jobs"]
    lines.append(
        f"史官任务: 待处理 {queue['pending']} 个，处理中 {queue['processing']} 个，失败 {queue['failed']} 个"
        + (f"，最早 {queue['oldest_pending']}" if queue["oldest_pending"] else "")
    )
    if queue["failed"]:
        lines.append("  运行 ambot cognition jobs list --state failed 查看，jobs retry 重试")
    for scope in report["top_scopes"]:
        lines.append(f"  {scope['bot']} {scope['scope']}: {scope['active']}")
    return "\n".join(lines)


@cognition.command("reindex")
@home_option
@click.option("--yes", is_flag=True, help="不询问，直接重建")
def reindex_command(home: Path | None, yes: bool) -> None:
    """从 SQL 重建向量索引到新集合并原子切换（换模型或维度后使用）"""
    if not yes and not click.confirm("将从数据库重建全部向量索引，继续吗？", default=True):
        _fail("已取消")

    async def run():  # type: ignore[no-untyped-def]
        engine = await _open_engine()
        with rebuild_progress() as progress:
            return await engine.reindex(progress=progress)

    report = _run(run)
    click.echo(
        f"重建完成：第 {report.generation_before} 代 → 第 {report.generation_after} 代；"
        f"数据库有效记忆 {report.sql_active} 条，重建前向量 {report.vectors_before} 条，"
        f"重建后向量 {report.vectors_after} 条，期间变更补写 {report.reapplied} 条，用时 {report.seconds:.1f} 秒"
    )
    if report.vectors_after != report.sql_active:
        _fail(f"重建后向量数 {report.vectors_after} 与数据库 {report.sql_active} 不一致")


@cognition.group("backup")
def backup_group() -> None:
    """备份与恢复（记忆、备忘录、提醒与遗忘屏障）"""


@backup_group.command("create")
@home_option
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), default=None, help="备份文件路径")
def backup_create(home: Path | None, output: Path | None) -> None:
    """创建一份完整备份"""
    from ..engine import backup

    async def run():  # type: ignore[no-untyped-def]
        return await backup.create_backup(await _open_engine(), output)

    info = _run(run)
    counts = "，".join(f"{table} {count} 条" for table, count in info.counts.items())
    click.echo(f"备份完成：{info.path}（{counts}）")


@backup_group.command("list")
@home_option
def backup_list(home: Path | None) -> None:
    """列出数据目录中的备份"""
    from ..engine import backup

    async def run():  # type: ignore[no-untyped-def]
        return await backup.list_backups(await _open_engine())

    infos = _run(run)
    if not infos:
        click.echo("还没有备份")
    for info in infos:
        counts = "，".join(f"{table} {count}" for table, count in info.counts.items())
        click.echo(f"{info.path.name}  {info.created_at}  {info.size / 1024:.1f} KiB  {counts}")


@backup_group.command("restore")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@home_option
@click.option("--yes", is_flag=True, help="不询问，直接恢复")
def backup_restore(file: Path, home: Path | None, yes: bool) -> None:
    """用备份替换当前数据（此后遗忘的内容不会恢复），并用当前模型重建向量索引"""
    from ..engine import backup

    if not yes and not click.confirm("恢复会替换当前全部记忆数据，继续吗？", default=False):
        _fail("已取消")

    async def run():  # type: ignore[no-untyped-def]
        engine = await _open_engine()
        with rebuild_progress() as progress:
            return await backup.restore_backup(engine, file, progress)

    report = _run(run)
    click.echo(
        f"恢复完成：记忆 {report['memory']} 条（已遗忘而跳过 {report['skipped_forgotten']} 条），"
        f"备忘录 {report['memo']} 份，提醒 {report['pin']} 条，"
        f"遗忘屏障 {report['barrier']} 条，向量 {report['vectors']} 条"
    )


@cognition.command("repair")
@home_option
def repair_command(home: Path | None) -> None:
    """按编号核对向量索引与数据库：补排缺失的向量，删除多余的向量"""

    async def run():  # type: ignore[no-untyped-def]
        engine = await _open_engine()
        report = await engine.repair_index()
        applied = await engine.drain_outbox()
        return report, applied

    report, applied = _run(run)
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
        revived = await engine.retry_dead_outbox()
        return revived, await engine.drain_outbox()

    revived, applied = _run(run)
    click.echo(f"已重新排队 {revived} 条，本次写入索引 {applied} 条")


@cognition.group("memo")
def memo_group() -> None:
    """会话置顶备忘录的历史版本"""


def _scope_argument(value: str):  # type: ignore[no-untyped-def]
    from ..domain.records import Scope

    try:
        return Scope.parse(value)
    except ValueError as error:
        raise click.BadParameter("会话写作 group:<群号> 或 private:<QQ号>") from error


@memo_group.command("history")
@click.argument("bot")
@click.argument("scope")
@home_option
def memo_history(bot: str, scope: str, home: Path | None) -> None:
    """列出某会话备忘录的历史版本（BOT 为机器人 QQ 号，SCOPE 如 group:20001）"""
    from ..engine import notes

    target = _scope_argument(scope)

    async def run():  # type: ignore[no-untyped-def]
        return await notes.memo_revisions(await _open_engine(), bot, target)

    revisions = _run(run)
    if not revisions:
        click.echo("没有历史版本")
    for revision in revisions:
        preview = revision.content.replace("\n", " / ")[:60]
        click.echo(
            f"#{revision.id}  写于 {revision.written_at:%Y-%m-%d %H:%M}（{revision.written_by or '-'}），"
            f"{revision.replaced_at:%Y-%m-%d %H:%M} 被 {revision.replaced_by or '-'} 替换：{preview}"
        )


@memo_group.command("restore")
@click.argument("bot")
@click.argument("scope")
@click.argument("revision", type=int)
@home_option
def memo_restore(bot: str, scope: str, revision: int, home: Path | None) -> None:
    """把某会话备忘录恢复为历史版本 REVISION（当前内容会先存为一个历史版本）"""
    from ..engine import notes

    target = _scope_argument(scope)

    async def run():  # type: ignore[no-untyped-def]
        return await notes.restore_memo(await _open_engine(), bot, target, revision)

    content = _run(run)
    click.echo(f"已恢复 {target.key} 的备忘录（{len(content)} 字）")


@cognition.command("eval")
@click.argument("kind", type=click.Choice(["recall", "admission", "time", "gate"]))
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json/--table", "as_json", default=None, help="输出 JSON（非终端时默认）或表格")
@click.option("--keep", is_flag=True, help="保留临时数据目录以便检查")
def eval_command(kind: str, file: Path, as_json: bool | None, keep: bool) -> None:
    """评测召回（recall）、准入（admission）、时间解析（time）、绝对化判定（gate）；不调用 LLM"""
    if _in_bot_process() and kind == "recall":
        # The bot's NoneBot is initialised on the bot's database: evaluate in a fresh process.
        args = [sys.executable, "-m", "amrita_plugin_cognition", "eval", kind, str(file)]
        if as_json is not None:
            args.append("--json" if as_json else "--table")
        if keep:
            args.append("--keep")
        sys.exit(subprocess.call(args))
    from . import evaluation

    try:
        if kind == "admission":
            report = evaluation.run_admission_eval(file)
        elif kind == "time":
            from .eval_time import run_time_eval

            report = run_time_eval(file)
        elif kind == "gate":
            from .eval_gate import run_gate_eval

            report = run_gate_eval(file)
        else:
            memories, queries = evaluation.parse_recall_file(file)
            report = _run_recall(memories, queries, keep)
    except evaluation.EvalInputError as error:
        click.echo(f"错误: {file}: {error}", err=True)
        sys.exit(2)
    _emit(report, as_json, evaluation.render_table)


def _run_recall(memories, queries, keep: bool) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    from . import evaluation
    from . import runtime as standalone

    base = standalone.standalone_home() or evaluation.throwaway_dir()
    try:
        standalone.upgrade_database()

        async def run() -> dict[str, Any]:
            from nonebot_plugin_orm import get_session

            from .. import runtime
            from ..engine.factory import build_engine

            # Defaults, unless COGNITION_* environment variables say otherwise (e.g. the embedder).
            engine = build_engine(runtime.plugin_config(), standalone.plugin_data_dir(base), get_session)
            await engine.start()
            await engine.check_fingerprint()
            return await evaluation.run_recall_eval(memories, queries, engine, evaluation.stderr_progress)

        return asyncio.run(run())
    finally:
        if keep:
            click.echo(f"数据目录已保留: {base}", err=True)
        else:
            shutil.rmtree(base, ignore_errors=True)


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
    from . import demo

    day = start.date() if start else None
    if _in_bot_process():
        # The bot's NoneBot is already initialised: the demo boots its own in a fresh process.
        try:
            sys.exit(demo.run_in_subprocess(preset, day, keep))
        except demo.DemoError as error:
            _fail(str(error))
    sys.exit(demo.main(preset, day, keep))


def main() -> None:
    cognition(prog_name="python -m amrita_plugin_cognition")


from . import job_commands  # noqa: E402,F401  (registers ``jobs`` on the group above)
