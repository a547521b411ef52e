"""The historian: one job's observations (or a transcript batch) into absolute facts.

Per job: the rule-based time resolver anchors relative expressions against the message time;
ONE LLM call (a forced tool call through the ``llm/`` gateway) rewrites every observation, or
extracts them from a transcript batch; the gate checks every fact (pronouns, relative time and
place, numeric ids that went missing). Failing facts, and observations no fact covers, get one
more call with feedback naming the words and ids; what still fails is written anyway with
``absolute: false`` in its source and a warning (``force`` lets a fact through when only
look-alike words tripped the gate and no id drifted; a fact that lost an id is replaced by its
observation as said). Nothing observed is silently dropped.

Facts go through the memory bank's write path (admission, barriers, dedupe) in the chat's scope,
whatever the model wrote, with provenance ``inferred`` and the job and message ids; the job is
deleted in the same transaction (``store/jobs.finish``), so a job run twice writes its facts once.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING, Any, Literal
from zoneinfo import ZoneInfo

from pydantic import BaseModel, Field

from ..domain.clock import aware_or_now
from ..domain.gate import GateVerdict, check_fact
from ..domain.governance import OPTED_OUT, SWITCHED_OFF, SwitchState, people_about
from ..domain.happened import SOURCE_KEY as HAPPENED_KEY
from ..domain.happened import Happened, when_happened
from ..domain.inert import inert_line
from ..domain.records import Importance, MemoryDraft, MemoryKind, Provenance
from ..errors import LLMUnavailable
from ..logs import log_event
from ..store import jobs
from ..store import switches as switch_store
from .historian_sources import Source, job_sources, prompt_context
from .profile_queue import queue_merges
from .switches import chat_switches
from .turns import OBSERVATIONS_JOB
from .writes import WriteResult, remember_within

if TYPE_CHECKING:
    from .service import CognitionEngine

REWRITE_TEMPLATE = "historian_rewrite.jinja"
EXTRACT_TEMPLATE = "historian_extract.jinja"
TOOL_NAME = "cognition_record_facts"
_MENTION = re.compile(r"QQ号(\d{5,12})")
_NAMED = re.compile(r"QQ号(\d{5,12})（昵称([^）]{1,64})）")


class RewrittenFact(BaseModel):
    text: str = Field(description="一条完整、绝对的事实：具体人名附QQ号、具体日期，不用代词和相对时间地点")
    sources: list[int] = Field(default_factory=list, description="这条事实来自哪些编号（观察或对话）")
    kind: Literal["fact", "event", "preference", "plan", "decision"] = Field("fact", description="事实的类别")
    happened_on: str = Field(
        "", description="事情发生或计划发生的日期 YYYY-MM-DD；只说了月份写 YYYY-MM，只说了年份写 YYYY；不确定则留空"
    )
    subject_id: str = Field("", description="这条事实主要关于谁（QQ号）；关于群或不确定则留空")


class RewriteAnswer(BaseModel):
    """提交改写后的全部事实。"""

    facts: list[RewrittenFact] = Field(default_factory=list, description="全部事实")


@dataclass(slots=True)
class FinalFact:
    text: str
    sources: list[int]
    kind: str
    happened_at: Happened | None
    subject_id: str
    absolute: bool = True
    warning: str = ""


@dataclass(slots=True)
class JobReport:
    job_id: int
    outcome: str  # "done" | "skipped" | "lost"
    llm_calls: int = 0
    written: int = 0
    downgraded: int = 0
    refused: list[tuple[int, str, str]] = field(default_factory=list)


# --------------------------------------------------------------------------- checking


def _required_ids(fact: RewrittenFact, by_number: dict[int, Source]) -> set[str]:
    sources = [by_number[number] for number in fact.sources if number in by_number]
    return set().union(*(source.ids for source in sources)) if sources else set()


def _verdicts(answer: RewriteAnswer, by_number: dict[int, Source]) -> list[GateVerdict]:
    return [check_fact(fact.text, _required_ids(fact, by_number)) for fact in answer.facts]


def _feedback(
    answer: RewriteAnswer, verdicts: list[GateVerdict], uncovered: list[Source], extracting: bool
) -> list[str]:
    lines = []
    for fact, verdict in zip(answer.facts, verdicts, strict=True):
        if not verdict.ok:
            lines.append(f"事实“{fact.text}”：{verdict.feedback()}")
    if not extracting:
        for source in uncovered:
            lines.append(
                f"观察#{source.number}“{inert_line(source.text, None)}”没有对应的事实，请改写它（每条观察至少一条事实）"
            )
    return lines


def _uncovered(answer: RewriteAnswer, sources: list[Source]) -> list[Source]:
    covered = {number for fact in answer.facts for number in fact.sources}
    return [source for source in sources if source.number not in covered]


# --------------------------------------------------------------------------- writing


def _happened_at(happened_on: str, sources: Sequence[Source], zone: tzinfo | None) -> Happened | None:
    """When a fact happened, at the precision it was said with (``domain.happened``): the model's
    date if it is one (a day, a month or a year), else the first date the resolver finds in the
    fact's sources; noon of its first day in the job's zone."""
    return when_happened(happened_on, [(source.text, source.at) for source in sources], zone)


def _final_facts(
    answer: RewriteAnswer, verdicts: list[GateVerdict], sources: list[Source], force: bool, extracting: bool
) -> list[FinalFact]:
    by_number = {source.number: source for source in sources}
    zone = (sources[0].at if sources else datetime.now().astimezone()).tzinfo
    facts: list[FinalFact] = []
    for fact, verdict in zip(answer.facts, verdicts, strict=True):
        known = [number for number in fact.sources if number in by_number]
        final = FinalFact(
            text=fact.text,
            sources=known,
            kind=fact.kind,
            happened_at=_happened_at(fact.happened_on, [by_number[number] for number in known], zone),
            subject_id=fact.subject_id.strip(),
        )
        if not verdict.ok:
            words = "、".join(problem.word for problem in verdict.problems)
            if verdict.id_drift:
                # the rewrite lost an id: keep what was said, as said, rather than a wrong id
                original = "；".join(by_number[number].text for number in known) or fact.text
                final.text, final.absolute = original, False
                final.warning = f"id drift ({words}); the observation is kept as said"
            elif force:
                final.warning = f"forced past the gate ({words})"
            else:
                final.absolute, final.warning = False, f"not absolute after a retry ({words})"
        facts.append(final)
    if not extracting:
        for source in _uncovered(answer, sources):
            facts.append(
                FinalFact(
                    text=source.text,
                    sources=[source.number],
                    kind="fact",
                    happened_at=_happened_at("", [source], zone),
                    subject_id="",
                    absolute=False,
                    warning="no rewrite after a retry; the observation is kept as said",
                )
            )
    return facts


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
    extracting = kind != OBSERVATIONS_JOB
    return await engine.llm.complete_structured(
        "historian_extract" if extracting else "historian_rewrite",
        EXTRACT_TEMPLATE if extracting else REWRITE_TEMPLATE,
        context,
        output=RewriteAnswer,
        tool_name=TOOL_NAME,
        preset=engine.config.historian.preset,
    )


async def process(engine: CognitionEngine, held: jobs.Lease, now: datetime | None = None) -> JobReport:
    """Run one leased job to its end: facts written and the job deleted in one transaction.
    Raises on failure (the caller counts the attempt); ``lost`` when the lease was taken over."""
    started = time.perf_counter()
    report = JobReport(held.job_id, "done")
    switches = await chat_switches(engine, held.bot_id, held.scope)  # None: the chat's memory is off
    payload = _without_opted_out(held.kind, held.payload, switches) if switches is not None else None
    if payload is None:  # nothing to extract: no model call
        facts: list[FinalFact] = []
        sources: list[Source] = []
        report.outcome = "skipped"
    else:
        if engine.llm is None:
            raise RuntimeError("the historian needs an LLM gateway")
        zone = ZoneInfo(engine.config.timezone)
        extracting = held.kind != OBSERVATIONS_JOB
        sources = job_sources(held.kind, payload, zone)
        context = prompt_context(held.kind, held.scope, payload, sources, aware_or_now(now), zone)
        by_number = {source.number: source for source in sources}
        answer = await _ask(engine, held.kind, context)
        report.llm_calls += 1
        verdicts = _verdicts(answer, by_number)
        feedback = _feedback(answer, verdicts, _uncovered(answer, sources), extracting)
        if feedback:
            context["feedback"] = feedback
            context["previous"] = [fact.text for fact in answer.facts]
            report.llm_calls += 1
            try:
                retried = await _ask(engine, held.kind, context)
            except LLMUnavailable as error:  # the first answer stands; its failing facts are downgraded
                log_event("historian", level=logging.WARNING, job=held.job_id, retry_failed=str(error)[:200])
            else:
                answer = _merge_retry(answer, verdicts, retried, sources, extracting)
                verdicts = _verdicts(answer, by_number)
        facts = _final_facts(answer, verdicts, sources, bool(payload.get("force")), extracting)
        report.downgraded = sum(1 for fact in facts if not fact.absolute)
        for fact in facts:
            if fact.warning:
                log_event("historian", job=held.job_id, warning=fact.warning[:200])
    drafts = _drafts(held, facts, sources)
    written = await _commit(engine, held, drafts, _people(facts, drafts, sources), aware_or_now(now))
    if written is None:
        report.outcome = "lost"
    else:
        report.written = len(written.written)
        report.refused = written.refused
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
    )
    return report


def _merge_retry(
    first: RewriteAnswer, verdicts: list[GateVerdict], retried: RewriteAnswer, sources: list[Source], extracting: bool
) -> RewriteAnswer:
    """Keep the first answer's passing facts; the retry replaces the failing ones and covers
    what was missing. A retry that brings nothing keeps the first answer as it was."""
    if not retried.facts:
        return first
    if extracting:
        return retried
    failing_sources = {number for fact, verdict in zip(first.facts, verdicts, strict=True) if not verdict.ok
                       for number in fact.sources}  # fmt: skip
    kept = [fact for fact, verdict in zip(first.facts, verdicts, strict=True) if verdict.ok]
    kept_texts = {fact.text for fact in kept}
    missing = {source.number for source in _uncovered(first, sources)} | failing_sources
    replacements = [
        fact
        for fact in retried.facts
        if fact.text not in kept_texts and (not fact.sources or set(fact.sources) & missing or not missing)
    ]
    # the retry did not cover a failing fact at all: keep the failing one (downgraded later); a
    # failing fact that names no source is taken as replaced once the retry brought anything
    covered = {number for fact in replacements for number in fact.sources}
    still = [
        fact
        for fact, verdict in zip(first.facts, verdicts, strict=True)
        if not verdict.ok and (set(fact.sources) - covered if fact.sources else not replacements)
    ]
    return RewriteAnswer(facts=[*kept, *replacements, *still])


# --------------------------------------------------------------------------- switch and opt-out


def _without_opted_out(kind: str, payload: dict[str, Any], switches: SwitchState) -> dict[str, Any] | None:
    """The job as the model may see it: without what opted-out users said or what names them;
    None when nothing is left to extract (an ``end`` job of an opted-out speaker)."""
    if not switches.opted_out:
        return payload
    context = {
        part: [
            message
            for message in payload.get(part, [])
            if not switches.touches_opted_out([str(message.get("speaker_id", ""))], [str(message.get("text", ""))])
        ]
        for part in ("recent", "batch")
    }
    if kind == OBSERVATIONS_JOB:
        if switches.is_opted_out(str(payload.get("speaker", {}).get("id", ""))):
            return None
        kept = switches.without_opted_out([str(text) for text in payload.get("observations", [])])
        return {**payload, **context, "observations": kept} if kept else None
    turns = [
        turn
        for turn in payload.get("turns", [])
        if not switches.touches_opted_out(
            [str(turn.get("speaker_id", ""))], [str(turn.get("input", "")), str(turn.get("reply", ""))]
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
    engine: CognitionEngine, held: jobs.Lease, drafts: list[MemoryDraft], people: list[set[str]], now: datetime
) -> WriteResult | None:
    """The facts and the job's completion in one transaction; None when the lease was lost.

    The chat's switch and the opt-outs are read again here, in SQL under the chat's lock (a
    switch change takes the same lock): whatever changed while the model was answering, nothing
    is written for a switched-off chat or about an opted-out user; the profile merges the written
    facts call for are queued in the same transaction (``profile_merge``: none for opted-out users)."""
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
        opted_out = (
            await switch_store.opted_out_among(uow.session, held.bot_id, set().union(*people)) if drafts else set()
        )
        if opted_out:  # their facts are dropped unseen: no text is kept of them, not even in a log
            refused = [(index, "", OPTED_OUT) for index, about in enumerate(people) if about & opted_out]
            drafts = [draft for draft, about in zip(drafts, people, strict=True) if not about & opted_out]
        result = await remember_within(engine, uow, held.bot_id, held.scope, drafts, now) if drafts else WriteResult()
        result.refused.extend(refused)
        await queue_merges(engine, uow, held.bot_id, held.scope, result.written, now)
        await uow.commit()
    return result
