"""Chat users' suggestions for the knowledge base, as the cycle of the chat they were filed in
reviews them: ``cycle_suggestions`` (pending, paged) and ``cycle_suggestion_review`` (accept: an
entry written or updated through ``knowledge.write_entry``, then the suggestion closed; reject,
with the reason). A suggestion of another chat, or by or naming a user who has opted out since,
is not shown and answers "找不到"."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...domain.inert import inert_line
from ...llm.agent_types import AgentTool
from ..knowledge_suggestions import Suggestion
from ..switches import switch_state
from .arguments import PageArguments, SuggestionReviewArguments
from .common import changed, day, page_footer, refusal, tool, zone
from .desk import CycleDesk
from .knowledge import write_entry

if TYPE_CHECKING:
    from ..service import CognitionEngine

#: Pending suggestions of one chat read at most (oldest first).
PENDING_MAX = 200


async def pending(engine: CognitionEngine, desk: CycleDesk) -> list[Suggestion]:
    """This chat's pending suggestions, oldest first, without those of or naming an opted-out user."""
    switches = await switch_state(engine, desk.bot_id)
    listed = await engine.knowledge.suggestions(desk.bot_id, "pending", PENDING_MAX, scope=desk.scope)
    return [
        item
        for item in listed
        if not switches.is_opted_out(item.user_id) and not switches.touches_opted_out((), (item.content,))
    ]


def suggestion_line(engine: CognitionEngine, item: Suggestion, limit: int | None = 120) -> str:
    return f"[建议#{item.id}] {day(item.created_at, zone(engine))}：{inert_line(item.content, limit)}"


def suggestion_tools(engine: CognitionEngine, desk: CycleDesk) -> list[AgentTool]:
    async def listing(args: PageArguments) -> str:
        items = await pending(engine, desk)
        shown = items[args.offset : args.offset + args.limit]
        lines = [suggestion_line(engine, item, None) for item in shown]
        return "\n".join([*lines, page_footer(args.offset, len(shown), len(items))])

    async def review(args: SuggestionReviewArguments) -> str:
        found = {item.id: item for item in await pending(engine, desk)}
        if args.suggestion_id not in found:
            return refusal(f"找不到待审阅的建议 #{args.suggestion_id}")
        note = args.reason
        if args.accept:
            if not args.title.strip() or not args.body.strip():
                return refusal("采纳建议须给出条目的 title 和 body")
            entry, why = await write_entry(
                engine, desk, args.entry_id, args.expected_version, args.title, args.summary, args.body, args.source_ids
            )
            if entry is None:
                return why
            note = f"已写入知识条目 #{entry.id}：{args.reason}"
        outcome = "accepted" if args.accept else "rejected"
        await engine.knowledge.review(desk.bot_id, args.suggestion_id, outcome, note, now=desk.now)
        changed(desk, "suggestions", suggestion=args.suggestion_id, outcome=outcome)
        return f"建议 #{args.suggestion_id} 已{'采纳' if args.accept else '拒绝'}" + (
            f"（{note}）" if args.accept else ""
        )

    return [
        tool(
            engine,
            desk,
            "cycle_suggestions",
            "分页列出本会话用户提交、待审阅的知识库建议。",
            PageArguments,
            listing,
        ),
        tool(
            engine,
            desk,
            "cycle_suggestion_review",
            "审阅一条知识库建议：采纳（同时给出条目内容）或拒绝（写明理由）。",
            SuggestionReviewArguments,
            review,
        ),
    ]
