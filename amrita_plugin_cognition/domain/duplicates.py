"""Are two stored facts the same fact? The LLM-free check consolidation proposes merges with (and
``eval dedup`` measures). Pure, no I/O.

Vectors find candidates, the parts decide. Two facts whose vectors are close can still differ in
exactly the part that matters, and each such class of difference is a rule here, in this order:

* ``who``: a different QQ number (in any writing, a bare number of QQ's length in brackets after a
  name too; a nickname beside it is framing, not wording; a number on one side whose nickname the
  other fact names alone is the same person);
* ``when``: a different calendar date (any writing of the same day is the same date, 26年 is 2026;
  a year written on one side only still matches), weekday, clock time, part of the day (上午 /
  下午, 昨晚), frequency (每天 / 每周) or relative day, week, month or year (上个月 / 这个月), or a
  date on one side only;
* ``how_much``: a different number or amount (Chinese numerals read by cn2an: 三千五 = 3500, 俩 =
  两个, 一半 = 50 %, 89块9 = 89.9元; a unit on one side only is the same number; 15万元 = 150000元);
* ``whether``: one fact denies what the other states (不/没/没有/别/未/never/not…; 讨厌 = 不喜欢;
  禁止 = 不许 = 不允许);
* ``plan_vs_done``: one fact is an intention (要/打算/准备/计划/will…) that the other tells as an act
  done or going on; an act set in a time ahead (明天去) is an intention too;
* ``roles``: who does what to whom turned around (``duplicate_roles``: A借给B / B借给A, 小马请阿凯 /
  阿凯请小马, 老严被儿子接走 / 老严把儿子接走);
* ``wording``: what the leftover words say (``duplicate_wording``: a word put in the place of
  another, unless the thesaurus files them as one word; a rewording with the vectors apart; words
  added);
* ``far``: the vectors are too far apart for a paraphrase.

What stays is a paraphrase: reordering (the wordings are compared as sets of tokens), dropped
filler, a different writing of the same date, number or person, a synonym, a rewording that puts
no word in the place of another.

With the pair's two vectors and a ``pair_model.PairModel`` fitted on their embedder, the model then
decides the wording of a pair whose every part agrees (``decide_wording``): the rules read parts
well and words poorly, the vectors the other way round.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from . import duplicate_roles as roles
from .duplicate_wording import wording_difference
from .fact_lexicon import NICKNAME_MARKS
from .fact_parts import FactParts, read_parts
from .pair_model import PairModel
from .records import normalise_text

#: Below this cosine similarity two facts are not compared at all.
MIN_SIMILARITY = 0.55
#: The unit vectors of a pair's two facts, as the embedder stored them.
Vectors = tuple[np.ndarray, np.ndarray]

EXACT = "exact"
SAME = "same_parts"
WHO = "who"
WHEN = "when"
HOW_MUCH = "how_much"
WHETHER = "whether"
PLAN_VS_DONE = "plan_vs_done"
ROLES = "roles"
WORDING = "wording"
FAR = "far"


@dataclass(frozen=True, slots=True)
class DuplicateVerdict:
    """The decision on one pair: ``reason`` is ``exact`` or ``same_parts`` for a duplicate, else
    the first part that differs; ``matched`` the parts both facts state alike; ``detail`` says
    what differed (for logs, the eval's failures and the cycle's judge)."""

    duplicate: bool
    reason: str
    matched: tuple[str, ...] = ()
    detail: str = ""

    @property
    def exact(self) -> bool:
        return self.reason == EXACT


def _dates_match(first: FactParts, second: FactParts) -> bool:
    def covered(
        date: tuple[int | None, int, int | None], others: frozenset[tuple[int | None, int, int | None]]
    ) -> bool:
        year, month, day = date
        return any(
            month == other_month and day == other_day and (year is None or other_year is None or year == other_year)
            for other_year, other_month, other_day in others
        )

    return all(covered(date, second.dates) for date in first.dates) and all(
        covered(date, first.dates) for date in second.dates
    )


def _differ(label: str, first: frozenset[object], second: frozenset[object]) -> str:
    return f"{label}{sorted(first, key=str)} ≠ {sorted(second, key=str)}"


#: Units of a span of time: a 1 with one of them on each side of a pair is compared; and the
#: frequency each is the period of (每周 / 一周两次).
_SPANS = frozenset({"天", "月", "年"})
_PERIOD_OF_SPAN = {(1.0, "天"): "day", (7.0, "天"): "week", (1.0, "月"): "month", (1.0, "年"): "year"}


def _period_against_span(often: FactParts, other: FactParts) -> str | None:
    """``often`` says how often (每周), ``other`` gives no frequency but a span of one day, week
    (seven days), month or year of another period (一个月看一部, 一天遛两次): how often differs."""
    if not often.frequencies or other.frequencies:
        return None
    periods = {_PERIOD_OF_SPAN[number] for number in other.numbers if number in _PERIOD_OF_SPAN}
    if periods and not periods & often.frequencies:
        return f"how often {sorted(often.frequencies)} ≠ per {sorted(periods)}"
    return None


def _without_period(parts: FactParts, other: FactParts) -> FactParts:
    """``parts`` without the span that says how often ``other`` says it (一周去一次 / 每周去一次)."""
    if parts.frequencies:
        return parts
    said = [number for number in parts.numbers if _PERIOD_OF_SPAN.get(number) in other.frequencies]
    return _without_numbers(parts, said) if said else parts


def _numbers_as_qq(parts: FactParts, other: FactParts) -> FactParts:
    """``parts`` with a bare number that is a QQ number of ``other`` read as that QQ number (66120小雨
    / 小雨（QQ号66120）): written without its mark, it is the person, not an amount."""
    marked = {int(number) for number in other.qq_numbers} - {int(number) for number in parts.qq_numbers}
    taken = [(value, unit) for value, unit in parts.numbers if not unit and value in marked]
    if not taken:
        return parts
    return _without_numbers(parts, taken, qq_numbers=parts.qq_numbers | {str(int(value)) for value, _ in taken})


def _without_numbers(parts: FactParts, numbers: Iterable[tuple[float, str]], **changes: Any) -> FactParts:
    """``parts`` with ``numbers`` taken out of its amounts (and ``changes`` made)."""
    kept = parts.numbers.copy()
    for number in numbers:
        del kept[number]
    return replace(parts, numbers=kept, **changes)


#: Units of time that are a whole number of another, compared at need: the text keeps its own
#: (a lone 一天 stays an article-like "one day", which 1440 minutes would not be).
_TIME_IN = {"天": (1440, "分钟"), "年": (12, "月")}


def _same_amount(value: float, unit: str) -> set[tuple[float, str]]:
    """Other ways of writing ``value`` ``unit``: in the smaller unit of time (一天 / 24小时, 半年 /
    六个月) or the larger, and a year of two digits for the same year of this century or the last
    (23年 / 2023年)."""
    same: set[tuple[float, str]] = set()
    for larger, (factor, smaller) in _TIME_IN.items():
        if unit == larger:
            same.add((value * factor, smaller))
        elif unit == smaller:
            same.add((value / factor, larger))
    if unit == "年" and value.is_integer():
        if 0 <= value < 100:
            same.update({(2000 + value, unit), (1900 + value, unit)})
        elif 1900 <= value < 2100:
            same.add((value % 100, unit))
    return same


def _numbers_differ(first: FactParts, second: FactParts) -> list[str]:
    """The numbers one fact states and the other does not (a lone 1 is an article: 一台 / 台,
    unless both facts give a span of one unit of time, and of different units: 一天 / 一周; a
    number with its unit on one side and bare on the other is the same number: 3500元 / 三千五;
    so is one in another unit of time: 一天 / 24小时, and a year written with two digits)."""
    only_first = first.numbers - second.numbers
    only_second = second.numbers - first.numbers
    for value, unit in list(only_first.elements()):
        bare = (value, "")
        match: tuple[float, str] | None = None
        if unit and only_second[bare]:
            match = bare
        elif not unit:
            match = next((key for key in only_second if key[0] == value and only_second[key]), None)
        else:
            match = next((key for key in _same_amount(value, unit) if only_second[key]), None)
        if match is not None:
            only_first[(value, unit)] -= 1
            only_second[match] -= 1
    only = +only_first + +only_second
    # one day / one week on each side is two spans of time (禁言了一天 / 禁言了一周), not two articles
    spans = all(any(value == 1 and unit in _SPANS for value, unit in side) for side in (+only_first, +only_second))
    return sorted(f"{value:g}{unit}" for value, unit in only.elements() if value != 1 or (spans and unit in _SPANS))


def judge_parts(first: FactParts, second: FactParts, similarity: float) -> DuplicateVerdict:
    """The decision on two facts already read (``read_parts``), whose vectors have ``similarity``."""
    if normalise_text(first.text) == normalise_text(second.text):
        return DuplicateVerdict(True, EXACT, ("text",))
    matched: list[str] = []
    first, second = _numbers_as_qq(first, second), _numbers_as_qq(second, first)
    if first.qq_numbers or second.qq_numbers:
        if not _same_people(first, second):
            detail = f"{sorted(first.qq_numbers)} ≠ {sorted(second.qq_numbers)}"
            return DuplicateVerdict(False, WHO, tuple(matched), detail)
        matched.append(WHO)
    if first.dates or second.dates:
        if not _dates_match(first, second):
            return DuplicateVerdict(
                False, WHEN, tuple(matched), f"{sorted(first.dates, key=str)} ≠ {sorted(second.dates, key=str)}"
            )
        matched.append(WHEN)
    if first.weekdays and second.weekdays and first.weekdays != second.weekdays:
        return DuplicateVerdict(
            False, WHEN, tuple(matched), f"weekday {sorted(first.weekdays)} ≠ {sorted(second.weekdays)}"
        )
    # the same clock time on both sides says the hour; the part of day is only its wording (半夜3点 / 凌晨三点)
    same_clock = bool(first.clock_times) and first.clock_times == second.clock_times
    if first.day_parts and second.day_parts and first.day_parts != second.day_parts and not same_clock:
        return DuplicateVerdict(
            False, WHEN, tuple(matched), f"part of day {sorted(first.day_parts)} ≠ {sorted(second.day_parts)}"
        )
    if first.relative_times and second.relative_times and first.relative_times != second.relative_times:
        return DuplicateVerdict(
            False, WHEN, tuple(matched), f"{sorted(first.relative_times)} ≠ {sorted(second.relative_times)}"
        )
    if first.frequencies and second.frequencies and first.frequencies != second.frequencies:
        return DuplicateVerdict(
            False, WHEN, tuple(matched), f"how often {sorted(first.frequencies)} ≠ {sorted(second.frequencies)}"
        )
    period = _period_against_span(first, second) or _period_against_span(second, first)
    if period:
        return DuplicateVerdict(False, WHEN, tuple(matched), period)
    if first.clock_times != second.clock_times:
        return DuplicateVerdict(
            False, WHEN, tuple(matched), f"clock {sorted(first.clock_times)} ≠ {sorted(second.clock_times)}"
        )
    differing = _numbers_differ(_without_period(first, second), _without_period(second, first))
    if differing:
        return DuplicateVerdict(False, HOW_MUCH, tuple(matched), " ".join(differing))
    if first.numbers:
        matched.append(HOW_MUCH)
    if _negated(first) != _negated(second):
        return DuplicateVerdict(False, WHETHER, tuple(matched), f"{first.negations} vs {second.negations} negations")
    matched.append(WHETHER)
    if _plan_against_done(first, second) or _plan_against_done(second, first):
        return DuplicateVerdict(False, PLAN_VS_DONE, tuple(matched), "plan" if first.plan else "not plan")
    going = _going_against_reached(first.text, second.text) or _going_against_reached(second.text, first.text)
    if going:
        return DuplicateVerdict(False, PLAN_VS_DONE, tuple(matched), going)
    matched.append(PLAN_VS_DONE)
    if similarity < MIN_SIMILARITY:
        return DuplicateVerdict(False, FAR, tuple(matched), f"cosine {similarity:.3f}")
    swapped = roles.swapped(first.text, second.text)
    if swapped is not None:
        return DuplicateVerdict(False, ROLES, tuple(matched), swapped)
    matched.append(ROLES)
    difference = wording_difference(first, second, similarity)
    if difference is not None and difference.names:  # another person, named without a QQ number
        return DuplicateVerdict(False, WHO, tuple(matched), f"name {difference.detail}")
    if difference is not None:
        return DuplicateVerdict(False, WORDING, tuple(matched), difference.detail)
    return DuplicateVerdict(True, SAME, (*matched, WORDING))


#: Relative times that lie ahead (明天, 下周, 明年): a fact set in them is a plan however it is said.
_AHEAD = frozenset({"day+1", "day+2", "week+1", "month+1", "year+1"})


def _negated(parts: FactParts) -> bool:
    """Whether a fact says no: one negation or more (吃不了，不爱吃 / 不喜欢吃 say the same no; a
    fact is seldom a double negation, and the wording still tells two noes apart)."""
    return parts.negations > 0


def _plan_against_done(planned: FactParts, other: FactParts) -> bool:
    """``planned`` states an intention that ``other`` states as an act, done (打算去成都 / 去了成都)
    or going on (打算去咖啡店兼职 / 在咖啡店打工). An act set in a time ahead (明天要去 / 明天去,
    下周三要去 / 下个星期三去) is an intention too, however it is said."""
    return planned.plan and not other.plan and not (other.relative_times & _AHEAD and not other.done)


#: An act going on (正在找, 最近在追: 在 as an aspect, after a word of time or of still, not 在 before
#: a place, 在学校学了), and the same act's end reached (找到, 追完, 学成).
_GOING = re.compile(r"(?:正在|(?:最近|近期|一直|还|仍|都|也)在)([\u4e00-\u9fff])")
_REACHED = "到完成"


def _going_against_reached(going: str, other: str) -> str | None:
    """``going`` tells an act as going on (正在找新工作, 最近在追一个护士) that ``other`` tells as
    reached (已经找到了新工作, 追到了): still trying against done."""
    for match in _GOING.finditer(going):
        act = match.group(1)
        for end in _REACHED:
            if act + end in other and act + end not in going:
                return f"{match.group(0)} ≠ {act}{end}"
    return None


def doubted_by_wording(verdict: DuplicateVerdict) -> bool:
    """Whether ``verdict`` rejects a pair only for its wording: every part the rules read agrees
    (who, when, how often, how much, whether, plan or done, roles; the vectors close enough) and
    only the words left over differ (歌手 / 乐队, 兼职 / 打工). Such a pair may still be one fact
    said in other words: the cycle offers it to the model, never merges it without judgement."""
    return not verdict.duplicate and verdict.reason == WORDING


def _same_people(first: FactParts, second: FactParts) -> bool:
    """The same QQ numbers, or a number on one side only whose nickname the other fact names
    (阿杰（QQ号31415） / 阿杰 alone); two different numbers never."""
    only_first, only_second = first.qq_numbers - second.qq_numbers, second.qq_numbers - first.qq_numbers
    if (only_first and only_second) or _renamed(first, second):
        return False
    holder, other = (first, second) if only_first else (second, first)
    others = set(other.nicknames.values())
    for number in only_first or only_second:
        name = holder.nicknames.get(number)
        if not name or name not in other.text or name in others:
            return False
    return True


def _renamed(first: FactParts, second: FactParts) -> bool:
    """A QQ number both facts name, with a nickname beside it in each and no character in common
    (QQ号45602（昵称阿琪） / QQ号45602（昵称阿康）, 小北 / 小南 less their 小 / 老 / 阿): one of the two names is
    wrong or the facts are of two people, and neither is merged into the other. A name in Latin
    letters against one in Chinese characters is the one name written another way (Ajie / 阿杰)."""
    for number in first.qq_numbers & second.qq_numbers:
        name_first, name_second = first.nicknames.get(number), second.nicknames.get(number)
        if (
            name_first
            and name_second
            and name_first.isascii() == name_second.isascii()
            and not set(name_first.lstrip(NICKNAME_MARKS)) & set(name_second.lstrip(NICKNAME_MARKS))
        ):
            return True
    return False


def hard_key(parts: FactParts) -> int:
    """A hash of parts ``judge_parts`` requires equal before it looks at the wording: who, the
    days and clock times, whether it says no. Two facts whose keys differ are not duplicates, but for
    one class: a person named by QQ number in one fact and by nickname alone in the other, which the
    judgement accepts and the blocking keeps apart (the QQ numbers split one chat's bank into a
    block per person, which is what keeps the pre-pass within its time; ``judge_read`` is exact,
    the clusters miss those pairs). The numbers are left out: a nickname such as 七七 reads as a
    number until the pair's nicknames are known, and a pair is re-read with them. So is plan vs
    done: an intention conflicts only with the act told as done, not with the act told plainly
    (``_plan_against_done``), which no single key can say."""
    days = frozenset((month, day) for _year, month, day in parts.dates)
    return hash((parts.qq_numbers, days, parts.clock_times, _negated(parts)))


def shared_nicknames(first: FactParts, second: FactParts) -> frozenset[str]:
    """The nicknames either fact writes beside a QQ number both facts name."""
    shared = first.qq_numbers & second.qq_numbers
    names = {name for parts in (first, second) for number, name in parts.nicknames.items() if number in shared}
    for holder, other in ((first, second), (second, first)):  # named by nickname alone on the other side
        names.update(
            name
            for number, name in holder.nicknames.items()
            if number not in other.qq_numbers and name and name in other.text
        )
    return frozenset(names)


def reread(parts: FactParts, nicknames: frozenset[str]) -> FactParts:
    """``parts`` read again with ``nicknames`` taken out of its wording (when it holds any)."""
    if not nicknames or all(name not in parts.text for name in nicknames):
        return parts
    return read_parts(parts.text, nicknames)


def judge_read(
    first: FactParts,
    second: FactParts,
    similarity: float,
    vectors: Vectors | None = None,
    model: PairModel | None = None,
) -> DuplicateVerdict:
    """``judge_parts`` after the nicknames of the people both facts name are taken out of both;
    with the pair's ``vectors`` and a ``model`` fitted on their embedder, the model decides the
    wording of a pair whose parts all agree (``decide_wording``)."""
    nicknames = shared_nicknames(first, second)
    verdict = judge_parts(reread(first, nicknames), reread(second, nicknames), similarity)
    if vectors is None or model is None:
        return verdict
    return decide_wording(verdict, vectors, similarity, model)


def decide_wording(
    verdict: DuplicateVerdict, vectors: Vectors, similarity: float, model: PairModel
) -> DuplicateVerdict:
    """The learned check of the wording (``pair_model``) in place of the rules' own, for a pair
    the rules found alike in every part (``same_parts``) or apart in their words only
    (``wording``); any other verdict stands."""
    if verdict.reason not in (SAME, WORDING):
        return verdict
    probability = model.probability(vectors[0], vectors[1], similarity, verdict.reason, verdict.detail)
    detail = f"{verdict.detail} (model {probability:.2f})".strip()
    matched = tuple(part for part in verdict.matched if part != WORDING)
    if model.says_duplicate(probability, verdict.reason == SAME):
        return DuplicateVerdict(True, SAME, (*matched, WORDING), detail)
    return DuplicateVerdict(False, WORDING, matched, detail)


def judge_pair(
    first: str, second: str, similarity: float, vectors: Vectors | None = None, model: PairModel | None = None
) -> DuplicateVerdict:
    """Are ``first`` and ``second`` (two stored facts whose vectors have cosine ``similarity``)
    the same fact? ``vectors`` and ``model``: see ``judge_read``."""
    return judge_read(read_parts(first), read_parts(second), similarity, vectors, model)
