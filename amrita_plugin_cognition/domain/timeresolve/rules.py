"""The rule table: each rule is a regular expression plus a function that anchors a match to dates.

A resolver returns None to refuse a match (a guard fired); the scanner then lets other candidates compete.
Conventions (see the package docstring for the reasoning):

* weeks start on Monday; 下周一 said on a Sunday is the next day;
* a bare weekday / day of month / month / festival picks an occurrence by the clause's tense: the most recent
  one for a past clause, otherwise the upcoming one (festivals keep a few days' grace: 国庆玩得开心吗 said on
  10-08 still means this year's);
* spans (下周, 下个月, 明年) are anchored at their first day and carry their last day.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import anchored, relative
from .lexicon import DAY_OF_MONTH, MONTH_NUMBER, NUMBER, NUMBER_CHARS, WEEKDAY_CHARS, festival_pattern
from .spans import Resolver


@dataclass(frozen=True, slots=True)
class Rule:
    name: str
    pattern: re.Pattern[str]
    resolve: Resolver
    recurring: bool = False  # habit markers (每, 逢, 一到 ...) cancel it
    takes_qualifier: bool = True  # may absorb a following 前/后/之前/以后


def _rule(name: str, body: str, resolve: Resolver, *, recurring: bool = False, takes_qualifier: bool = True) -> Rule:
    # The look-ahead wrapper yields one match per start position, so overlapping candidates all surface.
    return Rule(name, re.compile(f"(?=(?P<span>{body}))"), resolve, recurring, takes_qualifier)


# --- the table -----------------------------------------------------------------------------------------------

_NOT_GLUED = f"(?<![{NUMBER_CHARS}月年号第每])"
_DAY = rf"(?P<d>{DAY_OF_MONTH})[号日]"
_MONTH_SUFFIX = r"(?P<suf>初|中旬|上旬|下旬|中|底|末)"

RULES: tuple[Rule, ...] = (
    _rule("day_word", "|".join(sorted(relative.DAY_WORDS, key=len, reverse=True)), relative.day_word),
    _rule(
        "offset",
        rf"{_NOT_GLUED}(?P<n>{NUMBER}|半拉|半)(?P<half>个半)?{relative.UNIT}(?P<dir>以前|之前|前|以后|之后|过后|后)",
        relative.offset,
        takes_qualifier=False,
    ),
    _rule(
        "pass_offset",
        rf"(?<![经不超难度通错跳走路越穿放])(?:再过|过)(?P<n>{NUMBER}|半)(?P<half>个半)?{relative.UNIT}",
        relative.pass_offset,
        takes_qualifier=False,
    ),
    _rule(
        "explicit_week",
        rf"(?P<rel>上上|下下|上|下|这|本)(?P<ge>一个|个|一)?(?P<w>周|星期|礼拜)(?P<wd>[{WEEKDAY_CHARS}]|末)?",
        relative.explicit_week,
    ),
    _rule(
        "bare_weekday",
        rf"(?<![{NUMBER_CHARS}个上下这本每逢隔])(?:周|星期|礼拜)(?P<wd>[{WEEKDAY_CHARS}])",
        relative.bare_weekday,
        recurring=True,
    ),
    _rule("bare_weekend", rf"(?<![{NUMBER_CHARS}个上下这本每逢隔])周末", relative.bare_weekend, recurring=True),
    _rule(
        "relative_month",
        rf"(?P<rel>上上|下下|上|下|这|本)(?:一个|个)?月(?:{_DAY}|{_MONTH_SUFFIX})?",
        relative.relative_month,
    ),
    _rule(  # 下旬开始 (this month's): not 月下旬 / 三月下旬, which the month rules take
        "bare_ten_days",
        rf"(?<![{NUMBER_CHARS}月个上下这本每初])(?P<suf>上旬|中旬|下旬)",
        relative.bare_month_part,
        recurring=True,
    ),
    _rule(
        "bare_month_part",
        rf"(?<![{NUMBER_CHARS}个上下这本每])月(?P<suf>初|中旬|上旬|下旬|中|底|末)",
        relative.bare_month_part,
        recurring=True,
    ),
    _rule(
        "month_day",
        rf"(?<![{NUMBER_CHARS}\d年/\-.个第每上下这本正腊冬闰])(?P<m>{MONTH_NUMBER})(?:月份|月)(?:{_DAY}|{_MONTH_SUFFIX})?",
        anchored.month_day,
        recurring=True,
    ),
    _rule(
        "day_of_month",
        rf"(?<![{NUMBER_CHARS}\d月年/\-.第编序型个号])(?P<d>{DAY_OF_MONTH})号"
        r"(?![线楼位床店电球门机车馆厅房桌码口院仓柜窗台道站厂坑字文舱箱包屏服键人种令色选首风公称召\d])"
        r"(?!会议室|会场|教室|包间|包厢|诊室)",  # 座位号12号, 8号会议室: numbers (more in anchored.day_of_month)
        anchored.day_of_month,
        recurring=True,
    ),
    _rule(
        "relative_year",
        r"(?P<y>大前年|大后年|前年|去年|今年|明年|后年)"
        rf"(?:的?(?:(?P<m>{MONTH_NUMBER})(?:月份|月)(?:(?P<d>{DAY_OF_MONTH})[号日]|(?P<msuf>初|中旬|上旬|下旬|中|底|末))?"
        r"|(?P<ysuf>年底|年末|年初|上半年|下半年|底|末|初)"
        r"|(?P<same>今天|这个时候|这时候|这会儿|此时|这一天|同一天)"
        rf"|(?P<fest>{festival_pattern()})))?",
        anchored.relative_year,
    ),
    _rule(
        "bare_year_part",
        rf"(?<![{NUMBER_CHARS}\d去今明前后每往近早晚当那这头来元新拜过大小整全])(?:年底|年末|年初|上半年|下半年)",
        anchored.bare_year_part,
        recurring=True,
    ),
    _rule("festival", festival_pattern(), anchored.festival, recurring=True),
    _rule(  # 初八 alone (初一 to 初三 are also junior-high grades: not before 学生, 班, 年级 …)
        "lunar_day",
        r"(?<![\w月年])初(?P<d>[四五六七八九十]|[一二三](?![学生班年级上下课数英物化语的那时期]))"
        r"(?![一二三四五六七八九十中稿心衷恋步次期级见识赛选版始])",
        anchored.lunar_day,
        recurring=True,
    ),
    _rule(
        "lunar_date",
        rf"(?<![{NUMBER_CHARS}年闰])(?P<m>正|腊|冬|十一|十二|[一二三四五六七八九十])月"
        r"(?P<d>初[一二三四五六七八九十]|二十[一二三四五六七八九]?|十[一二三四五六七八九]?|廿[一二三四五六七八九]?|三十)"
        r"(?![一二三四五六七八九十号日\d])",
        anchored.lunar_date,
        recurring=True,
    ),
    _rule("new_year_day", r"大?年初(?P<d>[二三四五六七八九十])", anchored.new_year_day, recurring=True),
)
