"""Resolutions and the span arithmetic shared by the rules (a week, a month, 月底, a picked occurrence)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from . import dates
from .context import Scan
from .lexicon import parse_number


@dataclass(frozen=True, slots=True)
class Resolution:
    date: dt.date
    end_date: dt.date | None = None
    granularity: str = "day"
    part_of_day: str = ""
    qualifier: str = ""
    end: int | None = None  # a shorter span than the regex matched (下周一定 -> 下周)


Resolver = Callable[[re.Match[str], Scan, int, int], Resolution | None]


def month_span(year: int, month: int, *, months: int = 1) -> Resolution:
    last_year, last_month = dates.month_shift(year, month, months - 1)
    return Resolution(date(year, month, 1), dates.month_last_day(last_year, last_month), "month")


def year_span(year: int) -> Resolution:
    return Resolution(date(year, 1, 1), date(year, 12, 31), "year")


def month_part(year: int, month: int, suffix: str) -> Resolution:
    """初 / 中 / 底 / 末 as a day (around it); 上旬 / 中旬 / 下旬 as a ten-day span."""
    last = dates.month_last_day(year, month)
    if suffix == "初":
        return Resolution(date(year, month, 1), qualifier="前后")
    if suffix == "中":
        return Resolution(date(year, month, 15), qualifier="前后")
    if suffix in ("底", "末"):
        return Resolution(last, qualifier="前后")
    first_day = {"上旬": 1, "中旬": 11, "下旬": 21}[suffix]
    last_day = {"上旬": date(year, month, 10), "中旬": date(year, month, 20), "下旬": last}[suffix]
    return Resolution(date(year, month, first_day), last_day, "month")


def day_number(raw: str) -> int | None:
    value = parse_number(raw)
    return value if value is not None and 1 <= value <= 31 else None


def month_number(raw: str) -> int | None:
    value = parse_number(raw)
    return value if value is not None and 1 <= value <= 12 else None


def pick_day(scan: Scan, start: int, end: int, candidates: list[date], grace: int = 0) -> Resolution | None:
    found = scan.occurrence(candidates, start, end, grace)
    return Resolution(found) if found else None
