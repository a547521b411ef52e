"""Rule-based resolution of colloquial Chinese relative time expressions (pure, no I/O).

The historian anchors chat observations before it asks the LLM to rewrite them as absolute facts:
``anchor_hints("我昨晚到的", now)`` gives ``["“昨晚” = 2026-11-29（周日）晚上"]``.

Conventions for the ambiguous cases:

* ``now`` is read in its own UTC offset: the local date of the message is "today".
* Weeks run Monday to Sunday. 下周一 said on Sunday 2026-11-29 is 2026-11-30, the next day; 下周 is the
  Monday-Sunday span after the current one.
* A bare weekday (周五, 星期天) is this week's, except when the clause's tense says otherwise: if that day has
  already passed and the clause is not in the past tense, it is next week's (周五去医院 said on Sunday); if it
  is still ahead and the clause is past (周五去了 said on Monday), it is last week's. Tense comes from markers
  in the clause: 要/打算/记得/约 ... (future, wins) versus 了/过/已经/刚/去的/过得好吗 ... (past); a booking
  in the perfective (订了, 请了假, 买了票) is no past. 那次/那几天/那晚/那顿 point back in a statement; 那天,
  来着 and 说好 only weakly; none of them in a question or invitation (冬至那天回家吃饺子不, 周二还是周三去
  复诊来着？). A plan changed (周五的面试改到下周二了) has no tense of its own; 没去 / 错过 narrate the past
  (but 还没去 is "not yet").
* A bare day of month (3号), a month-day without year (12月3号) and a bare month (三月份) follow the same
  idea: the upcoming occurrence (today included), or the most recent one for a past clause. When only a
  weak marker points back, a festival or a day of month is the nearer of the last and the next occurrence
  (腊八那天去领粥 two days before it is the coming one; 28号那天下大雨 on the 30th the past one).
* Traditional characters are read as simplified ones (下週三, 禮拜天, 聖誕節). A space next to a Chinese
  character ends a clause as a comma does (1号给你回复 别催了). What was done right after the date decides
  its tense whatever follows (周五借你的充电宝记得还我).
* 初八 alone is that day of the lunar month around today (after 春节, 正月初八), counted like a festival.
* Festivals (春节, 中秋, 国庆, 清明 ...) are the upcoming occurrence, with a few days' grace after the day
  (国庆玩得开心吗 on 10-08 is this year's), the most recent one for a past clause, or the one in the named
  year (去年春节, 明年中秋). Lunar festivals and solar terms come from lunar-python. 春节前 is the date of
  春节 with the qualifier 前; 年前/年后/过年 refer to 春节. A past clause means the coming festival when it is
  weeks ahead and the last one most of a year ago (五一的酒店已经涨价了 a month before 五一). Shopping
  festivals (618, 双十一) have their sale before the day: a past clause shortly before it is this year's
  (618买了啥 on 06-15); 618 after 是/号/房/尾 is a number.
* 今年 + a festival is this calendar year's, except for the festivals that close the year: 元旦 (the calendar
  year's) and 腊八, 小年, 除夕, 春节 with 过年 and its other names, and 元宵 (the lunar year's, which ends at the
  next 春节). Said in the last months of the year (from October), once this calendar year's has passed (with
  its grace days), in a clause that does not tell of the past, they mean the coming one: 今年过年回老家吗 on
  2026-11-20 is 2027-02-06, 今年腊八 in December 2026 is 2027-01-15 (the 腊八 of lunar year 2026), 今年元旦放几天
  假 on 12-25 is the next 1 January. A past clause keeps this year's (今年春节我们是在三亚过的, 今年过年胖了十斤).
  Limits: before October 今年春节 is this calendar year's whatever the clause (a plan for the coming 春节
  made in September reads as the past one); other festivals keep their calendar year (今年中秋 or 今年情人节
  in December is the past one); 明年春节 said in December is the calendar year's, so the same day as 今年春节
  then; 去年春节 stays the previous calendar year's.
* Spans (下周, 下个月, 明年, 周末, 年底) are anchored at their first day and carry their last day. 月初/月中/月底
  are single days (1st, 15th, last) marked 前后 ("around").
* Counts: 三天前, 十五天后, 过五天 (days); 两周后 (weeks); 半个月后 = 15 days; 三个月前 (calendar months, clamped
  to month end); 半年后 = six months; 两年前 = that year; 两小时后 = the date of now + 2 h.
* Not resolved: vague words (最近, 前几天, 那天, 当时, 过几天), habits (每周五, 周一到周五, 周末都), durations
  (半天, 三天三夜), parts of the day without a day word (晚上, 下午三点), absolute dates (2026年12月3日,
  2026-12-03) and the end of a range that starts with one (2028年10月2日到10月6日), titles (《后天》),
  quoted phrases (names, titles, lyrics, slogans: only quoted speech after 说/问/回 keeps its times),
  names after 网名叫/猫叫/取名 or right after 叫 (同事叫周末, but 叫小王明天来 is a time), a festival
  after a surname (李中秋) or before 礼盒/店, 周 as a surname (周一鸣), a weekday in a sentence with a
  weekday range (周一到周五七点开门 周末八点), an @mention, a door, seat, queue or jersey number
  (门牌是十五号, 12排15号, 号码选了23号), a festival in digits before a unit (618块), idioms (日新月异),
  and words that only contain time characters (以前|天真, 如今|年轻人, 日本|月饼, 这周边).
  Nor shops, firms and buildings named with a time word where the grammar wants a name (星期五餐厅的牛排,
  去周三咖啡馆, 在八月照相馆, 他跳槽去了明天科技, 今日资本领投, 三月兔甜品店, 初一文创; ``names``), while a day and a
  place side by side keep the day (周五咖啡馆见, 今天公司开会, 今天科技股大涨); a festival's custom asked about or
  explained (为什么端午节要吃粽子, 冬至吃饺子的由来, 万圣节的南瓜灯是怎么来的), a festival defined or named as another
  (七夕是中国的情人节吗, 七夕是牛郎织女相会的日子), its day given by its rule, with the rule's date words
  (母亲节是五月第二个星期天, 春节是农历正月初一, 冬至是一年里白天最短的一天, 农历正月初一是春节; but 春节是二月六号吧,
  a date only one year has, is that year's), two festivals compared or related (圣诞节在国外比春节还热闹,
  清明和寒食有什么关系), who keeps it (外国人也过春节吗, 万圣节在中国没什么人过; but 中秋在国外过 is where one spends
  it), its lore (七夕的牛郎织女故事), what else is customary (端午除了粽子还有什么吃的), what it always has
  (过年必吃的菜, 元宵节少不了猜灯谜), a saying (冬至大如年), a general statement about one (过年回家最怕亲戚问工资) or
  about the years (小时候过年最开心, 以前过年, 年味越来越淡; ``festival_talk``), a work named after one (春节序曲), a
  habit adverb anywhere in the clause (中秋月饼一般什么馅最好吃), a number worn (穿23号的).
* Limit: no title, brand, person or line of a poem is listed by name, so one that holds a time word and stands
  outside 《》 or quotes is read as a date (明日方舟新活动, 今日头条上说, 周一围演的剧, 五月花的抽纸, 明日复明日).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import date, datetime

from ..windows import windows
from .model import TimeMention
from .scanner import scan_text

__all__ = ["WINDOW_CHARS", "TimeMention", "anchor_hints", "first_date", "resolve_times"]

#: A longer text is read in windows of at most this many characters, cut at sentence ends
#: (``domain/windows.py``), so that the resolver stays linear in the text's length.
WINDOW_CHARS = 1000


def _mentions(text: str, now: datetime) -> Iterator[TimeMention]:
    for offset, window in windows(text, WINDOW_CHARS):
        for mention in scan_text(window, now):
            yield replace(mention, start=mention.start + offset, end=mention.end + offset) if offset else mention


def resolve_times(text: str, now: datetime) -> list[TimeMention]:
    """All relative time expressions in ``text``, in text order and non-overlapping."""
    return list(_mentions(text, now))


def first_date(text: str, now: datetime) -> date | None:
    """The date of the first resolved mention, or None when the text has none."""
    mention = next(_mentions(text, now), None)
    return mention.date if mention is not None else None


def anchor_hints(text: str, now: datetime) -> list[str]:
    """Prompt lines such as “昨晚” = 2026-11-29（周日）晚上, one per distinct expression."""
    lines = {f"“{mention.text}” = {mention.absolute()}": None for mention in _mentions(text, now)}
    return list(lines)
