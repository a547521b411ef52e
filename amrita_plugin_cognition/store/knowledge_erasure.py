"""The knowledge base's part of a delete-all (``store/erasure.py``), in the caller's transaction.

* A bot account: every entry with its revisions, keyword rows and vectors (outbox), and every
  suggestion.
* A chat: the suggestions filed in it (what its facts built is handled as a forget of those facts,
  ``knowledge.sources_removed``, by the engine).
* A user: the suggestions they filed and every suggestion naming them; every entry or kept
  version whose text names them (the policy keeps a person's details out of entries; this is the
  guarantee behind it): an entry is deleted whole with its revisions, since an entry's sentences
  are the cycle's and none may be trusted once one names them; who wrote a version is forgotten
  when it was them.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import and_, delete, or_, update
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.erasure import ErasureTarget
from ..domain.people import PersonMatcher
from .knowledge import delete_entries
from .models import KnowledgeRevisionRow, KnowledgeRow, KnowledgeSuggestionRow
from .profile_erasure import rows_naming


def _entry_text(row: KnowledgeRow | KnowledgeRevisionRow) -> str:
    return "\n".join((row.title, row.summary, row.body))


def _suggestion_text(row: KnowledgeSuggestionRow) -> str:
    return row.content


async def erase(
    session: AsyncSession, target: ErasureTarget, now: datetime, matcher: PersonMatcher | None = None
) -> int:
    """Remove what ``target`` covers (module doc). Returns how many entries and suggestions went."""
    suggestions = KnowledgeSuggestionRow
    if target.kind == "bot":
        count = await delete_entries(session, KnowledgeRow.bot_id == target.bot_id, now)
        result = await session.execute(delete(suggestions).where(suggestions.bot_id == target.bot_id))
        return count + int(result.rowcount or 0)  # type: ignore[attr-defined]
    if target.kind == "chat":
        assert target.scope is not None
        result = await session.execute(
            delete(suggestions).where(
                suggestions.bot_id == target.bot_id,
                suggestions.scope_kind == target.scope.kind,
                suggestions.scope_id == target.scope.id,
            )
        )
        return int(result.rowcount or 0)  # type: ignore[attr-defined]
    user = target.user_id
    naming = [row.id for row in await rows_naming(session, suggestions, target, matcher, _suggestion_text)]
    result = await session.execute(
        delete(suggestions).where(
            suggestions.bot_id == target.bot_id, or_(suggestions.user_id == user, suggestions.id.in_(naming))
        )
    )
    count = int(result.rowcount or 0)  # type: ignore[attr-defined]
    entries = [row.id for row in await rows_naming(session, KnowledgeRow, target, matcher, _entry_text)]
    count += await delete_entries(session, KnowledgeRow.id.in_(entries), now)
    revisions = [row.id for row in await rows_naming(session, KnowledgeRevisionRow, target, matcher, _entry_text)]
    await session.execute(delete(KnowledgeRevisionRow).where(KnowledgeRevisionRow.id.in_(revisions)))
    for model, authors in ((KnowledgeRow, ("updated_by",)), (KnowledgeRevisionRow, ("written_by", "replaced_by"))):
        for author in authors:
            await session.execute(
                update(model)
                .where(and_(model.bot_id == target.bot_id, getattr(model, author) == user))
                .values({author: ""})
                .execution_options(synchronize_session=False)
            )
    return count
