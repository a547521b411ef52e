"""Consolidation cycles as durable jobs (kind ``consolidation`` in the SQL queue: leased, retried,
shown by ``ambot cognition jobs list``).

**Scheduling.** A chat gets a cycle when it has active memories recorded since its last cycle
(``store/cycles.chats_due``, cheapest first: fewest new memories, then the smallest chat), its
memory is on and ``consolidation.cycle`` is true. It holds at most one cycle job, waiting or
running, due at the start of the window the idle-window planner gives it (``not_before``).
``refresh`` is called after each activity flush for the chats that had messages (a message moves
the waiting job's due time to the new window, never a second job) and by the bot's periodic check
for every due chat (memories written without a message: the CLI, an importer).

**A run.** ``process`` runs the pre-pass (``engine/consolidation.py``) merge by merge. After each
merge it looks whether the chat had a message since the run began (this process's tally and the
flushed row, ``idle_windows.state``); if so it yields: what it merged stays committed, the job is
completed and a new one is queued for the rest at the chat's next window (its payload counts the
runs and merges so far). A finished run completes the job and calls ``idle_windows.record_cycle``
as of its end (the planner's penalty starts again; what the run itself wrote is not new for the
next cycle). A failure counts an attempt (backoff, then dead) like any job.

**The judgement step** follows a pre-pass that ran to its end (``engine/judgement.py``: a budgeted
model agent for near clusters, importance, tags, cards, the memo, knowledge and suggestions, when
something needs it and the bot account's daily budget allows). It asks the same ``should_stop``
between its rounds: a step that yields makes the run yield like the pre-pass does. Every run that
did its pre-pass leaves a row in ``cognition_cycle_run`` (what it did, or why the model did not
run, and its tokens); the run's outcome goes on the row (``lost`` when the lease was taken).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..domain.clock import aware_or_now
from ..domain.events import JobsQueued
from ..domain.idle_planner import IdleWindow
from ..domain.job_kinds import CONSOLIDATION_JOB
from ..domain.records import Scope
from ..logs import log_event
from ..store import cycles as store
from ..store import jobs
from . import idle_windows
from .lazy import LazyModule
from .switches import chat_switches

if TYPE_CHECKING:
    from . import consolidation, judgement
    from .consolidation import PrepassReport
else:  # on first use (``engine/lazy.py``): ``status`` reads the cycles' summary, never runs one
    consolidation = LazyModule(f"{__package__}.consolidation")
    judgement = LazyModule(f"{__package__}.judgement")

if TYPE_CHECKING:
    from .service import CognitionEngine

#: Chats planned per periodic check (the cheapest first; the rest at the next check).
SCHEDULE_LIMIT = 500


@dataclass(slots=True)
class CycleRun:
    """One run of a cycle job: ``outcome`` is ``done``, ``yielded`` (re-queued at ``next_window``),
    ``off`` (cycles or the chat's memory switched off: nothing done) or ``lost`` (the lease was taken)."""

    job_id: int
    outcome: str
    report: PrepassReport | None = None
    next_window: IdleWindow | None = None


def cycles_on(engine: CognitionEngine) -> bool:
    return engine.config.enable and engine.config.consolidation.cycle


async def refresh(
    engine: CognitionEngine, chats: list[tuple[str, Scope]] | None = None, now: datetime | None = None
) -> int:
    """Plan or re-plan cycles: of ``chats`` (those that just had messages), else of every chat
    with new memories. A waiting job's due time follows the chat's window; a chat with new
    memories and no job gets one. Returns the jobs added or moved."""
    if not cycles_on(engine):
        return 0
    moment = aware_or_now(now)
    async with engine.session() as session:
        if chats is None:
            due = await store.chats_due(session, limit=SCHEDULE_LIMIT)
        else:
            due = [found for bot_id, scope in chats for found in await store.chats_due(session, bot_id, scope, limit=1)]
        scheduled = await store.scheduled_chats(session)
    changed = 0
    for chat in due:
        if chats is None and (chat.bot_id, chat.scope.key) in scheduled:
            continue
        changed += await _plan_chat(engine, chat.bot_id, chat.scope, moment)
    if chats is not None:  # a chat with a waiting job but no new memory (a cycle yielded) moves too
        fresh = {(chat.bot_id, chat.scope.key) for chat in due}
        for bot_id, scope in chats:
            if (bot_id, scope.key) in scheduled and (bot_id, scope.key) not in fresh:
                changed += await _plan_chat(engine, bot_id, scope, moment)
    return changed


async def next_due(engine: CognitionEngine, bot_id: str, scope: Scope, now: datetime) -> IdleWindow:
    """The chat's next window, starting no sooner than ``idle_buffer_minutes`` after its last
    message (the planner lets a chat finish talking in its heat-map windows; its fixed window for a
    chat without history does not, and a cycle that yielded must not start again at once)."""
    window = await idle_windows.plan(engine, bot_id, scope, now)
    last = (await idle_windows.state(engine, bot_id, scope)).last_observed_at
    if last is None:
        return window
    earliest = last + timedelta(minutes=engine.config.consolidation.idle_buffer_minutes)
    if window.start >= earliest:
        return window
    return replace(window, start=earliest, end=max(window.end, earliest + (window.end - window.start)))


async def _plan_chat(engine: CognitionEngine, bot_id: str, scope: Scope, now: datetime) -> int:
    """Queue the chat's cycle at its window, or move its waiting one there (1), else 0."""
    if await chat_switches(engine, bot_id, scope) is None:
        return 0
    window = await next_due(engine, bot_id, scope, now)
    async with engine.unit_of_work() as uow:
        await uow.lock_scope(bot_id, scope)  # two processes planning one chat queue one job
        job = await store.cycle_job(uow.session, bot_id, scope)
        if job is None:
            await jobs.enqueue(
                uow.session, CONSOLIDATION_JOB, bot_id, scope, {"runs": 0, "merged": 0}, now, window.start
            )
            uow.record(JobsQueued())
        elif job.state != jobs.PENDING or not await store.move_due(uow.session, job.id, window.start, now):
            return 0  # running: it yields by itself when the chat talks
        await uow.commit()
    log_event("cycle_planned", scope=scope.key, due=window.start.isoformat(timespec="minutes"), reason=window.reason)
    return 1


async def flush_and_refresh(engine: CognitionEngine, now: datetime | None = None) -> int:
    """The activity flush, then the cycles of the chats it wrote re-planned (``refresh``)."""
    chats = [(bot_id, scope) for bot_id, entries in engine.activity_tally.snapshot().items() for scope in entries]
    written = await idle_windows.flush(engine, now)
    if chats:
        await refresh(engine, chats, now)
    return written


def _talked_since(engine: CognitionEngine, bot_id: str, scope: Scope, started: datetime):  # type: ignore[no-untyped-def]
    async def talked() -> bool:
        activity = await idle_windows.state(engine, bot_id, scope)
        return activity.last_observed_at is not None and activity.last_observed_at > started

    return talked


def _ended(moment: datetime, started: float) -> datetime:
    """When a run that began at ``moment`` (``perf_counter`` ``started``) ended, on its clock."""
    return moment + timedelta(seconds=time.perf_counter() - started)


async def process(engine: CognitionEngine, held: jobs.Lease, now: datetime | None = None) -> CycleRun:
    """Run one leased cycle job (see the module's docstring)."""
    started = time.perf_counter()
    moment = aware_or_now(now)
    run = CycleRun(held.job_id, "off")
    if not cycles_on(engine) or await chat_switches(engine, held.bot_id, held.scope) is None:
        async with engine.unit_of_work() as uow:
            if not await jobs.finish(uow.session, held):
                return CycleRun(held.job_id, "lost")
            await uow.commit()
        log_event("cycle", job=held.job_id, scope=held.scope.key, outcome="off")
        return run
    talked = _talked_since(engine, held.bot_id, held.scope, moment)
    report = await consolidation.prepass(engine, held.bot_id, held.scope, now=moment, should_stop=talked)
    run.report = report
    step = report.model_step = await judgement.judge(
        engine, report, trigger="scheduled", now=moment, should_stop=talked
    )
    progress: dict[str, Any] = {
        "runs": int(held.payload.get("runs", 0)) + 1,
        "merged": int(held.payload.get("merged", 0)) + len(report.merged),
    }
    if report.stopped or step.yielded:
        run.next_window = await next_due(engine, held.bot_id, held.scope, moment)
    async with engine.unit_of_work() as uow:
        if not await jobs.finish(uow.session, held):
            await judgement.set_outcome(engine, step.run_id, "lost")
            return CycleRun(held.job_id, "lost", report)
        if run.next_window is not None:
            await jobs.enqueue(
                uow.session, CONSOLIDATION_JOB, held.bot_id, held.scope, progress, moment, run.next_window.start
            )
            uow.record(JobsQueued())
        await uow.commit()
    if run.next_window is None:
        # as of its end: what its own steps wrote is not new for the next cycle
        await idle_windows.record_cycle(engine, held.bot_id, held.scope, _ended(moment, started))
        run.outcome = "done"
    else:
        run.outcome = "yielded"
    log_event(
        "cycle",
        started,
        level=logging.INFO,
        job=held.job_id,
        scope=held.scope.key,
        outcome=run.outcome,
        merged=len(report.merged),
        near_proposed=len(report.near),
        wording_proposed=len(report.wording),
        model_step=step.ended,
        model_tokens=step.tokens,
        **({"model_skipped": step.reason} if step.ended == "skipped" else {}),
        **({"next": run.next_window.start.isoformat(timespec="minutes")} if run.next_window else {}),
    )
    return run


async def run_now(engine: CognitionEngine, bot_id: str, scope: Scope, now: datetime | None = None) -> PrepassReport:
    """A cycle of one chat now (``ambot cognition consolidate``, ``/memory dmn``): the pre-pass and
    the judgement step to their end (no yielding: someone asked), the chat's waiting cycle job
    dropped (this was its cycle), the planner's penalty reset. Runs whether ``consolidation.cycle``
    is on or not (an operator asked); a chat whose memory is off gets nothing (``report.switched_off``)."""
    started = time.perf_counter()
    moment = aware_or_now(now)
    report = await consolidation.prepass(engine, bot_id, scope, now=moment)
    if report.switched_off:
        return report
    report.model_step = await judgement.judge(engine, report, trigger="command", now=moment)
    async with engine.unit_of_work() as uow:
        await store.drop_waiting(uow.session, bot_id, scope)
        await uow.commit()
    await idle_windows.record_cycle(engine, bot_id, scope, _ended(moment, started))
    return report


async def dry_run(engine: CognitionEngine, bot_id: str, scope: Scope, now: datetime | None = None) -> PrepassReport:
    """What a cycle of the chat would do now, changing nothing and calling no model: the pre-pass's
    plan, and whether the judgement step would run after it (and why not)."""
    moment = aware_or_now(now)
    report = await consolidation.prepass(engine, bot_id, scope, dry_run=True, now=moment)
    if not report.switched_off:
        report.model_step = await judgement.would_judge(engine, report, moment)
    return report


async def bots_with_chat(engine: CognitionEngine, scope: Scope) -> list[str]:
    async with engine.session() as session:
        return await store.bots_with_chat(session, scope)


async def summary(engine: CognitionEngine) -> store.CycleSummary:
    async with engine.session() as session:
        return await store.summary(session)
