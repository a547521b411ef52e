"""Word tables for the relative-time resolver: numerals, weekdays, parts of the day, festivals, and what
is never a time (traditional folding, names, set phrases, title cues).

Everything here is data. The rules that use it live in ``rules.py``; the scanning loop in ``scanner.py``;
the words that tell a clause's tense, habits and compound-word clashes in ``clause_words.py``.
"""

from __future__ import annotations

import itertools
import re

import cn2an

# --- numerals --------------------------------------------------------------------------------------------------

#: A count written with Arabic digits or Chinese numerals (``几`` is vague and deliberately absent).
NUMBER = r"(?:\d{1,4}|[零〇一二两三四五六七八九十百廿]{1,5}|俩|仨)"
#: Any character that may belong to a number; a count must not be glued to one on its left.
NUMBER_CHARS = "0123456789零〇一二两三四五六七八九十百千万廿几俩仨半多数"
#: A day of the month, 1-31.
DAY_OF_MONTH = (
    r"(?:[12]\d|3[01]|0?[1-9]|[一二]?十[一二三四五六七八九]?|三十一?|廿[一二三四五六七八九]?|[一二三四五六七八九])"
)
#: A month, 1-12.
MONTH_NUMBER = r"(?:1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])"

_SMALL_DIGITS = set("一二两三四五六七八九")


def parse_number(raw: str) -> int | None:
    """Integer value of a count; None for approximations such as ``一两`` / ``三四`` or anything unparsable."""
    if raw.isdigit():
        return int(raw)
    if raw in ("俩", "仨"):
        return 2 if raw == "俩" else 3
    if any(a in _SMALL_DIGITS and b in _SMALL_DIGITS for a, b in itertools.pairwise(raw)):
        return None  # 一两天, 三四个月: a range, not a point
    try:
        value = cn2an.cn2an(raw.replace("两", "二"), "smart")
    except (ValueError, KeyError, IndexError):
        return None
    return int(value) if float(value).is_integer() else None


# --- weekdays and parts of the day -----------------------------------------------------------------------------

WEEKDAY_CHARS = "一二三四五六日天1234567"
WEEKDAY_INDEX = (
    {char: index for index, char in enumerate("一二三四五六")}
    | {"日": 6, "天": 6}
    | {str(number): number - 1 for number in range(1, 8)}
)
WEEKDAY_NAMES = "一二三四五六日"

#: Parts of the day that may follow a day expression (今天下午, 周五晚上); longest first.
PARTS_OF_DAY = (
    "早上",
    "早晨",
    "清晨",
    "上午",
    "中午",
    "下午",
    "傍晚",
    "晚上",
    "晚间",
    "夜里",
    "夜间",
    "半夜",
    "凌晨",
)

# --- festivals -------------------------------------------------------------------------------------------------

_SOLAR_TERMS = (
    "清明",
    "立春",
    "立夏",
    "立秋",
    "立冬",
    "春分",
    "秋分",
    "夏至",
    "冬至",
    "谷雨",
    "惊蛰",
    "霜降",
    "处暑",
    "芒种",
)

#: Canonical festival -> how to compute it: ("fixed", month, day) | ("lunar", month, day) | ("eve",)
#: | ("term", name) | ("nth_weekday", month, weekday, n).
FESTIVALS: dict[str, tuple[object, ...]] = {
    "元旦": ("fixed", 1, 1),
    "情人节": ("fixed", 2, 14),
    "妇女节": ("fixed", 3, 8),
    "植树节": ("fixed", 3, 12),
    "白色情人节": ("fixed", 3, 14),
    "愚人节": ("fixed", 4, 1),
    "劳动节": ("fixed", 5, 1),
    "青年节": ("fixed", 5, 4),
    "儿童节": ("fixed", 6, 1),
    "建党节": ("fixed", 7, 1),
    "建军节": ("fixed", 8, 1),
    "教师节": ("fixed", 9, 10),
    "国庆": ("fixed", 10, 1),
    "万圣节": ("fixed", 10, 31),
    "双十一": ("fixed", 11, 11),
    "双十二": ("fixed", 12, 12),
    "618": ("fixed", 6, 18),
    "平安夜": ("fixed", 12, 24),
    "圣诞": ("fixed", 12, 25),
    "春节": ("lunar", 1, 1),
    "除夕": ("eve",),
    "元宵": ("lunar", 1, 15),
    "龙抬头": ("lunar", 2, 2),
    "端午": ("lunar", 5, 5),
    "七夕": ("lunar", 7, 7),
    "中元": ("lunar", 7, 15),
    "中秋": ("lunar", 8, 15),
    "重阳": ("lunar", 9, 9),
    "腊八": ("lunar", 12, 8),
    "小年": ("lunar", 12, 23),
    "母亲节": ("nth_weekday", 5, 6, 2),
    "父亲节": ("nth_weekday", 6, 6, 3),
    "感恩节": ("nth_weekday", 11, 3, 4),
    **{term: ("term", term) for term in _SOLAR_TERMS},
}

#: Spoken form -> (canonical festival, qualifier). Qualifiers: "" | "前" | "后".
FESTIVAL_ALIASES: dict[str, tuple[str, str]] = {
    **{name: (name, "") for name in FESTIVALS},
    **{
        name + "节": (name, "")
        for name in FESTIVALS
        if not name.endswith(("节", "夜")) and FESTIVALS[name][0] != "term"
    },
    "清明节": ("清明", ""),
    "三八节": ("妇女节", ""),
    "女神节": ("妇女节", ""),
    "五一": ("劳动节", ""),
    "六一": ("儿童节", ""),
    "六一儿童节": ("儿童节", ""),
    "五一劳动节": ("劳动节", ""),
    "十一假期": ("国庆", ""),
    "十一长假": ("国庆", ""),
    "十一黄金周": ("国庆", ""),
    "十一国庆": ("国庆", ""),
    "双11": ("双十一", ""),
    "双12": ("双十二", ""),
    "光棍节": ("双十一", ""),
    "圣诞节": ("圣诞", ""),
    "七夕情人节": ("七夕", ""),
    "鬼节": ("中元", ""),
    "大年初一": ("春节", ""),
    "年初一": ("春节", ""),
    "正月初一": ("春节", ""),
    "过年": ("春节", ""),
    "年前": ("春节", "前"),
    "年后": ("春节", "后"),
    "大年三十": ("除夕", ""),
    "年三十": ("除夕", ""),
    "大年夜": ("除夕", ""),
    "正月十五": ("元宵", ""),
    "二月二": ("龙抬头", ""),
    "五月初五": ("端午", ""),
    "七月初七": ("七夕", ""),
    "八月十五": ("中秋", ""),
    "九月初九": ("重阳", ""),
    "腊月初八": ("腊八", ""),
    "腊月二十三": ("小年", ""),
}

#: The festivals that close the year (元旦 the calendar year, 腊八 to 除夕 and 春节 the lunar one, 元宵 its last
#: day of celebration). 今年 + one of them said in the last months of the year, once this calendar year's has
#: passed, means the coming one (今年过年回老家吗 in November) unless the clause tells of the past
#: (今年春节我们是在三亚过的).
NEW_YEAR_SEASON = frozenset(("元旦", "腊八", "小年", "除夕", "春节", "元宵"))
#: The first month of "the last months of the year" in that convention (October: the last quarter).
YEAR_END_FROM_MONTH = 10

#: Days after a festival during which a plain mention still means that (just past) one.
FESTIVAL_GRACE_DAYS: dict[str, int] = {"春节": 15, "国庆": 10, "劳动节": 7}
DEFAULT_FESTIVAL_GRACE_DAYS = 7


def festival_pattern() -> str:
    """Alternation of every festival alias, longest first."""
    names = sorted(FESTIVAL_ALIASES, key=len, reverse=True)
    return "(?:" + "|".join(re.escape(name) for name in names) + ")"


#: Per canonical festival: text right after it that turns it into a thing (圣诞树), or right before it (吃元宵).
FESTIVAL_NOT_AFTER: dict[str, tuple[str, ...]] = {
    "圣诞": ("老人", "树", "帽", "袜", "歌", "装", "服", "卡", "红", "礼物"),
    "元宵": ("粉", "馅", "好吃", "汤圆", "和汤圆", "跟汤圆", "与汤圆"),
    "腊八": ("粥", "蒜", "面"),
    "劳动节": ("广场", "路", "大道", "大街", "街", "村", "中学", "小学", "公园", "桥", "商场"),
    "儿童节": ("广场", "路", "大道", "街", "村", "中学", "小学", "公园"),
    "国庆": (
        "路",
        "大道",
        "街",
        "广场",
        "村",
        "中学",
        "小学",
        "公园",
        "桥",
        "阅兵",
        "哥",
        "姐",
        "叔",
        "爷",
        "妹",
        "弟",
    ),
    "小年": ("轻", "糕", "夜"),
    "重阳": ("糕",),
    "中元": ("素",),
}
FESTIVAL_NOT_BEFORE: dict[str, str] = {
    "元宵": "吃煮买包卖碗个颗袋做搓冻",
    "小年": "大",
    "国庆": "程钟毛武孔汤",  # surnames too common as other words for every festival (程国庆, 武国庆)
    "春分": "青",
}
#: Before any festival: 叫 (我表妹叫七夕) or a surname (李中秋, 王重阳, 张国庆) makes it a name.
FESTIVAL_NAMED_BEFORE = (
    "叫张王李赵刘陈杨黄吴徐孙朱胡郭何林罗郑梁谢宋唐韩冯邓曹彭曾肖田董袁潘蒋蔡杜叶苏魏"
    "吕丁沈姚卢姜崔谭陆汪范廖贾夏韦邹孟熊秦邱尹薛闫雷侯陶贺顾郝龚邵钱覃戴莫"
)
#: Right after any festival: a product, a shop or a work (中秋礼盒, 七夕鲜花店, 春节序曲).
FESTIVAL_PRODUCTS = (
    *("礼盒", "礼包", "礼品", "套餐", "限定", "主题", "系列", "鲜花店", "花店", "店", "粿"),
    # a work named after it (春节序曲, 中秋帖)
    *("序曲", "组曲", "之歌", "进行曲", "帖", "赋", "特辑", "特刊"),
)
#: After a festival written with Arabic digits (618, 双11, 双12): a unit, a currency, a measure word or a room
#: makes the digits a number (这耳机618块, 618宿舍的人, 双11个人), as after any other number.
DIGITS_NOT_AFTER = (
    *("元", "块", "万", "千", "w", "k", "%", ".", "米", "克", "分", "次", "个", "人"),
    *("号", "室", "房", "路", "宿舍", "寝室"),
)
#: Shopping festivals: their sales run for days before the day, so a past clause shortly before it
#: (618买了啥 on 06-15) means this year's.
SALES = {"618": 20, "双十一": 20, "双十二": 12}

# --- exclusions ------------------------------------------------------------------------------------------------

#: Traditional characters of time words and tense markers, folded one to one before scanning
#: (禮拜天 = 礼拜天, 下週三 = 下周三, 聖誕節 = 圣诞节), so positions in the text do not move.
TRADITIONAL = str.maketrans(
    "禮週後聖誕節號兩個們時點這來過還國慶萬歲從說誰開學試會長東見發準備無鐘頭邊裡裏醫帶貓請離預約訂網樂買賣"
    "車動關間該陽曆農臘餃餅燈團圓倆麼嗎沒為給對幾歡終於現剛經舊計劃記別將馬屆當陰龍鵲橋親勞兒雙畢業淩晨剛",
    "礼周后圣诞节号两个们时点这来过还国庆万岁从说谁开学试会长东见发准备无钟头边里里医带猫请离预约订网乐买卖"
    "车动关间该阳历农腊饺饼灯团圆俩么吗没为给对几欢终于现刚经旧计划记别将马届当阴龙鹊桥亲劳儿双毕业凌晨刚",
)
#: Before a name that may hold a time word (网名叫周末不加班, 猫叫端午, 取名明天): the name is no date.
NAMED_BEFORE = (
    r"(?:网名|名字|昵称|外号|小名|艺名|[猫狗兔鼠鸟鹉龟鱼它]|狗子)(?:就)?叫做?|取名(?:叫|为)?|起名(?:叫|为)?|名叫|名为"
    r"|@"  # an @mention: @明天再说 你这昵称绝了
)

#: Set phrases that contain time words but never refer to a date: idioms, proverbs and set phrases, the common
#: words of the language, and nothing else. No title, brand, person or line of one poem or saying is listed
#: (a rule that names one is tuned to the sentences it was written for): an unquoted name holding a time word
#: (明日方舟, 今日头条, 周一围, 五月花) or an unquoted line (明日复明日) resolves as a date, a known cost.
#: Titles in 《》 and quoted phrases are caught as a class (``scanner._blocked_spans``).
BLOCKED_PHRASES: tuple[str, ...] = (
    "三天打鱼两天晒网",
    "三天打鱼",
    "两天晒网",
    "三天两头",
    "三天三夜",
    "一日三秋",
    "度日如年",
    "日新月异",
    "年复一年",
    "日复一日",
    "今非昔比",
    "昨是今非",
    "有朝一日",
    "百年之后",
    "百年以后",
    "千年以后",
    "千年之后",
    "万年以后",
    "千秋万代",
    "前因后果",
    "一日之计在于晨",
    "一年之计在于春",
    "士别三日",
    "来日方长",
    "花前月下",
    "逢年过节",
    "今日事今日毕",
    "明日黄花",
    "昨日黄花",
    "今朝有酒",
    "今生今世",
    "十月怀胎",
    "先天不足",
    "年年有今日",
    "岁岁有今朝",
    "明日之星",
    "周末夫妻",
    "靠后天",
    "过一天算一天",
    "周末双休",
    "今时今日",
)

#: Cues that a quoted phrase is a title, even after a speech verb: before the opening quote / after the closing one.
TITLE_CUES_BEFORE = ("看", "听", "唱", "读", "玩", "叫", "名为", "电影", "歌", "书", "剧", "节目", "游戏", "番", "曲")
TITLE_CUES_AFTER = ("这部", "这首", "这本", "这款", "这个电影", "这个游戏", "这个节目", "这个剧", "这个番", "这个歌")
