"""Human output of ``consolidate`` (rich tables and sentences)."""

from __future__ import annotations

from typing import Any

from .render import _escape, console, local_time, print_rows, zone_note

#: Why a planned merge was left alone, in Chinese.
SKIP_REASONS = {
    "changed": "其中的记忆已被修改或删除",
    "forgotten": "内容已被要求遗忘",
    "admission": "内容不再符合记录规则",
    "opted_out": "涉及已关闭记忆的用户",
    "switched_off": "会话的记忆已关闭",
}


def consolidated(report: dict[str, Any]) -> None:
    out = console()
    chat = _escape(report["chat"])
    if report["switched_off"]:
        out.print(f"{chat} 的记忆已关闭（或插件未启用），不整理")
        return
    exact = report["exact"]
    if exact:
        columns = ("来源编号", "合并为", "重要度", "内容")
        rows = [
            (
                "、".join(f"#{source}" for source in plan["sources"]),
                f"#{plan['merged_id']}" if plan["merged_id"] else ("（计划）" if report["dry_run"] else "—"),
                plan["importance"],
                _escape(plan["text"]),
            )
            for plan in exact
        ]
        print_rows(out, columns, rows, wrap=(3,))
    verb = "将合并" if report["dry_run"] else "已合并"
    done = len(exact) if report["dry_run"] else report["merged"]
    sources = sum(len(plan["sources"]) for plan in exact) if report["dry_run"] else report["sources_merged"]
    out.print(
        f"{chat}（机器人 {_escape(report['bot_id'])}）：有效记忆 {report['memories']} 条；"
        f"完全相同的重复 {verb} {done} 组（{sources} 条）"
    )
    for skipped in report["skipped"]:
        ids = "、".join(f"#{source}" for source in skipped["sources"])
        out.print(_escape(f"未合并 {ids}：{SKIP_REASONS.get(skipped['reason'], skipped['reason'])}"))
    near = report["near_proposed"]
    if near:
        groups = "；".join("、".join(f"#{member}" for member in members) for members in near)
        out.print(_escape(f"相近的记忆 {len(near)} 组，仅列为候选，未合并：{groups}"))
    out.print("需要判断的整理（相近记忆的合并、重要度校准等，由模型完成）尚未实现：相近的记忆只作为候选保留。")
    window = report["next_window"]
    out.print(f"下次整理窗口：{local_time(window['start'])} 至 {local_time(window['end'])}；{zone_note()}")
    if report["dry_run"]:
        out.print("（--dry-run：没有做任何修改）")
