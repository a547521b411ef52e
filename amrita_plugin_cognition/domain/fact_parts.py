"""The parts of a stored fact that decide whether two facts are the same fact. Pure, no I/O.

A fact is read into who (QQ numbers and the nicknames written beside them), when (calendar dates
in any writing the historian or a person uses: ``2026-11-29``, ``2026年11月29日``, ``11月29日``,
``十一月二十九号``, ``Nov 29, 2026``; weekdays; clock times such as ``下午3点半`` or ``15:30``;
days, weeks, months and years said relative to the writing: ``昨天``, ``上个月``, ``明年``),
how much (every other number, Chinese numerals read by cn2an), whether (negation) and plan vs done
(a stated intention or a plain/finished act), plus what is left: the *residue*, the tokens of the
wording with those parts, punctuation and the QQ-number framing taken out. ``duplicates.py``
compares two facts part by part and aligns their residues.

Tokens of the residue are CJK characters one by one and Latin words lower-cased and stemmed as the
keyword index does (``tokenize.stem``), so a Chinese and an English fact are read alike. The
words and patterns it reads with are ``fact_lexicon``'s.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

import cn2an

from .fact_lexicon import (
    _AFTERNOON,
    _AND_A_HALF,
    _CANONICAL,
    _CLOCK,
    _CLOCK_EN,
    _COLLOQUIAL_COUNT,
    _COLLOQUIAL_COUNTS,
    _DATE_PATTERNS,
    _DAY_PARTS,
    _DISLIKE_EN,
    _DISLIKE_ZH,
    _DONE_EN,
    _DONE_ZH,
    _FILLER_WORD,
    _FREQUENCIES,
    _HABIT,
    _HALF,
    _HOLIDAY,
    _HOLIDAY_DAYS,
    _MONEY_TENTHS,
    _MONTHS_EN,
    _NEGATING_WORD,
    _NEGATION_EN,
    _NEGATION_ZH,
    _NICKNAME_AFTER,
    _NICKNAME_BEFORE,
    _NOT_A_NAME,
    _NOT_A_NUMBER,
    _NOT_NEGATION,
    _NOT_PLAN,
    _NUMBER,
    _NUMERAL_RUN,
    _ONE_HALF,
    _PERCENT,
    _PLAN_EN,
    _PLAN_ZH,
    _PROHIBITION,
    _QQ,
    _RELATIVE_EACH,
    _RELATIVE_TIME,
    _RETURN,
    _ROUGH_RANGE,
    _SCALED_UNITS,
    _SYNONYM,
    _SYNONYMS_EN,
    _TOKEN,
    _UNIT,
    _UNIT_CANONICAL,
    _UNIT_WORD,
    _WEEKDAY,
    _WEEKDAY_EN_NUMBER,
    _WEEKDAY_GROUP_DAYS,
    _WEEKDAY_GROUPS,
    _WEEKDAY_MORE,
    _WEEKDAYS,
    _WEEKDAYS_EN,
    FILLER_CHARS,
    SAME_COUNT,
)
from .tokenize import ENGLISH_STOP_WORDS, stem

#: A Latin letter: a text without one is read without the English patterns (they cannot match).
_LATIN_LETTER = re.compile("[A-Za-z]")
_DIGIT = re.compile(r"\d")
#: The first of ``_DATE_PATTERNS`` written in English words (Nov 29, 2026; 29 November 2026).
_FIRST_ENGLISH_DATE = 3


@dataclass(frozen=True, slots=True)
class FactParts:
    """What one fact says, part by part (see the module's docstring)."""

    text: str
    qq_numbers: frozenset[str]
    nicknames: dict[str, str] = field(hash=False, compare=False)
    dates: frozenset[tuple[int | None, int, int | None]]
    weekdays: frozenset[int]
    clock_times: frozenset[tuple[int, int]]
    numbers: Counter[tuple[float, str]] = field(hash=False, compare=False)
    negations: int
    plan: bool
    done: bool
    residue: tuple[str, ...]
    frequencies: frozenset[str] = frozenset()
    day_parts: frozenset[str] = frozenset()
    relative_times: frozenset[str] = frozenset()


@lru_cache(maxsize=4096)
def _numeral(run: str) -> str:
    """A run of Chinese numerals as cn2an reads it (二〇二六 → 2026, 三千五 → 3500, 两 → 2); a run
    it cannot read (十几, a lone 百) stays as written."""
    try:
        value = cn2an.cn2an(run, "smart")
    except (ValueError, KeyError, IndexError):
        return run
    return f"{value:g}" if isinstance(value, float) else str(value)


def fold(text: str) -> str:
    """``text`` read as NFKC (full-width digits and brackets to their plain forms), units said one
    way, Chinese numerals as digits (run by run, each read by cn2an: 十一月二十九日 → 11月29日,
    百分之二十 → 20%). The caller reads it as NFKC first (``read_parts`` does, once)."""
    folded = _UNIT_WORD.sub(lambda match: _UNIT_CANONICAL[match.group(0)], text)
    folded = _COLLOQUIAL_COUNT.sub(lambda match: _COLLOQUIAL_COUNTS[match.group(0)], folded)
    if "半" in folded:
        folded = _AND_A_HALF.sub(_and_a_half, folded)
        folded = _HALF.sub("0.5", _ONE_HALF.sub("50%", folded))
    folded = _MONEY_TENTHS.sub(r"\1.\2元", folded)
    if not _NUMERAL_RUN.search(folded):
        return folded
    folded = _ROUGH_RANGE.sub(_rough_range, folded)
    folded = _PERCENT.sub(lambda match: _numeral(match.group(1)) + "%", folded)
    return _NUMERAL_RUN.sub(lambda match: _numeral_beside_digits(match, folded), folded)


def _rough_range(match: re.Match[str]) -> str:
    """三四 → 3到4 where the second numeral is the next one; other pairs as written (二五 is no range)."""
    low, high = (_numeral(numeral) for numeral in match.groups())
    return f"{low}到{high}" if int(high) == int(low) + 1 else match.group(0)


def _and_a_half(match: re.Match[str]) -> str:
    """四个半小时 → 4.5小时, 两年半 → 2.5年 (as written when the numeral cannot be read: 十几个半月)."""
    whole = _numeral(match.group(1)) if not match.group(1).isdigit() else match.group(1)
    if not whole.isdigit():
        return match.group(0)
    return f"{whole}.5{match.group(2) or ''}"


def _numeral_beside_digits(match: re.Match[str], text: str) -> str:
    """A run read as a number, unless digits touch it (in 丁一2025年 the 一 ends a name, and read
    as 1 it would make the year 12025) or it is part of a word that counts nothing (一起, 一直)."""
    start, end = match.span()
    if (start and text[start - 1].isdigit()) or (end < len(text) and text[end].isdigit()):
        return match.group(0)
    if any(word.start() <= start < word.end() for word in _NOT_A_NUMBER.finditer(text, max(0, start - 2), end + 2)):
        return match.group(0)
    return _numeral(match.group(0))


def _masked(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with every span replaced by one separator (so its neighbours never join)."""
    pieces: list[str] = []
    last = 0
    for start, end in sorted(spans):
        if start < last:
            start = last
        if end <= start:
            continue
        pieces.append(text[last:start])
        pieces.append("|")
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


def _people(text: str, spans: list[tuple[int, int]]) -> tuple[set[str], dict[str, str]]:
    numbers: set[str] = set()
    nicknames: dict[str, str] = {}
    for match in _QQ.finditer(text):
        number = match.group(1) or match.group(2)
        numbers.add(number)
        end = match.end()
        nickname = _NICKNAME_AFTER.match(text[end:])
        if nickname:
            nicknames[number] = nickname.group(1).strip()
            end += nickname.end()
        else:
            before = _NICKNAME_BEFORE.search(text, max(0, match.start() - 30), match.start())
            if before and (before.group(1) or before.group(2)) not in _NOT_A_NAME:
                nicknames[number] = before.group(1) or before.group(2)
        spans.append((match.start(), end))
    return numbers, nicknames


def _year(raw: str | None) -> int | None:
    """A year as written; two digits (26年) are this century's."""
    if not raw:
        return None
    return int(raw) + 2000 if len(raw) == 2 else int(raw)


def _dates(text: str, spans: list[tuple[int, int]], latin: bool) -> set[tuple[int | None, int, int | None]]:
    found: set[tuple[int | None, int, int | None]] = set()
    for match in _HOLIDAY.finditer(text):
        found.add((None, *_HOLIDAY_DAYS[match.group(0)]))
        spans.append(match.span())
    if not _DIGIT.search(text):  # every date pattern reads digits (numerals are digits by now)
        return found
    for index, pattern in enumerate(_DATE_PATTERNS if latin else _DATE_PATTERNS[:_FIRST_ENGLISH_DATE]):
        for match in pattern.finditer(text):
            if any(start <= match.start() < end for start, end in spans):
                continue
            first, second, third = match.groups()
            day: int | None
            if index == _FIRST_ENGLISH_DATE:  # Nov 29, 2026
                month, day, year = _MONTHS_EN[first.lower()], int(second), _year(third)
            elif index == _FIRST_ENGLISH_DATE + 1:  # 29 November 2026
                month, day, year = _MONTHS_EN[second.lower()], int(first), _year(third)
            else:
                year, month, day = _year(first), int(second), int(third) if third else None
            if not 1 <= month <= 12 or (day is not None and not 1 <= day <= 31):
                continue
            found.add((year, month, day))
            spans.append(match.span())
    return found


def _day_parts(text: str) -> set[str]:
    return {name for name, pattern in _DAY_PARTS if pattern.search(text)}


def _relative_times(text: str, spans: list[tuple[int, int]]) -> set[str]:
    """The relative days, weeks, months and years of ``text`` outside ``spans`` (one pass of
    ``_RELATIVE_TIME``, whose alternatives never overlap); what each matched joins ``spans``."""
    found: set[str] = set()
    for match in _RELATIVE_TIME.finditer(text):
        if any(start <= match.start() < end for start, end in spans):
            continue
        found.add(next(name for name, pattern in _RELATIVE_EACH if pattern.fullmatch(match.group(0))))
        spans.append(match.span())
    return found


def _named_spans(text: str, spans: list[tuple[int, int]], named: tuple[tuple[str, re.Pattern[str]], ...]) -> set[str]:
    """The names of ``named`` patterns found in ``text`` outside ``spans``; what each matched joins
    ``spans`` (a pattern that only looks ahead, as 每 before 周三, takes nothing)."""
    found: set[str] = set()
    for name, pattern in named:
        for match in pattern.finditer(text):
            if any(start <= match.start() < end for start, end in spans):
                continue
            found.add(name)
            if match.end() > match.start():
                spans.append(match.span())
    return found


def _weekdays(text: str, spans: list[tuple[int, int]], latin: bool) -> set[int]:
    found: set[int] = set()
    for match in _WEEKDAY.finditer(text):
        found.add(_WEEKDAYS[match.group(1)])
        end = match.end()
        while more := _WEEKDAY_MORE.match(text, end):
            found.add(_WEEKDAYS[more.group(1)])
            end = more.end()
        spans.append((match.start(), end))
    for match in _WEEKDAYS_EN.finditer(text) if latin else ():
        found.add(_WEEKDAY_EN_NUMBER[match.group(1).lower()])
        spans.append(match.span())
    for match in _WEEKDAY_GROUPS.finditer(text):
        found.update(_WEEKDAY_GROUP_DAYS[0 if match.group(1) else 1])
        spans.append(match.span())
    return found


def _clock_times(text: str, spans: list[tuple[int, int]], latin: bool) -> set[tuple[int, int]]:
    found: set[tuple[int, int]] = set()
    if not _DIGIT.search(text):  # every clock time has its hour in digits
        return found
    for match in _CLOCK.finditer(text):
        if any(start <= match.start(2) < end for start, end in spans):
            continue
        period, hour_text, colon_minutes, fraction, point_minutes, hour_minutes = match.groups()
        hour = int(hour_text)
        minutes = {"半": 30, "一刻": 15, "三刻": 45}.get(fraction or "", 0)
        minutes = int(colon_minutes or point_minutes or hour_minutes or minutes)
        if period in _AFTERNOON and hour < 12:
            hour += 12
        if period == "中午" and hour < 6:
            hour += 12
        if hour > 24 or minutes > 59:
            continue
        found.add((hour % 24, minutes))
        spans.append(match.span())
    for match in _CLOCK_EN.finditer(text) if latin else ():
        hour, minutes = int(match.group(1)), int(match.group(2) or 0)
        if match.group(3).lower().startswith("p") and hour < 12:
            hour += 12
        found.add((hour % 24, minutes))
        spans.append(match.span())
    return found


def _numbers(text: str, spans: list[tuple[int, int]]) -> Counter[tuple[float, str]]:
    """Every other number with its unit (``3200元``, ``3200美元``, ``5公斤`` and ``5斤`` differ)."""
    found: Counter[tuple[float, str]] = Counter()
    for match in _NUMBER.finditer(text):
        if any(start <= match.start() < end for start, end in spans):
            continue
        raw = match.group(0)
        percent = raw.endswith("%")
        value = float(raw.rstrip("%"))
        unit = "%" if percent else (_UNIT.match(text, match.end()).group(1) or "")  # type: ignore[union-attr]
        unit_end = _UNIT.match(text, match.end()).end() if unit and not percent else match.end()  # type: ignore[union-attr]
        factor, unit = _SCALED_UNITS.get(unit, (1, unit))
        unit = SAME_COUNT.get(unit, unit)
        found[(value * factor, unit)] += 1
        spans.append((match.start(), unit_end))  # the unit is part of the amount, not of the wording
    return found


def _negations(text: str, latin: bool) -> int:
    cleared = _NOT_NEGATION.sub("|", text)
    prohibitions = len(_PROHIBITION.findall(cleared))
    cleared = _PROHIBITION.sub("|", cleared)
    found = len(_DISLIKE_ZH.findall(cleared)) + len(_NEGATION_ZH.findall(cleared)) + prohibitions
    found += len(_NEGATING_WORD.findall(cleared))
    return found + (len(_DISLIKE_EN.findall(cleared)) + len(_NEGATION_EN.findall(cleared)) if latin else 0)


def _plan_and_done(text: str, whole: str, latin: bool) -> tuple[bool, bool]:
    """Plan and done in ``text`` (the parts masked); a bare 要 is no plan when ``whole`` (the fact
    before masking) states a frequency."""
    cleared = _NOT_PLAN.sub("|", text)
    habit = _HABIT.search(whole) is not None
    plan = (latin and _PLAN_EN.search(cleared) is not None) or any(
        match.group(0) != "要" or not habit for match in _PLAN_ZH.finditer(cleared)
    )
    done = bool(_DONE_ZH.search(cleared) or (latin and _DONE_EN.search(cleared)))
    return plan, done


#: Stands in the residue where words were taken out or punctuation was (a boundary: 赵磊|男朋友|杭州).
BOUNDARY = "|"


def _residue(text: str, latin: bool) -> tuple[str, ...]:
    text = _DISLIKE_ZH.sub("|喜欢|", _PROHIBITION.sub("|禁止|", text))
    if latin:
        text = _DISLIKE_EN.sub(" like ", text)
    text = _RETURN.sub("|归还|", text)
    text = _FILLER_WORD.sub("|", text)
    text = _SYNONYM.sub(lambda match: f"|{_CANONICAL[match.group(0)]}|", text)
    text = _NEGATION_ZH.sub("|", text)
    tokens: list[str] = []
    last_end = 0
    pending = False

    def keep(token: str) -> None:
        nonlocal pending
        if pending and tokens:
            tokens.append(BOUNDARY)
        pending = False
        tokens.append(token)

    for match in _TOKEN.finditer(text):
        token = match.group(0)
        if text[last_end : match.start()].strip():
            pending = True
        last_end = match.end()
        if len(token) == 1 and "\u3400" <= token <= "\ud7af":
            if token not in FILLER_CHARS:
                keep(token)
            else:
                pending = True
            continue
        if len(token) == 1 and token.isupper():  # O型 / A型, B2 / B3: a letter that names something
            keep(token)
            continue
        word = token.lower().replace("'", "")
        if word in ENGLISH_STOP_WORDS or word in {"nickname", "nicknam"} or len(word) < 2:
            pending = True
            continue
        stemmed = stem(word)
        keep(_SYNONYMS_EN.get(word, _SYNONYMS_EN.get(stemmed, stemmed)))
    return tuple(tokens)


def _without_people(text: str, known_nicknames: frozenset[str]) -> tuple[str, set[str], dict[str, str]]:
    """The QQ numbers and nicknames of ``text`` (NFKC), and the text with them taken out, before
    numerals are read (a nickname such as 七七 or 阿九 is no number)."""
    spans: list[tuple[int, int]] = []
    qq_numbers, nicknames = _people(text, spans)
    rest = _masked(text, spans)
    for nickname in sorted(set(nicknames.values()) | known_nicknames, key=len, reverse=True):
        rest = rest.replace(nickname, "|")
    return rest, qq_numbers, nicknames


def read_parts(text: str, known_nicknames: frozenset[str] = frozenset(), wording: bool = True) -> FactParts:
    """The parts of one fact. ``known_nicknames``: names that stand for a QQ number the fact
    names (from either fact of a pair), taken out of the wording so that ``小明（QQ号10001）``
    and ``QQ号10001（昵称小明）`` leave the same wording. ``wording=False`` reads only who, the
    days, clock times and negations (weekdays, numbers, plan and the residue left empty: a
    fraction of the work, for blocking on those parts)."""
    rest, qq_numbers, nicknames = _without_people(unicodedata.normalize("NFKC", text), known_nicknames)
    folded = fold(rest)
    latin = _LATIN_LETTER.search(folded) is not None  # the English patterns read nothing without
    spans: list[tuple[int, int]] = []
    dates = _dates(folded, spans, latin)
    frequencies = _named_spans(folded, spans, _FREQUENCIES) if wording else set()
    weekdays = _weekdays(folded, spans, latin) if wording else set()
    relative_times = _relative_times(folded, spans) if wording else set()
    clock_times = _clock_times(folded, spans, latin)
    numbers = _numbers(folded, spans) if wording else Counter()
    rest = _masked(folded, spans)
    plan, done = _plan_and_done(rest, folded, latin) if wording else (False, False)
    return FactParts(
        text=text,
        qq_numbers=frozenset(qq_numbers),
        nicknames=nicknames,
        dates=frozenset(dates),
        weekdays=frozenset(weekdays),
        clock_times=frozenset(clock_times),
        numbers=numbers,
        negations=_negations(rest, latin),
        plan=plan,
        done=done,
        residue=_residue(rest, latin) if wording else (),
        frequencies=frozenset(frequencies),
        day_parts=frozenset(_day_parts(folded)) if wording else frozenset(),
        relative_times=frozenset(relative_times),
    )
