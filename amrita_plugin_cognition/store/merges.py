"""A consolidation merge in SQL: the merged memory written through the insert's path (keyword row,
outbox row), each source superseded by it through the supersede's path (out of both indices,
``superseded_by`` and ``invalid_at`` set, nothing overwritten in place), the lineage rows, and the
knowledge entries citing a source moved to the merge. All in the caller's transaction. An exact
merge (the pre-pass) and a judged one (the cycle's model, its text) are written alike; the
source of a judged one says so (``judged``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.consolidation import MergePlan
from ..domain.records import MemoryDraft, MemoryKind, Provenance
from . import knowledge, memory_sources, repository
from .models import MemoryRow


async def write_merge(
    session: AsyncSession, bot_id: str, plan: MergePlan, sources: Sequence[MemoryRow], now: datetime
) -> MemoryRow | None:
    """Write ``plan`` over ``sources`` (its rows, read under the chat's lock). None, changing
    nothing the caller keeps (it rolls back), when a source was no longer active."""
    draft = MemoryDraft(
        text=plan.text,
        scope=plan.scope,
        speaker_id=plan.speaker_id,
        speaker_name=plan.speaker_name,
        subject_id=plan.subject_id,
        subject_name=plan.subject_name,
        kind=MemoryKind(plan.kind),
        tags=list(plan.tags),
        importance=plan.importance,
        provenance=Provenance.CONSOLIDATED,
        source={
            "via": "consolidation",
            "sources": list(plan.source_ids),
            "merged_at": now.isoformat(),
            **({"judged": True} if plan.judged else {}),  # the model's text, not an exact duplicate's
        },
        happened_at=plan.happened_at,
    )
    (merged,) = await repository.insert_memories(session, bot_id, [draft], now)
    # first learned when its oldest source was; its decay clock where its newest left it
    merged.recorded_at, merged.updated_at, merged.keep = plan.recorded_at, plan.updated_at, plan.keep
    for source in sources:
        if not await repository.supersede(session, source, merged, now):
            return None
    memory_sources.add(session, bot_id, merged.id, plan.source_ids)
    await knowledge.sources_merged(session, bot_id, plan.source_ids, merged.id)
    await session.flush()
    return merged
