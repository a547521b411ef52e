"""Suggestions for the knowledge base: any chat user may file one (the chat tool
``cognition_knowledge_suggest``); the next consolidation cycle reviews the pending ones.

A suggestion is stored only whole and clean (``domain/knowledge.judge_suggestion``: bounded,
nothing admission refuses or would redact), never from an opted-out user nor naming one, and at
most ``consolidation.knowledge_suggestions_per_day`` per user and bot account in any 24 hours:
the count and the insert run under the user's suggestion lock, so two chats cannot both pass the
limit. A user's delete-all removes their suggestions (``store/knowledge_erasure.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from ..domain.clock import as_utc, aware_or_now
from ..domain.governance import OTHER_OPTED_OUT_MESSAGE, SELF_OPTED_OUT_MESSAGE
from ..domain.knowledge import REVIEW_OUTCOMES, judge_suggestion, suggestion_allowed
from ..domain.records import ChatContext, Scope
from ..errors import InvalidInput, LimitExceeded, NotFound
from ..logs import log_event
from ..store import knowledge_suggestions as store
from ..store.models import KnowledgeSuggestionRow
from ..store.unit_of_work import take_write_lock
from .switches import switch_state

if TYPE_CHECKING:
    from .service import CognitionEngine

WINDOW = timedelta(hours=24)


@dataclass(frozen=True, slots=True)
class Suggestion:
    id: int
    bot_id: str
    user_id: str
    #: Where it was filed ("group:<id>" / "private:<id>").
    chat: str
    content: str
    state: str
    review_note: str
    created_at: datetime


def _suggestion(row: KnowledgeSuggestionRow) -> Suggestion:
    return Suggestion(
        row.id,
        row.bot_id,
        row.user_id,
        f"{row.scope_kind}:{row.scope_id}",
        row.content,
        row.state,
        row.review_note,
        as_utc(row.created_at) or row.created_at,
    )


@dataclass(frozen=True, slots=True)
class FiledSuggestion:
    suggestion: Suggestion
    #: How many more this user may file within the window.
    left: int


async def suggest(
    engine: CognitionEngine, context: ChatContext, text: str, now: datetime | None = None
) -> FiledSuggestion:
    """File a suggestion from ``context``'s user (``InvalidInput`` / ``LimitExceeded`` with the
    Chinese reason; nothing is stored then)."""
    moment = aware_or_now(now)
    content = judge_suggestion(text).check()
    switches = await switch_state(engine, context.bot_id)
    if switches.is_opted_out(context.user_id):
        raise InvalidInput(SELF_OPTED_OUT_MESSAGE, en="knowledge suggestion of an opted-out user")
    if switches.touches_opted_out(texts=[content], beside=[context.user_name]):
        raise InvalidInput(OTHER_OPTED_OUT_MESSAGE, en="knowledge suggestion names an opted-out user")
    per_day = engine.config.consolidation.knowledge_suggestions_per_day
    async with engine.unit_of_work() as uow:
        await take_write_lock(uow.session, f"cognition:knowledge-suggest:{context.bot_id}:{context.user_id}")
        filed = await store.filed_since(uow.session, context.bot_id, context.user_id, moment - WINDOW)
        if not suggestion_allowed(filed, per_day):
            message = (
                "目前不接受知识库建议" if per_day == 0 else f"每人 24 小时内最多提交 {per_day} 条知识库建议，请稍后再试"
            )
            raise LimitExceeded(message, en=f"knowledge suggestions: {filed} of {per_day} in 24 h")
        row = store.add(uow.session, context.bot_id, context.user_id, context.scope, content, moment)
        await uow.session.flush()
        suggestion = _suggestion(row)
        await uow.commit()
    log_event("knowledge_suggest", bot=context.bot_id, suggestion=suggestion.id, chars=len(content))
    return FiledSuggestion(suggestion, per_day - filed - 1)


async def list_suggestions(
    engine: CognitionEngine,
    bot_id: str | None,
    state: str | None = "pending",
    limit: int = 200,
    scope: Scope | None = None,
) -> list[Suggestion]:
    """Suggestions, oldest first (``state`` None: every state; ``scope``: those filed in that chat)."""
    async with engine.unit_of_work() as uow:
        return [_suggestion(row) for row in await store.list_rows(uow.session, bot_id, state, limit, scope)]


async def review(
    engine: CognitionEngine, bot_id: str, suggestion_id: int, outcome: str, note: str = "", now: datetime | None = None
) -> None:
    """Close a pending suggestion as ``accepted`` or ``rejected`` with a short note (the cycle)."""
    if outcome not in REVIEW_OUTCOMES:
        raise InvalidInput(f"审阅结果只能是 {' / '.join(REVIEW_OUTCOMES)}", en=f"bad review outcome {outcome!r}")
    async with engine.unit_of_work() as uow:
        if not await store.review(uow.session, bot_id, suggestion_id, outcome, note[:500], aware_or_now(now)):
            raise NotFound(f"没有待审阅的建议 #{suggestion_id}", en=f"no pending suggestion {suggestion_id}")
        await uow.commit()
    log_event("knowledge_review", bot=bot_id, suggestion=suggestion_id, outcome=outcome)
