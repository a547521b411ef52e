"""Output of ``import``: the reading spinner, the progress bar (on stderr) and the report."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import Any

from . import render


@contextlib.contextmanager
def reading(importer: str) -> Iterator[None]:
    from rich.console import Console

    with Console(stderr=True).status(f"正在读取 {importer} 的数据…"):
        yield


@contextlib.contextmanager
def progress(total: int, dry_run: bool) -> Iterator[Callable[[int], None]]:
    """A progress bar on stderr; yields the engine's callback (records done since the last call)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(file=sys.stderr), transient=False) as bar:
        task = bar.add_task("检查" if dry_run else "导入", total=max(1, total))
        yield lambda done: bar.advance(task, done)


def report(data: dict[str, Any]) -> None:
    from rich.markup import escape

    from ..api import IMPORT_KIND_NAMES, IMPORT_REASON_NAMES

    console = render.console()
    verb = "将导入" if data["dry_run"] else "已导入"
    title = f"{'检查（未写入）' if data['dry_run'] else '导入'} {data['importer']}：{data['source']}"
    table = render._table("类别", verb, "跳过（已导入或已有）", "拒绝", "拒绝原因", title=title, right=(1, 2, 3))
    for kind, tally in data["kinds"].items():
        reasons = "，".join(
            f"{IMPORT_REASON_NAMES.get(reason, reason)} {count}" for reason, count in tally["refused"].items()
        )
        table.add_row(
            IMPORT_KIND_NAMES.get(kind, kind),
            str(tally["imported"]),
            str(tally["skipped"]),
            str(sum(tally["refused"].values())),
            escape(reasons) or render.DASH,
        )
    if not data["kinds"]:
        console.print("来源中没有可导入的记录")
    else:
        console.print(table)
    for refusal in data["refusals"][:20]:
        reason = IMPORT_REASON_NAMES.get(refusal["reason"], refusal["reason"])
        console.print(f"  拒绝 {escape(refusal['record'])}：{escape(reason)}")
    for missing in data.get("missing", []):
        console.print(f"  未找到 {escape(missing)}（跳过）")
    if data["dry_run"]:
        console.print("这是检查：没有写入任何内容。去掉 --dry-run 即可导入。")
