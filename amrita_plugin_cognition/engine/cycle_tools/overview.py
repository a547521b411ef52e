"""The cycle's view of the chat as a whole: ``cycle_context`` (the run's first call: every variable
fact the model needs, so that the system prompt stays invariant), ``cycle_stats``,
``cycle_clusters`` (the pre-pass's near clusters, then its wording clusters, labelled
"可能相同，措辞不同": the rules doubted them; paged as one list) and ``cycle_recent`` (the chat's last
turns, scrubbed as a job's context is: ``engine/chat_recent.py``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ...domain.cycle_rules import IMPORTANCE_LABELS
from ...domain.inert import inert_line, inert_name
from ...domain.records import Importance, MemoryStatus
from ...llm.agent_types import AgentTool
from ..switches import switch_state
from .arguments import ClusterArguments, NoArguments, RecentArguments
from .cards import touched_cards
from .common import FEW, day, memory_line, minute, page_footer, span, tool, zone
from .desk import CycleDesk
from .knowledge import entry_line, stale_entries
from .memo import memo_state
from .suggestions import pending, suggestion_line

if TYPE_CHECKING:
    from ..service import CognitionEngine

_WEEKDAYS = "一二三四五六日"
#: A member's text in ``cycle_context``'s clusters at most (``cycle_clusters`` shows more).
CLUSTER_LINE_CHARS = 60
#: The label of a wording cluster (the pre-pass's rules doubted it: the words left over differ).
WORDING_LABEL = "（可能相同，措辞不同）"


def _top(counter: Counter[str], limit: int = 10) -> str:
    return "、".join(f"{key} {count}" for key, count in counter.most_common(limit)) or "无"


async def _clusters(
    engine: CognitionEngine,
    desk: CycleDesk,
    clusters: Sequence[tuple[int, ...]],
    first: int,
    limit: int | None,
    wording_from: int | None = None,
) -> list[str]:
    """Each cluster's members still active, one line each (a cluster left with fewer than two is said
    so); the clusters numbered ``wording_from`` on are labelled ``WORDING_LABEL``."""
    records = await engine.memories.in_chat(
        desk.bot_id, desk.scope, [member for cluster in clusters for member in cluster]
    )
    switches = await switch_state(engine, desk.bot_id)
    where = zone(engine)
    lines: list[str] = []
    for number, cluster in enumerate(clusters, first):
        active = [
            records[member] for member in cluster if member in records and records[member].status == MemoryStatus.ACTIVE
        ]
        label = WORDING_LABEL if wording_from is not None and number >= wording_from else ""
        if len(active) < 2:
            lines.append(f"组{number}{label}：已处理（有效成员不足两条）")
            continue
        lines.append(f"组{number}{label}：")
        lines += [f"  {memory_line(record, where, switches, limit)}" for record in active]
    return lines


def _counts_line(counts_by: dict[str, int], active: int, new: int, expired: int, first: bool) -> str:
    tiers = " / ".join(
        f"{IMPORTANCE_LABELS[tier]} {counts_by.get(tier.value, 0)}"
        for tier in (Importance.HIGH, Importance.MEDIUM, Importance.LOW)
    )
    since = "（首次整理）" if first else f"，上次整理后新增 {new} 条"
    return f"记忆：有效 {active} 条（{tiers}）{since}；已过期 {expired} 条"


def overview_tools(engine: CognitionEngine, desk: CycleDesk) -> list[AgentTool]:
    async def context(args: NoArguments) -> str:
        where = zone(engine)
        local = desk.now.astimezone(where)
        lines = [f"现在：{minute(desk.now, where)} 周{_WEEKDAYS[local.weekday()]}（{engine.config.timezone}）"]
        lines.append(f"会话：{'群聊' if desk.scope.is_group else '私聊'} {desk.scope.id}")
        if desk.last_cycle_at is None:
            lines.append("上次整理：无（本会话第一次整理）")
        else:
            gap = span((desk.now - desk.last_cycle_at).total_seconds())
            lines.append(f"上次整理：{minute(desk.last_cycle_at, where)}，距今 {gap}")
            lines.append(f"上次总结：{inert_line(desk.last_summary, 300) or '无'}")
        counts = await engine.memories.chat_counts(desk.bot_id, desk.scope, desk.last_cycle_at)
        lines.append(
            _counts_line(counts.by_importance, counts.active, counts.new, counts.expired, desk.last_cycle_at is None)
        )
        report = desk.prepass
        merged = (
            f"已合并完全重复 {len(report.merged)} 组（{report.sources_merged} 条）" if report.merged else "没有完全重复"
        )
        wording = f"，另有可能相同、措辞不同的 {len(report.wording)} 组（规则存疑）" if report.wording else ""
        lines.append(f"预整理：{merged}；待判断的近似重复 {len(report.near)} 组{wording}")
        groups = [*report.near, *report.wording]
        if groups:
            lines += await _clusters(
                engine, desk, groups[:FEW], 1, CLUSTER_LINE_CHARS, wording_from=len(report.near) + 1
            )
            if len(groups) > FEW:
                lines.append(f"  …其余 {len(groups) - FEW} 组用 cycle_clusters 翻页")
        suggestions = await pending(engine, desk)
        private = "" if desk.scope.is_group else "（私聊的内容不能进入知识库：只能拒绝并说明）"
        lines.append(f"待审知识库建议：{len(suggestions)} 条{private if suggestions else ''}")
        lines += [f"  {suggestion_line(engine, item, 80)}" for item in suggestions[:3]]
        if desk.scope.is_group:  # a private chat's facts never source an entry
            stale = await stale_entries(engine, desk)
            lines.append(f"需重新整理的知识条目（来源被遗忘或更正）：{len(stale)} 条")
            lines += [f"  {entry_line(entry)}" for entry in stale[:FEW]]
        memo = await engine.notes.memo_of(desk.bot_id, desk.scope)
        lines.append(f"备忘录：{memo_state(engine, memo)}")
        cards = await touched_cards(engine, desk)
        lines.append("上次整理后更新的画像：" + ("；".join(cards) if cards else "无"))
        return "\n".join(lines)

    async def stats(args: NoArguments) -> str:
        counts = await engine.memories.chat_counts(desk.bot_id, desk.scope, desk.last_cycle_at)
        figures = await engine.memories.chat_figures(desk.bot_id, desk.scope)
        where = zone(engine)
        tags = Counter({inert_line(tag, 20): count for tag, count in figures.tags.items()})
        first = day(figures.oldest, where) if figures.oldest else "—"
        last = day(figures.newest, where) if figures.newest else "—"
        return "\n".join(
            [
                _counts_line(
                    counts.by_importance, counts.active, counts.new, counts.expired, desk.last_cycle_at is None
                ),
                f"类型：{_top(figures.by_kind)}",
                f"来源：{_top(figures.by_provenance)}",
                f"标签（前 10）：{_top(tags)}；无标签 {figures.untagged} 条",
                f"用户要求保留：{figures.kept} 条；最早记录 {first}，最新记录 {last}",
            ]
        )

    async def clusters(args: ClusterArguments) -> str:
        report = desk.prepass
        groups = [*report.near, *report.wording]
        shown = groups[args.offset : args.offset + args.limit]
        lines = await _clusters(engine, desk, shown, args.offset + 1, None, wording_from=len(report.near) + 1)
        return "\n".join([*lines, page_footer(args.offset, len(shown), len(groups), "组")])

    async def recent(args: RecentArguments) -> str:
        messages = await engine.turns.recent(desk.bot_id, desk.scope, args.limit)
        if not messages:
            return "（没有最近的对话记录）"
        where = zone(engine)
        lines = []
        for message in messages:
            speaker = inert_name(message.speaker) or "未知"
            lines.append(f"{message.at.astimezone(where):%m-%d %H:%M} {speaker}：{inert_line(message.text, 200)}")
        return "\n".join(lines)

    return [
        tool(
            engine,
            desk,
            "cycle_context",
            "本次整理的起点（第一个调用）：当前时间、距上次整理多久、上次总结、记忆数量、预整理结果和待判断的近似重复、"
            "待审建议、需重新整理的知识条目、备忘录长度、最近更新的画像。",
            NoArguments,
            context,
        ),
        tool(engine, desk, "cycle_stats", "本会话记忆的统计：按重要性、类型、来源、标签。", NoArguments, stats),
        tool(
            engine,
            desk,
            "cycle_clusters",
            "分页查看预整理找到的近似重复组（每组成员一行），判断是否是同一件事再决定合并；"
            "标“措辞不同”的组排在最后，规则存疑，确是同一件事才合并。",
            ClusterArguments,
            clusters,
        ),
        tool(
            engine,
            desk,
            "cycle_recent",
            "本会话最近几轮对话（已隐去敏感内容和退出记忆用户的发言），用于理解上下文。",
            RecentArguments,
            recent,
        ),
    ]
