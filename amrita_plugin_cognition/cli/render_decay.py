"""Human output of ``sweep`` and ``expired list | restore`` (rich tables and sentences)."""

from __future__ import annotations

from typing import Any

from .render import _escape, console, local_time, print_rows, zone_note


def swept(report: dict[str, Any]) -> None:
    where = "已扫到表尾，本轮完成" if report["finished"] else f"停在编号 #{report['cursor']} 之后，下次从这里继续"
    console().print(
        f"衰减扫描：读了 {report['scanned']} 条（{report['batches']} 批），降级 {report['demoted']} 条，"
        f"过期 {report['expired']} 条，永久删除 {report['purged']} 条；{where}；用时 {report['elapsed_seconds']:.1f} 秒"
    )


def expired(report: dict[str, Any]) -> None:
    out = console()
    if not report["memories"]:
        out.print("没有已过期的记忆")
        return
    columns = ("编号", "会话", "内容", "过期于", "永久删除于")
    rows = [
        (
            f"#{memory['id']}",
            _escape(memory["chat"]),
            _escape(memory["text"]),
            local_time(memory["invalid_at"]),
            local_time(memory["purge_at"]),
        )
        for memory in report["memories"]
    ]
    print_rows(out, columns, rows, right=(0,), wrap=(2,))
    pages = max(1, -(-report["total"] // report["per_page"]))
    out.print(
        f"共 {report['total']} 条，第 {report['page']}/{pages} 页；"
        f"用 ambot cognition expired restore <编号> 恢复；{zone_note()}"
    )


def restored(report: dict[str, Any]) -> None:
    console().print(_escape(f"已恢复记忆 #{report['id']}（{report['chat']}）：{report['text']}"))
