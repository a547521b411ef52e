"""Calendar arithmetic for the resolver: weeks, months, occurrences of recurring dates, festivals."""

from __future__ import annotations

import calendar
from collections.abc import Iterable
from datetime import date, timedelta
from functools import lru_cache

from lunar_python import Lunar, Solar

from .lexicon import DEFAULT_FESTIVAL_GRACE_DAYS, FESTIVAL_GRACE_DAYS, FESTIVALS


def week_monday(day: date, weeks: int = 0) -> date:
    """Monday of the week containing ``day`` (weeks start on Monday), shifted by ``weeks``."""
    return day - timedelta(days=day.weekday()) + timedelta(weeks=weeks)


def month_shift(year: int, month: int, months: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) + months
    return index // 12, index % 12 + 1


def month_last_day(year: int, month: int) -> date:
    return date(year, month, calendar.monthrange(year, month)[1])


def add_months(day: date, months: int) -> date:
    """``day`` moved by whole months, clamped to the end of a shorter month (01-31 + 1 month = 02-28)."""
    year, month = month_shift(day.year, day.month, months)
    return date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def pick_occurrence(candidates: Iterable[date], today: date, past: bool, grace_days: int = 0) -> date | None:
    """The occurrence meant by a recurring date without a year/month.

    Past tense: the latest one not after today. Otherwise: the earliest one not before today - grace_days.
    """
    ordered = sorted(set(candidates))
    if past:
        earlier = [day for day in ordered if day <= today]
        return earlier[-1] if earlier else None
    threshold = today - timedelta(days=grace_days)
    later = [day for day in ordered if day >= threshold]
    return later[0] if later else None


def day_of_month_candidates(today: date, day: int) -> list[date]:
    """The ``day``-th of the months around today (invalid ones such as 02-30 skipped)."""
    found = []
    for months in range(-2, 3):
        year, month = month_shift(today.year, today.month, months)
        candidate = safe_date(year, month, day)
        if candidate is not None:
            found.append(candidate)
    return found


def month_day_candidates(today: date, month: int, day: int) -> list[date]:
    """``month``/``day`` in the years around today (02-29 only in leap years)."""
    found = []
    for year in range(today.year - 4, today.year + 5):
        candidate = safe_date(year, month, day)
        if candidate is not None:
            found.append(candidate)
    return found


# --- festivals -------------------------------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def _lunar_to_solar(lunar_year: int, month: int, day: int) -> date | None:
    try:
        solar = Lunar.fromYmd(lunar_year, month, day).getSolar()
    except Exception:  # lunar-python raises a bare Exception for a day the month does not have
        return None
    return date(solar.getYear(), solar.getMonth(), solar.getDay())


@lru_cache(maxsize=512)
def _solar_terms(year: int) -> dict[str, date]:
    """Every solar term falling in the Gregorian ``year``, by Chinese name."""
    names = Lunar.JIE_QI
    found: dict[str, date] = {}
    for month in (2, 7, 11):
        table = Solar.fromYmd(year, month, 1).getLunar().getJieQiTable()
        for index, key in enumerate(Lunar.JIE_QI_IN_USE):
            solar = table.get(key)
            if solar is None or solar.getYear() != year:
                continue
            found[names[(index - 1) % len(names)]] = date(solar.getYear(), solar.getMonth(), solar.getDay())
    return found


def _nth_weekday(year: int, month: int, weekday: int, nth: int) -> date:
    first = date(year, month, 1)
    offset = (weekday - first.weekday()) % 7
    return first + timedelta(days=offset + 7 * (nth - 1))


def festival_dates(name: str, around_year: int) -> list[date]:
    """Occurrences of the festival ``name`` in and around the Gregorian ``around_year``."""
    spec = FESTIVALS[name]
    kind = spec[0]
    years = range(around_year - 2, around_year + 3)
    found: list[date | None]
    if kind == "fixed":
        month, day = int(spec[1]), int(spec[2])  # type: ignore[call-overload]
        found = [safe_date(year, month, day) for year in years]
    elif kind == "lunar":
        month, day = int(spec[1]), int(spec[2])  # type: ignore[call-overload]
        found = [_lunar_to_solar(year, month, day) for year in years]
    elif kind == "eve":
        found = []
        for year in years:
            new_year = _lunar_to_solar(year, 1, 1)
            found.append(new_year - timedelta(days=1) if new_year else None)
    elif kind == "term":
        found = [_solar_terms(year).get(str(spec[1])) for year in years]
    elif kind == "nth_weekday":
        month, weekday, nth = int(spec[1]), int(spec[2]), int(spec[3])  # type: ignore[call-overload]
        found = [_nth_weekday(year, month, weekday, nth) for year in years]
    else:  # pragma: no cover - the table is static
        raise ValueError(f"unknown festival kind {kind!r}")
    return sorted(day for day in found if day is not None)


def lunar_day_candidates(today: date, day: int) -> list[date]:
    """The ``day``-th of the lunar months around ``today`` (the one before, this one, the next)."""
    months = set()
    for shift in (-30, 0, 30):
        lunar = Solar.fromYmd(*(today + timedelta(days=shift)).timetuple()[:3]).getLunar()
        months.add((lunar.getYear(), lunar.getMonth()))
    found = (_lunar_to_solar(year, month, day) for year, month in months)
    return sorted(item for item in found if item is not None)


def lunar_dates(month: int, day: int, around_year: int) -> list[date]:
    found = [_lunar_to_solar(year, month, day) for year in range(around_year - 2, around_year + 3)]
    return sorted(item for item in found if item is not None)


def festival_grace(name: str) -> int:
    return FESTIVAL_GRACE_DAYS.get(name, DEFAULT_FESTIVAL_GRACE_DAYS)


def in_year(candidates: Iterable[date], year: int) -> date | None:
    """The first candidate falling in the Gregorian ``year`` (今年春节, 去年中秋)."""
    return next((day for day in sorted(candidates) if day.year == year), None)
