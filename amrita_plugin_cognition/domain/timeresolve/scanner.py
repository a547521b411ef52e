"""The scanning loop: every rule at every position, guards, absorption of 下午 / 之前, longest match."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from .context import Scan
from .festival_talk import definition_spans
from .lexicon import (
    BLOCKED_PHRASES,
    FESTIVAL_ALIASES,
    NAMED_BEFORE,
    PARTS_OF_DAY,
    TITLE_CUES_AFTER,
    TITLE_CUES_BEFORE,
    TRADITIONAL,
    festival_pattern,
)
from .model import TimeMention
from .names import business_names
from .relative import DAY_WORDS
from .rules import RULES, Rule
from .spans import Resolution

_QUALIFIERS = (
    ("之前", "前"),
    ("以前", "前"),
    ("之后", "后"),
    ("以后", "后"),
    ("前后", "前后"),
    ("左右", "前后"),
    ("前", "前"),
    ("后", "后"),
)
#: A single 前/后 is not a qualifier when it starts a word (前天, 后面, 前台 ...).
_SINGLE_QUALIFIER_NOT_BEFORE = "天年面来台端者辈门边头续期半排座方任夕晚日儿悔果代退勤院背线途景妻夫"

_TITLES = re.compile(r"《[^》]*》|〈[^〉]*〉")
_QUOTED = re.compile(r"[“\"「『‘【]([^”\"」』’】\n]{1,20})[”\"」』’】]")
_YEAR = r"(?:\d{2,4}|[零〇一二三四五六七八九]{2,4})\s*年的?"
_DAY = r"(?:\s*(?:\d{1,2}|[十一二三四五六七八九廿]{1,3})\s*[日号])?"
_ABSOLUTE = re.compile(
    "|".join(
        (
            _YEAR + r"\s*(?:\d{1,2}|[十一二三四五六七八九]{1,3})\s*月份?" + _DAY,
            _YEAR + rf"(?:{festival_pattern()}|年?底|年?末|年?初|上半年|下半年)",
            r"(?:\d{4}|[零〇一二三四五六七八九]{4})\s*年",
            r"\d{4}[-/.]\d{1,2}(?:[-/.]\d{1,2})?",
            r"\d{1,2}/\d{1,2}",
            r"\d{1,2}:\d{2}",
        )
    )
)


#: The end of a range that starts with an absolute date (2028年10月2日到10月6日): absolute too.
_RANGE_END = re.compile(
    r"\s*(?:到|至|—|-|~|～)\s*(?:(?:\d{1,2}|[十一二三四五六七八九]{1,3})\s*月份?)?\s*"
    r"(?:\d{1,2}|[十一二三四五六七八九廿]{1,3})\s*[日号]"
)
#: Quoted speech (他说“明天见”) is the one quotation whose time words are times.
_SPEECH_BEFORE = re.compile(
    r"(?:说|问|讲|喊|嚷|答|回复?|通知|提醒|告诉|留言|发了句|来了句)[我你他她]?们?[了着道]?\s*[:：]?\s*$"
)
_NAMED = re.compile(rf"(?:{NAMED_BEFORE})\s*([^\s，。！？、,.!?：:；;“”\"「」《》]{{1,8}})")
#: 叫 right before a time word names someone or something (同事叫周末, 会里那个叫元旦的坦克): the name is
#: no date. (叫他明天来 is not touched: the word after 叫 is no time word.)
_TIME_WORDS = "|".join(sorted((*DAY_WORDS, *FESTIVAL_ALIASES), key=len, reverse=True))
_CALLED = re.compile(
    rf"(?<![说让请])叫做?((?:{_TIME_WORDS}|(?:周|星期|礼拜)[一二三四五六日天末]|初[一二三四五六七八九十])"
    r"[^\s，。！？、,.!?：:；;“”\"「」《》的]{0,6})"
)


@dataclass(frozen=True, slots=True)
class _Candidate:
    start: int
    end: int
    resolution: Resolution
    part_of_day: str
    qualifier: str


def _blocked_spans(text: str) -> list[tuple[int, int]]:
    """Spans no mention may overlap: titles, absolute dates, set phrases, quoted titles."""
    spans = [(match.start(), match.end()) for match in _TITLES.finditer(text)]
    for match in _ABSOLUTE.finditer(text):
        tail = _RANGE_END.match(text, match.end())
        spans.append((match.start(), tail.end() if tail else match.end()))
    spans += [match.span(1) for pattern in (_NAMED, _CALLED) for match in pattern.finditer(text)]
    spans += business_names(text)
    spans += definition_spans(text)  # 母亲节是五月第二个星期天, 农历正月初一是春节
    for phrase in BLOCKED_PHRASES:
        index = text.find(phrase)
        while index >= 0:
            spans.append((index, index + len(phrase)))
            index = text.find(phrase, index + 1)
    for match in _QUOTED.finditer(text):  # a name, a title, a lyric or a slogan, unless quoted speech
        before = text[max(0, match.start() - 4) : match.start()]
        titled = any(cue in before for cue in TITLE_CUES_BEFORE) or text.startswith(TITLE_CUES_AFTER, match.end())
        if titled or not _SPEECH_BEFORE.search(before):
            spans.append((match.start(), match.end()))
    return spans


def _absorb(scan: Scan, rule: Rule, end: int, resolution: Resolution) -> tuple[int, str, str]:
    """Extend a span over a following part of day (明天下午) and qualifier (春节前, 周五之前)."""
    text = scan.text
    part, qualifier = resolution.part_of_day, resolution.qualifier
    if resolution.granularity == "day" and not part:
        for word in PARTS_OF_DAY:
            if text.startswith(word, end):
                part, end = word, end + len(word)
                break
    if rule.takes_qualifier and not qualifier:
        for word, meaning in _QUALIFIERS:
            if not text.startswith(word, end):
                continue
            if len(word) == 1 and text[end + 1 : end + 2] and text[end + 1] in _SINGLE_QUALIFIER_NOT_BEFORE:
                break
            qualifier, end = meaning, end + len(word)
            break
    return end, part, qualifier


def _candidates(scan: Scan) -> list[_Candidate]:
    found: list[_Candidate] = []
    for rule in RULES:
        for match in rule.pattern.finditer(scan.text):
            start, end = match.start("span"), match.end("span")
            if start == end:
                continue
            if rule.recurring and scan.is_habit(start, end):
                continue
            resolution = rule.resolve(match, scan, start, end)
            if resolution is None:
                continue
            if resolution.end is not None:
                end = resolution.end
            if scan.compound_clash(start, end):
                continue
            end, part, qualifier = _absorb(scan, rule, end, resolution)
            found.append(_Candidate(start, end, resolution, part, qualifier))
    return found


def scan_text(text: str, now: datetime) -> list[TimeMention]:
    """All relative time mentions of ``text``, left to right, longest first, never overlapping.
    Traditional characters are read as simplified ones; a mention's text is as written."""
    if not text:
        return []
    written, text = text, text.translate(TRADITIONAL)
    scan = Scan(text, now)
    blocked = _blocked_spans(text)
    candidates = [
        candidate
        for candidate in _candidates(scan)
        if not any(candidate.start < stop and start < candidate.end for start, stop in blocked)
    ]
    candidates.sort(key=lambda candidate: (candidate.start, candidate.start - candidate.end))
    mentions: list[TimeMention] = []
    taken_until = 0
    for candidate in candidates:
        if candidate.start < taken_until:
            continue
        resolution = candidate.resolution
        mentions.append(
            TimeMention(
                start=candidate.start,
                end=candidate.end,
                text=written[candidate.start : candidate.end],
                date=resolution.date,
                end_date=resolution.end_date,
                granularity=resolution.granularity,
                part_of_day=candidate.part_of_day,
                qualifier=candidate.qualifier,
            )
        )
        taken_until = candidate.end
    return mentions
