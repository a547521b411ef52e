"""``ambot cognition jobs list|retry|drop``: the historian's job queue."""

from __future__ import annotations

from pathlib import Path

import click

from . import render
from .commands import _open_engine, cognition, confirm_or_stop, emit, home_option, json_option, run_engine
from .params import ROW_ID


@cognition.group("jobs")
def jobs_group() -> None:
    """史官任务队列：查看、重试、删除"""


def _ids(values: tuple[int, ...]) -> list[int] | None:
    return list(values) if values else None


@jobs_group.command("list")
@home_option
@click.option(
    "--state",
    type=click.Choice(["pending", "processing", "dead", "failed"]),
    default=None,
    help="只看这一状态（dead = 已放弃；failed 是它的旧名）",
)
@click.option("--limit", type=click.IntRange(1, 10000), default=50, show_default=True, help="最多列出条数")
@json_option
def jobs_list(home: Path | None, state: str | None, limit: int, as_json: bool | None) -> None:
    """列出任务（按入队时间）；--json 时输出一个 JSON 数组"""

    async def run():  # type: ignore[no-untyped-def]
        engine = await _open_engine(read_only=True)
        return await engine.jobs.list(state, limit)

    emit(run_engine(run, home, read_only=True), as_json, render.jobs_list)


@jobs_group.command("retry")
@click.argument("job_ids", nargs=-1, type=ROW_ID)
@home_option
def jobs_retry(job_ids: tuple[int, ...], home: Path | None) -> None:
    """把已放弃（dead）的任务（全部，或指定编号）放回队列，重新计数尝试次数"""

    async def run():  # type: ignore[no-untyped-def]
        engine = await _open_engine()
        return await engine.jobs.retry(_ids(job_ids))

    click.echo(f"已放回队列 {run_engine(run, home)} 个已放弃的任务")


@jobs_group.command("drop")
@click.argument("job_ids", nargs=-1, type=ROW_ID)
@click.option(
    "--state",
    type=click.Choice(["pending", "dead", "failed"]),
    default=None,
    help="删除这一状态的全部任务（dead = 已放弃；failed 是它的旧名）",
)
@home_option
@click.option("--yes", is_flag=True, help="不询问，直接删除")
def jobs_drop(job_ids: tuple[int, ...], state: str | None, home: Path | None, yes: bool) -> None:
    """删除任务（指定编号，或 --state 的全部；处理中的任务不会被删除）。删除的观察不会再被写成记忆"""
    if not job_ids and state is None:
        raise click.UsageError("请给出任务编号，或用 --state 指定要删除的状态")
    if not yes:
        confirm_or_stop("删除后这些观察不会再被写成记忆，继续吗？", default=False)

    async def run():  # type: ignore[no-untyped-def]
        engine = await _open_engine()
        return await engine.jobs.drop(_ids(job_ids), state)

    click.echo(f"已删除 {run_engine(run, home)} 个任务")
