"""Human output of ``consolidate`` and of the cycles' model use in ``status`` (rich tables and sentences)."""

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
        out.print(_escape(f"相近的记忆 {len(near)} 组（候选，由模型判断）：{groups}"))
    wording = report.get("wording_proposed") or []
    if wording:
        groups = "；".join("、".join(f"#{member}" for member in members) for members in wording)
        out.print(_escape(f"可能相同、措辞不同的记忆 {len(wording)} 组（规则存疑，由模型判断）：{groups}"))
    step = report.get("model_step")
    if step:
        for line in model_step_lines(step):
            out.print(_escape(line))
    window = report["next_window"]
    out.print(f"下次整理窗口：{local_time(window['start'])} 至 {local_time(window['end'])}；{zone_note()}")
    if report["dry_run"]:
        out.print("（--dry-run：没有做任何修改）")


def _work(step: dict[str, Any]) -> str:
    from ..api import JUDGEMENT_WORK_ZH

    return "、".join(JUDGEMENT_WORK_ZH.get(item, item) for item in step.get("work") or [])


def model_step_lines(step: dict[str, Any]) -> list[str]:
    """The judgement step of a cycle (``ModelStep.as_dict``): how it ended, rounds, tokens, changes
    and summary; or why the model was not called; in a dry run, whether it would be."""
    from ..api import JUDGEMENT_ENDED_ZH, judgement_changes_zh

    ended, reason = step["ended"], step.get("reason_zh") or step.get("reason") or ""
    if ended == "dry_run":
        if reason:
            return [f"模型判断：不会调用模型（{reason}）"]
        return [f"模型判断：会调用模型（{_work(step)}），本次最多 {step.get('budget_tokens', 0)} tokens"]
    if ended == "skipped":
        return [f"模型判断：没有调用模型（{reason}）"]
    if ended == "unavailable":
        return [f"模型判断：语言模型暂不可用，只做了不用模型的整理（{step.get('reason') or ''}）"]
    lines = [
        f"模型判断（{_work(step)}）：{JUDGEMENT_ENDED_ZH.get(ended, ended)}，{step.get('rounds', 0)} 轮，"
        f"输入 {step.get('prompt_tokens', 0)} / 输出 {step.get('completion_tokens', 0)} tokens"
        f"（预算 {step.get('budget_tokens', 0)}），工具调用 {step.get('tool_calls', 0)} 次"
    ]
    lines.append(f"改动：{judgement_changes_zh(step.get('changes') or {})}")
    if step.get("summary"):
        lines.append(f"总结：{step['summary']}")
    if step.get("message_to_user"):
        lines.append(f"留给用户的消息（机器人稍后在该私聊发送）：{step['message_to_user']}")
    return lines


def judgement_usage_lines(usage: dict[str, Any]) -> list[str]:
    """``status``: the cycles' model use today per bot account against the daily budget, and the last runs."""
    from ..api import JUDGEMENT_ENDED_ZH

    budget = usage.get("daily_token_budget", 0)
    head = f"整理的模型判断（{usage.get('day')}）："
    if not budget:
        head += "每日 token 预算为 0，不调用模型（consolidation.daily_token_budget）"
    bots = usage.get("bots") or []
    if budget and not bots:
        head += f"今天还没有整理；每个机器人账号每天 {budget} tokens"
    lines = [head]
    for found in bots:
        lines.append(
            f"  机器人 {found['bot']}：今天 {found['tokens_today']} / {budget} tokens，"
            f"整理 {found['runs_today']} 次（其中调用模型 {found['judged_today']} 次）"
        )
    for run in usage.get("recent") or []:
        if run["ended"] == "skipped":
            how = f"未调用模型：{run.get('reason_zh') or run.get('reason') or ''}"
        else:
            how = f"{JUDGEMENT_ENDED_ZH.get(run['ended'], run['ended'])}，{run['rounds']} 轮，{run['tokens']} tokens"
        found = f"合并重复 {run['merged']} 条，相近 {run['near']} 组，措辞不同待判 {run['wording']} 组"
        lines.append(f"  最近：{local_time(run['started_at'])} {run['chat']}（机器人 {run['bot']}）{found}；{how}")
    return lines
