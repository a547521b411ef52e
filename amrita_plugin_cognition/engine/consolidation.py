"""The consolidation cycle's pre-pass, without any model: one chat's duplicate clusters
(``engine.memories.duplicate_clusters``), exact ones merged outright, near ones only proposed.

* **Exact clusters** are merged (``domain/consolidation.py`` decides which members are one fact and
  what the merge keeps): a new memory with provenance ``consolidated`` whose source names every
  source id, each source superseded by it (``superseded_by``, ``invalid_at``; nothing overwritten in
  place), the lineage rows written (``store/memory_sources.py``), all through the insert's and the
  supersede's paths (keyword rows, outbox rows) in one unit of work per merge under the chat's lock.
  A merge is skipped when a member is no longer active, when a forget barrier holds its text or its
  origin, when admission now refuses the text, or when a member is said by, about or names an
  opted-out user (their memories are left alone). A chat switched off gets no pre-pass at all.
* **Near clusters** are only proposed (returned and printed), never merged here: the check's
  precision on independently written pairs is not good enough to merge without judgement. The
  judgement step after the pre-pass (``engine/judgement.py``, the model) decides them.
* **Decay** is the global sweep's (``engine/decay.py``), not repeated here.

Each merge is one step: between steps the caller may ask to stop (``should_stop``: a message came
into the chat), and what was merged stays committed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from ..domain.admission import admit
from ..domain.clock import aware_or_now
from ..domain.consolidation import MergePlan, exact_merges, merge_plan
from ..domain.events import IndexWorkQueued, MemoriesChanged
from ..domain.records import MemoryStatus, Scope, content_hash, origin_hashes
from ..logs import log_event
from ..store import merges, repository
from .duplicates import DuplicateClusters, duplicate_clusters
from .switches import chat_switches

if TYPE_CHECKING:
    from .judgement import ModelStep
    from .service import CognitionEngine


@dataclass(frozen=True, slots=True)
class MergeDone:
    """One merge written: the new memory and the ones it replaced."""

    merged_id: int
    source_ids: tuple[int, ...]
    text: str


@dataclass(slots=True)
class PrepassReport:
    """What a pre-pass found and did in one chat. ``planned`` merges (exact); ``merged`` those
    written; ``skipped`` (source ids, why) those left alone; ``near`` the near clusters proposed
    (member ids); ``stopped`` when it yielded before the end (a message came in). ``model_step`` is
    the judgement step that followed (``engine/judgement.ModelStep``: what it did, or why it did not
    run; in a dry run, whether it would), None when there was none (the chat is off)."""

    bot_id: str
    scope: Scope
    memories: int = 0
    planned: list[MergePlan] = field(default_factory=list)
    merged: list[MergeDone] = field(default_factory=list)
    skipped: list[tuple[tuple[int, ...], str]] = field(default_factory=list)
    near: list[tuple[int, ...]] = field(default_factory=list)
    switched_off: bool = False
    stopped: bool = False
    dry_run: bool = False
    elapsed_ms: float = 0.0
    model_step: ModelStep | None = None

    @property
    def sources_merged(self) -> int:
        return sum(len(done.source_ids) for done in self.merged)


async def _plans(engine: CognitionEngine, clusters: DuplicateClusters) -> list[MergePlan]:
    """The merges of the exact clusters, from the members as stored."""
    wanted = sorted({member for cluster in clusters.exact for member in cluster.member_ids})
    async with engine.session() as session:
        rows = await repository.get_rows(session, clusters.bot_id, wanted)
    plans: list[MergePlan] = []
    for cluster in clusters.exact:
        members = [repository.to_record(rows[member]) for member in cluster.member_ids if member in rows]
        plans.extend(exact_merges([record for record in members if record.status == MemoryStatus.ACTIVE]))
    return plans


async def prepass(
    engine: CognitionEngine,
    bot_id: str,
    scope: Scope,
    *,
    dry_run: bool = False,
    now: datetime | None = None,
    should_stop: Callable[[], Awaitable[bool]] | None = None,
) -> PrepassReport:
    """The pre-pass over one chat (see the module's docstring): with ``dry_run`` nothing changes."""
    started = time.perf_counter()
    moment = aware_or_now(now)
    report = PrepassReport(bot_id, scope, dry_run=dry_run)
    if await chat_switches(engine, bot_id, scope) is None:
        report.switched_off = True
        return report
    clusters = await duplicate_clusters(engine, bot_id, scope)
    report.memories = clusters.memories
    report.near = [cluster.member_ids for cluster in clusters.near]
    report.planned = await _plans(engine, clusters)
    if not dry_run:
        for index, plan in enumerate(report.planned):
            if index and should_stop is not None and await should_stop():
                report.stopped = True
                break
            why = await _merge(engine, bot_id, plan, moment)
            if isinstance(why, MergeDone):
                report.merged.append(why)
            else:
                report.skipped.append((plan.source_ids, why))
    report.elapsed_ms = round((time.perf_counter() - started) * 1000, 1)
    log_event(
        "consolidation_prepass",
        started,
        scope=scope.key,
        dry_run=dry_run,
        memories=report.memories,
        exact_planned=len(report.planned),
        merged=len(report.merged),
        skipped=len(report.skipped),
        near_proposed=len(report.near),
        stopped=report.stopped,
    )
    return report


async def _merge(engine: CognitionEngine, bot_id: str, plan: MergePlan, now: datetime) -> MergeDone | str:
    """One merge in its own unit of work under the chat's lock; why not, when it is skipped."""
    verdict = await asyncio.to_thread(admit, plan.text)
    if not verdict.admit or verdict.text != plan.text:
        return "admission"
    async with engine.unit_of_work() as uow:
        await uow.lock_scope(bot_id, plan.scope)
        switches = await chat_switches(engine, bot_id, plan.scope)
        if switches is None:
            return "switched_off"
        rows = await repository.get_rows(uow.session, bot_id, plan.source_ids)
        sources = [rows[source_id] for source_id in plan.source_ids if source_id in rows]
        if len(sources) != len(plan.source_ids) or any(row.status != MemoryStatus.ACTIVE.value for row in sources):
            return "changed"
        if any(
            switches.touches_opted_out(
                (row.speaker_id, row.subject_id), (row.text,), (row.speaker_name, row.subject_name)
            )
            for row in sources
        ):
            return "opted_out"
        # the merge's values from the rows as they are now (a keep, a tag changed since the clusters were read)
        plan = merge_plan([repository.to_record(row) for row in sources])
        hashes = [content_hash(bot_id, plan.scope, plan.text), *(row.content_hash for row in sources)]
        for row in sources:
            hashes.extend(origin_hashes(bot_id, repository.to_record(row).source))
        if await repository.barred_hashes(uow.session, hashes):
            return "forgotten"
        merged = await merges.write_merge(uow.session, bot_id, plan, sources, now)
        if merged is None:
            return "changed"
        uow.record(IndexWorkQueued(), MemoriesChanged(bot_id))
        await uow.commit()
    log_event("consolidation_merge", scope=plan.scope.key, merged=merged.id, sources=list(plan.source_ids))
    return MergeDone(merged.id, plan.source_ids, plan.text)
