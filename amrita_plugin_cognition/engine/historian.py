"""The historian: one job's observations (or a transcript batch) into absolute facts.

Per job: the rule-based time resolver anchors relative expressions against the message time;
ONE LLM call (a forced tool call through the ``llm/`` gateway) rewrites every observation, or
extracts them from a transcript batch; the answer is cut to what a fact may be and checked
(``historian_facts``: the length limit, the gate's pronouns, relative time and place, numeric ids
that went missing). Failing facts, and observations no fact covers, get one more call with
feedback naming the words, the ids and the limit; what still fails is written anyway with
``absolute: false`` in its source and a warning (``force`` lets a fact through when only
look-alike words tripped the gate and no id drifted; a fact that lost an id or is still too long
is replaced by its observation as said). Nothing observed is silently dropped.

The answer's facts carry the model's flags (``secret``, ``do_not_remember``,
``about_someone_else``): a second opinion on admission, judged with the rules at the write
(``admission.judge``). A flagged fact is not written, so it reaches no card merge either (merges
are queued from the written facts); it is refused and counted like the rules' refusals.

Facts go through the memory bank's write path (admission, barriers, dedupe, the chat's limit: what
does not fit is left out and logged, the rest written) in the chat's scope, whatever the model
wrote, with provenance ``inferred`` and the job and message ids; the job is deleted in the same
transaction (``store/jobs.finish``), so a job run twice writes its facts once.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from ..domain.admission import FLAGGED_REASONS, SecondOpinion
from ..domain.clock import aware_or_now
from ..domain.governance import OPTED_OUT, SWITCHED_OFF, SwitchState, people_about
from ..domain.happened import SOURCE_KEY as HAPPENED_KEY
from ..domain.records import Importance, MemoryDraft, MemoryKind, Provenance
from ..errors import LLMNotConfigured, LLMUnavailable
from ..logs import log_event
from ..store import jobs
from ..store import switches as switch_store
from . import historian_facts as read_facts
from .historian_call import EXTRACT_TEMPLATE, REWRITE_TEMPLATE, TOOL_NAME, ask
from .historian_facts import FinalFact, RewriteAnswer, RewrittenFact
from .historian_sources import Source, job_sources, prompt_context, without_removed_turns
from .profile_queue import queue_merges
from .switches import chat_switches
from .turns import OBSERVATIONS_JOB
from .writes import OVER_LIMIT, WriteResult, remember_within

if TYPE_CHECKING:
    from .service import CognitionEngine

__all__ = [
    "EXTRACT_TEMPLATE",
    "REWRITE_TEMPLATE",
    "TOOL_NAME",
    "JobReport",
    "RewriteAnswer",
    "RewrittenFact",
    "process",
]
_MENTION = re.compile(r"QQ号(\d{5,12})")
_NAMED = re.compile(r"QQ号(\d{5,12})（昵称([^）]{1,64})）")


@dataclass(slots=True)
class JobReport:
    job_id: int
    outcome: str  # "done" | "skipped" | "lost"
    llm_calls: int = 0
    written: int = 0
    downgraded: int = 0
    refused: list[tuple[int, str, str]] = field(default_factory=list)
    #: Facts of the answer past what a job may yield (``historian_facts.FACTS_PER_SOURCE``), not read.
    unread: int = 0


# --------------------------------------------------------------------------- writing


def _drafts(held: jobs.Lease, facts: Sequence[FinalFact], sources: list[Source]) -> list[MemoryDraft]:
    by_number = {source.number: source for source in sources}
    drafts = []
    for fact in facts:
        first = by_number[fact.sources[0]] if fact.sources else (sources[0] if sources else None)
        speaker_id = first.speaker_id if first else ""
        speaker_name = first.speaker_name if first else ""
        mentioned = set(_MENTION.findall(fact.text))
        subject_id = fact.subject_id if fact.subject_id in mentioned | {speaker_id} else ""
        if not subject_id and len(mentioned) == 1:
            subject_id = next(iter(mentioned))
        names = dict(_NAMED.findall(fact.text))
        subject_id = subject_id or speaker_id
        source: dict[str, object] = {
            "via": "historian",
            "job": held.job_id,
            "job_kind": held.kind,
            "messages": sorted({mid for number in fact.sources for mid in by_number[number].message_ids}),
            "sources": sorted(fact.sources),  # the job's observations or turns (origin barriers)
            "absolute": fact.absolute,
        }
        if fact.happened_at is not None:
            source[HAPPENED_KEY] = fact.happened_at.precision.value  # a day, a month or a year: as said
        if fact.warning:
            source["warning"] = fact.warning
        drafts.append(
            MemoryDraft(
                text=fact.text,
                scope=held.scope,  # the chat it was said in, whatever the model wrote
                speaker_id=speaker_id,
                speaker_name=speaker_name,
                subject_id=subject_id,
                subject_name=speaker_name if subject_id == speaker_id else names.get(subject_id, ""),
                kind=MemoryKind(fact.kind),
                importance=Importance.MEDIUM,
                provenance=Provenance.INFERRED,
                source=source,
                happened_at=fact.happened_at.at if fact.happened_at else None,
            )
        )
    return drafts


# --------------------------------------------------------------------------- the job


async def _ask(engine: CognitionEngine, kind: str, context: dict[str, Any]) -> RewriteAnswer:
    assert engine.llm is not None
    return await ask(engine.llm, kind, context, engine.config.historian.preset)


async def process(engine: CognitionEngine, held: jobs.Lease, now: datetime | None = None) -> JobReport:
    """Run one leased job to its end: facts written and the job deleted in one transaction.
    Raises on failure (the caller counts the attempt); ``lost`` when the lease was taken over.

    The CPU stages (the resolver's anchors, the gate, the final facts; admission in the write) run
    on worker threads, never on the event loop: a long answer delays this job, not the bot."""
    started = time.perf_counter()
    report = JobReport(held.job_id, "done")
    switches = await chat_switches(engine, held.bot_id, held.scope)  # None: the chat's memory is off
    payload = _without_opted_out(held.kind, held.payload, switches) if switches is not None else None
    facts: list[FinalFact] = []
    sources: list[Source] = []
    if payload is None:  # nothing to extract: no model call
        report.outcome = "skipped"
    else:
        if engine.llm is None:
            raise LLMNotConfigured(en="the historian needs an LLM gateway")
        payload = await without_removed_turns(engine, held.bot_id, payload)  # erased meanwhile: unread
        facts, sources = await _rewrite(engine, held, payload, aware_or_now(now), report)
    drafts, people = await asyncio.to_thread(_drafts_and_people, held, facts, sources)
    opinions = [fact.opinion for fact in facts]
    written = await _commit(engine, held, drafts, people, aware_or_now(now), opinions)
    if written is None:
        report.outcome = "lost"
    else:
        report.written = len(written.written)
        report.refused = written.refused
        left_out = [index for index, _, reason in written.refused if reason == OVER_LIMIT]
        if left_out:  # the chat is full: what did not fit is named in the log, and the job completes
            log_event(
                "historian",
                level=logging.WARNING,
                job=held.job_id,
                left_out=len(left_out),
                limit=engine.config.memories_max_per_scope,
                sources=",".join(str(number) for index in left_out for number in facts[index].sources),
            )
    log_event(
        "historian",
        started,
        job=held.job_id,
        kind=held.kind,
        outcome=report.outcome,
        calls=report.llm_calls,
        written=report.written,
        downgraded=report.downgraded,
        refused=len(report.refused),
        flagged=sum(1 for _, _, reason in report.refused if reason in FLAGGED_REASONS),
        reasons=_reasons(report.refused),
        unread=report.unread,
    )
    return report


def _reasons(refused: Sequence[tuple[int, str, str]]) -> str:
    """``reason:count`` of the refusals, for the log line (never their text)."""
    counts: dict[str, int] = {}
    for _, _, reason in refused:
        counts[reason] = counts.get(reason, 0) + 1
    return ",".join(f"{reason}:{count}" for reason, count in sorted(counts.items()))


async def _rewrite(
    engine: CognitionEngine, held: jobs.Lease, payload: dict[str, Any], now: datetime, report: JobReport
) -> tuple[list[FinalFact], list[Source]]:
    """The job's sources, one call (two with the retry) and the final facts."""
    zone = ZoneInfo(engine.config.timezone)
    limit = engine.config.memory_max_chars
    extracting = held.kind != OBSERVATIONS_JOB
    sources, context = await asyncio.to_thread(_prepare, held, payload, now, zone)
    answer = await _ask(engine, held.kind, context)
    report.llm_calls += 1
    facts, checks, report.unread = await asyncio.to_thread(_read, answer, sources, limit)
    lines = read_facts.feedback(facts, checks, read_facts.uncovered(facts, sources), extracting)
    if lines:
        context["feedback"] = lines
        context["previous"] = read_facts.previous(facts, checks)
        report.llm_calls += 1
        try:
            retried = await _ask(engine, held.kind, context)
        except LLMUnavailable as error:  # the first answer stands; its failing facts are downgraded
            log_event("historian", level=logging.WARNING, job=held.job_id, retry_failed=str(error)[:200])
        else:
            facts, checks, unread = await asyncio.to_thread(
                _read_retry, facts, checks, retried, sources, limit, extracting
            )
            report.unread += unread
    final = await asyncio.to_thread(
        read_facts.final_facts, facts, checks, sources, bool(payload.get("force")), extracting, limit
    )
    report.downgraded = sum(1 for fact in final if not fact.absolute)
    for fact in final:
        if fact.warning:
            log_event("historian", job=held.job_id, warning=fact.warning[:200])
    return final, sources


def _prepare(
    held: jobs.Lease, payload: dict[str, Any], now: datetime, zone: ZoneInfo
) -> tuple[list[Source], dict[str, Any]]:
    sources = job_sources(held.kind, payload, zone)
    return sources, prompt_context(held.kind, held.scope, payload, sources, now, zone)


def _read(
    answer: RewriteAnswer, sources: list[Source], limit: int
) -> tuple[list[read_facts.ReadFact], list[read_facts.FactCheck], int]:
    facts, unread = read_facts.read(answer, sources, limit)
    return facts, read_facts.check(facts, sources, limit), unread


def _read_retry(
    first: list[read_facts.ReadFact],
    checks: list[read_facts.FactCheck],
    retried: RewriteAnswer,
    sources: list[Source],
    limit: int,
    extracting: bool,
) -> tuple[list[read_facts.ReadFact], list[read_facts.FactCheck], int]:
    again, unread = read_facts.read(retried, sources, limit)
    merged = read_facts.merge_retry(first, checks, again, sources, extracting)
    return merged, read_facts.check(merged, sources, limit), unread


def _drafts_and_people(
    held: jobs.Lease, facts: list[FinalFact], sources: list[Source]
) -> tuple[list[MemoryDraft], list[set[str]]]:
    drafts = _drafts(held, facts, sources)
    return drafts, _people(facts, drafts, sources)


# --------------------------------------------------------------------------- switch and opt-out


def _without_opted_out(kind: str, payload: dict[str, Any], switches: SwitchState) -> dict[str, Any] | None:
    """The job as the model may see it: without what opted-out users said or what names them;
    None when nothing is left to extract (an ``end`` job of an opted-out speaker)."""
    if not switches.opted_out:
        return payload
    context = {part: switches.without_opted_out_messages(list(payload.get(part, []))) for part in ("recent", "batch")}
    if kind == OBSERVATIONS_JOB:
        speaker = payload.get("speaker", {})
        if switches.is_opted_out(str(speaker.get("id", ""))):
            return None
        observations = [str(text) for text in payload.get("observations", [])]
        kept = switches.without_opted_out(observations, [str(speaker.get("name", ""))])
        return {**payload, **context, "observations": kept} if kept else None
    turns = [
        turn
        for turn in payload.get("turns", [])
        if not switches.touches_opted_out(
            [str(turn.get("speaker_id", ""))],
            [str(turn.get("input", "")), str(turn.get("reply", ""))],
            [str(turn.get("speaker", ""))],
        )
    ]
    return {**payload, **context, "turns": turns} if turns else None


def _people(facts: Sequence[FinalFact], drafts: Sequence[MemoryDraft], sources: Sequence[Source]) -> list[set[str]]:
    """Per draft, the users it is about: the speakers of its sources, its subject, the QQ numbers
    in its text (``domain/governance.people_about``)."""
    by_number = {source.number: source for source in sources}
    return [
        people_about(
            [draft.speaker_id, *(by_number[number].speaker_id for number in fact.sources if number in by_number)],
            draft.subject_id,
            [draft.text],
        )
        for fact, draft in zip(facts, drafts, strict=True)
    ]


async def _commit(
    engine: CognitionEngine,
    held: jobs.Lease,
    drafts: list[MemoryDraft],
    people: list[set[str]],
    now: datetime,
    opinions: Sequence[SecondOpinion] = (),
) -> WriteResult | None:
    """The facts and the job's completion in one transaction; None when the lease was lost.

    The chat's switch and the opt-outs are read again here, in SQL under the chat's lock (a
    switch change takes the same lock): whatever changed while the model was answering, nothing
    is written for a switched-off chat or about an opted-out user (said by them, about them, or
    naming them: their QQ number in any writing, a nickname); the profile merges the written
    facts call for are queued in the same transaction (``profile_merge``: none for opted-out users).
    ``opinions``: the model's flags on each draft, judged with the rules in the write path."""
    async with engine.unit_of_work() as uow:
        await uow.lock_scope(held.bot_id, held.scope)
        if not await jobs.finish(uow.session, held):
            return None
        refused: list[tuple[int, str, str]] = []
        if drafts and (
            held.scope.key in engine.config.disabled_scopes
            or not await switch_store.chat_on(uow.session, held.bot_id, held.scope)
        ):
            refused, drafts = [(index, "", SWITCHED_OFF) for index in range(len(drafts))], []
        fresh = await engine.switches.fresh(uow.session, held.bot_id) if drafts else None
        positions = list(range(len(drafts)))  # of the drafts written, in the job's own numbering
        if fresh is not None and fresh.opted_out:  # dropped unseen: no text is kept of them, not even in a log
            out = [
                fresh.touches_opted_out(about, [draft.text], beside=(draft.speaker_name, draft.subject_name))
                for draft, about in zip(drafts, people, strict=True)
            ]
            refused = [(index, "", OPTED_OUT) for index, dropped in enumerate(out) if dropped]
            positions = [index for index, dropped in enumerate(out) if not dropped]
            drafts = [drafts[index] for index in positions]
        flags = [opinions[index] for index in positions] if opinions else []
        result = (
            await remember_within(engine, uow, held.bot_id, held.scope, drafts, now, flags) if drafts else WriteResult()
        )
        result.refused = [(positions[index], text, reason) for index, text, reason in result.refused]
        result.record_ids = {positions[index]: record for index, record in result.record_ids.items()}
        result.refused.extend(refused)
        await queue_merges(engine, uow, held.bot_id, held.scope, result.written, now)
        await uow.commit()
    return result
