"""The historian in the demo, driven by hand: at the end of each simulated day the demo hands
the day's work to the historian at that simulated time and reports, per job, what went in
(the observations with the resolver's time anchors, or the transcript turns) and what came out
(the facts written, with their dates and whether the gate found them absolute).

In the bot the historian runs on the scheduler and is woken by every enqueue; here it is
stopped (``running = False``) and runs one job at a time, so the model sees the historian's
requests in a fixed order, between the turns, never during one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from ..domain.clock import UTC

if TYPE_CHECKING:
    from ..engine.service import CognitionEngine


@dataclass(frozen=True, slots=True)
class Observation:
    number: int
    text: str
    #: The resolver's anchors, as the historian's prompt shows them: “昨晚” = 2026-03-01（周日）晚上.
    anchors: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class WrittenFact:
    memory_id: int
    text: str
    happened_on: date | None
    #: False: the gate still found a relative word after the retry (kept, marked in its source).
    absolute: bool
    warning: str = ""


@dataclass(slots=True)
class JobReport:
    job_id: int
    #: "observations" (from the ``end`` tool) or "transcript" (turns that ended without it).
    kind: str
    #: ``group:20001`` / ``private:10001``.
    scope: str
    said_at: datetime | None = None
    speaker_id: str = ""
    speaker_name: str = ""
    observations: list[Observation] = field(default_factory=list)
    transcript_turns: int = 0
    facts: list[WrittenFact] = field(default_factory=list)
    #: "done", or the state the job was left in ("pending" to be retried later, "failed").
    state: str = "done"
    error: str = ""


@dataclass(slots=True)
class HistorianRun:
    now: datetime
    jobs: list[JobReport] = field(default_factory=list)


def pause_scheduled_runs(engine: CognitionEngine) -> None:
    """Stop the bot's scheduler and enqueue wake-ups from running the historian; the demo runs
    it by hand, one job at a time."""
    engine.historian.running = False
    # One job in flight at a time: the model sees the historian's requests in job order, and
    # facts get their ids in that order, whatever the model.
    engine.config.historian.max_concurrency = 1


def _local(value: str, zone: ZoneInfo) -> datetime | None:
    try:
        moment = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        return None
    return moment.astimezone(zone) if moment.tzinfo else moment.replace(tzinfo=zone)


def _report(row: Any, zone: ZoneInfo) -> JobReport:
    from ..domain.timeresolve import anchor_hints

    try:
        payload = json.loads(row.payload)
    except json.JSONDecodeError:
        payload = {}
    report = JobReport(job_id=int(row.id), kind=str(row.kind), scope=f"{row.scope_kind}:{row.scope_id}")
    report.said_at = _local(str((payload.get("time") or {}).get("utc", "")), zone)
    speaker = payload.get("speaker") or {}
    report.speaker_id, report.speaker_name = str(speaker.get("id", "")), str(speaker.get("name", ""))
    said = report.said_at
    for number, text in enumerate(payload.get("observations") or [], start=1):
        anchors = tuple(anchor_hints(str(text), said)) if said is not None else ()
        report.observations.append(Observation(number, str(text), anchors))
    report.transcript_turns = len(payload.get("turns") or [])
    return report


async def _pending_jobs(engine: CognitionEngine, zone: ZoneInfo) -> list[JobReport]:
    """The historian's own pending jobs (card merges are ``demo_cards``' to show)."""
    from ..engine.profile_queue import MERGE_JOB
    from ..store import jobs

    async with engine.unit_of_work() as uow:
        rows = await jobs.list_jobs(uow.session, jobs.PENDING, limit=10_000)
    return [_report(row, zone) for row in rows if row.kind != MERGE_JOB]


async def _written_facts(engine: CognitionEngine, job_ids: set[int], zone: ZoneInfo) -> dict[int, list[WrittenFact]]:
    """The active facts the historian wrote for these jobs (read from their provenance)."""
    from ..store import repository

    found: dict[int, list[WrittenFact]] = {}
    after = 0
    async with engine.unit_of_work() as uow:
        while True:
            rows = await repository.active_page(uow.session, after, 500)
            if not rows:
                break
            after = rows[-1].id
            for row in rows:
                try:
                    source = json.loads(row.source or "{}")
                except json.JSONDecodeError:
                    continue
                if not isinstance(source, dict) or source.get("via") != "historian" or source.get("job") not in job_ids:
                    continue
                happened = _local(row.happened_at.isoformat(), zone) if row.happened_at is not None else None
                found.setdefault(int(source["job"]), []).append(
                    WrittenFact(
                        memory_id=int(row.id),
                        text=row.text,
                        happened_on=happened.date() if happened is not None else None,
                        absolute=bool(source.get("absolute", True)),
                        warning=str(source.get("warning", "")),
                    )
                )
    return found


async def run_historian(engine: CognitionEngine, now: datetime) -> HistorianRun:
    """Every job due at ``now`` (transcript turns still waiting become jobs first), run to its
    end; what each job read and wrote."""
    from ..engine.turns import flush_transcripts
    from ..store import jobs

    zone = ZoneInfo(engine.config.timezone)
    run = HistorianRun(now)
    # The engine is handed UTC, as the bot's own clock gives it: SQLite keeps a time without its
    # offset, so a local time would be stored (and due) hours off.
    moment = now.astimezone(UTC)
    # The waiting transcript turns become jobs here rather than inside run_until_idle, so that
    # the report can show every job before it runs (a finished job is deleted).
    await flush_transcripts(engine, moment, everything=True)
    run.jobs = await _pending_jobs(engine, zone)
    if not run.jobs:
        return run
    await engine.historian.run_until_idle(now=moment)
    ids = {job.job_id for job in run.jobs}
    written = await _written_facts(engine, ids, zone)
    async with engine.unit_of_work() as uow:
        left = {row.id: row for row in await jobs.list_jobs(uow.session, None, limit=10_000) if row.id in ids}
    for job in run.jobs:
        job.facts = written.get(job.job_id, [])
        row = left.get(job.job_id)
        if row is not None:
            job.state, job.error = str(row.state), str(row.last_error or "")
    return run
