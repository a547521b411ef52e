"""The absoluteness gate: is a fact the historian rewrote self-contained? Pure, no I/O.

A fact passes when a reader who never saw the chat can place it: no unresolved pronoun (他, 我们,
对方, 这个项目), no time relative to the moment of speaking (昨天, 上周五, 三天前, 最近, 那天), no
place relative to the speaker (这里, 本地, 在附近), and every explicit numeric id of the source
observation kept byte-identical (the drift check).

How it reads a fact:

1. Opaque spans are masked, keeping offsets: a named user ``QQ号<id>`` and its ``（昵称…）``,
   titles 《…》, quotations “…” 「…」 『…』 "…", group numbers, URLs and code. Whatever a nickname,
   a song title or a quoted sentence says is not the fact's own wording.
2. The rest is segmented leftmost-longest against the lexicon (``gate_lexicon.py``): problem
   words compete with ordinary words that contain them (其他, 日本, 相当, 爱上 …), so 其他 never
   yields 他 and 相当天真 never yields 当天.
3. Problem words with a rule get a context check: anaphors need an absolute date before them,
   附近 needs an anchor (春熙路附近), a weekday or a festival passes as a habit, 自己 needs a named
   user before it. The decisions on ambiguous words are listed in ``gate_lexicon.py``.
4. Required ids are looked up as whole digit runs: 10001 is not kept by 100012.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

from . import gate_lexicon as lex

ID_DRIFT = "id_drift"
KIND_LABELS = {lex.PRONOUN: "代词", lex.RELATIVE_TIME: "相对时间", lex.RELATIVE_PLACE: "相对地点"}


@dataclass(frozen=True, slots=True)
class GateProblem:
    kind: str  # "pronoun" | "relative_time" | "relative_place" | "id_drift"
    word: str  # the offending word, or the missing id
    start: int  # span in the checked text; -1 for id_drift
    end: int


@dataclass(frozen=True, slots=True)
class GateVerdict:
    problems: tuple[GateProblem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def id_drift(self) -> bool:
        return any(problem.kind == ID_DRIFT for problem in self.problems)

    def feedback(self) -> str:
        """Chinese feedback for the retry prompt; empty when the fact passed."""
        words: list[str] = []
        ids: list[str] = []
        for problem in self.problems:
            if problem.kind == ID_DRIFT:
                if problem.word not in ids:
                    ids.append(problem.word)
                continue
            item = f"“{problem.word}”（{KIND_LABELS.get(problem.kind, problem.kind)}）"
            if item not in words:
                words.append(item)
        parts = []
        if words:
            parts.append("以下词语需要改写为绝对表述：" + "、".join(words))
        if ids:
            parts.append("以下编号必须原样保留：" + "、".join(ids))
        return "；".join(parts)


# --- masking ---------------------------------------------------------------------------------

_PERSON = "\ue000"  # a named user: QQ号… and its （昵称…）
_OPAQUE = "\ue001"  # a title, a quotation, a group number, a URL
_DIGIT = "0-9０-９"

_PERSON_ID = re.compile(rf"QQ\s*号?\s*[:：]?\s*[{_DIGIT}]{{5,}}", re.IGNORECASE)
# （昵称…）, also after the QQ number inside the same brackets: （QQ号3601928374，昵称…）
_NAME_OPENERS = re.compile(
    rf"[（(]\s*(?:QQ\s*号?\s*[:：]?\s*[{_DIGIT}]{{5,}}\s*[，,、;；]\s*)?(?:昵称|群昵称|群名片|网名|备注)", re.IGNORECASE
)
_GROUP_OPENERS = re.compile(r"[（(]\s*群名")
_OPAQUE_SPANS = re.compile(
    rf"群号?\s*[:：]?\s*[{_DIGIT}]{{5,}}|(?:https?://|www\.)[^\s，。；！？、）)】」』”\"']+"
    r"|[\w.+-]+@[\w-]+\.[\w.-]+|`[^`\n]+`"
)
_PAIRS = {"《": "》", "〈": "〉", "“": "”", "‘": "’", "「": "」", "『": "』", '"': '"'}


def _span_end(text: str, start: int, openers: str, closers: str) -> int:
    """Index just past the mark closing the one at ``start`` (nesting aware), or -1 if unclosed."""
    if openers == closers:  # straight quotes do not nest
        return text.find(closers, start + 1) + 1 or -1
    if not any(closer in text[start + 1 :] for closer in closers):
        return -1
    depth = 0
    for index in range(start, len(text)):
        if text[index] in openers:
            depth += 1
        elif text[index] in closers:
            depth -= 1
            if depth == 0:
                return index + 1
    return -1


def _mask(text: str) -> str:
    chars = list(text)

    def fill(start: int, end: int, mark: str) -> None:
        chars[start:end] = mark * (end - start)

    for match in _PERSON_ID.finditer(text):
        fill(match.start(), match.end(), _PERSON)
    names: set[str] = set()
    for openers, mark in ((_NAME_OPENERS, _PERSON), (_GROUP_OPENERS, _OPAQUE)):
        for match in openers.finditer(text):
            end = _span_end(text, match.start(), "（(", "）)")
            if end > 0:
                fill(match.start(), end, mark)
                if end - 1 - match.end() >= 2:
                    names.add(text[match.end() : end - 1])
    for match in _OPAQUE_SPANS.finditer(text):
        fill(match.start(), match.end(), _OPAQUE)
    current = "".join(chars)  # quotes inside a nickname are gone already
    quoted = {name for name in names if not name.isascii()}
    index = 0
    while index < len(current):
        closer = _PAIRS.get(current[index])
        end = _span_end(current, index, current[index], closer) if closer else -1
        if end > 0:
            fill(index, end, _OPAQUE)
            if end - index >= 4:
                quoted.add(text[index + 1 : end - 1])
        index = max(end, index + 1)
    # a nickname or a name quoted once is the same name unquoted later on (关注歌手“李明天”…看了李明天的演出,
    # （昵称当年明月）…当年明月写的书)
    for name in quoted:
        start = text.find(name)
        while start >= 0:
            fill(start, start + len(name), _OPAQUE)
            start = text.find(name, start + len(name))
    return "".join(chars)


# --- segmentation ----------------------------------------------------------------------------

_ENTRIES: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    *((kind, rule, re.compile(pattern)) for kind, rule, pattern in lex.PROBLEM_ENTRIES),
    (lex.SAFE, "", re.compile("|".join(sorted(lex.SAFE_WORDS, key=len, reverse=True)))),
    *((lex.SAFE, "", re.compile(pattern)) for pattern in lex.SAFE_PATTERNS),
)


def _segment(masked: str) -> list[tuple[int, int, str, str]]:
    """Leftmost-longest problem tokens (start, end, kind, rule); safe words only block."""
    tokens: list[tuple[int, int, str, str]] = []
    position = 0
    while position < len(masked):
        if masked[position] in (_PERSON, _OPAQUE):
            position += 1
            continue
        best: tuple[int, str, str] | None = None
        for kind, rule, pattern in _ENTRIES:
            match = pattern.match(masked, position)
            if match is None or match.end() <= position:
                continue
            longer = best is None or match.end() > best[0]
            tie_wins = best is not None and match.end() == best[0] and best[1] == lex.SAFE and kind != lex.SAFE
            if longer or tie_wins:
                best = (match.end(), kind, rule)
        if best is None:
            position += 1
            continue
        end, kind, rule = best
        if kind != lex.SAFE:
            tokens.append((position, end, kind, rule))
        position = end
    return tokens


# --- context rules ---------------------------------------------------------------------------

_BOUNDARY = re.compile(r"[，。；！？,;!?\n]")
_YEAR = rf"(?<![{_DIGIT}])[12１２][{_DIGIT}]{{3}}\s*(?:年|[-/.](?=\s*[{_DIGIT}]))|[〇零一二三四五六七八九]{{4}}年"
_YEAR_ANCHOR = re.compile(_YEAR)
_DATE_ANCHOR = re.compile(
    rf"{_YEAR}|(?<![{_DIGIT}])[{_DIGIT}]{{1,2}}\s*月\s*[{_DIGIT}]{{1,2}}\s*[日号]"
    r"|[一二三四五六七八九十]{1,3}月[初一二三四五六七八九十廿]{1,3}[日号]?"
)
_NUMBER_BEFORE = re.compile(rf"[{_DIGIT}〇零一二三四五六七八九十两正腊冬]\s*(?:年度?|月份?)?\s*的?$")
_YEAR_BEFORE = re.compile(rf"(?:[{_DIGIT}]{{4}}|[〇零一二三四五六七八九]{{4}})\s*年\s*的?$")
_CALENDAR_YEAR = re.compile(rf"[12１２][{_DIGIT}]{{3}}年")
_HABIT = re.compile(lex.HABIT_MARKERS)
_NAMING = re.compile(lex.NAMING_WORDS)
_RECALLED = re.compile(r"怀念|回忆|想起|想当年|说起|提起|说|讲|表示|称")
_VAGUE_ANAPHORS = {"当时", "那时", "那时候", "那会儿", "彼时", "当年", "那年", "那一年", "那个年代"}
_GROUP_NUMBER = re.compile(rf"群\s*号?\s*[:：]?\s*[{_DIGIT}]{{5,}}")
_WEEKDAY_NEIGHBOUR = re.compile(r"(?:周|星期|礼拜)?[一二三四五六日天]")
_RANGE = set("到至和与、及或~～-—")


def _clause(masked: str, start: int, end: int) -> tuple[int, int]:
    left = max((m.end() for m in _BOUNDARY.finditer(masked, 0, start)), default=0)
    right_match = _BOUNDARY.search(masked, end)
    return left, right_match.start() if right_match else len(masked)


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
    if char == _PERSON:
        return person_is_bare
    if char == _OPAQUE:
        return False
    return char in lex.BARE_BEFORE or not char.isalnum()


def _weekday_is_fine(masked: str, start: int, end: int, clause: str) -> bool:
    """A weekday next to a date, or inside a range (周一到周五), names no particular week."""
    if _DATE_ANCHOR.search(clause):
        return True
    after_range = masked[end : end + 1] in _RANGE and _WEEKDAY_NEIGHBOUR.match(masked, end + 1)
    before_range = start >= 2 and masked[start - 1] in _RANGE and masked[start - 2] in "一二三四五六日天"
    return bool(after_range or before_range)


def _anchored(anchor: re.Pattern[str], before: str, word: str) -> bool:
    """An anaphor (当天, 当时, 当年) refers to the date before it. A vague one (当时, 当年) does not
    when someone recalls or reports in between: "于2027-08-01发帖怀念当年…", "说儿子当时…" are
    another time (but "于2026-11-29说当天晚上加班" is that day)."""
    anchors = list(anchor.finditer(before))
    if not anchors:
        return False
    return word not in _VAGUE_ANAPHORS or not _RECALLED.search(before, anchors[-1].end())


def _passes_rule(rule: str, text: str, masked: str, start: int, end: int) -> bool:
    """Whether a problem word with a context rule is fine where it stands (``masked``: ``text`` with
    names, titles and group numbers masked, same length)."""
    left, right = _clause(masked, start, end)
    clause = masked[left:right]
    habit = bool(_HABIT.search(clause))
    before = masked[:start]
    if rule == "self":
        return _PERSON in before
    if rule == "named_before":
        index = start - 1
        char = masked[index] if index >= 0 else ""
        return char == _PERSON or (char.isalnum() and char not in lex.SPEECH_BEFORE and char not in lex.BARE_BEFORE)
    if rule == "demonstrative":  # named in place: “X”这首歌, 这个项目叫Apollo
        if start and masked[start - 1] == _OPAQUE:
            return True
        return bool(_NAMING.search(masked, end, min(right, end + 8)))
    if rule == "nearest":
        return "离" in masked[left:start] or "距" in masked[left:start]
    if rule == "year_anchor":
        return habit or bool(_NUMBER_BEFORE.search(masked, max(0, start - 8), start))
    if rule == "anaphoric_day":
        return _anchored(_DATE_ANCHOR, before, masked[start:end])
    if rule == "anaphoric_year":
        return _anchored(_YEAR_ANCHOR, before, masked[start:end])
    if rule == "duration":
        if _CALENDAR_YEAR.match(masked, start):
            return True
        return not _is_bare(masked, start, person_is_bare=True) or bool(_DATE_ANCHOR.search(before))
    if rule == "weekday":
        return habit or _weekday_is_fine(masked, start, end, clause)
    if rule == "holiday":
        return habit or bool(_YEAR_BEFORE.search(masked, max(0, start - 8), start))
    if rule == "group_before":
        return bool(_GROUP_NUMBER.search(text, 0, start))
    if rule == "bare_place":
        return not _is_bare(masked, start, person_is_bare=False)
    return False


# --- numeric ids -----------------------------------------------------------------------------

_ID_RUN = re.compile(rf"(?<![{_DIGIT}])[{_DIGIT}]{{5,}}(?![{_DIGIT}])")
_ID_MARKER = re.compile(r"(?:QQ|群|号|ID|uid|编号|单号|账号|工号|学号|订单)\s*[:：#]?\s*$", re.IGNORECASE)
_FULL_WIDTH = str.maketrans("０１２３４５６７８９", "0123456789")


def _reads_as_date(run: str) -> bool:
    digits = run.translate(_FULL_WIDTH)
    if len(digits) != 8 or not 1900 <= int(digits[:4]) <= 2099:
        return False
    try:
        date(int(digits[:4]), int(digits[4:6]), int(digits[6:]))
    except ValueError:
        return False
    return True


def explicit_ids(text: str) -> set[str]:
    """The numeric ids of a source text: every maximal run of five or more digits (QQ and group
    numbers, order numbers, amounts), as written. An eight-digit run that reads as a calendar date
    (YYYYMMDD, 1900-2099) is taken for a date, not an id, unless an id marker (QQ, 群, 号, ID,
    编号, 单号 …) stands right before it: the historian may rightly rewrite 20261129 as 2026-11-29."""
    found: set[str] = set()
    for match in _ID_RUN.finditer(text):
        run = match.group()
        if _reads_as_date(run) and not _ID_MARKER.search(text, max(0, match.start() - 6), match.start()):
            continue
        found.add(run)
    return found


def missing_ids(required_ids: Iterable[str], text: str) -> list[str]:
    """The required ids that do not occur in ``text`` as a whole digit run, in the given order."""
    missing: list[str] = []
    for raw in required_ids:
        wanted = str(raw).strip()
        if not wanted or wanted in missing:
            continue
        pattern = rf"(?<![{_DIGIT}]){re.escape(wanted)}(?![{_DIGIT}])"
        if re.search(pattern, text) is None:
            missing.append(wanted)
    return missing


# --- the gate --------------------------------------------------------------------------------


def check_fact(text: str, required_ids: Iterable[str] = ()) -> GateVerdict:
    """Judge one rewritten fact. ``required_ids`` are the ids of its source observation (see
    ``explicit_ids``); for an observation split into several facts, check their joined text."""
    masked = _mask(text)
    problems = [
        GateProblem(kind, text[start:end], start, end)
        for start, end, kind, rule in _segment(masked)
        if not (rule and _passes_rule(rule, text, masked, start, end))
    ]
    problems.extend(GateProblem(ID_DRIFT, wanted, -1, -1) for wanted in missing_ids(required_ids, text))
    return GateVerdict(tuple(problems))
