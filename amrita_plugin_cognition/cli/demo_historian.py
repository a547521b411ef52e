"""The historian in the demo, driven by hand: at the end of each simulated day the demo hands
the day's work to the historian at that simulated time and reports, per job, what went in
(the observations with the resolver's time anchors, or the transcript turns) and what came out
(the facts written, with their dates and whether the gate found them absolute).

In the bot the historian runs on the scheduler and is woken by every enqueue; here it is
stopped (``running = False``) and runs one job at a time, so the model sees the historian's
requests in a fixed order, between the turns, never during one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from ..api import UTC

if TYPE_CHECKING:
    from ..api import CognitionEngine, QueuedJob


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
    engine.jobs.pause()
    # One job in flight at a time: the model sees the historian's requests in job order, and
    # facts get their ids in that order, whatever the model.
    engine.config.historian.max_concurrency = 1


def _local(value: str, zone: ZoneInfo) -> datetime | None:
    try:
        moment = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        return None
    return moment.astimezone(zone) if moment.tzinfo else moment.replace(tzinfo=zone)


def _report(job: QueuedJob, zone: ZoneInfo) -> JobReport:
    from ..api import anchor_hints

    payload = job.payload
    report = JobReport(job_id=job.id, kind=job.kind, scope=job.scope)
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
    from ..api import MERGE_JOB

    return [_report(job, zone) for job in await engine.jobs.queued("pending") if job.kind != MERGE_JOB]


async def _written_facts(engine: CognitionEngine, job_ids: set[int], zone: ZoneInfo) -> dict[int, list[WrittenFact]]:
    """The active facts the historian wrote for these jobs (read from their provenance)."""
    return {
        job_id: [
            WrittenFact(
                memory_id=record.id,
                text=record.text,
                happened_on=record.happened_at.astimezone(zone).date() if record.happened_at is not None else None,
                absolute=bool(record.source.get("absolute", True)),
                warning=str(record.source.get("warning", "")),
            )
            for record in records
        ]
        for job_id, records in (await engine.jobs.facts_of(job_ids)).items()
    }


async def run_historian(engine: CognitionEngine, now: datetime) -> HistorianRun:
    """Every job due at ``now`` (transcript turns still waiting become jobs first), run to its
    end; what each job read and wrote."""
    zone = ZoneInfo(engine.config.timezone)
    run = HistorianRun(now)
    # The engine is handed UTC, as the bot's own clock gives it: SQLite keeps a time without its
    # offset, so a local time would be stored (and due) hours off.
    moment = now.astimezone(UTC)
    # The waiting transcript turns become jobs here rather than inside run_until_idle, so that
    # the report can show every job before it runs (a finished job is deleted).
    await engine.jobs.flush_transcripts(moment, everything=True)
    run.jobs = await _pending_jobs(engine, zone)
    if not run.jobs:
        return run
    await engine.jobs.run_until_idle(now=moment)
    ids = {job.job_id for job in run.jobs}
    written = await _written_facts(engine, ids, zone)
    left = {queued.id: queued for queued in await engine.jobs.queued() if queued.id in ids}
    for job in run.jobs:
        job.facts = written.get(job.job_id, [])
        queued = left.get(job.job_id)
        if queued is not None:
            job.state, job.error = queued.state, queued.last_error
    return run
