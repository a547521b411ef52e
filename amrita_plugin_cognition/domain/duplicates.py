"""Are two stored facts the same fact? The LLM-free check consolidation proposes merges with (and
``eval dedup`` measures). Pure, no I/O.

Vectors find candidates, the parts decide. Two facts whose vectors are close can still differ in
exactly the part that matters, and each such class of difference is a rule here, in this order:

* ``who``: a different QQ number (in any writing; a nickname beside it is framing, not wording);
* ``when``: a different calendar date (any writing of the same day is the same date; a year
  written on one side only still matches), weekday or clock time, or a date on one side only;
* ``how_much``: a different number or amount (Chinese numerals read by cn2an: 三千五 = 3500);
* ``whether``: one fact denies what the other states (不/没/没有/别/未/never/not…);
* ``plan_vs_done``: one fact is an intention (要/打算/准备/计划/will…), the other is not;
* ``wording``: after those parts, punctuation, particles and the everyday synonyms of
  ``fact_parts`` are taken out, the words that remain differ on both sides (a different place,
  name, object: 成都 vs 重庆, 小明 vs 小红, 火锅 vs 烧烤), or one side adds more than
  ``MAX_EXTRA`` content characters, or any after "with" (和小红, 跟朋友: someone added);
* ``far``: the vectors are too far apart for a paraphrase.

What stays is a paraphrase: reordering (the wordings are compared as bags of tokens), dropped
filler, a different writing of the same date, number or person, a synonym.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from .fact_parts import FactParts, read_parts
from .records import normalise_text

#: Below this cosine similarity two facts are not compared at all.
MIN_SIMILARITY = 0.55
#: One side may say up to ``MAX_EXTRA`` content tokens more (新电脑 / 电脑, 回老家 / 回家) only
#: when the vectors are this close.
MAX_EXTRA = 2
EXTRA_SIMILARITY = 0.85

#: "With someone": what follows one of these on one side only is a person added, never filler.
_COMPANION = re.compile(r"(?:和|跟|与|同|陪|带着)(\w)")

EXACT = "exact"
SAME = "same_parts"
WHO = "who"
WHEN = "when"
HOW_MUCH = "how_much"
WHETHER = "whether"
PLAN_VS_DONE = "plan_vs_done"
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


def _numbers_differ(first: FactParts, second: FactParts) -> list[str]:
    """The numbers one fact states and the other does not (a lone 1 is an article: 一台 / 台)."""
    only = (first.numbers - second.numbers) + (second.numbers - first.numbers)
    return sorted(f"{value:g}{unit}" for value, unit in only if value != 1)


def _wording(first: FactParts, second: FactParts, similarity: float) -> str | None:
    """What differs in the wording, or None when it is a paraphrase."""
    only_first = Counter(first.residue) - Counter(second.residue)
    only_second = Counter(second.residue) - Counter(first.residue)
    if only_first and only_second:
        return f"{''.join(sorted(only_first.elements()))} ≠ {''.join(sorted(only_second.elements()))}"
    extra = only_first or only_second
    size = sum(extra.values())
    if size and (size > MAX_EXTRA or similarity < EXTRA_SIMILARITY):
        return f"+{''.join(sorted(extra.elements()))}"
    longer = first if only_first else second
    if (
        size
        and _COMPANION.search(longer.text)
        and any(marker.group(1)[:1] in extra for marker in _COMPANION.finditer(longer.text))
    ):
        return f"+with {''.join(sorted(extra.elements()))}"
    return None


def judge_parts(first: FactParts, second: FactParts, similarity: float) -> DuplicateVerdict:
    """The decision on two facts already read (``read_parts``), whose vectors have ``similarity``."""
    if normalise_text(first.text) == normalise_text(second.text):
        return DuplicateVerdict(True, EXACT, ("text",))
    matched: list[str] = []
    if first.qq_numbers or second.qq_numbers:
        if first.qq_numbers != second.qq_numbers:
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
    if first.clock_times != second.clock_times:
        return DuplicateVerdict(
            False, WHEN, tuple(matched), f"clock {sorted(first.clock_times)} ≠ {sorted(second.clock_times)}"
        )
    differing = _numbers_differ(first, second)
    if differing:
        return DuplicateVerdict(False, HOW_MUCH, tuple(matched), " ".join(differing))
    if first.numbers:
        matched.append(HOW_MUCH)
    if first.negations != second.negations:
        return DuplicateVerdict(False, WHETHER, tuple(matched), f"{first.negations} vs {second.negations} negations")
    matched.append(WHETHER)
    if first.plan != second.plan:
        return DuplicateVerdict(False, PLAN_VS_DONE, tuple(matched), "plan" if first.plan else "not plan")
    matched.append(PLAN_VS_DONE)
    if similarity < MIN_SIMILARITY:
        return DuplicateVerdict(False, FAR, tuple(matched), f"cosine {similarity:.3f}")
    difference = _wording(first, second, similarity)
    if difference is not None:
        return DuplicateVerdict(False, WORDING, tuple(matched), difference)
    return DuplicateVerdict(True, SAME, (*matched, WORDING))


def hard_key(parts: FactParts) -> int:
    """A hash of parts ``judge_parts`` requires equal before it looks at the wording: who, the
    days and clock times, negations, plan. Two facts whose keys differ are not duplicates (the
    numbers are left out: a nickname such as 七七 reads as a number until the pair's nicknames are
    known, and a pair is re-read with them)."""
    days = frozenset((month, day) for _year, month, day in parts.dates)
    return hash((parts.qq_numbers, days, parts.clock_times, parts.negations, parts.plan))


def shared_nicknames(first: FactParts, second: FactParts) -> frozenset[str]:
    """The nicknames either fact writes beside a QQ number both facts name."""
    shared = first.qq_numbers & second.qq_numbers
    names = {name for parts in (first, second) for number, name in parts.nicknames.items() if number in shared}
    return frozenset(names)


def reread(parts: FactParts, nicknames: frozenset[str]) -> FactParts:
    """``parts`` read again with ``nicknames`` taken out of its wording (when it holds any)."""
    if not nicknames or all(name not in parts.text for name in nicknames):
        return parts
    return read_parts(parts.text, nicknames)


def judge_read(first: FactParts, second: FactParts, similarity: float) -> DuplicateVerdict:
    """``judge_parts`` after the nicknames of the people both facts name are taken out of both."""
    nicknames = shared_nicknames(first, second)
    return judge_parts(reread(first, nicknames), reread(second, nicknames), similarity)


def judge_pair(first: str, second: str, similarity: float) -> DuplicateVerdict:
    """Are ``first`` and ``second`` (two stored facts whose vectors have cosine ``similarity``)
    the same fact?"""
    return judge_read(read_parts(first), read_parts(second), similarity)
