"""Human-readable output of ``eval recall|admission|time|gate``: the harness's reports as
sentences and tables (``render`` gives the console and the table shape)."""

from __future__ import annotations

from typing import Any

from .render import DASH, _escape, _table, console


def _figure(value: float | None) -> str:
    return DASH if value is None else f"{value:.3f}"


def _with_interval(value: float, interval: list[float] | None) -> str:
    """A rate and its 95 % interval: ``0.989 [0.962, 0.997]``."""
    return f"{value:.3f}" if not interval else f"{value:.3f} [{interval[0]:.3f}, {interval[1]:.3f}]"


def eval_report(report: dict[str, Any]) -> None:
    withheld = report.get("texts_withheld")
    if withheld:
        report = _ids_only(report)
    if report.get("files"):
        _per_file(report)
        console().print(f"合计（{len(report['files'])} 个文件）：")
    {
        "recall": _recall_report,
        "admission": _admission_report,
        "time": _time_report,
        "gate": _gate_report,
        "dedup": _dedup_report,
    }[report["kind"]](report)
    if report["kind"] != "recall":
        console().print("方括号里是 95 % 置信区间（Wilson）")
    if withheld:
        console().print(f"封存的测试集：不列文本；未通过的编号：{'、'.join(report['withheld_ids']) or '无'}")


def _ids_only(report: dict[str, Any]) -> dict[str, Any]:
    """A sealed report (``sealed.without_texts``): the case tables left out, their ids listed."""
    failures = report.get("failures") or []
    ids = [str(item["id"]) if isinstance(item, dict) else str(item) for item in failures]
    listed = [] if failures and isinstance(failures[0], dict) else failures
    return {**report, "failures": listed, "failure_details": [], "withheld_ids": ids}


def _per_file(report: dict[str, Any]) -> None:
    """One row per file: its cases and its rates with their intervals."""
    files: dict[str, dict[str, Any]] = report["files"]
    if report["kind"] == "admission":
        reasons = sorted({reason for each in files.values() for reason in each["recall_by_reason"]})
        columns = [*(f"拦截率：{reason}" for reason in reasons), "误拒率"]

        def cells(each: dict[str, Any]) -> list[str]:
            intervals = each.get("intervals", {})
            found = [
                _with_interval(each["recall_by_reason"][reason], intervals.get("recall_by_reason", {}).get(reason))
                if reason in each["recall_by_reason"]
                else DASH
                for reason in reasons
            ]
            return [*found, _with_interval(each["false_rejection_rate"], intervals.get("false_rejection_rate"))]

    elif report["kind"] == "dedup":
        columns = ["查准率", "查全率", "只看余弦：查准率"]

        def cells(each: dict[str, Any]) -> list[str]:
            intervals = each.get("intervals", {})
            cosine = each.get("cosine_only", {})
            return [
                _with_interval(each["precision"], intervals.get("precision")),
                _with_interval(each["recall"], intervals.get("recall")),
                _figure(cosine.get("precision")),
            ]

    else:
        names = ["accuracy"] if report["kind"] == "time" else ["accuracy", "false_positive_rate", "false_negative_rate"]
        titles = {"accuracy": "准确率", "false_positive_rate": "误拦率", "false_negative_rate": "漏判率"}
        columns = [titles[name] for name in names]

        def cells(each: dict[str, Any]) -> list[str]:
            return [_with_interval(each[name], each.get("intervals", {}).get(name)) for name in names]

    table = _table("文件", "样例", *columns, right=tuple(range(1, 2 + len(columns))))
    for name, each in files.items():
        table.add_row(_escape(name), str(each.get("cases", each.get("pairs"))), *cells(each))
    console().print(table)


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
    intervals = report.get("intervals", {})
    counts = report.get("counts", {})
    if report["recall_by_reason"]:
        table = _table("应拒绝的原因", "拦截率 [95 % 区间]", "拦下/条数", right=(1, 2))
        for reason, rate in report["recall_by_reason"].items():
            tally = counts.get("caught_by_reason", {}).get(reason)
            table.add_row(
                _escape(reason),
                _with_interval(rate, intervals.get("recall_by_reason", {}).get(reason)),
                f"{tally[0]}/{tally[1]}" if tally else DASH,
            )
        out.print(table)
    else:
        out.print("没有应拒绝（admit: false）的样例")
    refused = counts.get("false_rejections")
    out.print(
        f"误拒率（应原样存入却被拒绝或改写）："
        f"{_with_interval(report['false_rejection_rate'], intervals.get('false_rejection_rate'))}"
        + (f"（{refused[0]}/{refused[1]}）" if refused else "")
    )
    model, combined = report.get("model"), report.get("combined")
    if model is None or combined is None:
        return
    out.print(
        f"模型 {_escape(str(model.get('preset', '')))}：回答 {model['cases']} 条，调用失败 {model['errors']} 条"
        + (f"（第 {'、'.join(str(line) for line in model['error_lines'][:20])} 行）" if model["error_lines"] else "")
    )
    reasons = sorted({*report["recall_by_reason"], *model["recall_by_reason"], *combined["recall_by_reason"]})
    table = _table("应拒绝的原因", "规则", "模型", "规则+模型", right=(1, 2, 3))
    for reason in reasons:
        table.add_row(
            _escape(reason),
            *(_figure(part["recall_by_reason"].get(reason)) for part in (report, model, combined)),
        )
    table.add_row("误拒率", *(_figure(part["false_rejection_rate"]) for part in (report, model, combined)))
    out.print(table)
    out.print(
        "模型与规则+模型只计模型回答了的行；标记次数：" + "，".join(f"{k} {v}" for k, v in model["flags"].items())
    )


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
        f"时间解析评测：{report['cases']} 条，"
        f"准确率 {_with_interval(report['accuracy'], report.get('intervals', {}).get('accuracy'))}；"
        f"误解析（不该解析却解析了）{report['false_resolutions']} 条，漏解析 {report['misses']} 条，"
        f"日期错误 {report['wrong_dates']} 条"
    )
    failures = [{**item, "expected": item["expected"] or "无（不应解析）"} for item in report.get("failures") or []]
    _failures({"failures": failures}, "期望日期", "实际日期", lambda item: item["got"] or "无")


def _gate_report(report: dict[str, Any]) -> None:
    intervals = report.get("intervals", {})
    console().print(
        f"绝对化判定评测：{report['cases']} 条，"
        f"准确率 {_with_interval(report['accuracy'], intervals.get('accuracy'))}；"
        f"误拦率（自洽的事实被判为不自洽）"
        f"{_with_interval(report['false_positive_rate'], intervals.get('false_positive_rate'))}，"
        f"漏判率（含相对指代的事实被放过）"
        f"{_with_interval(report['false_negative_rate'], intervals.get('false_negative_rate'))}"
    )

    from ..api import GATE_KIND_LABELS as KIND_LABELS

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


def _dedup_report(report: dict[str, Any]) -> None:
    out = console()
    intervals = report.get("intervals", {})
    counts = report.get("counts", {})
    out.print(
        f"近似重复评测：{report['pairs']} 对，其中重复 {counts.get('duplicates', DASH)} 对；"
        f"查准率 {_with_interval(report['precision'], intervals.get('precision'))}，"
        f"查全率 {_with_interval(report['recall'], intervals.get('recall'))}；"
        f"判错 {len(report['failures'])} 对"
    )
    cosine = report.get("cosine_only") or {}
    if cosine.get("threshold") is not None:
        out.print(
            f"只看余弦相似度（阈值 {cosine['threshold']:.3f}，查全率 {_figure(cosine['recall'])}）："
            f"查准率 {_with_interval(cosine['precision'], cosine.get('intervals', {}).get('precision'))}"
        )
    details = report.get("failure_details") or []
    if not details:
        return
    table = _table(
        "编号", "事实 a", "事实 b", "期望", "判定理由", title=f"判错的样例（前 {len(details)} 条）", wrap=(1, 2, 4)
    )
    for item in details:
        reason = f"{item['reason']} {item['detail']}".strip() + f"（余弦 {item['similarity']:.3f}）"
        table.add_row(
            _escape(item["id"]),
            _escape(item["a"]),
            _escape(item["b"]),
            "重复" if item["expected"] else "不重复",
            _escape(reason),
        )
    out.print(table)
