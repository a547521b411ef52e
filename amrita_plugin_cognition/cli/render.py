"""Human-readable output of the commands: sentences and tables (rich), never raw dicts.

``--json`` prints the same data as one JSON document instead (see ``commands.emit``). rich is
imported here only, when a table is printed, so that ``--help`` stays fast.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from ..engine.backup import BackupInfo

SCOPE_KINDS = {"group": "群聊", "private": "私聊"}
MEMORY_STATES = {"active": "有效", "superseded": "已被取代", "forgotten": "已遗忘"}
BACKUP_TABLES = {
    "memory": "记忆",
    "memo": "备忘录",
    "memo_revision": "备忘录历史",
    "pin": "提醒",
    "barrier": "遗忘屏障",
    "profile": "画像卡片",
    "profile_revision": "画像历史",
}
JOB_STATES = {"pending": "待处理", "processing": "处理中", "failed": "失败"}
DASH = "—"


#: Width of the output when stdout is no terminal (a file, a pipe): tables are not folded to 80.
PIPE_WIDTH = 200


def console() -> Console:
    import sys

    from rich.console import Console

    width = None if sys.stdout.isatty() else PIPE_WIDTH
    return Console(highlight=False, soft_wrap=True, width=width)


def _table(*columns: str, title: str | None = None, right: tuple[int, ...] = (), wrap: tuple[int, ...] = ()) -> Table:
    """A plain table; only the columns in ``wrap`` (free text) fold when the terminal is narrow."""
    from rich import box
    from rich.table import Table

    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", pad_edge=False, show_edge=False)
    for index, column in enumerate(columns):
        table.add_column(
            column, justify="right" if index in right else "left", overflow="fold", no_wrap=index not in wrap
        )
    return table


def local_time(value: str | None) -> str:
    """An ISO timestamp in the local zone, to the second (the text itself if it is no timestamp)."""
    if not value:
        return DASH
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return value
    if moment.tzinfo is not None:
        moment = moment.astimezone()
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def size_text(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size / 1024 / 1024:.1f} MiB"


def _escape(text: object) -> str:
    from rich.markup import escape

    return escape(str(text))


# ---------------------------------------------------------------------------- status


def _embedder_text(fingerprint: dict[str, Any]) -> str:
    dimension = fingerprint.get("dimension")
    parts = [f"{fingerprint.get('protocol') or '?'} 模型 {fingerprint.get('model') or '?'}"]
    details = [f"{dimension} 维"] if dimension else []
    if fingerprint.get("url"):
        details.append(str(fingerprint["url"]))
    return parts[0] + (f"（{'，'.join(details)}）" if details else "")


def _fingerprint_sentence(stored: dict[str, Any] | None, configured: dict[str, Any]) -> str:
    current = f"嵌入模型：{_embedder_text(configured)}"
    if not stored:
        return f"{current}；索引里还没有记录指纹（尚未写入向量）"
    same_model = all(stored.get(key) == configured.get(key) for key in ("protocol", "model", "url"))
    same_dimension = not stored.get("dimension") or not configured.get("dimension")
    same_dimension = same_dimension or stored.get("dimension") == configured.get("dimension")
    if same_model and same_dimension:
        return f"{current}；与已存向量一致"
    return f"{current}；已存向量来自 {_embedder_text(stored)}，不一致：运行 reindex 重建"


def status(report: dict[str, Any]) -> None:
    out = console()
    active = report.get("active_total", 0)
    by_scope: list[str] = []
    other: dict[str, int] = {}
    for kind, states in sorted(report.get("memories", {}).items()):
        if states.get("active"):
            by_scope.append(f"{SCOPE_KINDS.get(kind, kind)} {states['active']} 条")
        for state, count in states.items():
            if state != "active":
                other[state] = other.get(state, 0) + count
    details = "，".join(by_scope)
    order = [*MEMORY_STATES, *sorted(set(other) - set(MEMORY_STATES))]
    others = "，".join(f"{MEMORY_STATES.get(state, state)} {other[state]} 条" for state in order if other.get(state))
    extra = "；".join(part for part in (details, others) if part)
    out.print(f"记忆：有效 {active} 条" + (f"（{_escape(extra)}）" if extra else ""))
    out.print(_escape(_fingerprint_sentence(report.get("fingerprint"), report.get("configured_embedder", {}))))

    index = report.get("index", {})
    head = f"向量索引：{index.get('backend', '?')}，第 {index.get('generation', '?')} 代"
    if index.get("healthy"):
        body = f"健康；向量 {index.get('vectors', 0)} 条"
        if index.get("card_vectors"):
            body += f"，画像向量 {index['card_vectors']} 条"
        if "missing" in index:
            body += f"，缺 {index['missing']} 条，多余 {index['stale']} 条"
    else:
        body = f"不可用：{index.get('error') or '原因未知'}"
    out.print(_escape(f"{head}，{body}"))
    gaps = _table("情况", "会话", "记忆编号", title="向量与数据库不一致的记忆", wrap=(2,))
    for kind, key in (("缺向量", "missing_ids"), ("多余向量", "stale_ids")):
        for label, ids in index.get(key, {}).items():
            gaps.add_row(kind, _escape(label), ", ".join(f"#{memory_id}" for memory_id in ids))
    if gaps.row_count:
        out.print(gaps)
    if index.get("missing") or index.get("stale"):
        out.print("  运行 ambot cognition repair 修复")

    outbox = report.get("outbox", {})
    line = (
        f"索引外发队列：待处理 {outbox.get('pending', 0)} 条，失败重试中 {outbox.get('failing', 0)} 条，"
        f"已放弃 {outbox.get('dead', 0)} 条"
    )
    if outbox.get("oldest"):
        line += f"，最早一条入队于 {local_time(outbox['oldest'])}"
    out.print(line)
    if outbox.get("last_error"):
        out.print(f"  最近的错误：{_escape(str(outbox['last_error'])[:200])}")
    if outbox.get("dead"):
        out.print("  运行 ambot cognition outbox retry 重试已放弃的索引任务")

    jobs = report.get("jobs", {})
    line = (
        f"史官任务：待处理 {jobs.get('pending', 0)} 个，处理中 {jobs.get('processing', 0)} 个，"
        f"失败 {jobs.get('failed', 0)} 个"
    )
    if jobs.get("oldest_pending"):
        line += f"，最早一个入队于 {local_time(jobs['oldest_pending'])}"
    out.print(line)
    if jobs.get("failed"):
        out.print("  运行 ambot cognition jobs list --state failed 查看，jobs retry 重试")

    llm = report.get("llm") or {}
    total = llm.get("total") or {}
    if llm:
        line = f"后台 LLM 预设：{llm.get('preset') or '聊天默认预设'}"
        if total.get("calls"):  # counters of this process: a command line makes no calls of its own
            line += (
                f"；本进程调用 {total['calls']} 次，失败 {total.get('failures', 0)} 次，"
                f"超时 {total.get('timeouts', 0)} 次，输入 {total.get('prompt_tokens', 0)} / "
                f"输出 {total.get('completion_tokens', 0)} tokens"
            )
        out.print(_escape(line))

    scopes = report.get("top_scopes") or []
    if scopes:
        table = _table("机器人", "会话", "有效记忆", title="记忆最多的会话", right=(2,))
        for scope in scopes:
            table.add_row(_escape(scope["bot"]), _escape(scope["scope"]), str(scope["active"]))
        out.print(table)


# ---------------------------------------------------------------------------- backups, jobs


def backup_counts(counts: dict[str, int]) -> str:
    return "，".join(f"{BACKUP_TABLES.get(table, table)} {count} 条" for table, count in counts.items())


def backup_list(infos: list[BackupInfo]) -> None:
    out = console()
    if not infos:
        out.print("还没有备份（ambot cognition backup create 创建一份）")
        return
    table = _table("文件", "创建时间", "大小", *BACKUP_TABLES.values(), right=tuple(range(2, 3 + len(BACKUP_TABLES))))
    for info in infos:
        counts = [str(info.counts.get(name, 0)) for name in BACKUP_TABLES]
        table.add_row(_escape(info.path.name), local_time(info.created_at), size_text(info.size), *counts)
    out.print(table)
    out.print(_escape(f"共 {len(infos)} 份，位于 {infos[0].path.parent}"))


def jobs_list(items: list[dict[str, Any]]) -> None:
    out = console()
    if not items:
        out.print("没有任务")
        return
    table = _table("编号", "状态", "类型", "机器人", "会话", "入队时间", "尝试", "最近的错误", right=(0, 6), wrap=(7,))
    for item in items:
        error = (item.get("last_error") or "").replace("\n", " ")
        table.add_row(
            f"#{item['id']}",
            JOB_STATES.get(item["state"], item["state"]),
            _escape(item["kind"]),
            _escape(item["bot_id"]),
            _escape(item["scope"]),
            local_time(item["enqueued_at"]),
            str(item["attempts"]),
            _escape(error[:120]) or DASH,
        )
    out.print(table)
    out.print(f"共 {len(items)} 个")


# ---------------------------------------------------------------------------- eval reports


def _figure(value: float | None) -> str:
    return DASH if value is None else f"{value:.3f}"


def eval_report(report: dict[str, Any]) -> None:
    {
        "recall": _recall_report,
        "admission": _admission_report,
        "time": _time_report,
        "gate": _gate_report,
    }[report["kind"]](report)


def _recall_report(report: dict[str, Any]) -> None:
    from .evaluation import RECALL_METRICS

    out = console()
    scored = report.get("scored_queries", report["queries"])
    out.print(
        f"召回评测：{report['memories']} 条记忆（存入 {report.get('stored', report['memories'])} 条），"
        f"{report['queries']} 条查询，其中 {scored} 条有相关记忆、计入召回指标，"
        f"{report.get('isolation_checks', 0)} 条检查隔离"
    )
    table = _table("类别", "查询", "计入召回", *RECALL_METRICS, "泄漏", right=tuple(range(1, 4 + len(RECALL_METRICS))))
    for name, figures in report["by_category"].items():
        table.add_row(
            _escape(name),
            str(figures["queries"]),
            str(figures.get("scored", figures["queries"])),
            *(_figure(figures.get(metric)) for metric in RECALL_METRICS),
            f"{figures.get('leaks', 0)} 条",
        )
    table.add_section()
    table.add_row(
        "总体",
        str(report["queries"]),
        str(scored),
        *(_figure(report["overall"].get(metric)) for metric in RECALL_METRICS),
        f"{report['leaks']} 条",
    )
    out.print(table)
    out.print(f"“{DASH}”：该类别没有列出相关记忆的查询（只检查隔离），不计召回")
    if report["leaks"]:
        shown = "、".join(report["leak_queries"][:10]) + ("…" if len(report["leak_queries"]) > 10 else "")
        out.print(
            _escape(
                f"隔离：泄漏 {report['leaks']} 条禁止出现的记忆，涉及 {len(report['leak_queries'])} 条查询（{shown}）"
            )
        )
    else:
        out.print("隔离：没有泄漏（禁止出现的记忆一条也没有被召回）")
    out.print(f"过时记忆排在相关记忆之前：{report['stale_above_relevant']} 次")
    latency = report["latency_ms"]
    out.print(f"召回延迟：p50 {latency['p50']} ms，p95 {latency['p95']} ms")


def _admission_report(report: dict[str, Any]) -> None:
    out = console()
    out.print(f"准入评测：{report['cases']} 条样例")
    if report["recall_by_reason"]:
        table = _table("应拒绝的原因", "拦截率", right=(1,))
        for reason, rate in report["recall_by_reason"].items():
            table.add_row(_escape(reason), f"{rate:.3f}")
        out.print(table)
    else:
        out.print("没有应拒绝（admit: false）的样例")
    out.print(f"误拒率（应原样存入却被拒绝或改写）：{report['false_rejection_rate']:.3f}")


def _failures(report: dict[str, Any], expected_title: str, got_title: str, got: Any) -> None:
    failures = report.get("failures") or []
    if not failures:
        return
    table = _table(
        "编号", "文本", expected_title, got_title, title=f"未通过的样例（前 {len(failures)} 条）", wrap=(1, 3)
    )
    for item in failures:
        table.add_row(_escape(item["id"]), _escape(item["text"]), _escape(item["expected"]), _escape(got(item)))
    console().print(table)


def _time_report(report: dict[str, Any]) -> None:
    console().print(
        f"时间解析评测：{report['cases']} 条，准确率 {report['accuracy']:.3f}；"
        f"误解析（不该解析却解析了）{report['false_resolutions']} 条，漏解析 {report['misses']} 条，"
        f"日期错误 {report['wrong_dates']} 条"
    )
    failures = [{**item, "expected": item["expected"] or "无（不应解析）"} for item in report.get("failures") or []]
    _failures({"failures": failures}, "期望日期", "实际日期", lambda item: item["got"] or "无")


def _gate_report(report: dict[str, Any]) -> None:
    console().print(
        f"绝对化判定评测：{report['cases']} 条，准确率 {report['accuracy']:.3f}；"
        f"误拦率（自洽的事实被判为不自洽）{report['false_positive_rate']:.3f}，"
        f"漏判率（含相对指代的事实被放过）{report['false_negative_rate']:.3f}"
    )

    from ..domain.gate import KIND_LABELS

    labels = {**KIND_LABELS, "id_drift": "编号不符"}

    def problems(item: dict[str, Any]) -> str:
        found = item.get("problems") or []
        return (
            "、".join(f"“{problem['word']}”（{labels.get(problem['kind'], problem['kind'])}）" for problem in found)
            or "无"
        )

    failures = report.get("failures") or []
    _failures(
        {"failures": [{**item, "expected": "自洽" if item["expected"] else "不自洽"} for item in failures]},
        "期望",
        "判定出的问题",
        problems,
    )


# ---------------------------------------------------------------------------- memo


def memo_history(revisions: list[Any]) -> None:
    table = _table("版本", "写于", "写入者", "被替换于", "替换者", "内容", right=(0,), wrap=(5,))
    for revision in revisions:
        table.add_row(
            f"#{revision.id}",
            f"{revision.written_at:%Y-%m-%d %H:%M}",
            _escape(revision.written_by or DASH),
            f"{revision.replaced_at:%Y-%m-%d %H:%M}",
            _escape(revision.replaced_by or DASH),
            _escape(revision.content.replace("\n", " / ")[:60]),
        )
    out = console()
    out.print(table)
    out.print("用 memo restore BOT SCOPE 版本号 恢复某个版本")
