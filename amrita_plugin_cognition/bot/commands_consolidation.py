"""``/memory dmn``: a consolidation cycle of this chat now (bot admins and superusers only; not in
the ``/memory`` menu or its usage text). The cycle is the model-free pre-pass: exact duplicates
merged, near ones only proposed (the judgement step, with the model, is not built yet, and the
answer says so). Who may is the engine's to decide (``permissions.check_run_cycle``)."""

from __future__ import annotations

from ..api import ChatContext, CognitionEngine

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
    lines = [f"已整理本会话的记忆（整理前有效记忆 {report.memories} 条，未调用模型）："]
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
    if report.near:
        lines.append(f"相近的记忆 {len(report.near)} 组只列为候选，没有合并（需要模型判断的整理尚未实现）")
    lines.append("记忆衰减由每天的衰减扫描负责，整理时不重复进行")
    return "\n".join(lines)
