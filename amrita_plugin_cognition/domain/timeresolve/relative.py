"""Rules anchored directly on today: 今天/明晚, 三天前/过五天, 上周五/下下周/周五/周末, 上个月/月底."""

from __future__ import annotations

import re
from datetime import date, timedelta

from . import dates
from .context import Scan, right_partner
from .lexicon import WEEKDAY_INDEX, parse_number
from .spans import Resolution, day_number, month_part, month_span, year_span

# --- 今天 / 明晚 / 大前天 / 刚才 ------------------------------------------------------------------------------

DAY_WORDS: dict[str, tuple[int, str]] = {
    "大后天": (3, ""),
    "大前天": (-3, ""),
    "今儿个": (0, ""),
    "明儿个": (1, ""),
    "昨儿个": (-1, ""),
    "前儿个": (-2, ""),
    "后儿个": (2, ""),
    "大前儿": (-3, ""),
    "大后儿": (3, ""),
    "后儿": (2, ""),
    "今儿": (0, ""),
    "明儿": (1, ""),
    "昨儿": (-1, ""),
    "前儿": (-2, ""),
    "今天": (0, ""),
    "明天": (1, ""),
    "后天": (2, ""),
    "昨天": (-1, ""),
    "前天": (-2, ""),
    "今日": (0, ""),
    # Cantonese: 听日 / 琴日 (寻日) / 前日 / 后日
    "听日": (1, ""),
    "听朝": (1, "早上"),
    "听晚": (1, "晚上"),
    "琴日": (-1, ""),
    "寻日": (-1, ""),
    "琴晚": (-1, "晚上"),
    "前日": (-2, ""),
    "后日": (2, ""),
    "大后日": (3, ""),
    "大前日": (-3, ""),
    "明日": (1, ""),
    "昨日": (-1, ""),
    "今早": (0, "早上"),
    "今晚": (0, "晚上"),
    "今夜": (0, "夜里"),
    "明早": (1, "早上"),
    "明晚": (1, "晚上"),
    "明夜": (1, "夜里"),
    "昨早": (-1, "早上"),
    "昨晚": (-1, "晚上"),
    "昨夜": (-1, "夜里"),
    "前晚": (-2, "晚上"),
    "刚才": (0, ""),
    "刚刚": (0, ""),
    "方才": (0, ""),
}
_ACQUIRED = (
    "形成",
    "培养",
    "习得",
    "养成",
    "因素",
    "环境",
    "获得",
    "性",
    "失调",
    "来凑",
    "弥补",
    "补",
    "努力",
    "的努力",
)


#: Before 前晚, a character that makes 前 "before" (睡前, 考前, 饭前): 睡前晚上 is no night before last.
_BEFORE_SOMETHING = "睡考饭餐赛婚会节年临生死战"


def day_word(match: re.Match[str], scan: Scan, start: int, end: int) -> Resolution | None:
    word = match.group("span")
    if word == "刚刚" and scan.after(end) == "好":
        return None
    if word == "前晚" and (scan.next_in(end, "上饭餐会宴") or scan.previous_in(start, _BEFORE_SOMETHING)):
        return None  # 睡前晚上, 前晚饭: not the night before last
    if word == "后天" and ("先天" in scan.text or scan.text.startswith(_ACQUIRED, end)):
        return None  # 先天/后天: innate vs acquired
    offset, part = DAY_WORDS[word]
    return Resolution(scan.today + timedelta(days=offset), part_of_day=part)


# --- 三天前 / 十五天后 / 半个月后 / 过五天 / 两小时后 ---------------------------------------------------------

UNIT = r"(?P<unit>个小时|小时|个钟头|钟头|分钟|天|日|个星期|星期|个礼拜|礼拜|周|个月|月|年)"
_NOT_AFTER_BACKWARD = "面边头方排台门线夕途景辈任妻夫"
_NOT_AFTER_FORWARD = "悔面来果代者方边头续期台门退辈院排座背勤"


def _offset_amount(match: re.Match[str]) -> tuple[str, float] | None:
    """(unit kind, amount) for N天 / 半个月 / 一个半月 / 两个小时; None for vague or odd counts."""
    raw, unit, half = match.group("n"), match.group("unit"), match.group("half")
    unit = unit.removeprefix("个")
    if raw in ("半", "半拉"):
        if half or unit in ("天", "日", "周", "星期", "礼拜"):
            return None  # 半天 is a duration, not a date
        amount = 0.5
    else:
        value = parse_number(raw)
        if value is None or value <= 0:
            return None
        amount = value + (0.5 if half else 0.0)
    if unit == "月" and not (half or match.group("unit").startswith("个") or raw in ("半", "半拉", "俩", "仨")):
        return None  # 三月后: a month name, not a count (俩 is 两个: 俩月后, 半拉 半个: 半拉月后)
    kinds = {"小时": "hours", "钟头": "hours", "分钟": "minutes", "天": "days", "日": "days", "周": "weeks"}
    kinds |= {"星期": "weeks", "礼拜": "weeks", "月": "months", "年": "years"}
    return kinds[unit], amount


def _apply_offset(scan: Scan, kind: str, amount: float, sign: int) -> Resolution | None:
    now = scan.now
    if kind in ("hours", "minutes"):
        delta = timedelta(hours=amount) if kind == "hours" else timedelta(minutes=amount)
        return Resolution((now + sign * delta).date())
    if kind in ("days", "weeks"):
        days = amount * (7 if kind == "weeks" else 1)
        if days != int(days) or days > 20000:
            return None
        return Resolution(scan.today + timedelta(days=sign * int(days)))
    if kind == "months":
        whole = int(amount)
        moved = dates.add_months(scan.today, sign * whole)
        return Resolution(moved + timedelta(days=sign * 15 if amount != whole else 0))
    if amount == 0.5:  # 半年: six months
        return Resolution(dates.add_months(scan.today, sign * 6))
    if amount != int(amount) or amount > 200:
        return None
    return year_span(scan.today.year + sign * int(amount))


#: Words that start with a character glued to 前/后 above and follow an offset as words of their own.
_WORDS_AFTER_AN_OFFSET = ("期末", "期中", "面试", "面谈", "面签", "面包", "面条")
_SAME_DAY = ("的今天", "的这个时候", "的这时候", "的这一天", "的此时")


def offset(match: re.Match[str], scan: Scan, start: int, end: int) -> Resolution | None:
    direction = match.group("dir")
    backward = direction.endswith("前")
    glued = scan.next_in(end, _NOT_AFTER_BACKWARD if backward else _NOT_AFTER_FORWARD)
    if len(direction) == 1 and glued and not scan.text.startswith(_WORDS_AFTER_AN_OFFSET, end):
        return None  # 三天后悔 / 两天前面 (but 三周后期末考, 两周前面试的那家公司)
    amount = _offset_amount(match)
    if amount is None:
        return None
    kind, value = amount
    sign = -1 if backward else 1
    same_day = next((tail for tail in _SAME_DAY if scan.text.startswith(tail, end)), None)
    if kind == "years" and value == int(value) and same_day:  # 十年前的今天: the same day, that year
        year = scan.today.year + sign * int(value)
        shifted = dates.safe_date(year, scan.today.month, scan.today.day) or date(year, scan.today.month, 28)
        return Resolution(shifted, end=end + len(same_day))
    return _apply_offset(scan, kind, value, sign)


def pass_offset(match: re.Match[str], scan: Scan, start: int, end: int) -> Resolution | None:
    if scan.text.startswith(("了", "多", "以上", "左右", "都", "内", "之内"), end):
        return None  # 过了三天 / 超过三天 are durations
    amount = _offset_amount(match)
    return None if amount is None else _apply_offset(scan, amount[0], amount[1], 1)


# --- 上周五 / 下下周 / 这周末 / 周五 / 周末 -------------------------------------------------------------------

_RELATIVE = {"上上": -2, "下下": 2, "上": -1, "下": 1, "这": 0, "本": 0}
#: After 下周一 these characters make 一 part of another word (下周一定 = 下周 + 一定).
_ONE_WORDS = "定直起样般次共下切点些块趟周天整个会"
_AFTER_UP_DOWN = tuple("了雨雪班课来去楼车山线")
_COUNT_WORDS = "天个次趟遍"


def _weekday_is_word(scan: Scan, weekday_char: str, after_end: int) -> bool:
    """Whether the weekday character really starts another word (一定, 三天, 天气)."""
    following = scan.after(after_end)
    if not following:
        return False
    if weekday_char == "一" and following in _ONE_WORDS:
        return True
    if weekday_char == "天" and right_partner(scan.text, after_end, "天"):
        # 星期天下了一天雨: Sunday, then 下了 (not 天下); 天下, 天上 otherwise
        return not (following in "上下" and scan.after(after_end + 1) in _AFTER_UP_DOWN)
    return following in _COUNT_WORDS or following.isdigit()


def explicit_week(match: re.Match[str], scan: Scan, start: int, end: int) -> Resolution | None:
    monday = dates.week_monday(scan.today, _RELATIVE[match.group("rel")])
    weekday = match.group("wd")
    if weekday == "末":
        return Resolution(monday + timedelta(days=5), monday + timedelta(days=6), "week")
    if weekday and not _weekday_is_word(scan, weekday, end):
        return Resolution(monday + timedelta(days=WEEKDAY_INDEX[weekday]))
    week_end = match.end("w")
    if right_partner(scan.text, week_end, "周") or (match.group("w") == "周" and "个" in (match.group("ge") or "")):
        return None  # 上周目, 这周边, 这个周报 (a week is 这周 / 这个星期, never 这个周)
    return Resolution(monday, monday + timedelta(days=6), "week", end=week_end)


#: Characters of given names that never follow a weekday in speech (周一鸣, 周五杰 are people).
_GIVEN_NAME_CHARS = "鸣杰伟军涛磊峰斌辉鹏萍芳娟敏婷琳霞燕勇毅浩凯琦瑶鑫俊楠"
_WEEK_RANGE = re.compile(r"^\s*(?:到|至|-|~|～)\s*(?:周|星期|礼拜)?[一二三四五六日天]")
_WEEK_RANGE_BEFORE = re.compile(r"(?:周|星期|礼拜)[一二三四五六日天]\s*(?:到|至|-|~|～)\s*$")


def bare_weekday(match: re.Match[str], scan: Scan, start: int, end: int) -> Resolution | None:
    weekday = match.group("wd")
    if _weekday_is_word(scan, weekday, end):
        return None
    if _WEEK_RANGE.match(scan.text[end:]) or _WEEK_RANGE_BEFORE.search(scan.before(start, 8)):
        return None  # 周一到周五: a recurring range
    if scan.next_in(end, "日") or (scan.next_in(end, "一二三四五六") and scan.next_in(end + 1, "一二三四五六日")):
        return None  # 周六日 / 周一三五: weekdays in general (but 周五六点 is Friday at six)
    if scan.text.startswith("周", start) and scan.next_in(end, _GIVEN_NAME_CHARS):
        return None  # 周一鸣: the surname 周 and a given name
    day = dates.week_monday(scan.today) + timedelta(days=WEEKDAY_INDEX[weekday])
    if scan.is_past(start, end):
        return Resolution(day if day <= scan.today else day - timedelta(days=7))
    return Resolution(day if day >= scan.today else day + timedelta(days=7))


def bare_weekend(match: re.Match[str], scan: Scan, start: int, end: int) -> Resolution | None:
    saturday = dates.week_monday(scan.today) + timedelta(days=5)
    if saturday > scan.today and scan.is_past(start, end):
        saturday -= timedelta(days=7)
    return Resolution(saturday, saturday + timedelta(days=1), "week")


# --- 上个月 / 下月15号 / 月底 ------------------------------------------------------------------------------------


def relative_month(match: re.Match[str], scan: Scan, start: int, end: int) -> Resolution | None:
    year, month = dates.month_shift(scan.today.year, scan.today.month, _RELATIVE[match.group("rel")])
    day_raw, suffix = match.group("d"), match.group("suf")
    if day_raw:
        day = day_number(day_raw)
        found = dates.safe_date(year, month, day) if day else None
        return Resolution(found) if found else None
    if suffix == "初" and scan.next_in(end, "一二三四五六七八九十"):
        day = parse_number(scan.text[end])  # 下月初八: the 8th of next month
        found = dates.safe_date(year, month, day) if day else None
        return Resolution(found, end=end + 1) if found else None
    if suffix:
        return month_part(year, month, suffix)
    if right_partner(scan.text, end, "月"):
        return None  # 这月饼
    return month_span(year, month)


_MONTH_SUFFIX_NOT_AFTER = "岁日年明风蜜满闰赏望正腊冬寒新残弯圆秋春数整按包逐历水花镜梦"


def bare_month_part(match: re.Match[str], scan: Scan, start: int, end: int) -> Resolution | None:
    if scan.previous_in(start, _MONTH_SUFFIX_NOT_AFTER):
        return None
    return month_part(scan.today.year, scan.today.month, match.group("suf"))
