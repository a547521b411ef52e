"""Rules for recurring dates that need an occurrence picked: 12月3号, 3号, 三月份, 去年春节, 中秋, 腊月廿三."""

from __future__ import annotations

import re
from datetime import date

from . import dates
from .context import Scan, right_partner
from .lexicon import (
    DIGITS_NOT_AFTER,
    FESTIVAL_ALIASES,
    FESTIVAL_NAMED_BEFORE,
    FESTIVAL_NOT_AFTER,
    FESTIVAL_NOT_BEFORE,
    FESTIVAL_PRODUCTS,
    NEW_YEAR_SEASON,
    NUMBER_CHARS,
    SALES,
    YEAR_END_FROM_MONTH,
    festival_pattern,
    parse_number,
)
from .spans import Resolution, day_number, month_number, month_part, month_span, pick_day

# --- 12月3号 / 三月份 / 3号 ----------------------------------------------------------------------------------

#: Before X号: a door, seat, queue, jersey or roll number, or a size, not a day (门牌是十五号, 排到28号,
#: 12排15号, 取餐号是15号, 穿23号的).
_A_NUMBER_BEFORE = re.compile(
    r"(?:门牌|号码|座位|球衣|学号|工号|编号|序号|取号)[^，。！？\s]{0,3}$|(?:排队|排到|叫到|取到|号是|[0-9一二三四五六七八九十]排)$"
    r"|穿(?:的|着|了)?$"  # a number worn, a jersey's or a size (那个穿23号的, 穿38号的鞋)
)
_BARE_MONTH_NOT_BEFORE = "天怀与是一二两三四五六七八九十初廿"


def month_day(match: re.Match[str], scan: Scan, start: int, end: int) -> Resolution | None:
    month = month_number(match.group("m"))
    if month is None:
        return None
    day_raw, suffix = match.group("d"), match.group("suf")
    today, past = scan.today, scan.is_past(start, end)
    if day_raw:
        day = day_number(day_raw)
        return pick_day(scan, start, end, dates.month_day_candidates(today, month, day)) if day else None
    if suffix:
        years = range(today.year - 1, today.year + 2)
        options = {month_part(year, month, suffix).date: year for year in years}
        chosen = dates.pick_occurrence(options, today, past)
        return month_part(options[chosen], month, suffix) if chosen else None
    if not match.group("span").endswith("份") and (
        scan.next_in(end, _BARE_MONTH_NOT_BEFORE) or right_partner(scan.text, end, "月")
    ):
        return None  # 五月天, 十月怀胎, 一月一次, 三月三
    firsts = [date(year, month, 1) for year in range(today.year - 1, today.year + 2)]
    chosen = dates.pick_occurrence(firsts, today.replace(day=1), past)
    return month_span(chosen.year, month) if chosen else None


def day_of_month(match: re.Match[str], scan: Scan, start: int, end: int) -> Resolution | None:
    day = day_number(match.group("d"))
    if day is None or _A_NUMBER_BEFORE.search(scan.before(start, 6)):
        return None
    return pick_day(scan, start, end, dates.day_of_month_candidates(scan.today, day))


# --- 去年 / 明年三月 / 今年春节 / 去年的今天 / 年底 -------------------------------------------------------------

_FESTIVAL_RE = re.compile(festival_pattern())
_YEAR_WORDS = {"大前年": -3, "前年": -2, "去年": -1, "今年": 0, "明年": 1, "后年": 2, "大后年": 3}
_FESTIVAL = festival_pattern()


def _year_tail(match: re.Match[str], scan: Scan, year: int, start: int, end: int) -> Resolution | None:
    month_raw = match.group("m")
    if month_raw:
        month = month_number(month_raw)
        if month is None:
            return None
        day_raw, suffix = match.group("d"), match.group("msuf")
        if day_raw:
            day = day_number(day_raw)
            found = dates.safe_date(year, month, day) if day else None
            return Resolution(found) if found else None
        return month_part(year, month, suffix) if suffix else month_span(year, month)
    suffix = match.group("ysuf")
    if suffix in ("年底", "年末", "底", "末"):
        return month_span(year, 12)
    if suffix in ("年初", "初"):
        return month_span(year, 1)
    if suffix == "上半年":
        return month_span(year, 1, months=6)
    if suffix == "下半年":
        return month_span(year, 7, months=6)
    if match.group("same"):
        shifted = dates.safe_date(year, scan.today.month, scan.today.day) or date(year, scan.today.month, 28)
        return Resolution(shifted)
    festival = match.group("fest")
    if festival:
        name, qualifier = FESTIVAL_ALIASES[festival]
        candidates = dates.festival_dates(name, year)
        found = dates.in_year(candidates, year)
        if found and year == scan.today.year and _closes_the_year(name, found, scan, start, end):
            found = dates.pick_occurrence(candidates, scan.today, False)
        return Resolution(found, qualifier=qualifier) if found else None
    return None


def _closes_the_year(name: str, this_years: date, scan: Scan, start: int, end: int) -> bool:
    """今年 + a festival of the new-year season, said in the last months of the year after this calendar
    year's has passed, in a clause that does not tell of the past: the coming one (今年过年回老家吗 in
    November is 春节 of the next calendar year, which closes this lunar year; 今年元旦放几天假 in December)."""
    if name not in NEW_YEAR_SEASON or scan.today.month < YEAR_END_FROM_MONTH:
        return False
    passed = (scan.today - this_years).days > dates.festival_grace(name)
    return passed and scan.tense(start, end) == ""


def relative_year(match: re.Match[str], scan: Scan, start: int, end: int) -> Resolution | None:
    word = match.group("y")
    if word in ("前年", "后年") and scan.previous_in(start, NUMBER_CHARS + "年"):
        return None
    year = scan.today.year + _YEAR_WORDS[word]
    year_end = start + len(word)
    if match.group("ysuf") == "初" and scan.next_in(end, "中一二三高小"):
        return Resolution(date(year, 1, 1), date(year, 12, 31), "year", end=year_end)  # 今年初中毕业
    if end > year_end:
        tail = _year_tail(match, scan, year, start, end)
        if tail is not None:
            return tail
    return Resolution(date(year, 1, 1), date(year, 12, 31), "year", end=year_end)


def bare_year_part(match: re.Match[str], scan: Scan, start: int, end: int) -> Resolution | None:
    word = match.group("span")
    if word == "年初" and scan.next_in(end, "一二三四五六七八九十"):
        return None  # 年初二 is a lunar new-year day
    year = scan.today.year
    if word in ("年底", "年末"):
        return month_span(year, 12)
    if word == "年初":
        return month_span(year, 1)
    return month_span(year, 1, months=6) if word == "上半年" else month_span(year, 7, months=6)


# --- festivals and lunar dates -------------------------------------------------------------------------------

_NUMERAL_START = tuple(NUMBER_CHARS)
_TERMS_ENDING_IN_ZHI_NOT_BEFORE = "今此于少多"


def festival(match: re.Match[str], scan: Scan, start: int, end: int) -> Resolution | None:
    alias = match.group("span")
    name, qualifier = FESTIVAL_ALIASES[alias]
    if scan.previous_in(start, FESTIVAL_NOT_BEFORE.get(name, "") + FESTIVAL_NAMED_BEFORE):
        return None
    if scan.text.startswith(FESTIVAL_PRODUCTS, end):
        return None
    if scan.text.startswith(FESTIVAL_NOT_AFTER.get(name, ()), end):
        return None
    if alias[-1].isdigit() and scan.text.startswith(DIGITS_NOT_AFTER, end):
        return None  # 618块, 618宿舍: a number
    if alias.startswith(_NUMERAL_START) and scan.previous_in(start, NUMBER_CHARS + "月"):
        return None  # 十五一 / 三月二月二
    if scan.next_in(end, NUMBER_CHARS) and alias[-1] in NUMBER_CHARS:
        return None  # 二月二十号
    if alias in ("年前", "年后") and scan.previous_in(
        start, NUMBER_CHARS + "去今明前后每往近早晚当那这头来元新拜过个上下"
    ):
        return None
    if alias.endswith("至") and scan.next_in(end, _TERMS_ENDING_IN_ZHI_NOT_BEFORE):
        return None  # 隆冬至今
    if scan.said_of_every_year(start, end, _FESTIVAL_RE):
        return None  # 为什么端午节要吃粽子, 重阳节是老人节: every year's
    candidates = dates.festival_dates(name, scan.today.year)
    if name in SALES:
        ahead = [day for day in candidates if 0 < (day - scan.today).days <= SALES[name]]
        if ahead and scan.tense(start, end) == "past":
            return Resolution(ahead[0], qualifier=qualifier)  # the sale is on: 618买了啥 on 06-15
    purpose = scan.next_in(end, "给")
    found = scan.occurrence(candidates, start, end, dates.festival_grace(name), purpose=purpose, yearly=True)
    return Resolution(found, qualifier=qualifier) if found else None


_LUNAR_MONTHS = {"正": 1, "冬": 11, "腊": 12}


def lunar_date(match: re.Match[str], scan: Scan, start: int, end: int) -> Resolution | None:
    month_raw, day_raw = match.group("m"), match.group("d")
    if scan.said_of_every_year(start, end, _FESTIVAL_RE):
        return None
    month = _LUNAR_MONTHS.get(month_raw) or month_number(month_raw)
    day = parse_number(day_raw.removeprefix("初"))
    if month is None or day is None or not 1 <= day <= 30:
        return None
    if month_raw not in _LUNAR_MONTHS and not day_raw.startswith("初"):
        # 三月十五 without 号 is a Gregorian date (the lunar classics such as 八月十五 are festival aliases)
        return pick_day(scan, start, end, dates.month_day_candidates(scan.today, month, day))
    candidates = dates.lunar_dates(month, day, scan.today.year)
    found = scan.occurrence(candidates, start, end, 3, yearly=True)
    return Resolution(found) if found else None


def lunar_day(match: re.Match[str], scan: Scan, start: int, end: int) -> Resolution | None:
    """初八 alone: that day of the lunar month around today (after 春节, 正月初八), counted like a festival."""
    if scan.said_of_every_year(start, end, _FESTIVAL_RE):
        return None
    day = parse_number(match.group("d"))
    if day is None:
        return None
    found = scan.occurrence(dates.lunar_day_candidates(scan.today, day), start, end, 0, yearly=True)
    return Resolution(found) if found else None


def new_year_day(match: re.Match[str], scan: Scan, start: int, end: int) -> Resolution | None:
    if scan.said_of_every_year(start, end, _FESTIVAL_RE):
        return None
    day = parse_number(match.group("d"))
    if day is None:
        return None
    candidates = dates.lunar_dates(1, day, scan.today.year)
    found = scan.occurrence(candidates, start, end, dates.festival_grace("春节"), yearly=True)
    return Resolution(found) if found else None
