"""The resolver's result type."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from .lexicon import WEEKDAY_NAMES

_QUALIFIER_TEXT = {"前": "之前", "后": "之后", "前后": "前后"}


@dataclass(frozen=True, slots=True)
class TimeMention:
    """One relative time expression found in a text, anchored to a calendar date."""

    start: int
    end: int
    text: str
    date: dt.date
    end_date: dt.date | None
    granularity: str  # "day" | "week" | "month" | "year"
    part_of_day: str = ""  # 早上 / 下午 / 晚上 ... when the expression named one
    qualifier: str = ""  # "前" / "后" / "前后": 春节前, 月底 (around the last day)

    def absolute(self) -> str:
        """The anchored form used in prompts: 2026-11-29（周日）晚上, 2026-12, 2026-12-07至2026-12-13, 2027."""
        text = self._base()
        if self.part_of_day:
            text += self.part_of_day
        if self.qualifier:
            text += _QUALIFIER_TEXT.get(self.qualifier, self.qualifier)
        return text

    def _base(self) -> str:
        first = self.date
        last = self.end_date
        if self.granularity == "year":
            if last is None or last.year == first.year:
                return f"{first.year}"
            return f"{first.year}至{last.year}"
        if self.granularity == "month":
            whole_months = first.day == 1 and (last is None or _is_month_end(last))
            if whole_months:
                if last is None or (last.year, last.month) == (first.year, first.month):
                    return f"{first.year}-{first.month:02d}"
                return f"{first.year}-{first.month:02d}至{last.year}-{last.month:02d}"
            return f"{first.isoformat()}至{last.isoformat()}" if last else first.isoformat()
        if self.granularity == "week" or last is not None:
            return f"{first.isoformat()}至{last.isoformat()}" if last else first.isoformat()
        return f"{first.isoformat()}（周{WEEKDAY_NAMES[first.weekday()]}）"


def _is_month_end(day: dt.date) -> bool:
    return (day + dt.timedelta(days=1)).day == 1
