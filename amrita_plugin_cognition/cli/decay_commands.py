"""``ambot cognition sweep`` and ``ambot cognition expired list | restore``: the decay sweep run
now, the memories it retired, and bringing one back (the operator: every chat of every bot)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from .commands import _open_engine, _scope_argument, cognition, emit, home_option, json_option, run_engine
from .params import CHAT, PAGE, QQ, ROW_ID


@cognition.command("sweep")
@home_option
@click.option("--batches", type=click.IntRange(1), default=None, help="最多处理这么多批后停下（下次从停下处继续）")
@json_option
def sweep_command(home: Path | None, batches: int | None, as_json: bool | None) -> None:
    """立即运行记忆衰减扫描：从上次停下的位置扫到表尾，过期的低重要度记忆移出索引，高/中重要度降一级，过了保留期的永久删除"""

    async def run() -> dict[str, Any]:
        engine = await _open_engine()
        report = await engine.decay.sweep(max_batches=batches)
        return {
            "scanned": report.scanned,
            "demoted": report.demoted,
            "expired": report.expired,
            "purged": report.purged,
            "batches": report.batches,
            "finished": report.finished,
            "cursor": report.cursor,
            "elapsed_seconds": report.elapsed_seconds,
        }

    from . import render_decay

    emit(run_engine(run, home), as_json, render_decay.swept)


@cognition.group("expired")
def expired_group() -> None:
    """衰减扫描移出的（已过期的）记忆：列出、恢复"""


@expired_group.command("list")
@home_option
@click.option("--bot", type=QQ, default=None, help="只看这个机器人 QQ 号的")
@click.option("--chat", type=CHAT, default=None, help="只看这个会话，写作 group:<群号> 或 private:<QQ号>")
@click.option("--page", type=PAGE, default=1, show_default=True, help="页码")
@click.option("--per-page", type=click.IntRange(1, 200), default=20, show_default=True, help="每页条数")
@json_option
def expired_list(
    home: Path | None, bot: str | None, chat: str | None, page: int, per_page: int, as_json: bool | None
) -> None:
    """列出已过期的记忆：编号、会话、内容、过期时间与永久删除的日期"""

    async def run() -> dict[str, Any]:
        from ..api import InspectFilter, MemoryStatus, expired_purge_date, memory_document

        wanted = InspectFilter(
            bot_id=bot, scope=_scope_argument(chat) if chat is not None else None, status=MemoryStatus.EXPIRED
        )
        engine = await _open_engine()
        keep_days = engine.config.consolidation.expired_keep_days
        items, total = await engine.governance.inspect(wanted, (page - 1) * per_page, per_page)
        memories = []
        for item in items:
            expired_at = item.record.invalid_at or item.record.updated_at
            memories.append(
                {**memory_document(item), "purge_at": expired_purge_date(expired_at, keep_days).isoformat()}
            )
        return {"page": page, "per_page": per_page, "total": total, "memories": memories}

    from . import render_decay

    emit(run_engine(run, home), as_json, render_decay.expired)


@expired_group.command("restore")
@home_option
@click.argument("memory_id", type=ROW_ID)
@json_option
def expired_restore(home: Path | None, memory_id: int, as_json: bool | None) -> None:
    """恢复一条已过期的记忆（重新进入检索；被要求遗忘过的内容不能恢复）"""

    async def run() -> dict[str, Any]:
        from ..api import Operator

        engine = await _open_engine()
        record = await engine.decay.restore(Operator(), None, memory_id)
        return {"id": record.id, "bot_id": record.bot_id, "chat": record.scope.key, "text": record.text}

    from . import render_decay

    emit(run_engine(run, home), as_json, render_decay.restored)
