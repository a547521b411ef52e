"""Word tables for the relative-time resolver: numerals, parts of the day, festivals, guards and markers.

Everything here is data. The rules that use it live in ``rules.py``; the scanning loop in ``scanner.py``.
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
    "618": (
        "宿舍",
        "寝室",
        "元",
        "块",
        "号",
        "室",
        "米",
        "路",
        "房",
        "次",
        "个",
        "人",
        "分",
        "克",
        "%",
        ".",
        "万",
        "千",
        "w",
        "k",
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
#: Right after any festival: a product or a shop (中秋礼盒, 七夕鲜花店).
FESTIVAL_PRODUCTS = ("礼盒", "礼包", "礼品", "套餐", "限定", "主题", "系列", "鲜花店", "花店", "店", "粿")
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

#: Titles, brands, names and set phrases that contain time words but never refer to a date.
BLOCKED_PHRASES: tuple[str, ...] = (
    # titles, brands and names
    "明日方舟",
    "明日之后",
    "今日头条",
    "今日说法",
    "明日香",
    "昨日重现",
    "明天过后",
    "昨日青空",
    "清明上河图",
    "清明时节",
    "春节联欢晚会",
    "夏至未至",
    "七月与安生",
    "四月是你的谎言",
    "五月天",
    "周一围",
    "周六福",
    "周大福",
    "周日报",
    # idioms and proverbs
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
    "明日复明日",
    "明日黄花",
    "昨日黄花",
    "昨日之日不可留",
    "今朝有酒",
    "今生今世",
    "十月怀胎",
    "先天不足",
    "明天会更好",
    "全明星周末",
    "年年有今日",
    "岁岁有今朝",
    "明日之星",
    "周末夫妻",
    "明天和意外",
    "明日何其多",
    "昨日种种",
    "譬如昨日死",
    "汤圆和元宵",
    "买的元宵",
    "煮的元宵",
    "吃的元宵",
    "包的元宵",
    "做的元宵",
    "靠后天",
    "过一天算一天",
    "昨夜星辰",
    "昨夜西风",
    "周末双休",
    "五月花",
    "十月稻田",
    "三月街",
    "昨夜星辰昨夜风",
    "今时今日",
)

#: Cues that a quoted phrase is a title, even after a speech verb: before the opening quote / after the closing one.
TITLE_CUES_BEFORE = ("看", "听", "唱", "读", "玩", "叫", "名为", "电影", "歌", "书", "剧", "节目", "游戏", "番", "曲")
TITLE_CUES_AFTER = ("这部", "这首", "这本", "这款", "这个电影", "这个游戏", "这个节目", "这个剧", "这个番", "这个歌")

#: Habit markers right before a recurring expression (每周五, 每个月15号, 逢年过节, 一到周末).
HABIT_BEFORE = re.compile(r"(?:每逢|每到|一到|每|逢|隔)(?:个月的?|个|年的?|月的?|周|星期|礼拜)?$")
#: Habit markers right after a bare weekday / weekend (周末都在加班 = every weekend).
HABIT_AFTER = ("都", "一般", "通常", "总是", "经常", "常常", "往往", "基本上")
HABIT_CLAUSE_WORDS = ("平时", "通常", "一般", "总是", "经常", "往往", "每次", "从来", "从不", "每年", "年年")

# --- compound-word guards -------------------------------------------------------------------------------------
# A time word such as 前天 can be the tail of one word and the head of another (以前|天真, 目前|天气,
# 然后|天亮, 如今|天下, 除去|年费, 日本|月饼). Each entry: first character -> characters that form a word with it
# on its left; "strong" ones block outright, the others only when the right side also forms a word.

LEFT_PARTNERS: dict[str, str] = {
    "今": "如至古现而迄当",
    "前": "以之从目眼提面此生空当先日事跟门向往战",
    "后": "然以之最先随此背落今前往退稍而午日其过",
    "方": "地对各双一药处配西东南北官远比秘平立多前后上下大这那哪偏良单妙",
    "明": "光聪文透鲜英发高分简表证声标阐指失清神昌开精黎照澄严贤圣说小阿",
    "去": "除失过死上回下进出离逝抹减扣删拿划",
    "本": "日基根成资书课版样剧原账笔脚范标文副正底老血赌读一",
    "上": "马晚早网身线楼路手地天桌墙以之向往北南东西底头台车船山床私乡部阁殿",
    "下": "马晚早网身线楼路手地天桌墙以之向往北南东西底头台车船山床私乡部阁殿剩留乡陛",
}
STRONG_LEFT_PARTNERS: dict[str, str] = {
    "前": "以之目眼此生空先日事面跟",
    "后": "然最以之今随此背落先稍而往退其",
    "方": LEFT_PARTNERS["方"],
    "本": LEFT_PARTNERS["本"],
    "上": LEFT_PARTNERS["上"],
    "下": LEFT_PARTNERS["下"],
}
#: Characters that make a word with the last character of the time word on its right.
RIGHT_PARTNERS: dict[str, str] = {
    "天": "真空气堂生使地涯然才天数赋性意色文线津猫台鹅桥安窗际命神子亮黑晴冷热暖凉阴籁庭经国王平灾敌机职",
    "年": "费代龄级度会终货薪纪轻限头华份夜糕画鉴",
    "早": "已就不没都也还仍无依尚犹先期点些餐饭晨安",
    "月": "饼光亮色球季嫂宫老牙食桂下票",
    "周": "边围目刊岁旋济",
    "儿": "童女子",
}

# --- tense markers ---------------------------------------------------------------------------------------------

FUTURE_MARKERS = (
    "要",
    "将",
    "打算",
    "准备",
    "计划",
    "记得",
    "别忘",
    "约",
    "快到",
    "即将",
    "马上",
    "等到",
    "到时候",
    "届时",
    "会",
)
#: Characters before 要/会 that make a noun or another word (重要, 开会) rather than a future marker.
NOT_FUTURE_BEFORE = {
    "记得": "不还没谁",
    "要": "重需主只必摘纲紧要说好纪",  # 说要 / 说好要: an intention reported, not the clause's future
    "会": "开聚例晚宴舞年大班周早机社学协工体都议展博茶庙集酒约误理领的个场完那这一灯动峰盛乐唱览易讨布面聘话欢长谈",
}
PAST_MARKERS = (
    "已经",
    "刚",
    "当时",
    "曾",
    "之前就",
    # asked after the day: 春节过得好吗, 五一过得咋样
    "过得好",
    "过得怎么样",
    "过得咋样",
    "过得如何",
    "过得开心",
    "过得还行",
    "过完了",
)
#: 那天 / 那次 / 来着 point back in time in a statement, but forward in a question or an invitation
#: (冬至那天回家吃饺子不 / 你生日那天一起吃饭吧 / 周二还是周三去复诊来着？).
WEAK_PAST_MARKERS = (
    "那天",
    "那次",
    "那回",
    "那时",
    "那会",
    "那顿",
    "那场",
    "那趟",
    "那晚",
    "那夜",
    "那几天",
    "那阵子",
    "那段时间",
    "来着",
    "说好",
)
#: Of those, the ones that only name a day or recall: a festival or a day of month is then the nearer
#: occurrence (腊八那天去领粥 said two days before); 那会儿 / 那次 stay past in a statement.
NEAREST_MARKERS = ("那天", "来着", "说好")
#: A plan changed (周五的面试改到下周二了): the clause's 了 is the change's, not the date's.
RESCHEDULED = re.compile(r"改(?:到|成|为|在|线上|线下|期|时间|地点|天)|推迟|延期|提前到|挪到|换到|推到")
#: 没 + a verb narrates what did not happen (那场面试我没去), unless 还 makes it "not yet".
PAST_NEGATION = re.compile(r"(?<!还)没(?:去|来|到|参加|赶上|考|吃|看|做|交)|(?<![别要])(?:错过|睡过头)")
#: Before 要: an intention someone reported (班主任在群里说了要交校服钱), not the clause's future.
REPORTED_BEFORE_YAO = ("说了", "说过", "讲了", "通知", "提醒", "要求")
#: A booking in the perfective: the thing booked is still ahead (情人节订了家日料, 29号请了假去体检).
BOOKED = (
    "订了",
    "定了",
    "约了",
    "预约了",
    "请了假",
    "请好了假",
    "报了名",
    "挂了号",
    "买了票",
    "抢了票",
    "订好了",
    "定好了",
    "抢到了",
    "买到了",
    "订到了",
)
QUESTION_ENDINGS = ("吗", "不", "么", "呢", "没", "嘛", "?", "？")
INVITATION_WORDS = ("一起", "吧", "见", "来不来", "去不去", "好不好", "行不行")
PAST_VERBS_BEFORE_DE = (
    "出",
    "丢",
    "分",
    "借",
    "订好",
    "定好",
    "买好",
    "约好",
    "包",
    "煮",
    "蒸",
    "烤",
    "写",
    "画",
    "送",
    "贴",
    "挂",
    "许",
    "去",
    "来",
    "到",
    "买",
    "看",
    "吃",
    "做",
    "办",
    "回",
    "走",
    "见",
    "拿",
    "寄",
    "发",
    "说",
    "生",
    "搬",
    "定",
    "订",
    "开",
    "修",
    "交",
    "签",
    "领",
    "收",
    "换",
    "借",
    "剪",
    "拍",
    "洗",
    "扔",
    "种",
    "考",
    "报",
    "装",
    "过",
    "认识",
    "结婚",
    "分手",
    "下单",
    "入职",
    "离职",
    "毕业",
    "入学",
)
#: 了 that is not the perfective / change-of-state particle.
NOT_PAST_LE_BEFORE = "为除算罢极对不得"
#: 过 as an experiential aspect marker: after these verbs, or before these words.
PAST_GUO_AFTER_VERB = "去来到吃看玩见买做说用住走试听学喝办打"
PAST_GUO_BEFORE = ("了", "的", "一次", "一回", "几次")

CLAUSE_BREAKS = "，,。！!？?；;\n…~～"
