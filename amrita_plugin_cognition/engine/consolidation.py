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
* **Wording clusters** (``wording``: pairs whose parts agree, rejected by the check only because
  the leftover words differ, "可能相同，措辞不同", the closest ``domain/clusters.WORDING_PAIRS``)
  are proposed the same way, labelled as doubted, for the model alone to decide.
* **Judged merges** (``merge_judged``: the judgement step's tool ``cycle_memory_merge``, its
  model's text for members it judged one fact) go through the same ``merge``, which also checks
  the new text against admission, opt-outs and the barriers piece by piece.
* **Decay** is the global sweep's (``engine/decay.py``), not repeated here.

Each merge is one step: between steps the caller may ask to stop (``should_stop``: a message came
into the chat), and what was merged stays committed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from ..domain.clock import aware_or_now
from ..domain.consolidation import MergePlan, exact_merges, judged_merge, merge_plan
from ..domain.cycle_rules import barrier_pieces, stored_text_refusal
from ..domain.events import IndexWorkQueued, MemoriesChanged
from ..domain.records import Importance, MemoryRecord, MemoryStatus, Scope, content_hash, origin_hashes
from ..errors import InvalidInput
from ..logs import log_event
from ..store import merges, repository
from .duplicates import DuplicateClusters, duplicate_clusters
from .switches import chat_switches
from .writes import checked_text

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
    (member ids); ``wording`` the clusters of pairs rejected only for their wording, proposed as
    "可能相同，措辞不同" (member ids); ``stopped`` when it yielded before the end (a message came in). ``model_step`` is
    the judgement step that followed (``engine/judgement.ModelStep``: what it did, or why it did not
    run; in a dry run, whether it would), None when there was none (the chat is off)."""

    bot_id: str
    scope: Scope
    memories: int = 0
    planned: list[MergePlan] = field(default_factory=list)
    merged: list[MergeDone] = field(default_factory=list)
    skipped: list[tuple[tuple[int, ...], str]] = field(default_factory=list)
    near: list[tuple[int, ...]] = field(default_factory=list)
    wording: list[tuple[int, ...]] = field(default_factory=list)
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
    report.wording = [cluster.member_ids for cluster in clusters.wording]
    report.planned = await _plans(engine, clusters)
    if not dry_run:
        for index, plan in enumerate(report.planned):
            if index and should_stop is not None and await should_stop():
                report.stopped = True
                break
            why = await merge(engine, bot_id, plan.scope, plan.source_ids, merge_plan, moment)
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
        wording_proposed=len(report.wording),
        stopped=report.stopped,
    )
    return report


#: Why a merge was not written (``merge``'s answers), in Chinese for the cycle's model.
MERGE_REFUSALS = {
    "switched_off": "本会话的记忆已关闭，不能合并",
    "changed": "有记忆已不是本会话的有效记忆（刚被合并、更正或遗忘），请重新查看",
    "opted_out": "涉及已选择不被记忆的用户，不能合并",
    "admission": "合并后的文字没有通过准入检查（含敏感内容或“不要记住”的请求）",
    "forgotten": "合并后的文字包含此前被要求遗忘的内容，不能写入",
    "duplicate": "本会话已有一条与合并结果相同的有效记忆，请把它也列入这次合并",
}


async def merge(
    engine: CognitionEngine,
    bot_id: str,
    scope: Scope,
    source_ids: Sequence[int],
    plan_of: Callable[[list[MemoryRecord]], MergePlan],
    now: datetime,
) -> MergeDone | str:
    """One merge of ``source_ids`` (facts of ``scope``) in its own unit of work under the chat's
    lock; ``plan_of`` builds it from the sources as they are then (the pre-pass: ``merge_plan``;
    the cycle: ``judged_merge`` with the model's text). Why not, when it is skipped: a key of
    ``MERGE_REFUSALS``. A judged merge's text is checked against the barriers piece by piece
    (``barrier_pieces``: it is new wording) and may not repeat another active fact of the chat."""
    ids = tuple(dict.fromkeys(source_ids))
    async with engine.unit_of_work() as uow:
        await uow.lock_scope(bot_id, scope)
        switches = await chat_switches(engine, bot_id, scope)
        if switches is None:
            return "switched_off"
        rows = await repository.get_rows(uow.session, bot_id, ids)
        sources = [rows[source_id] for source_id in ids if source_id in rows]
        if len(sources) != len(ids) or any(
            row.status != MemoryStatus.ACTIVE.value or (row.scope_kind, row.scope_id) != (scope.kind, scope.id)
            for row in sources
        ):
            return "changed"
        if any(
            switches.touches_opted_out(
                (row.speaker_id, row.subject_id), (row.text,), (row.speaker_name, row.subject_name)
            )
            for row in sources
        ):
            return "opted_out"
        # the merge's values from the rows as they are now (a keep, a tag changed since the clusters were read)
        plan = plan_of([repository.to_record(row) for row in sources])
        names = [name for row in sources for name in (row.speaker_name, row.subject_name)]
        if plan.judged and switches.touches_opted_out((), (plan.text,), names):
            return "opted_out"
        if await asyncio.to_thread(stored_text_refusal, plan.text):
            return "admission"
        pieces = barrier_pieces(plan.text) if plan.judged else [plan.text]
        digest = content_hash(bot_id, plan.scope, plan.text)
        hashes = [content_hash(bot_id, plan.scope, piece) for piece in pieces]
        for row in sources:
            hashes.append(row.content_hash)
            hashes.extend(origin_hashes(bot_id, repository.to_record(row).source))
        if await repository.barred_hashes(uow.session, hashes):
            return "forgotten"
        existing = await repository.find_active_duplicate(uow.session, bot_id, [digest]) if plan.judged else {}
        if set(existing.values()) - set(ids):
            return "duplicate"
        merged = await merges.write_merge(uow.session, bot_id, plan, sources, now)
        if merged is None:
            return "changed"
        uow.record(IndexWorkQueued(), MemoriesChanged(bot_id))
        await uow.commit()
    log_event(
        "consolidation_merge", scope=plan.scope.key, merged=merged.id, sources=list(plan.source_ids), judged=plan.judged
    )
    return MergeDone(merged.id, plan.source_ids, plan.text)


async def merge_judged(
    engine: CognitionEngine,
    bot_id: str,
    scope: Scope,
    source_ids: Sequence[int],
    text: str,
    importance: Importance,
    tags: Sequence[str],
    now: datetime | None = None,
) -> MergeDone:
    """The cycle's merge of facts its model judged one (``domain/consolidation.judged_merge``):
    ``InvalidInput`` with the reason in Chinese when it is refused (``MERGE_REFUSALS``)."""
    value = checked_text(engine, text)
    done = await merge(
        engine,
        bot_id,
        scope,
        source_ids,
        lambda records: judged_merge(records, value, importance, tags),
        aware_or_now(now),
    )
    if isinstance(done, str):
        raise InvalidInput(MERGE_REFUSALS[done], en=f"judged merge refused: {done}")
    return done
