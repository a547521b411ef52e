"""Human-readable output of the commands: sentences and tables (rich), never raw dicts.

``--json`` prints the same data as one JSON document instead (see ``commands.emit``). rich is
imported here only, when a table is printed, so that ``--help`` stays fast.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone, tzinfo
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from ..api import BackupInfo

SCOPE_KINDS = {"group": "群聊", "private": "私聊"}
MEMORY_STATES = {"active": "有效", "superseded": "已被取代", "forgotten": "已遗忘", "expired": "已过期"}
BACKUP_TABLES = {
    "memory": "记忆",
    "memo": "备忘录",
    "memo_revision": "备忘录历史",
    "pin": "提醒",
    "barrier": "遗忘屏障",
    "profile": "画像卡片",
    "profile_revision": "画像历史",
    "chat_switch": "会话开关",
    "optout": "不被记住",
    "audit": "审计记录",
}
#: Every table a backup counts, by name (the list's columns are ``BACKUP_TABLES``: the knowledge
#: base's counts are in the sentence after ``backup create`` and in ``--json``, so the table
#: still fits a terminal).
BACKUP_TABLE_NAMES = {
    **BACKUP_TABLES,
    "memory_source": "合并来源",
    "knowledge": "知识库条目",
    "knowledge_revision": "知识库历史",
    "knowledge_suggestion": "知识库建议",
}
JOB_STATES = {"pending": "待处理", "processing": "处理中", "dead": "已放弃", "failed": "已放弃"}
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


#: The zone times are shown in: the configuration's ``timezone`` (what the chat shows too), set
#: when a command reads the configuration (``use_timezone``); the machine's zone until then.
_ZONE: dict[str, tzinfo] = {}


def use_timezone(name: str) -> None:
    from zoneinfo import ZoneInfo

    _ZONE["zone"] = ZoneInfo(name)


def display_zone() -> tzinfo:
    zone = _ZONE.get("zone")
    if zone is None:
        local = datetime.now().astimezone().tzinfo
        assert local is not None
        return local
    return zone


def zone_name() -> str:
    """The zone named as a person reads it: ``Asia/Shanghai（UTC+08:00）``."""
    zone = display_zone()
    offset = datetime.now(zone).strftime("%z")
    offset = f"UTC{offset[:3]}:{offset[3:]}" if offset else "UTC"
    key = getattr(zone, "key", None) or datetime.now(zone).tzname() or ""
    return f"{key}（{offset}）" if key and key != offset else offset


def zone_note() -> str:
    """The line under a table of times."""
    return f"时间按 {zone_name()} 显示"


def _moment(value: str | datetime | None) -> datetime | None:
    if isinstance(value, datetime):
        moment = value
    else:
        try:
            moment = datetime.fromisoformat(value or "")
        except ValueError:
            return None
    if moment.tzinfo is None:  # the store's times are UTC
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(display_zone())


#: A free-text column counts this wide when deciding whether a table fits (it wraps below that).
FREE_TEXT_MIN = 20


def print_rows(
    out: Console,
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    title: str | None = None,
    right: tuple[int, ...] = (),
    wrap: tuple[int, ...] = (),
) -> None:
    """``rows`` as a table when it fits the terminal (free-text columns, ``wrap``, fold inside
    it); otherwise each row folded into lines of ``column  value``, so that no column and no value
    is cut at 80 columns. Cells are rich markup (escaped already)."""
    from rich.table import Table
    from rich.text import Text

    widths = [
        max([Text.from_markup(column).cell_len] + [Text.from_markup(row[index]).cell_len for row in rows])
        for index, column in enumerate(columns)
    ]
    needed = sum(min(width, FREE_TEXT_MIN) if index in wrap else width for index, width in enumerate(widths))
    if needed + 2 * len(columns) <= out.width:
        table = _table(*columns, title=title, right=right, wrap=wrap)
        for row in rows:
            table.add_row(*row)
        out.print(table)
        return
    if title:
        out.print(title)
    for row in rows:
        folded = Table.grid(padding=(0, 2))
        folded.add_column(no_wrap=True)
        folded.add_column(overflow="fold")
        for column, value in zip(columns, row, strict=True):
            folded.add_row(column, value)
        out.print(folded)
        out.print()


def local_time(value: str | datetime | None) -> str:
    """A timestamp in the display zone, to the minute (the text itself if it is no timestamp)."""
    if not value:
        return DASH
    moment = _moment(value)
    return str(value) if moment is None else moment.strftime("%Y-%m-%d %H:%M")


def happened_time(value: str | None, precision: str | None) -> str:
    """When a fact happened, at the precision it was said with: ``2027-01``, ``2026-11-30``, or a
    time to the minute."""
    if not value:
        return DASH
    moment = _moment(value)
    if moment is None:
        return value
    from ..api import Precision
    from ..api import happened_label as label

    try:
        stated = Precision(precision) if precision else None
    except ValueError:
        stated = None
    return label(moment, stated, display_zone())


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


def _decay_sentence(decay: dict[str, Any]) -> str:
    """The decay sweep in ``status``: its last finished pass and the pass under way, if any."""
    last = decay.get("last_pass") or {}
    if decay.get("last_finished_at"):
        said = (
            f"衰减扫描：上一轮完成于 {local_time(decay['last_finished_at'])}（读 {last.get('scanned', 0)} 条，"
            f"降级 {last.get('demoted', 0)}，过期 {last.get('expired', 0)}，永久删除 {last.get('purged', 0)}）"
        )
    else:
        said = "衰减扫描：还没有完成过一轮"
    if decay.get("cursor"):
        said += f"；本轮进行中，已扫到编号 #{decay['cursor']}"
    interval = decay.get("interval_hours", 0)
    return said + (f"；每 {interval:g} 小时一轮" if interval else "；未定时运行（ambot cognition sweep）")


def _cycles_sentence(cycles: dict[str, Any]) -> str:
    """The consolidation cycles in ``status``: jobs, chats cycled, the last cycle, merges done."""
    said = "整理周期：" + ("开启" if cycles.get("enabled") else "已关闭（consolidation.cycle = false）")
    said += f"；等待 {cycles.get('pending', 0)} 个会话，进行中 {cycles.get('processing', 0)}"
    if cycles.get("dead"):
        said += f"，失败 {cycles['dead']}"
    if cycles.get("last_cycle_at"):
        said += f"；已整理过 {cycles.get('chats_cycled', 0)} 个会话，最近一次于 {local_time(cycles['last_cycle_at'])}"
    return said + f"；已合并 {cycles.get('merged', 0)} 条（取代 {cycles.get('merged_sources', 0)} 条重复记忆）"


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
    if "decay" in report:
        out.print(_escape(_decay_sentence(report["decay"])))
    if "cycles" in report:
        out.print(_escape(_cycles_sentence(report["cycles"])))
        if report["cycles"].get("judgement"):
            from .render_consolidation import judgement_usage_lines

            for line in judgement_usage_lines(report["cycles"]["judgement"]):
                out.print(_escape(line))
    out.print(_escape(_fingerprint_sentence(report.get("fingerprint"), report.get("configured_embedder", {}))))

    index = report.get("index", {})
    head = f"向量索引：{index.get('backend', '?')}，第 {index.get('generation', '?')} 代"
    checked = index.get("checked") or {}
    if index.get("healthy") and checked.get("complete") is False:
        compared = f"，缺 {index['missing']} 条，多余 {index['stale']} 条" if "missing" in index else ""
        body = (
            f"健康；会话太多，只抽查了最近写入的 {checked['chats']} 个会话（共 {checked['of']} 个，"
            f"用时 {checked.get('seconds', 0)} 秒）：其中向量 {index.get('vectors_checked', 0)} 条"
            f"{compared}；全部核对：加 --full"
        )
    elif index.get("healthy"):
        body = f"健康；向量 {index.get('vectors', 0)} 条"
        if index.get("card_vectors"):
            body += f"，画像向量 {index['card_vectors']} 条"
        if "missing" in index:
            body += f"，缺 {index['missing']} 条，多余 {index['stale']} 条"
    else:
        body = f"不可用：{index.get('error') or '原因未知'}"
    out.print(_escape(f"{head}，{body}"))
    if index.get("copy_complete") is False:
        out.print("向量副本：尚未补齐（启动时的核对或 ambot cognition repair 补齐后，小会话改在数据库里精确检索）")
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
        line += f"，最早一条入队于 {local_time(outbox['oldest'])}（{zone_name()}）"
    out.print(line)
    if outbox.get("last_error"):
        out.print(f"  最近的错误：{_escape(str(outbox['last_error'])[:200])}")
    if outbox.get("dead"):
        out.print("  运行 ambot cognition outbox retry 重试已放弃的索引任务")

    jobs = report.get("jobs", {})
    line = (
        f"史官任务：待处理 {jobs.get('pending', 0)} 个，处理中 {jobs.get('processing', 0)} 个，"
        f"已放弃 {jobs.get('dead', 0)} 个"
    )
    if jobs.get("oldest_pending"):
        line += f"，最早一个入队于 {local_time(jobs['oldest_pending'])}（{zone_name()}）"
    out.print(line)
    if jobs.get("dead"):
        out.print("  运行 ambot cognition jobs list --state dead 查看，jobs retry 重试")

    llm = report.get("llm") or {}
    if llm:
        out.print(_escape(_llm_sentence(llm)))

    scopes = report.get("top_scopes") or []
    if scopes:
        table = _table("机器人", "会话", "有效记忆", title="记忆最多的会话", right=(2,))
        for scope in scopes:
            table.add_row(_escape(scope["bot"]), _escape(scope["scope"]), str(scope["active"]))
        out.print(table)


def _calls(counts: dict[str, Any]) -> str:
    return (
        f"{counts.get('calls', 0)} 次（失败 {counts.get('failures', 0)} 次，超时 {counts.get('timeouts', 0)} 次，"
        f"输入 {counts.get('prompt_tokens', 0)} / 输出 {counts.get('completion_tokens', 0)} tokens）"
    )


def _llm_sentence(llm: dict[str, Any]) -> str:
    """The background LLM calls of every process that shares the database (the bot's included),
    counted in SQL: today (by the configured zone) and since the first call counted."""
    line = f"后台 LLM 预设：{llm.get('preset') or '聊天默认预设'}"
    total = llm.get("total") or {}
    if not total.get("calls"):
        return line + "；还没有调用过（机器人与命令行的调用都记在数据库里）"
    today = llm.get("today") or {}
    purposes = "、".join(f"{name} {counts.get('calls', 0)} 次" for name, counts in (llm.get("purposes") or {}).items())
    line += f"；今天（{llm.get('day')}）调用 {_calls(today)}" + (f"，其中 {purposes}" if purposes else "")
    return line + f"；自 {llm.get('since')} 起共 {_calls(total)}，含机器人和命令行所有进程"


# ---------------------------------------------------------------------------- backups, jobs


def backup_counts(counts: dict[str, int]) -> str:
    return "，".join(f"{BACKUP_TABLE_NAMES.get(table, table)} {count} 条" for table, count in counts.items())


def backup_list(infos: list[BackupInfo]) -> None:
    out = console()
    if not infos:
        out.print("还没有备份（ambot cognition backup create 创建一份）")
        return
    rows = [
        (
            _escape(info.path.name),
            local_time(info.created_at),
            size_text(info.size),
            *(str(info.counts.get(name, 0)) for name in BACKUP_TABLES),
        )
        for info in infos
    ]
    columns = ("文件", "创建时间", "大小", *BACKUP_TABLES.values())
    print_rows(out, columns, rows, right=tuple(range(2, 3 + len(BACKUP_TABLES))))
    out.print(_escape(f"共 {len(infos)} 份，位于 {infos[0].path.parent}；{zone_note()}"))


def jobs_list(items: list[dict[str, Any]]) -> None:
    out = console()
    if not items:
        out.print("没有任务")
        return
    rows = [
        (
            f"#{item['id']}",
            JOB_STATES.get(item["state"], item["state"]),
            _escape(item["kind"]),
            _escape(item["bot_id"]),
            _escape(item["scope"]),
            local_time(item["enqueued_at"]),
            str(item["attempts"]),
            _escape((item.get("last_error") or "").replace("\n", " ")[:120]) or DASH,
        )
        for item in items
    ]
    columns = ("编号", "状态", "类型", "机器人", "会话", "入队时间", "尝试", "最近的错误")
    print_rows(out, columns, rows, right=(0, 6), wrap=(7,))
    out.print(f"共 {len(items)} 个；{zone_note()}")


# ---------------------------------------------------------------------------- memo


def memo_history(revisions: list[Any]) -> None:
    rows = [
        (
            f"#{revision.id}",
            local_time(revision.written_at),
            _escape(revision.written_by or DASH),
            local_time(revision.replaced_at),
            _escape(revision.replaced_by or DASH),
            _escape(revision.content.replace("\n", " / ")[:60]),
        )
        for revision in revisions
    ]
    out = console()
    print_rows(out, ("版本", "写于", "写入者", "被替换于", "替换者", "内容"), rows, right=(0,), wrap=(5,))
    out.print(f"{zone_note()}；用 memo restore BOT SCOPE 版本号 恢复某个版本")
