"""``ambot cognition consolidate``: one chat's consolidation cycle now, or its plan (``--dry-run``):
the exact duplicates it merges, the near ones it proposes, the judgement step with the model (how
it ended, rounds, tokens, changes, summary; or why the model was not called; with ``--dry-run``
whether it would run, calling no model), and the chat's next idle window."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from .commands import _open_engine, _scope_argument, cognition, emit, home_option, json_option, run_engine
from .failures import EXIT_USAGE, fail
from .params import CHAT, QQ


def _plan(plan: Any) -> dict[str, Any]:
    return {"sources": list(plan.source_ids), "text": plan.text, "importance": str(plan.importance)}


def report_document(report: Any, window: Any) -> dict[str, Any]:
    """A cycle's report as JSON (also what the table is printed from)."""
    merged = {tuple(done.source_ids): done.merged_id for done in report.merged}
    return {
        "bot_id": report.bot_id,
        "chat": report.scope.key,
        "dry_run": report.dry_run,
        "switched_off": report.switched_off,
        "memories": report.memories,
        "exact": [{**_plan(plan), "merged_id": merged.get(tuple(plan.source_ids))} for plan in report.planned],
        "merged": len(report.merged),
        "sources_merged": report.sources_merged,
        "skipped": [{"sources": list(ids), "reason": why} for ids, why in report.skipped],
        "near_proposed": [list(ids) for ids in report.near],
        "wording_proposed": [list(ids) for ids in report.wording],
        "model_step": report.model_step.as_dict() if report.model_step is not None else None,
        "next_window": {"start": window.start.isoformat(), "end": window.end.isoformat(), "reason": window.reason},
        "elapsed_ms": report.elapsed_ms,
    }


@cognition.command("consolidate")
@home_option
@click.option("--chat", "chat", type=CHAT, required=True, help="会话，写作 group:<群号> 或 private:<QQ号>")
@click.option("--bot", type=QQ, default=None, help="机器人 QQ 号（数据库里只有一个机器人有这个会话的记忆时可省略）")
@click.option(
    "--dry-run", is_flag=True, default=False, help="只列出计划（以及是否会调用模型、为什么），不做任何修改，不调用模型"
)
@json_option
def consolidate_command(home: Path | None, chat: str, bot: str | None, dry_run: bool, as_json: bool | None) -> None:
    """立即整理一个会话的记忆：完全相同的重复直接合并，需要判断的交给模型（有预算时）；--dry-run 只看计划"""

    async def run() -> dict[str, Any]:
        from ..api import Operator

        engine = await _open_engine()
        scope = _scope_argument(chat)
        bot_id = bot
        if bot_id is None:
            bots = await engine.consolidation.bots_with_chat(scope)
            if len(bots) != 1:
                found = "、".join(bots) if bots else "没有"
                raise fail(f"请用 --bot 指明机器人 QQ 号（{scope.key} 的记忆属于：{found}）", EXIT_USAGE)
            bot_id = bots[0]
        if dry_run:
            report = await engine.consolidation.dry_run(Operator(), bot_id, scope)
        else:
            report = await engine.consolidation.run_now(Operator(), bot_id, scope)
        window = await engine.consolidation.window(bot_id, scope)
        return report_document(report, window)

    from . import render_consolidation

    emit(run_engine(run, home), as_json, render_consolidation.consolidated)
