"""The gate's second and third steps: segmentation and context rules (pure, no I/O).

Segmentation is leftmost-longest over the lexicon (``gate_lexicon.py``, ``gate_lexicon_en.py``):
problem words compete with ordinary words that contain them (其他, 日本, 相当, 爱上 …), so 其他
never yields 他 and 相当天真 never yields 当天. Each entry keeps a cursor, the next place it matches
(one regex search that runs on from where the text was read to), so the text is walked once per
entry, not tried entry by entry at every character.

Problem words with a rule get a context check. What the rules look for before a word or in its
clause (clause breaks, absolute dates, habit words, a named person) is found once per fact
(``Reading``) and looked up by position, so a long fact costs time in proportion to its length.
"""

from __future__ import annotations

import heapq
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field

from . import gate_lexicon as lex
from . import gate_lexicon_en as en
from .gate_mask import DIGIT, MARKS, OPAQUE, PERSON

_ENTRIES: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    *((kind, rule, re.compile(pattern)) for kind, rule, pattern in (*lex.PROBLEM_ENTRIES, *en.PROBLEM_ENTRIES)),
    (lex.SAFE, "", re.compile("|".join(sorted(lex.SAFE_WORDS, key=len, reverse=True)))),
    *((lex.SAFE, "", re.compile(pattern)) for pattern in (*lex.SAFE_PATTERNS, *en.SAFE_PATTERNS)),
)


# --- segmentation ----------------------------------------------------------------------------


def _next_match(pattern: re.Pattern[str], masked: str, position: int) -> re.Match[str] | None:
    """The first non-empty match of ``pattern`` starting at or after ``position`` and not on a mask."""
    while position < len(masked):
        match = pattern.search(masked, position)
        if match is None:
            return None
        if match.end() > match.start() and masked[match.start()] not in MARKS:
            return match
        position = match.start() + 1
    return None


def segment(masked: str) -> list[tuple[int, int, str, str]]:
    """Leftmost-longest problem tokens (start, end, kind, rule); safe words only block. An equal
    match goes to a problem entry over a safe one, else to the earlier entry."""
    waiting = [
        (found.start(), index, found)
        for index, (_, _, pattern) in enumerate(_ENTRIES)
        if (found := _next_match(pattern, masked, 0)) is not None
    ]
    heapq.heapify(waiting)
    tokens: list[tuple[int, int, str, str]] = []
    while waiting:
        position = waiting[0][0]
        here = []
        while waiting and waiting[0][0] == position:
            here.append(heapq.heappop(waiting))
        best: tuple[int, str, str] | None = None
        for _, index, found in sorted(here, key=lambda item: item[1]):
            kind, rule, _ = _ENTRIES[index]
            longer = best is None or found.end() > best[0]
            tie_wins = best is not None and found.end() == best[0] and best[1] == lex.SAFE and kind != lex.SAFE
            if longer or tie_wins:
                best = (found.end(), kind, rule)
        assert best is not None
        end, kind, rule = best
        if kind != lex.SAFE:
            tokens.append((position, end, kind, rule))
        while waiting and waiting[0][0] < end:  # overtaken: look again from after the token
            here.append(heapq.heappop(waiting))
        for _, index, _ in here:
            found = _next_match(_ENTRIES[index][2], masked, end)
            if found is not None:
                heapq.heappush(waiting, (found.start(), index, found))
    return tokens


# --- what the rules look up ------------------------------------------------------------------

_BOUNDARY = re.compile(r"[，。；！？,;!?\n]|\.(?=\s|$)")
_YEAR = rf"(?<![{DIGIT}])[12１２][{DIGIT}]{{3}}\s*(?:年|[-/.](?=\s*[{DIGIT}]))|[〇零一二三四五六七八九]{{4}}年"
_YEAR_ANCHOR = re.compile(rf"{_YEAR}|{en.YEAR_ANCHOR}|{en.DATE_ANCHOR}")
_DATE_ANCHOR = re.compile(
    rf"{_YEAR}|(?<![{DIGIT}])[{DIGIT}]{{1,2}}\s*月\s*[{DIGIT}]{{1,2}}\s*[日号]"
    rf"|[一二三四五六七八九十]{{1,3}}月[初一二三四五六七八九十廿]{{1,3}}[日号]?|{en.DATE_ANCHOR}"
)
_NUMBER_BEFORE = re.compile(rf"[{DIGIT}〇零一二三四五六七八九十两正腊冬]\s*(?:年度?|月份?)?\s*的?$")
_YEAR_BEFORE = re.compile(rf"(?:[{DIGIT}]{{4}}|[〇零一二三四五六七八九]{{4}})\s*年\s*的?$")
_CALENDAR_YEAR = re.compile(rf"[12１２][{DIGIT}]{{3}}年")
_HABIT = re.compile(rf"{lex.HABIT_MARKERS}|{en.HABIT_MARKERS}")
_NAMING = re.compile(lex.NAMING_WORDS)
_RECALLED = re.compile(r"怀念|回忆|想起|想当年|说起|提起|说|讲|表示|称")
_VAGUE_ANAPHORS = {"当时", "那时", "那时候", "那会儿", "彼时", "当年", "那年", "那一年", "那个年代"}
_GROUP_NUMBER = re.compile(rf"群\s*号?\s*[:：]?\s*[{DIGIT}]{{5,}}")
_WEEKDAY_NEIGHBOUR = re.compile(r"(?:周|星期|礼拜)?[一二三四五六日天]")
_RANGE = set("到至和与、及或~～-—")
_NEAREST = re.compile(r"[离距]")
_EN_NAME = re.compile(r"(?<![A-Za-z'’])[A-Z][a-z]+(?:[-'’][A-Z]?[a-z]+)*(?![A-Za-z])")
_EN_EXISTENTIAL = re.compile(en.EXISTENTIAL_AFTER)
_EN_PLACE = re.compile(en.PLACE_NAMED)
_EN_NAMED_AFTER = re.compile(en.NAMED_AFTER)
_EN_RANGE_AFTER = re.compile(rf"{en.RANGE_WORDS}{en.WEEKDAY}", re.IGNORECASE)
_EN_RANGE_BEFORE = re.compile(rf"{en.WEEKDAY}{en.RANGE_WORDS}$", re.IGNORECASE)
_EN_YEAR_NEAR = re.compile(r"(?<![0-9])(?:1[89]|2[01])[0-9]{2}(?![0-9])")
_EN_OBJECT_AFTER = re.compile(r"\s+(?:the\s+|a\s+|an\s+|his\s+|her\s+|their\s+)?[A-Za-z\ue000\ue001]")
_WORD_BEFORE = re.compile(r"[A-Za-z0-9\u4e00-\u9fff\ue000\ue001]")


@dataclass(slots=True)
class _Spans:
    """Match spans of one pattern over the whole fact, sorted, for position lookups."""

    starts: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)

    @classmethod
    def of(cls, pattern: re.Pattern[str], text: str) -> _Spans:
        spans = cls()
        for match in pattern.finditer(text):
            spans.starts.append(match.start())
            spans.ends.append(match.end())
        return spans

    def any_before(self, position: int) -> bool:
        """Some span ends at or before ``position``."""
        return bool(self.ends) and self.ends[0] <= position

    def last_end_before(self, position: int) -> int:
        """The end of the last span that ends at or before ``position`` (-1: none)."""
        index = bisect_right(self.ends, position)
        return self.ends[index - 1] if index else -1

    def any_within(self, left: int, right: int) -> bool:
        """Some span lies inside [left, right)."""
        index = bisect_left(self.starts, left)
        while index < len(self.starts) and self.starts[index] < right:
            if self.ends[index] <= right:
                return True
            index += 1
        return False


@dataclass(slots=True)
class Reading:
    """One fact as the rules read it: ``text`` and ``masked`` (same length) and what is found
    once in them."""

    text: str
    masked: str
    boundaries: list[int] = field(default_factory=list)
    dates: _Spans = field(default_factory=_Spans)
    years: _Spans = field(default_factory=_Spans)
    habits: _Spans = field(default_factory=_Spans)
    recalled: _Spans = field(default_factory=_Spans)
    nearest: list[int] = field(default_factory=list)
    first_person: int = -1
    first_name: int = -1
    first_word: int = -1
    first_place: int = -1
    first_group_end: int = -1

    @classmethod
    def of(cls, text: str, masked: str) -> Reading:
        reading = cls(text, masked)
        reading.boundaries = [match.start() for match in _BOUNDARY.finditer(masked)]
        reading.dates = _Spans.of(_DATE_ANCHOR, masked)
        reading.years = _Spans.of(_YEAR_ANCHOR, masked)
        reading.habits = _Spans.of(_HABIT, masked)
        reading.recalled = _recalled_spans(masked)
        reading.nearest = [match.start() for match in _NEAREST.finditer(masked)]
        reading.first_person = masked.find(PERSON)
        names = [match.start() for match in _EN_NAME.finditer(masked) if match.group() not in en.NOT_NAMES]
        reading.first_name = min([position for position in (reading.first_person, *names[:1]) if position >= 0] or [-1])
        places = (match.end() for match in _EN_PLACE.finditer(masked) if match.group("place") not in en.NOT_NAMES)
        reading.first_place = next(places, -1)
        word = _WORD_BEFORE.search(masked)
        reading.first_word = word.start() if word else -1
        group = _GROUP_NUMBER.search(text)
        reading.first_group_end = group.end() if group else -1
        return reading

    def clause(self, start: int, end: int) -> tuple[int, int]:
        """The clause around [start, end): from after the break before it to the break after it."""
        before = bisect_left(self.boundaries, start)
        left = self.boundaries[before - 1] + 1 if before else 0
        after = bisect_left(self.boundaries, end)
        right = self.boundaries[after] if after < len(self.boundaries) else len(self.masked)
        return left, right


def _recalled_spans(masked: str) -> _Spans:
    """Every occurrence of a reporting word (overlapping ones too: the rule asks whether one lies
    between an anchor and the word)."""
    spans = _Spans()
    found = sorted(
        (match.start(), match.start() + len(word))
        for word in ("怀念", "回忆", "想起", "想当年", "说起", "提起", "说", "讲", "表示", "称")
        for match in re.finditer(re.escape(word), masked)
    )
    spans.starts = [start for start, _ in found]
    spans.ends = [end for _, end in found]
    return spans


# --- the rules -------------------------------------------------------------------------------


def _is_bare(masked: str, start: int, person_is_bare: bool) -> bool:
    """True when nothing names what the word at ``start`` is relative to."""
    index = start - 1
    while index >= 0 and masked[index].isspace():
        index -= 1
    if index >= 0 and masked[index] == "的":
        index -= 1
    if index < 0:
        return True
    char = masked[index]
    if char == PERSON:
        return person_is_bare
    if char == OPAQUE:
        return False
    return char in lex.BARE_BEFORE or not char.isalnum()


def _weekday_is_fine(reading: Reading, start: int, end: int, clause: tuple[int, int]) -> bool:
    """A weekday next to a date, or inside a range (周一到周五), names no particular week."""
    masked = reading.masked
    if reading.dates.any_within(*clause):
        return True
    after_range = masked[end : end + 1] in _RANGE and _WEEKDAY_NEIGHBOUR.match(masked, end + 1)
    before_range = start >= 2 and masked[start - 1] in _RANGE and masked[start - 2] in "一二三四五六日天"
    return bool(after_range or before_range)


def _anchored(anchors: _Spans, reading: Reading, start: int, word: str) -> bool:
    """An anaphor (当天, 当时, 当年) refers to the date before it. A vague one (当时, 当年) does not
    when someone recalls or reports in between: "于2027-08-01发帖怀念当年…", "说儿子当时…" are
    another time (but "于2026-11-29说当天晚上加班" is that day)."""
    last = anchors.last_end_before(start)
    if last < 0:
        return False
    return word not in _VAGUE_ANAPHORS or not reading.recalled.any_within(last, start)


def _has_before(positions: list[int], left: int, right: int) -> bool:
    index = bisect_left(positions, left)
    return index < len(positions) and positions[index] < right


def passes(rule: str, reading: Reading, start: int, end: int) -> bool:
    """Whether a problem word with a context rule is fine where it stands."""
    masked = reading.masked
    clause = reading.clause(start, end)
    left, right = clause
    if rule == "self":
        return 0 <= reading.first_person < start
    if rule == "named_before":
        char = masked[start - 1] if start > 0 else ""
        return char == PERSON or (char.isalnum() and char not in lex.SPEECH_BEFORE and char not in lex.BARE_BEFORE)
    if rule == "demonstrative":  # named in place: “X”这首歌, 这个项目叫Apollo
        if start and masked[start - 1] == OPAQUE:
            return True
        return bool(_NAMING.search(masked, end, min(right, end + 8)))
    if rule == "nearest":
        return _has_before(reading.nearest, left, start)
    habit = reading.habits.any_within(left, right)
    if rule == "year_anchor":
        return habit or bool(_NUMBER_BEFORE.search(masked, max(0, start - 8), start))
    if rule == "anaphoric_day":
        return _anchored(reading.dates, reading, start, masked[start:end])
    if rule == "anaphoric_year":
        return _anchored(reading.years, reading, start, masked[start:end])
    if rule == "duration":
        if _CALENDAR_YEAR.match(masked, start):
            return True
        return not _is_bare(masked, start, person_is_bare=True) or reading.dates.any_before(start)
    if rule == "weekday":
        return habit or _weekday_is_fine(reading, start, end, clause)
    if rule == "holiday":
        return habit or bool(_YEAR_BEFORE.search(masked, max(0, start - 8), start))
    if rule == "group_before":
        return 0 <= reading.first_group_end <= start
    if rule == "bare_place":
        return not _is_bare(masked, start, person_is_bare=False)
    return _passes_english(rule, reading, start, end, habit, clause)


def _passes_english(rule: str, reading: Reading, start: int, end: int, habit: bool, clause: tuple[int, int]) -> bool:
    masked = reading.masked
    if rule == "antecedent":  # he, her, they …: someone named before it
        return 0 <= reading.first_name < start
    if rule == "anything_before":  # it: anything at all before it
        return 0 <= reading.first_word < start
    if rule == "demonstrative_en":
        return bool(_EN_NAMED_AFTER.match(masked, end)) or (start > 0 and masked[start - 1] in MARKS)
    if rule == "there_en":
        return bool(_EN_EXISTENTIAL.match(masked, end)) or 0 <= reading.first_place <= start
    if rule == "weekday_en":
        in_range = _EN_RANGE_AFTER.match(masked, end) or _EN_RANGE_BEFORE.search(masked, max(0, start - 24), start)
        return habit or bool(in_range) or reading.dates.any_within(*clause)
    if rule == "holiday_en":
        return habit or bool(_EN_YEAR_NEAR.search(masked, max(0, start - 8), min(len(masked), end + 8)))
    if rule == "year_anchor_en":
        return habit
    if rule == "duration_en":
        word = masked[start:end].lower()
        if word.endswith(("before", "after")) and _EN_OBJECT_AFTER.match(masked, end):
            return True  # two days before the exam: anchored to what follows
        return reading.dates.any_before(start)
    return False


def problems(reading: Reading) -> Iterator[tuple[int, int, str]]:
    """(start, end, kind) of every problem word that no rule lets pass."""
    for start, end, kind, rule in segment(reading.masked):
        if not (rule and passes(rule, reading, start, end)):
            yield start, end, kind
