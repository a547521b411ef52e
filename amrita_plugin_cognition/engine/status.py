"""The store's health at a glance: fingerprint, counts, outbox lag and dead rows, index health
with the missing vectors counted by id (every chat's; in a bank of many chats, those of the chats
written most recently, for about a third of a second, and said so: ``status --full`` compares them all),
the decay sweep's cursor and last pass, the consolidation cycles (with their model use against
the daily budget), and the LLM calls of every process (counted in SQL)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..domain.records import MemoryStatus
from ..errors import IndexUnavailable
from ..store import jobs, outbox, repository, vector_copy
from . import cycle_runs, llm_usage
from .cycles import summary as cycles_summary
from .decay import sweep_status
from .reindex import stored_fingerprint

if TYPE_CHECKING:
    from .service import CognitionEngine

#: Missing or stale ids listed per chat in the report (the counts are always complete).
LISTED_IDS = 20
#: Up to this many chats, ``status`` counts every vector and compares every id with SQL. Past it
#: (each chat is its own collection: one count and one id listing per chat, over HTTP on a server),
#: it compares the chats written most recently for ``SAMPLE_SECONDS`` and says how many it
#: covered; ``status --full`` (and ``repair``, which also mends) compares everything. A third of a
#: second was chosen to keep the command under 2 s at a million memories over 10,000 chats on
#: PostgreSQL and a Chroma server (measured with 1.0: 2.56 s, of which the start 1.16 s as
#: ``inspect``'s; with 0.3: 2.03–2.41 s, still over; bench/scale.py): a bot owner runs it in a loop
#: while debugging.
FULL_CHECK_CHATS = 200
SAMPLE_SECONDS = 0.3
#: The newest active facts whose chats the sample takes, in that order.
SAMPLE_ROWS = 5_000


@dataclass(frozen=True)
class _Counts:
    """What one pass over the memory table and the two queues' summaries tell."""

    by_kind: dict[str, dict[str, int]]
    active_total: int
    #: (bot, scope kind, scope id, active facts) of every chat with active facts, the largest first
    sizes: list[tuple[str, str, str, int]]
    lag: outbox.OutboxSummary
    queue: jobs.JobSummary


async def _count(engine: CognitionEngine) -> _Counts:
    async with engine.unit_of_work() as uow:
        rows = await repository.scope_counts(uow.session)
        lag = await outbox.summary(uow.session)
        queue = await jobs.summary(uow.session)
    by_kind: dict[str, dict[str, int]] = {}
    sizes = []
    for bot, kind, scope_id, state, count in rows:
        states = by_kind.setdefault(kind, {})
        states[state] = states.get(state, 0) + count
        if state == MemoryStatus.ACTIVE.value:
            sizes.append((bot, kind, scope_id, count))
    sizes.sort(key=lambda size: size[3], reverse=True)
    active_total = sum(size[3] for size in sizes)
    return _Counts(by_kind, active_total, sizes, lag, queue)


async def status(engine: CognitionEngine, check_ids: bool = True, full: bool = False) -> dict[str, Any]:
    # The counts read the whole scope index (about 0.07 s at a million facts on PostgreSQL once
    # vacuumed, more on a table just loaded); the index check waits on the index meanwhile.
    counting = asyncio.create_task(_count(engine))
    try:
        fingerprint = await stored_fingerprint(engine)
        generation = await engine.index_sync.current_generation(force=True)
        async with engine.unit_of_work() as uow:
            copy_complete = await vector_copy.is_complete(uow.session, generation)
        index: dict[str, Any] = {
            "backend": engine.vectors.description,
            "generation": generation,
            # small chats are searched in the copy in SQL once the repair has completed it (engine/exact_search.py)
            "copy_complete": copy_complete,
        }
        try:
            await _check_index(engine, generation, check_ids, full, counting, index)
            index["healthy"] = True
        except IndexUnavailable as error:
            index["healthy"] = False
            index["error"] = error.zh
            index["detail"] = str(error)[:300]
        counts = await counting
    finally:
        counting.cancel()
    lag, queue = counts.lag, counts.queue
    return {
        "fingerprint": fingerprint.as_dict() if fingerprint else None,
        "configured_embedder": engine.embedder.fingerprint.as_dict(),
        "memories": counts.by_kind,
        "active_total": counts.active_total,
        "top_scopes": [
            {"bot": bot, "scope": f"{kind}:{scope_id}", "active": count}
            for bot, kind, scope_id, count in counts.sizes[:20]
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


async def _check_index(
    engine: CognitionEngine,
    generation: int,
    check_ids: bool,
    full: bool,
    counting: asyncio.Task[_Counts],
    index: dict[str, Any],
) -> None:
    """Everything compared when asked or when the bank has few chats; otherwise the sample of the
    chats written most recently, started before the chats are counted and kept only when they
    turn out to be many."""
    await asyncio.to_thread(engine.vectors.heartbeat)
    if full:
        await _check_everything(engine, generation, check_ids, index)
        chats = len((await counting).sizes)
        index["checked"] = {"chats": chats, "of": chats, "complete": True}
        return
    sampling = asyncio.create_task(_check_recent_chats(engine, generation, check_ids))
    try:
        chats = len((await counting).sizes)
        if chats > FULL_CHECK_CHATS:
            index.update(await sampling)
            index["checked"]["of"] = chats
            return
    finally:
        if not sampling.done():
            sampling.cancel()
            await asyncio.gather(sampling, return_exceptions=True)
    await _check_everything(engine, generation, check_ids, index)
    index["checked"] = {"chats": chats, "of": chats, "complete": True}


async def _check_everything(engine: CognitionEngine, generation: int, check_ids: bool, index: dict[str, Any]) -> None:
    """Every vector counted and, with ``check_ids``, every id compared with SQL."""
    index["vectors"] = await asyncio.to_thread(engine.vectors.total_count, generation)
    index["card_vectors"] = await asyncio.to_thread(engine.vectors.card_count, generation)
    if check_ids:
        report = await engine.index_sync.missing_and_extra(generation)
        index["missing"] = report.missing_count
        index["stale"] = report.extra_count
        index["missing_ids"] = {label: ids[:LISTED_IDS] for label, ids in report.missing.items()}
        index["stale_ids"] = {label: ids[:LISTED_IDS] for label, ids in report.extra.items()}


async def _check_recent_chats(engine: CognitionEngine, generation: int, check_ids: bool) -> dict[str, Any]:
    """A bank of many chats: the chats written most recently compared id by id with SQL (without
    ``check_ids``: only their vectors counted), for ``SAMPLE_SECONDS`` (at least one chat); the
    rest not counted."""
    started = time.perf_counter()
    async with engine.unit_of_work() as uow:
        recent = await repository.recently_written_chats(uow.session, SAMPLE_ROWS)
    vectors = missing = stale = 0
    missing_ids: dict[str, list[int]] = {}
    stale_ids: dict[str, list[int]] = {}
    checked = 0
    for bot_id, scope in recent:
        if checked and time.perf_counter() - started >= SAMPLE_SECONDS:
            break
        if not check_ids:
            vectors += await asyncio.to_thread(engine.vectors.count, generation, bot_id, scope)
            checked += 1
            continue
        async with engine.unit_of_work() as uow:
            wanted = await repository.active_ids(uow.session, bot_id, scope)
        found = await asyncio.to_thread(engine.vectors.collection_ids, generation, bot_id, scope)
        label = f"{bot_id}|{scope.key}"
        vectors += len(found)
        if gone := sorted(wanted - found):
            missing += len(gone)
            missing_ids[label] = gone[:LISTED_IDS]
        if extra := sorted(found - wanted):
            stale += len(extra)
            stale_ids[label] = extra[:LISTED_IDS]
        checked += 1
    seconds = round(time.perf_counter() - started, 2)
    report: dict[str, Any] = {
        "vectors_checked": vectors,
        "checked": {"chats": checked, "complete": False, "seconds": seconds},
    }
    if check_ids:
        report.update(missing=missing, stale=stale, missing_ids=missing_ids, stale_ids=stale_ids)
    return report


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
