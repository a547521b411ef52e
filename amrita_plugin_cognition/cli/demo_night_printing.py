"""The night's part of the demo's transcript (Chinese): the window it ran at, the decay sweep and
what it retired, the cycle's pre-pass with each merge's lineage, the judgement step's tool calls
(arguments and answers, shortened) and its report, the group's card against its last print, the
knowledge entries written, and the night's checks."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

from ..api import Importance
from .demo_night import NightRun, describe
from .demo_recording import Outcome
from .demo_script import WEEKDAYS
from .render_consolidation import model_step_lines

if TYPE_CHECKING:
    from ..api import KnowledgeEntry, MemoryRecord, ModelStep
    from .demo_printing import Printer

#: Why the planner chose the window (``domain/idle_planner.Reason``).
WINDOW_REASONS = {
    "quiet_run": "热度图里下一段足够长的安静时段",
    "rest_of_run": "已经开始的安静时段的剩余部分",
    "cold_slot": "热度图里的冷门时段",
    "busy_chat": "一直很活跃的会话：24 小时内的一个短窗口",
    "no_history": "消息历史不足一天：固定在 idle_target_hour",
    "backoff": "未启用空闲窗口规划：按退避时间",
}
TIER_NAMES = {Importance.HIGH: "高", Importance.MEDIUM: "中", Importance.LOW: "低"}
#: A tool call's arguments and answer are shown up to this many characters.
SHOWN_CHARS = 240


def clip(text: str, limit: int = SHOWN_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _arguments(text: str) -> str:
    try:
        return json.dumps(json.loads(text), ensure_ascii=False)
    except json.JSONDecodeError:
        return text


def _memory(record: MemoryRecord) -> str:
    return f"[记忆#{record.id}] {record.text}"


def print_night(printer: Printer, run: NightRun, outcome: Outcome) -> None:
    night, window = run.night, run.window
    local = run.now
    printer.line()
    printer.line(f"━━━━━━━━ 夜间整理 · {local:%Y-%m-%d %H:%M} 星期{WEEKDAYS[local.weekday()]} ━━━━━━━━")
    end = window.end.astimezone(local.tzinfo)
    reason = WINDOW_REASONS.get(window.reason, window.reason)
    printer.line(
        f"  {night.chat.title}的下一个空闲窗口（空闲窗口规划器，按演示发出的消息）："
        f"{local:%m-%d %H:%M} 至 {end:%m-%d %H:%M}（{reason}）；夜间的每一步都按这个模拟时间运行"
    )
    if night.short_term_days != run.configured_short_term_days:
        medium = math.sqrt(night.short_term_days * run.long_term_days)
        printer.line(
            f"  演示设置：模拟只有 {printer.script.days} 天，低重要度记忆的寿命（consolidation.short_term_days）"
            f"由 {run.configured_short_term_days:g} 天改为 {night.short_term_days:g} 天"
            f"（中重要度随之为 {medium:.1f} 天，高重要度 {run.long_term_days:g} 天不变）"
        )
    _sweep(printer, run)
    _cycle(printer, run)
    printer.card(run.card, run.card_after, when="夜间整理", fresh="今夜")
    for entry in run.entries:
        _entry(printer, entry)
    for check, ok in run.checks:
        outcome.count(ok)
        printer.line(f"  检查 {'✓' if ok else '✗'} {describe(check, night.chat.title)}")


def _sweep(printer: Printer, run: NightRun) -> None:
    seen, report = run.sweep, run.sweep.report
    printer.line()
    printer.line(
        f"  ◇ 衰减清扫（engine.decay.sweep）：扫描 {report.scanned} 条，降级 {report.demoted} 条，"
        f"过期 {report.expired} 条，彻底清除 {report.purged} 条"
    )
    zone = run.now.tzinfo
    for record in seen.retired:
        written = record.updated_at.astimezone(zone)
        printer.line(
            f"    ● 过期 {_memory(record)}（{TIER_NAMES.get(record.importance, record.importance)}重要度，"
            f"{written:%m-%d %H:%M} 写入，已过 {run.night.short_term_days:g} 天的寿命；"
            "状态改为已过期，可用 ambot cognition expired restore 恢复）"
        )
    for old, new in seen.demoted:
        tiers = f"{TIER_NAMES.get(old.importance)} → {TIER_NAMES.get(new.importance)}"
        printer.line(f"    ● 降级 {_memory(old)}（{tiers}，寿命重新计算）")
    if not seen.retired and not seen.demoted:
        printer.line("    （没有到期的记忆）")


def _lineage(printer: Printer, run: NightRun, merged_id: int) -> None:
    sources = run.lineage.get(merged_id, [])
    printer.line(
        f"        合并链：#{merged_id} ← {'、'.join(f'#{source}' for source in sources) or '（无）'}"
        "（来源被取代而不是删除，都能经合并链找回）"
    )


def _cycle(printer: Printer, run: NightRun) -> None:
    report = run.cycle
    printer.line()
    printer.line(f"  ◇ 整理周期 · {run.night.chat.title}（engine.consolidation.run_now）")
    printer.line(
        f"    预整理（不用模型）：有效记忆 {report.memories} 条，完全相同的重复 {len(report.planned)} 组，"
        f"用时 {report.elapsed_ms:.0f} 毫秒"
    )
    for done in report.merged:
        merged = "、".join(f"[记忆#{source}]" for source in done.source_ids)
        printer.line(f"      ● 合并 {merged} → [记忆#{done.merged_id}] {done.text}")
        _lineage(printer, run, done.merged_id)
    for left, why in report.skipped:
        printer.line(f"      ● 未合并 {'、'.join(f'#{source}' for source in left)}（{why}）")
    if report.near:
        groups = "；".join("、".join(f"#{member}" for member in members) for members in report.near)
        printer.line(f"      相近的记忆 {len(report.near)} 组，留给模型判断：{groups}")
    step = report.model_step
    if step is None:
        return
    _model_step(printer, run, step)


def _model_step(printer: Printer, run: NightRun, step: ModelStep) -> None:
    if step.calls:
        how = "内置回放模型：每一轮按请求里已有的工具结果决定下一步" if printer.replay else "模型预设"
        printer.line(f"    模型判断的工具调用（{how}）：")
        for call in step.calls:
            printer.line(f"      ● {call.name} {clip(_arguments(call.arguments))}")
            answer = " ｜ ".join(line.strip() for line in call.answer.splitlines() if line.strip())
            cut = "…" if call.answer_chars > len(call.answer) else ""
            printer.line(f"        → {clip(answer + cut)}")
    for merged_id in sorted(set(run.lineage) - run.prepass_merges):
        record = run.after.get(merged_id)
        if record is not None:
            printer.line(f"      ● 模型合并 → {_memory(record)}")
            _lineage(printer, run, merged_id)
    for line in model_step_lines(step.as_dict()):
        printer.line(f"    {line}")
    if printer.replay and step.ran and not step.tokens:
        printer.line("    （内置回放模型不报告 token 用量；用 --preset 接真实模型时这里是服务商报告的用量）")


def _entry(printer: Printer, entry: KnowledgeEntry) -> None:
    sources = "、".join(f"#{source}" for source in entry.source_ids) or "无"
    state = "公开" if entry.shown else "隐藏"
    printer.line(
        f"  ▤ 知识库条目 #{entry.id}「{entry.title}」（第 {entry.version} 版，{state}，"
        f"依据记忆 {sources}，由 {entry.updated_by} 写入）"
    )
    printer.line(f"      摘要：{entry.summary or '（无）'}")
    printer.line("      正文：")
    for line in entry.body.splitlines():
        printer.line(f"        {line}")
