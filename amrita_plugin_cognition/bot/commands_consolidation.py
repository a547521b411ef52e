"""``/memory dmn``: a consolidation cycle of this chat now (bot admins and superusers only; not in
the ``/memory`` menu or its usage text). The cycle is the model-free pre-pass (exact duplicates
merged, near ones proposed) and then the judgement step with the model, when something needs it
and the bot account's daily budget allows: the answer says what each did, or why the model was not
called. Who may is the engine's to decide (``permissions.check_run_cycle``)."""

from __future__ import annotations

from ..api import (
    JUDGEMENT_ENDED_ZH,
    JUDGEMENT_WORK_ZH,
    ChatContext,
    CognitionEngine,
    ModelStep,
    judgement_changes_zh,
)

#: Merges listed by number in the answer (the rest counted).
SHOWN_MERGES = 5
#: A cycle may take longer than an ordinary command (``tool_timeout_seconds``): at least this long.
DMN_TIMEOUT_SECONDS = 120.0
#: Why a merge was left alone, in Chinese.
SKIP_REASONS = {
    "changed": "记忆已被修改或删除",
    "forgotten": "内容已被要求遗忘",
    "admission": "内容不再符合记录规则",
    "opted_out": "涉及已关闭记忆的用户",
    "switched_off": "会话的记忆已关闭",
}


def _ids(ids: tuple[int, ...] | list[int]) -> str:
    return "、".join(f"#{memory_id}" for memory_id in ids)


async def dmn(engine: CognitionEngine, context: ChatContext) -> str:
    report = await engine.consolidation.run_now(context, context.bot_id, context.scope)
    if report.switched_off:
        return "本会话的记忆已关闭，没有整理"
    lines = [f"已整理本会话的记忆（整理前有效记忆 {report.memories} 条）："]
    if report.merged:
        merged = len(report.merged)
        lines.append(f"合并了 {merged} 组完全相同的重复记忆（{report.sources_merged} 条合为 {merged} 条）")
        lines += [f"  {_ids(done.source_ids)} → #{done.merged_id}" for done in report.merged[:SHOWN_MERGES]]
        if len(report.merged) > SHOWN_MERGES:
            lines.append(f"  ……另有 {len(report.merged) - SHOWN_MERGES} 组")
    else:
        lines.append("没有完全相同的重复记忆需要合并")
    for ids, why in report.skipped:
        lines.append(f"未合并 {_ids(ids)}：{SKIP_REASONS.get(why, why)}")
    step = report.model_step
    fate = "交给模型判断" if step is not None and step.ran else "只列为候选，没有合并"
    if report.near:
        lines.append(f"相近的记忆 {len(report.near)} 组{fate}")
    if report.wording:
        lines.append(f"可能相同、措辞不同的记忆 {len(report.wording)} 组{fate}")
    if step is not None:
        lines += model_step_lines(step)
    lines.append("记忆衰减由每天的衰减扫描负责，整理时不重复进行")
    return "\n".join(lines)


def model_step_lines(step: ModelStep) -> list[str]:
    """What the judgement step did, or why the model was not called, in Chinese."""
    if step.ended == "skipped":
        return [f"没有调用模型：{step.reason_zh}"]
    if step.ended == "unavailable":
        return ["语言模型暂不可用，这次只做了不用模型的整理"]
    work = "、".join(JUDGEMENT_WORK_ZH.get(item, item) for item in step.work)
    lines = [
        f"模型判断（{work}）：{JUDGEMENT_ENDED_ZH.get(step.ended, step.ended)}，{step.rounds} 轮，"
        f"输入 {step.prompt_tokens} / 输出 {step.completion_tokens} tokens，工具调用 {step.tool_calls} 次"
    ]
    lines.append(f"改动：{judgement_changes_zh(step.changes)}")
    if step.summary:
        lines.append(f"总结：{step.summary}")
    if step.message_to_user:
        lines.append("给用户留了一条消息，稍后由机器人在本私聊发送")
    return lines
