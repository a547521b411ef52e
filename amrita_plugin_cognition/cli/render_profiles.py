"""Human output of ``profile list`` and ``profile show`` (rich tables; documents as they are)."""

from __future__ import annotations

from typing import Any

import click

from .render import DASH, _escape, _table, console, local_time

ENTITY_NAMES = {"user": "用户", "group": "群"}
PREVIEW_CHARS = 40


def _preview(text: str) -> str:
    line = " / ".join(part for part in text.splitlines() if part.strip())
    return line if len(line) <= PREVIEW_CHARS else f"{line[: PREVIEW_CHARS - 1]}…"


def _part(part: str) -> str:
    from ..api import part_name

    return _escape(part_name(part))


def _who(card: dict[str, Any]) -> str:
    return f"{ENTITY_NAMES.get(card['entity_type'], card['entity_type'])} {card['entity_id']}"


def card_list(report: dict[str, Any]) -> None:
    out = console()
    cards = report["cards"]
    if not cards:
        out.print("没有画像")
        return
    table = _table(
        "机器人", "对象", "部分", "名称", "标签", "更新时间", "更新者", "历史版本", "评价", right=(7,), wrap=(8,)
    )
    for card in cards:
        table.add_row(
            _escape(card["bot_id"]),
            _escape(_who(card)),
            _part(card["part"]),
            _escape(card["name"] or DASH),
            _escape("、".join(card["tags"]) or DASH),
            local_time(card["updated_at"]),
            _escape(card["updated_by"] or DASH),
            str(card["revisions"]),
            _escape(_preview(card["evaluation"]) or DASH),
        )
    out.print(table)
    shown = f"，显示最近更新的 {len(cards)} 张" if len(cards) < report["total"] else ""
    out.print(f"共 {report['total']} 张{shown}；用 profile show BOT TYPE ID 查看全文")


def shown(report: dict[str, Any]) -> None:
    """The documents themselves (a user's parts one after the other), or the kept versions."""
    if "revisions" in report:
        _revisions(report["revisions"])
        return
    click.echo("\n".join(card["document"] for card in report["cards"]), nl=False)


def _revisions(items: list[dict[str, Any]]) -> None:
    out = console()
    if not items:
        out.print("没有保留的历史版本")
        return
    table = _table("版本", "部分", "写于", "写入者", "被替换于", "替换者", "评价", right=(0,), wrap=(6,))
    for item in items:
        table.add_row(
            f"#{item['id']}",
            _part(item["part"]),
            local_time(item["updated_at"]),
            _escape(item["written_by"] or DASH),
            local_time(item["replaced_at"]),
            _escape(item["replaced_by"] or DASH),
            _escape(_preview(item["evaluation"]) or DASH),
        )
    out.print(table)
    out.print("用 profile show BOT TYPE ID --revision 版本号 查看全文，profile restore BOT TYPE ID 版本号 恢复")
