"""What the historian makes of the model's answer (pure CPU work, run off the event loop).

The answer is first cut to what a job may yield (``read``): at most ``FACTS_PER_SOURCE`` facts a
source, each text cut to the fact limit (``memory_max_chars``) before any rule reads it, its length
as said kept. Then each fact is checked (``check``): the length, and the gate (pronouns, relative
time and place, numeric ids that went missing). Failing facts, and observations no fact covers, get
one more call with feedback naming the words, the ids and the limit (``feedback``); the retry
replaces what failed (``merge_retry``). What still fails is written anyway with ``absolute: false``
(``final_facts``): a fact that lost an id or is still too long is replaced by its observation as
said, so nothing said is lost to a wrong or a long answer.

Each fact carries the model's flags (``secret``, ``do_not_remember``, ``about_someone_else``: a
``SecondOpinion``, judged with the rules at the write, ``admission.judge``). A flagged fact is not
retried or replaced (it will not be written, and it covers its sources, so its observation is
never kept as said instead); a flag stays with its text through the retry; ``do_not_remember``
covers every fact of the same source (a request is about what was said), and a fact replaced by
its observation as said carries the flags of every fact of those sources.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, tzinfo
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, Field

from ..domain.admission import NO_OPINION, SecondOpinion
from ..domain.gate import GateVerdict, check_fact
from ..domain.happened import Happened, when_happened
from ..domain.inert import inert_line
from ..domain.records import normalise_text
from .historian_sources import Source

#: Facts one source (an observation, a turn) may yield; the rest of an answer is not read.
FACTS_PER_SOURCE = 5
#: ... and never fewer than this many a job.
MIN_FACTS = 20
#: How much of a fact that is too long the retry prompt shows.
EXCERPT_CHARS = 60


_YES = frozenset({"是", "对", "真", "有"})
_NO = frozenset({"否", "不", "不是", "假", "无", "没有", "none", "null"})


def _flag(value: object) -> object:
    """A flag as a model may send it: absent or null is false, a Chinese yes or no is read; the
    rest is pydantic's lax bool (true/false, 1/0, "true", "yes" …)."""
    if value is None:
        return False
    if isinstance(value, str):
        word = value.strip().lower()
        if not word or word in _NO:
            return False
        if word in _YES:
            return True
    return value


#: A flag of a fact: false unless the model says otherwise.
Flag = Annotated[bool, BeforeValidator(_flag)]


class RewrittenFact(BaseModel):
    text: str = Field(description="一条完整、绝对的事实：具体人名附QQ号、具体日期，不用代词和相对时间地点")
    sources: list[int] = Field(default_factory=list, description="这条事实来自哪些编号（观察或对话）")
    kind: Literal["fact", "event", "preference", "plan", "decision"] = Field("fact", description="事实的类别")
    happened_on: str = Field(
        "", description="事情发生或计划发生的日期 YYYY-MM-DD；只说了月份写 YYYY-MM，只说了年份写 YYYY；不确定则留空"
    )
    subject_id: str = Field("", description="这条事实主要关于谁（QQ号）；关于群或不确定则留空")
    secret: Flag = Field(
        False, description="含有密码、密钥、验证码、卡号、证件号等可被冒用的值时为 true（“[已隐去]”不算）"
    )
    do_not_remember: Flag = Field(False, description="说话人要求不要记住这件事时为 true")
    about_someone_else: Flag = Field(
        False, description="是不在聊天中的第三人的私事（健康、钱财、感情、官司、私下告知的事）时为 true"
    )

    @property
    def opinion(self) -> SecondOpinion:
        return SecondOpinion(self.secret, self.do_not_remember, self.about_someone_else)


class RewriteAnswer(BaseModel):
    """提交改写后的全部事实。"""

    facts: list[RewrittenFact] = Field(default_factory=list, description="全部事实")


@dataclass(frozen=True, slots=True)
class ReadFact:
    """A fact of the answer as the historian reads it: ``text`` normalised and cut to the limit,
    ``length`` as the model wrote it."""

    text: str
    length: int
    sources: tuple[int, ...]
    kind: str
    happened_on: str
    subject_id: str
    #: The model's flags; a flagged fact is never written (``admission.judge``).
    opinion: SecondOpinion = NO_OPINION


@dataclass(frozen=True, slots=True)
class FactCheck:
    verdict: GateVerdict
    length: int
    limit: int
    #: The model flagged the fact: it is not written, so nothing of it is retried or replaced.
    flagged: bool = False

    @property
    def too_long(self) -> bool:
        return self.length > self.limit and not self.flagged

    @property
    def ok(self) -> bool:
        return self.flagged or (self.verdict.ok and not self.too_long)


@dataclass(slots=True)
class FinalFact:
    text: str
    sources: list[int]
    kind: str
    happened_at: Happened | None
    subject_id: str
    absolute: bool = True
    warning: str = ""
    opinion: SecondOpinion = NO_OPINION


# --------------------------------------------------------------------------- reading and checking


def read(answer: RewriteAnswer, sources: Sequence[Source], limit: int) -> tuple[list[ReadFact], int]:
    """The answer's facts cut to what the job may yield, and how many facts were left unread."""
    most = max(MIN_FACTS, FACTS_PER_SOURCE * len(sources))
    facts = []
    for fact in answer.facts[:most]:
        text = normalise_text(fact.text)
        facts.append(
            ReadFact(
                text[:limit], len(text), tuple(fact.sources), fact.kind, fact.happened_on, fact.subject_id, fact.opinion
            )
        )
    return facts, max(0, len(answer.facts) - most)


def check(facts: Sequence[ReadFact], sources: Sequence[Source], limit: int) -> list[FactCheck]:
    by_number = {source.number: source for source in sources}
    checks = []
    for fact in facts:
        required = set().union(*(by_number[number].ids for number in fact.sources if number in by_number))
        checks.append(FactCheck(check_fact(fact.text, required), fact.length, limit, bool(fact.opinion)))
    return checks


def uncovered(facts: Sequence[ReadFact], sources: Sequence[Source]) -> list[Source]:
    covered = {number for fact in facts for number in fact.sources}
    return [source for source in sources if source.number not in covered]


def _excerpt(fact: ReadFact) -> str:
    return inert_line(fact.text[:EXCERPT_CHARS], None) + "…"


def feedback(
    facts: Sequence[ReadFact], checks: Sequence[FactCheck], missing: Sequence[Source], extracting: bool
) -> list[str]:
    lines = []
    for fact, checked in zip(facts, checks, strict=True):
        if checked.flagged:  # not written: nothing of it to mend
            continue
        if checked.too_long:
            lines.append(
                f"事实“{_excerpt(fact)}”过长：{checked.length} 字，每条事实最多 {checked.limit} 字；"
                f"请精简，或拆成几条各不超过 {checked.limit} 字的事实"
            )
        elif checked.verdict.feedback():
            lines.append(f"事实“{fact.text}”：{checked.verdict.feedback()}")
    if not extracting:
        for source in missing:
            lines.append(
                f"观察#{source.number}“{inert_line(source.text, None)}”没有对应的事实，请改写它（每条观察至少一条事实）"
            )
    return lines


def previous(facts: Sequence[ReadFact], checks: Sequence[FactCheck]) -> list[str]:
    """The first answer's facts as the retry prompt shows them (one that was too long, in part)."""
    return [_excerpt(fact) if checked.too_long else fact.text for fact, checked in zip(facts, checks, strict=True)]


def merge_retry(
    first: Sequence[ReadFact],
    checks: Sequence[FactCheck],
    retried: Sequence[ReadFact],
    sources: Sequence[Source],
    extracting: bool,
) -> list[ReadFact]:
    """Keep the first answer's passing facts; the retry replaces the failing ones and covers
    what was missing. A retry that brings nothing keeps the first answer as it was. A retried fact
    whose text the first answer flagged keeps the flag."""
    if not retried:
        return list(first)
    flagged = {fact.text: fact.opinion for fact in first if fact.opinion}
    retried = [replace(fact, opinion=fact.opinion | flagged[fact.text]) if fact.text in flagged else fact
               for fact in retried]  # fmt: skip
    if extracting:
        return list(retried)
    failing_sources = {number for fact, checked in zip(first, checks, strict=True) if not checked.ok
                       for number in fact.sources}  # fmt: skip
    kept = [fact for fact, checked in zip(first, checks, strict=True) if checked.ok]
    kept_texts = {fact.text for fact in kept}
    missing = {source.number for source in uncovered(first, sources)} | failing_sources
    replacements = [
        fact
        for fact in retried
        if fact.text not in kept_texts and (not fact.sources or set(fact.sources) & missing or not missing)
    ]
    # the retry did not cover a failing fact at all: keep the failing one (downgraded later); a
    # failing fact that names no source is taken as replaced once the retry brought anything
    covered = {number for fact in replacements for number in fact.sources}
    still = [
        fact
        for fact, checked in zip(first, checks, strict=True)
        if not checked.ok and (set(fact.sources) - covered if fact.sources else not replacements)
    ]
    return [*kept, *replacements, *still]


# --------------------------------------------------------------------------- the final facts


def happened_at(happened_on: str, sources: Sequence[Source], zone: tzinfo | None) -> Happened | None:
    """When a fact happened, at the precision it was said with (``domain.happened``): the model's
    date if it is one (a day, a month or a year), else the first date the resolver finds in the
    fact's sources; noon of its first day in the job's zone."""
    return when_happened(happened_on, [(source.text, source.at) for source in sources], zone)


def _fitted(text: str, limit: int) -> str:
    text = normalise_text(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def as_said(texts: Sequence[str], fallback: str, limit: int) -> list[str]:
    """What was said, in place of a rewrite that failed: the sources joined when they fit in one
    fact, else one fact each (one said before the limit was lowered is cut to it); without a
    source, the rewrite cut to the limit."""
    if not texts:
        return [_fitted(fallback, limit)]
    joined = normalise_text("；".join(texts))
    return [joined] if len(joined) <= limit else [_fitted(text, limit) for text in texts]


def _flags_of_sources(facts: Sequence[ReadFact]) -> dict[int, SecondOpinion]:
    """Per source, every flag the model gave a fact drawn from it."""
    flags: dict[int, SecondOpinion] = {}
    for fact in facts:
        for number in fact.sources:
            flags[number] = flags.get(number, NO_OPINION) | fact.opinion
    return flags


def final_facts(
    facts: Sequence[ReadFact],
    checks: Sequence[FactCheck],
    sources: Sequence[Source],
    force: bool,
    extracting: bool,
    limit: int,
) -> list[FinalFact]:
    by_number = {source.number: source for source in sources}
    zone = (sources[0].at if sources else datetime.now().astimezone()).tzinfo
    of_source = _flags_of_sources(facts)
    final: list[FinalFact] = []
    for fact, checked in zip(facts, checks, strict=True):
        known = [number for number in fact.sources if number in by_number]
        when = happened_at(fact.happened_on, [by_number[number] for number in known], zone)
        subject = fact.subject_id.strip()
        request = any(of_source.get(number, NO_OPINION).do_not_remember for number in known)
        opinion = fact.opinion | SecondOpinion(do_not_remember=request)
        if opinion:  # never written (admission.judge): kept as the model wrote it, covering its sources
            final.append(FinalFact(fact.text, known, fact.kind, when, subject, opinion=opinion))
            continue
        verdict = checked.verdict
        words = "、".join(problem.word for problem in verdict.problems)
        if checked.too_long or verdict.id_drift:
            # keep what was said, as said, rather than a wrong id or a cut sentence
            warning = (
                f"longer than the limit after a retry ({checked.length} > {checked.limit})"
                if checked.too_long
                else f"id drift ({words})"
            ) + "; the observation is kept as said"
            texts = [by_number[number].text for number in known]
            said = as_said(texts, fact.text, limit)
            numbers = [known] if len(said) == 1 else [[number] for number in known]
            for text, numbered in zip(said, numbers, strict=True):
                # what was said carries whatever the model flagged of it
                flags = NO_OPINION
                for number in numbered:
                    flags = flags | of_source.get(number, NO_OPINION)
                final.append(FinalFact(text, numbered, fact.kind, when, subject, False, warning, flags))
            continue
        item = FinalFact(fact.text, known, fact.kind, when, subject)
        if not verdict.ok:
            if force:
                item.warning = f"forced past the gate ({words})"
            else:
                item.absolute, item.warning = False, f"not absolute after a retry ({words})"
        final.append(item)
    if not extracting:
        for source in uncovered(facts, sources):
            for text in as_said([source.text], source.text, limit):
                final.append(
                    FinalFact(
                        text=text,
                        sources=[source.number],
                        kind="fact",
                        happened_at=happened_at("", [source], zone),
                        subject_id="",
                        absolute=False,
                        warning="no rewrite after a retry; the observation is kept as said",
                    )
                )
    return final
