"""Human output of ``inspect``, ``delete-all`` and ``audit`` (rich tables and sentences)."""

from __future__ import annotations

from typing import Any

from ..api import describe_source as describe
from .render import DASH, _escape, console, happened_time, local_time, print_rows, zone_note

STATUS_NAMES = {"active": "有效", "superseded": "已被取代", "expired": "已过期"}
ACTION_NAMES = {
    "delete_all_chat": "删除会话全部记忆",
    "delete_all_user": "删除用户全部数据",
    "delete_all_bot": "删除机器人全部记忆",
    "switch_off": "关闭会话记忆",
    "switch_on": "开启会话记忆",
    "optout": "用户退出记录",
    "optin": "用户恢复记录",
}
COUNT_NAMES = {
    "memories": "记忆",
    "notes": "笔记",
    "turns": "对话记录",
    "jobs": "史官任务",
    "memos": "备忘录",
    "pins": "提醒",
    "profiles": "画像",
    "knowledge": "知识库条目和建议",
}


def _source_text(source: dict[str, Any]) -> str:
    return describe(source, message_ids=True) or DASH


def _lineage_text(memory: dict[str, Any]) -> str:
    parts = []
    if memory["supersedes"]:
        parts.append("取代 " + "、".join(f"#{item}" for item in memory["supersedes"]))
    if memory["superseded_by"]:
        parts.append("被 " + " → ".join(f"#{item}" for item in memory["superseded_by"]) + " 取代")
    return "；".join(parts) or DASH


def inspected(report: dict[str, Any]) -> None:
    out = console()
    memories = report["memories"]
    if not memories:
        out.print("没有符合条件的记忆")
        return
    columns = ("编号", "状态", "会话", "内容", "类型/来源方式", "说话人", "发生", "记录", "来源", "更正链")
    rows = []
    for memory in memories:
        speaker = memory["speaker"]
        rows.append(
            (
                f"#{memory['id']}",
                STATUS_NAMES.get(memory["status"], memory["status"]),
                _escape(memory["chat"]),
                _escape(memory["text"]),
                _escape(f"{memory['kind']}/{memory['provenance']}"),
                _escape(f"{speaker['name']}({speaker['id']})" if speaker["id"] else speaker["name"] or DASH),
                happened_time(memory["happened_at"], memory.get("happened_precision")),
                local_time(memory["recorded_at"]),
                _escape(_source_text(memory["source"])),
                _escape(_lineage_text(memory)),
            )
        )
    print_rows(out, columns, rows, right=(0,), wrap=(3, 8, 9))
    pages = max(1, -(-report["total"] // report["per_page"]))
    out.print(f"共 {report['total']} 条，第 {report['page']}/{pages} 页；{zone_note()}")


def erased(report: dict[str, Any]) -> None:
    counts = "，".join(f"{COUNT_NAMES.get(key, key)} {value}" for key, value in report["counts"].items())
    out = console()
    out.print(_escape(f"已删除机器人 {report['bot_id']} 下 {report['target']} 的数据：{counts}。已写入审计记录。"))
    for line in report.get("kept", []):
        out.print(_escape(f"按设计保留：{line}"))
    if not report.get("log_truncated", True):
        out.print("数据库的预写日志（-wal 文件）这次没能清空（有其他连接在读）：下一次删除、或机器人停止时会清空。")
    if report.get("amrita_history"):
        out.print(_escape(report["amrita_history"]))


def audit_list(items: list[dict[str, Any]]) -> None:
    out = console()
    if not items:
        out.print("没有审计记录")
        return
    rows = [
        (
            f"#{item['id']}",
            local_time(item["at"]),
            _escape(item["bot_id"]),
            ACTION_NAMES.get(item["action"], item["action"]),
            _escape(item["target"]),
            _escape(item["actor"]),
            str(item["count"]),
        )
        for item in items
    ]
    print_rows(out, ("编号", "时间", "机器人", "操作", "对象", "操作者", "条数"), rows, right=(0, 6))
    out.print(f"共 {len(items)} 条；{zone_note()}")
