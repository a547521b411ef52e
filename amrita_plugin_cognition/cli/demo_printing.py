"""The demo's transcript on stdout (Chinese): each turn with the memory block the model got,
its tool calls and results, the reply and the checks; after each simulated day, the
historian's jobs with their observations, time anchors and the facts written, then the card
merges of that day and the followed cards with what changed since the day before."""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING

import click

from ..api import part_group
from .demo_cards import CardRun, MergeJob, card_lines, describe_parts
from .demo_historian import HistorianRun, JobReport
from .demo_recording import Outcome, TurnTrace, describe, evaluate
from .demo_script import WEEKDAYS, DemoScript, FollowedCard, Turn

if TYPE_CHECKING:
    from ..api import Card

JOB_KINDS = {"observations": "观察改写", "transcript": "对话记录提取"}
PART_NAMES = {"group": "群内可见", "private": "仅私聊"}


def compact_json(text: str | None) -> str:
    if text is None:
        return "（没有返回）"
    try:
        return json.dumps(json.loads(text), ensure_ascii=False)
    except json.JSONDecodeError:
        return text


def block_lines(block: str) -> list[str]:
    """The block's lines, with the fixed framing sentence after the tag shortened."""
    lines = []
    for index, line in enumerate(block.splitlines()):
        if not line.strip():
            continue
        if index == 1 and "。" in line[:-1] and not line.startswith(("【", "- ")):
            line = line[: line.index("。") + 1] + "……（其余框定说明略）"
        lines.append(line)
    return lines


class Printer:
    def __init__(self, script: DemoScript, replay: bool = False) -> None:
        self.script = script
        #: The built-in replay model answers: its transcript extraction never submits facts.
        self.replay = replay
        self.day = 0
        #: The followed cards as last printed (None: there was none yet).
        self.shown_cards: dict[tuple[str, str, str], Card | None] = {}

    def line(self, text: str = "") -> None:
        click.echo(text)

    def turn(
        self,
        turn: Turn,
        trace: TurnTrace,
        replies: list[str],
        error: str,
        outcome: Outcome,
        received: str | None = None,
    ) -> None:
        """Print one turn. ``received``: the memory block the replay model found in the request."""
        script = self.script
        if turn.day != self.day:
            self.day = turn.day
            day = script.day_date(turn)
            self.line()
            self.line(f"━━━━━━━━ 第 {turn.day} 天 · {day.isoformat()} 星期{WEEKDAYS[day.weekday()]} ━━━━━━━━")
        self.line()
        self.line(f"▶ 第 {turn.number} 轮 · {turn.clock.strftime('%H:%M')} · {turn.chat.title}")
        self.line(f"  {turn.speaker.title}问：{script.said(turn)}")
        if trace.system_prompt is None:
            self.line("  记忆上下文：（模型没有被调用）")
        elif not trace.block:
            self.line("  记忆上下文：（无，本轮没有可注入的记忆）")
        else:
            self.line("  记忆上下文（发给模型的系统提示中的 <cognition_memory>）：")
            for text in block_lines(trace.block):
                self.line(f"    │ {text}")
        if trace.tools:
            self.line("  工具调用：")
            for tool in trace.tools:
                self.line(f"    ● {tool.name} {compact_json(tool.arguments)}")
                self.line(f"      → {compact_json(tool.result)}")
        else:
            self.line("  工具调用：（无）")
        if replies:
            for index, reply in enumerate(replies):
                prefix = "  机器人回复：" if index == 0 else "              "
                self.line(prefix + reply.replace("\n", "\n" + " " * 14))
        else:
            self.line("  机器人回复：（没有回复）")
        if received is not None and received != trace.block:
            self.line("  注意：回放模型在请求里收到的记忆块与注入的不一致")
            outcome.failed += 1
        if error:
            self.line(f"  出错：{error}")
        for check in turn.checks:
            check = dataclasses.replace(check, text=script.render(turn, check.text))
            ok = evaluate(check, trace)
            outcome.count(ok)
            self.line(f"  检查 {'✓' if ok else '✗'} {describe(check)}")

    def historian(self, run: HistorianRun, outcome: Outcome) -> None:
        """The historian's work at the end of a simulated day, one job after the other."""
        self.line()
        when = run.now.strftime("%Y-%m-%d %H:%M")
        if not run.jobs:
            self.line(f"  ◇ 史官（第 {self.day} 天结束 · {when}）：没有待处理的任务")
            return
        self.line(f"  ◇ 史官整理（第 {self.day} 天结束 · {when}，按模拟时间运行，共 {len(run.jobs)} 个任务）")
        for job in run.jobs:
            self._job(job, outcome)

    def _chat(self, scope: str) -> str:
        chat = next((chat for chat in self.script.chats.values() if f"{chat.kind}:{chat.id}" == scope), None)
        return chat.title if chat else scope

    def _job(self, job: JobReport, outcome: Outcome) -> None:
        kind = JOB_KINDS.get(job.kind, job.kind)
        head = f"    ◆ 任务 #{job.job_id} · {kind} · {self._chat(job.scope)}"
        if job.kind == "observations":
            said = job.said_at.strftime("%H:%M") if job.said_at else "?"
            self.line(f"{head} · {job.speaker_name}（{job.speaker_id}）{said} 的一轮")
            for observation in job.observations:
                self.line(f"      观察#{observation.number}：{observation.text}")
                for anchor in observation.anchors:
                    self.line(f"        时间换算：{anchor}")
                if not observation.anchors:
                    self.line("        时间换算：（没有相对时间）")
        else:
            self.line(f"{head} · {job.transcript_turns} 轮对话")
        if job.state != "done":
            state = "稍后重试" if job.state == "pending" else "已放弃"
            self.line(f"      未完成（{state}）：{job.error[:200]}")
            outcome.failed += 1
            return
        if not job.facts:
            why = "；回放模型从对话记录中不提取事实" if self.replay and job.kind == "transcript" else ""
            self.line(f"      写入记忆：（没有新的事实{why}）")
            return
        self.line("      写入记忆（来源：推断，本会话范围）：")
        for fact in job.facts:
            happened = fact.happened_on.isoformat() if fact.happened_on else "未知"
            absolute = "是" if fact.absolute else f"否（{fact.warning or '改写后仍有相对表述'}）"
            self.line(f"        ● [记忆#{fact.memory_id}] {fact.text}")
            self.line(f"          发生日期 {happened} · 绝对表述：{absolute}")

    # ------------------------------------------------------------------ cards

    def _merge_target(self, job: MergeJob) -> str:
        if job.entity_type == "group":
            return f"{self._chat(f'group:{job.entity_id}')}的画像"
        person = self.script.people.get(int(job.entity_id)) if job.entity_id.isdigit() else None
        who = person.title if person else f"用户 {job.entity_id}"
        parts = "、".join(self._part(part) for part in sorted({*job.parts, *job.rebuild}))
        return f"{who}的画像（{parts}）"

    def _part(self, part: str) -> str:
        """``仅私聊``, ``群内可见`` (every group), ``群A·摄影爱好者内可见`` (one group's part)."""
        group_id = part_group(part)
        if group_id is None:
            return PART_NAMES.get(part, part)
        chats = self.script.chats.values()
        chat = next((chat for chat in chats if chat.kind == "group" and str(chat.id) == group_id), None)
        return f"{chat.label if chat else f'群 {group_id}'}内可见"

    def cards(self, run: CardRun, outcome: Outcome) -> None:
        """The day's merges (run at the end of the coalescing window, in simulated time), then
        each followed card: new, changed (new body lines marked ＋, dropped ones －) or not."""
        self.line()
        if not run.enabled:
            self.line(f"  ◇ 画像合并（第 {self.day} 天）：已关闭（profiles.merge = false）")
        elif not run.merges:
            self.line(f"  ◇ 画像合并（第 {self.day} 天）：没有待合并的画像（史官今天没有写入新的事实）")
        else:
            queued, ran = run.queued_at.strftime("%H:%M"), run.ran_at.strftime("%Y-%m-%d %H:%M")
            self.line(
                f"  ◇ 画像合并（第 {self.day} 天 · 史官 {queued} 写入的事实按画像排队，"
                f"合并窗口 {run.window_seconds:.0f} 秒，模拟时间 {ran} 到期后运行，共 {len(run.merges)} 个合并任务）"
            )
            for job in run.merges:
                self.line(f"    ◆ 合并任务 #{job.job_id} · {self._merge_target(job)} · {describe_parts(job)}")
                if job.state != "done":
                    state = "稍后重试" if job.state == "pending" else "已放弃"
                    self.line(f"      未完成（{state}）：{job.error[:200]}")
                    outcome.failed += 1
        for followed, card in run.cards:
            self.card(followed, card)

    def card(self, followed: FollowedCard, card: Card | None, when: str = "", fresh: str = "今天") -> None:
        """A followed card as it is now (``when``: the day, unless said), against its last print."""
        key = (followed.entity_type, followed.entity_id, followed.chat_id)
        before = self.shown_cards.get(key)
        self.shown_cards[key] = card
        head = f"  ▣ {followed.title} · {when or f'第 {self.day} 天'}"
        if card is None:
            if before is None:
                self.line(f"{head}：还没有（史官还没有写入与它有关的事实）")
            else:
                self.line(f"{head}：已删除（它依据的记忆被删除，没有剩下可依据的事实）")
            return
        lines, old_lines = card_lines(card), card_lines(before) if before is not None else []
        shown = ("evaluation", "body", "roast", "tags")
        if before is not None and all(getattr(before, name) == getattr(card, name) for name in shown):
            self.line(f"{head}：没有变化（正文 {len(lines)} 条）")
            return
        self.line(f"{head}：{'新建' if before is None else '更新'}（正文 {len(lines)} 条）")
        if before is None and followed.note:
            self.line(f"      （{followed.note}）")
        sources = "、".join(f"#{memory_id}" for memory_id in card.source_ids) or "（无）"
        tags = "、".join(card.tags) or "（无）"
        self.line(f"      名称：{card.name or '（无）'} · 标签：{tags} · 依据记忆 {sources}")

        def mark(section: str) -> str:
            if before is None:
                return "（新）"
            return "（更新）" if getattr(before, section) != getattr(card, section) else ""

        self.line(f"      评价：{card.evaluation or '（空）'}{mark('evaluation')}")
        self.line(f"      正文（＋ {fresh}新增，－ {fresh}删去）：" if before is not None else "      正文：")
        for line in lines:
            self.line(f"        {'＋' if line not in old_lines else '·'} {line}")
        for line in old_lines:
            if line not in lines:
                self.line(f"        － {line}")
        self.line(f"      吐槽：{card.roast or '（空）'}{mark('roast')}")
