"""The store's health at a glance: fingerprint, counts, outbox lag and dead rows, index health
with the missing vectors counted by id, the decay sweep's cursor and last pass, the consolidation
cycles (with their model use against the daily budget), and the LLM calls of every process
(counted in SQL)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ..domain.records import MemoryStatus
from ..errors import IndexUnavailable
from ..store import jobs, outbox, repository
from . import cycle_runs, llm_usage
from .cycles import summary as cycles_summary
from .decay import sweep_status
from .reindex import stored_fingerprint

if TYPE_CHECKING:
    from .service import CognitionEngine

#: Missing or stale ids listed per chat in the report (the counts are always complete).
LISTED_IDS = 20


async def status(engine: CognitionEngine, check_ids: bool = True) -> dict[str, Any]:
    async with engine.unit_of_work() as uow:
        counts = await repository.memory_counts(uow.session)
        scopes = await repository.largest_scopes(uow.session, 20)
        lag = await outbox.summary(uow.session)
        queue = await jobs.summary(uow.session)
    fingerprint = await stored_fingerprint(engine)
    generation = await engine.index_sync.current_generation(force=True)
    active_total = sum(count for _, state, count in counts if state == MemoryStatus.ACTIVE.value)
    index: dict[str, Any] = {"backend": engine.vectors.description, "generation": generation}
    try:
        await asyncio.to_thread(engine.vectors.heartbeat)
        index["vectors"] = await asyncio.to_thread(engine.vectors.total_count, generation)
        index["card_vectors"] = await asyncio.to_thread(engine.vectors.card_count, generation)
        if check_ids:
            report = await engine.index_sync.missing_and_extra(generation)
            index["missing"] = report.missing_count
            index["stale"] = report.extra_count
            index["missing_ids"] = {label: ids[:LISTED_IDS] for label, ids in report.missing.items()}
            index["stale_ids"] = {label: ids[:LISTED_IDS] for label, ids in report.extra.items()}
        index["healthy"] = True
    except IndexUnavailable as error:
        index["healthy"] = False
        index["error"] = error.zh
        index["detail"] = str(error)[:300]
    by_kind: dict[str, dict[str, int]] = {}
    for kind, state, count in counts:
        by_kind.setdefault(kind, {})[state] = count
    return {
        "fingerprint": fingerprint.as_dict() if fingerprint else None,
        "configured_embedder": engine.embedder.fingerprint.as_dict(),
        "memories": by_kind,
        "active_total": active_total,
        "top_scopes": [
            {"bot": bot, "scope": f"{kind}:{scope_id}", "active": count} for bot, kind, scope_id, count in scopes
        ],
        "outbox": {
            "pending": lag.pending,
            "oldest": lag.oldest.isoformat() if lag.oldest else None,
            "failing": lag.failing,
            "dead": lag.dead,
            "last_error": lag.last_error or None,
        },
        "jobs": {
            "pending": queue.pending,
            "processing": queue.processing,
            "dead": queue.dead,
            "oldest_pending": queue.oldest_pending.isoformat() if queue.oldest_pending else None,
            "last_error": queue.last_error or None,
        },
        "index": index,
        "llm": await llm_usage.summary(engine),
        "decay": await sweep_status(engine),
        "cycles": await _cycles_status(engine),
    }


async def _cycles_status(engine: CognitionEngine) -> dict[str, Any]:
    """The consolidation cycles: jobs waiting, running and dead, chats cycled and the last cycle,
    merges done (and the sources they replaced), whether cycles are on; the judgement step's tokens
    today per bot account against its daily budget, and the last runs (``engine/cycle_runs.py``)."""
    found = await cycles_summary(engine)
    return {
        "enabled": engine.config.consolidation.cycle,
        "pending": found.pending,
        "processing": found.processing,
        "dead": found.dead,
        "chats_cycled": found.chats_cycled,
        "last_cycle_at": found.last_cycle_at.isoformat() if found.last_cycle_at else None,
        "merged": found.merged,
        "merged_sources": found.merged_sources,
        "judgement": await cycle_runs.usage(engine),
    }
