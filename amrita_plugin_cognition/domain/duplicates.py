"""Are two stored facts the same fact? The LLM-free check consolidation proposes merges with (and
``eval dedup`` measures). Pure, no I/O.

Vectors find candidates, the parts decide. Two facts whose vectors are close can still differ in
exactly the part that matters, and each such class of difference is a rule here, in this order:

* ``who``: a different QQ number (in any writing; a nickname beside it is framing, not wording;
  a number on one side whose nickname the other fact names alone is the same person);
* ``when``: a different calendar date (any writing of the same day is the same date; a year
  written on one side only still matches), weekday, clock time, part of the day (上午 / 下午) or
  frequency (每天 / 每周), or a date on one side only;
* ``how_much``: a different number or amount (Chinese numerals read by cn2an: 三千五 = 3500; a
  unit on one side only is the same number; 15万元 = 150000元);
* ``whether``: one fact denies what the other states (不/没/没有/别/未/never/not…; 讨厌 = 不喜欢);
* ``plan_vs_done``: one fact is an intention (要/打算/准备/计划/will…), the other is not;
* ``roles``: two things stand on opposite sides of the same directional word in the two facts
  (A借给B / B借给A, 从上海到杭州 / 从杭州到上海);
* ``wording``: after those parts, punctuation, particles and the everyday synonyms of
  ``fact_parts`` are taken out, a short stretch between the same neighbours differs on both sides
  (a word put in the place of another: 成都 vs 重庆, 小明 vs 小红, 火锅 vs 烧烤), or the words differ
  on both sides and the vectors are not close (``REWORD_SIMILARITY``), or one side adds more than
  ``MAX_EXTRA`` content characters, or any after "with" (和小红, 跟朋友: someone added);
* ``far``: the vectors are too far apart for a paraphrase.

What stays is a paraphrase: reordering (the wordings are compared as sets of tokens), dropped
filler, a different writing of the same date, number or person, a synonym, a rewording that puts
no word in the place of another.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from difflib import SequenceMatcher

from .fact_parts import BOUNDARY, FactParts, read_parts
from .records import normalise_text

#: Below this cosine similarity two facts are not compared at all.
MIN_SIMILARITY = 0.55
#: One side may say up to ``MAX_EXTRA`` content tokens more (新电脑 / 电脑, 回老家 / 回家) only
#: when the vectors are this close.
MAX_EXTRA = 2
EXTRA_SIMILARITY = 0.75
#: A run of at most this many tokens between the same neighbours on both sides is a word put in
#: the place of another (``_slot``).
SLOT_TOKENS = 4
#: Words reworded on both sides (no word in the place of another) are a paraphrase from this
#: cosine on.
REWORD_SIMILARITY = 0.75

#: "With someone": what follows one of these on one side only is a person added, never filler.
_COMPANION = re.compile(r"(?:和|跟|与|同|陪|带着)(\w)")

#: Words that give the things around them a role: who or what stands before and after them
#: matters (A借给B ≠ B借给A, 从上海搬到杭州 ≠ 从杭州搬到上海, lent to / from).
_DIRECTION = re.compile(r"给|从|到|向|被|比|(?i:\b(?:to|from|than|by)\b)")
_ENTITY_CJK = re.compile(r"[\u3400-\u9fff]{2,}")
_ENTITY_LATIN = re.compile(r"[A-Za-z]{2,}|\d{5,12}")

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


def _numbers_differ(first: FactParts, second: FactParts) -> list[str]:
    """The numbers one fact states and the other does not (a lone 1 is an article: 一台 / 台; a
    number with its unit on one side and bare on the other is the same number: 3500元 / 三千五)."""
    only_first = first.numbers - second.numbers
    only_second = second.numbers - first.numbers
    for value, unit in list(only_first.elements()):
        bare = (value, "")
        match: tuple[float, str] | None = None
        if unit and only_second[bare]:
            match = bare
        elif not unit:
            match = next((key for key in only_second if key[0] == value and only_second[key]), None)
        if match is not None:
            only_first[(value, unit)] -= 1
            only_second[match] -= 1
    only = +only_first + +only_second
    return sorted(f"{value:g}{unit}" for value, unit in only.elements() if value != 1)


def _slot(first: FactParts, second: FactParts, only_first: set[str], only_second: set[str]) -> str | None:
    """A word put in the place of another: the two wordings aligned, a short stretch on each side
    between the same neighbours (在[成都]吃 / 在[重庆]吃, [女]儿 / 儿[子], [话]费 / [网]费) is
    another thing of the same kind, not a rewording. Stretches one token apart are one stretch;
    words said elsewhere on the other side (a reordering) are not part of it."""
    groups: list[tuple[list[str], list[str]]] = []
    last_end = -10
    matcher = SequenceMatcher(None, first.residue, second.residue, autojunk=False)
    for tag, start_first, end_first, start_second, end_second in matcher.get_opcodes():
        if tag == "equal":
            continue
        taken_first = [token for token in first.residue[start_first:end_first] if token in only_first]
        taken_second = [token for token in second.residue[start_second:end_second] if token in only_second]
        if groups and (
            start_first == last_end or (start_first - last_end == 1 and first.residue[last_end] != BOUNDARY)
        ):
            groups[-1][0].extend(taken_first)
            groups[-1][1].extend(taken_second)
        else:
            groups.append((taken_first, taken_second))
        last_end = end_first
    for taken_first, taken_second in groups:
        if taken_first and taken_second and max(len(taken_first), len(taken_second)) <= SLOT_TOKENS:
            return f"{''.join(taken_first)} ≠ {''.join(taken_second)}"
    return None


def _wording(first: FactParts, second: FactParts, similarity: float) -> str | None:
    """What differs in the wording, or None when it is a paraphrase. The words are compared as
    sets (a word said twice on one side, 游泳馆游泳 / 游泳, adds nothing). Words on both sides that
    the other lacks are a rewording when none of them takes the place of another (``_slot``) and
    the vectors are close (``REWORD_SIMILARITY``)."""
    only_first = set(first.residue) - set(second.residue) - {BOUNDARY}
    only_second = set(second.residue) - set(first.residue) - {BOUNDARY}
    if only_first and only_second:
        slot = _slot(first, second, only_first, only_second)
        if slot is not None:
            return slot
        if similarity < REWORD_SIMILARITY:
            return f"{''.join(sorted(only_first))} ≠ {''.join(sorted(only_second))}"
        return None
    extra = only_first or only_second
    size = len(extra)
    if size and (size > MAX_EXTRA or similarity < EXTRA_SIMILARITY):
        return f"+{''.join(sorted(extra))}"
    longer = first if only_first else second
    if (
        size
        and _COMPANION.search(longer.text)
        and any(marker.group(1)[:1] in extra for marker in _COMPANION.finditer(longer.text))
    ):
        return f"+with {''.join(sorted(extra))}"
    return None


def _entities(text: str) -> set[str]:
    """What may hold a role in ``text``: runs of CJK (every 2–4 character piece), Latin words,
    QQ numbers."""
    found = {match.group(0).lower() for match in _ENTITY_LATIN.finditer(text)}
    for match in _ENTITY_CJK.finditer(text):
        run = match.group(0)
        found.update(run[i : i + size] for size in (2, 3, 4) for i in range(len(run) - size + 1))
    return found


def _swapped_roles(first: str, second: str) -> str | None:
    """Two things that stand on opposite sides of the same directional word in the two facts
    (A借给B / B借给A): each named once in each fact, one moved from before the word to after it
    and another the other way."""
    first, second = unicodedata.normalize("NFKC", first), unicodedata.normalize("NFKC", second)
    lower_first, lower_second = first.lower(), second.lower()
    markers = {match.group(0).lower() for match in _DIRECTION.finditer(first)}
    markers &= {match.group(0).lower() for match in _DIRECTION.finditer(second)}
    if not markers:
        return None
    shared = [
        entity
        for entity in _entities(first) & _entities(second)
        if lower_first.count(entity) == 1 and lower_second.count(entity) == 1
    ]
    for marker in sorted(markers):
        at_first, at_second = _marker_at(lower_first, marker), _marker_at(lower_second, marker)
        if at_first is None or at_second is None:
            continue
        moved_back = [e for e in shared if lower_first.find(e) < at_first and lower_second.find(e) > at_second]
        moved_front = [e for e in shared if lower_first.find(e) > at_first and lower_second.find(e) < at_second]
        if moved_back and moved_front and not _overlap(moved_back, moved_front):
            return f"{max(moved_back, key=len)} ⇄ {max(moved_front, key=len)} ({marker})"
    return None


def _marker_at(text: str, marker: str) -> int | None:
    """Where the one occurrence of ``marker`` is (None when it is written more than once)."""
    found = [match.start() for match in _DIRECTION.finditer(text) if match.group(0).lower() == marker]
    return found[0] if len(found) == 1 else None


def _overlap(first: list[str], second: list[str]) -> bool:
    return any(a in b or b in a for a in first for b in second)


def judge_parts(first: FactParts, second: FactParts, similarity: float) -> DuplicateVerdict:
    """The decision on two facts already read (``read_parts``), whose vectors have ``similarity``."""
    if normalise_text(first.text) == normalise_text(second.text):
        return DuplicateVerdict(True, EXACT, ("text",))
    matched: list[str] = []
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
    if first.day_parts and second.day_parts and first.day_parts != second.day_parts:
        return DuplicateVerdict(
            False, WHEN, tuple(matched), f"part of day {sorted(first.day_parts)} ≠ {sorted(second.day_parts)}"
        )
    if first.frequencies and second.frequencies and first.frequencies != second.frequencies:
        return DuplicateVerdict(
            False, WHEN, tuple(matched), f"how often {sorted(first.frequencies)} ≠ {sorted(second.frequencies)}"
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
    swapped = _swapped_roles(first.text, second.text)
    if swapped is not None:
        return DuplicateVerdict(False, ROLES, tuple(matched), swapped)
    matched.append(ROLES)
    difference = _wording(first, second, similarity)
    if difference is not None:
        return DuplicateVerdict(False, WORDING, tuple(matched), difference)
    return DuplicateVerdict(True, SAME, (*matched, WORDING))


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
    if only_first and only_second:
        return False
    holder, other = (first, second) if only_first else (second, first)
    others = set(other.nicknames.values())
    for number in only_first or only_second:
        name = holder.nicknames.get(number)
        if not name or name not in other.text or name in others:
            return False
    return True


def hard_key(parts: FactParts) -> int:
    """A hash of parts ``judge_parts`` requires equal before it looks at the wording: who, the
    days and clock times, negations, plan. Two facts whose keys differ are not duplicates, but for
    one class: a person named by QQ number in one fact and by nickname alone in the other, which the
    judgement accepts and the blocking keeps apart (the QQ numbers split one chat's bank into a
    block per person, which is what keeps the pre-pass within its time; ``judge_read`` is exact,
    the clusters miss those pairs). The numbers are left out: a nickname such as 七七 reads as a
    number until the pair's nicknames are known, and a pair is re-read with them."""
    days = frozenset((month, day) for _year, month, day in parts.dates)
    return hash((parts.qq_numbers, days, parts.clock_times, parts.negations, parts.plan))


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


def judge_read(first: FactParts, second: FactParts, similarity: float) -> DuplicateVerdict:
    """``judge_parts`` after the nicknames of the people both facts name are taken out of both."""
    nicknames = shared_nicknames(first, second)
    return judge_parts(reread(first, nicknames), reread(second, nicknames), similarity)


def judge_pair(first: str, second: str, similarity: float) -> DuplicateVerdict:
    """Are ``first`` and ``second`` (two stored facts whose vectors have cosine ``similarity``)
    the same fact?"""
    return judge_read(read_parts(first), read_parts(second), similarity)
