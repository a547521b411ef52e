"""A text written at a known moment, anchored without a model (pure, no I/O): what a correction
goes through where the historian would have its rewrite.

Each relative time the resolver reads (``timeresolve``) is replaced by the date it names, as the
historian's prompt shows it (前天 → 2026-11-28（周六）, 去年 → 2025年, 上个月 → 2026年10月, 下周 →
2026-12-07至2026-12-13); the day the text is about is the first time resolved, else the first
absolute date written in it (2026-11-28, 2026年11月28日). The gate then judges the anchored text
like any rewritten fact.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime

from .timeresolve import TimeMention, resolve_times

_WRITTEN_DATE = re.compile(
    r"(?<![0-9０-９])(?P<year>[12][0-9]{3})\s*(?:年|[-/.])\s*(?P<month>[0-9]{1,2})\s*(?:月|[-/.])\s*"
    r"(?P<day>[0-9]{1,2})(?![0-9])"
)


@dataclass(frozen=True, slots=True)
class AnchoredText:
    text: str
    #: The day the text is about, if it names one (the first day of a week, month or year named).
    day: date | None
    #: How much of ``day`` is known: "day", "week", "month" or "year" ("" without a day).
    precision: str
    #: The relative times replaced, as said.
    replaced: tuple[str, ...]
    #: The last day of the span resolved (a week, a range of days), if it names one.
    last: date | None = None


def _written(mention: TimeMention) -> str:
    """The mention as the anchored text says it: the prompt's form, with a whole year or month
    written the Chinese way (2025年, 2026年10月) rather than as a bare number."""
    absolute = mention.absolute()
    if re.fullmatch(r"\d{4}", absolute):
        return f"{absolute}年"
    if re.fullmatch(r"\d{4}-\d{2}", absolute):
        return f"{mention.date.year}年{mention.date.month}月"
    return absolute


def written_date(text: str) -> date | None:
    """The first valid calendar date written out in ``text`` (2026-11-28, 2026年11月28日)."""
    for match in _WRITTEN_DATE.finditer(text):
        try:
            return date(int(match.group("year")), int(match.group("month")), int(match.group("day")))
        except ValueError:
            continue
    return None


def anchor(text: str, now: datetime) -> AnchoredText:
    """``text`` said at ``now`` (read in its own UTC offset) with its relative times made absolute."""
    mentions = resolve_times(text, now)
    parts: list[str] = []
    position = 0
    for mention in mentions:
        parts += [text[position : mention.start], _written(mention)]
        position = mention.end
    parts.append(text[position:])
    anchored = "".join(parts)
    replaced = tuple(mention.text for mention in mentions)
    if mentions:
        first = mentions[0]
        return AnchoredText(anchored, first.date, first.granularity, replaced, first.end_date)
    day = written_date(anchored)
    return AnchoredText(anchored, day, "day" if day else "", replaced)
