"""The words and patterns ``fact_parts`` reads a fact with: who (QQ numbers, nicknames beside
them), when (dates, weekdays, frequencies, clock times, parts of the day, relative days and
months), how much (numbers, units, measure words, Chinese numerals), whether (negation, its
antonym forms, prohibition), plan vs done, and the wording's filler words and everyday synonyms.
Language, never facts about anyone: no person, place or product is named here. Pure data and
compiled patterns.
"""

from __future__ import annotations

import re

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"

# --- who ---------------------------------------------------------------------------------------
#: The marks a nickname starts with (小明, 老王, 阿杰).
NICKNAME_MARKS = "小老阿"
#: ``QQ号10001（昵称小明）`` (the historian's writing), ``QQ 10001``, ``qq:10001``, and a bare
#: number of QQ's length in brackets, as people write it after a name (``咸鱼（52011）``).
_QQ = re.compile(r"(?i)qq\s*(?:号码|号|number|#|:|：)?\s*(\d{5,12})|(?<=[（(])\s*(\d{5,12})(?=\s*[）)])")
#: ``阿杰（QQ号31415）``, ``Mia (QQ 13579)``: the name written just before a bracketed QQ number
#: (a CJK run of at most 4 characters after a non-CJK character, or one Latin word).
_NICKNAME_BEFORE = re.compile(
    r"(?:(?<![\u3400-\u9fff\d])([\u3400-\u9fff]{1,4})|\b([A-Za-z][A-Za-z'-]{0,20}))\s*[（(]\s*$"
)
_NICKNAME_AFTER = re.compile(r"^\s*[（(]\s*(?:昵称|nickname|name)\s*[:：]?\s*([^）)]{1,32})[）)]")

#: Words before a bracketed QQ number that are no name.
_NOT_A_NAME = frozenset({"的", "和", "与", "跟", "给", "把", "被", "向", "从", "and", "with", "to", "from", "by", "of"})

# --- when --------------------------------------------------------------------------------------
_MONTHS_EN = {
    name: number
    for number, names in enumerate(
        (
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ),
        start=1,
    )
    for name in names
}
_MONTH_EN = "|".join(sorted(_MONTHS_EN, key=len, reverse=True))
_DATE_PATTERNS = (
    # a year of two digits only before 年 (26年1月8号 is 2026; 11-29 is no year)
    re.compile(r"(?<!\d)(\d{4}|\d{2}(?=\s*年))\s*(?:[-/.]|年)\s*(\d{1,2})\s*(?:[-/.]|月)\s*(\d{1,2})(?:\s*(?:日|号))?"),
    re.compile(r"(?<!\d)(\d{4}|\d{2}(?=\s*年))\s*年\s*(\d{1,2})\s*月(?!\s*\d)()"),
    # a month and day after a year in words (每年5月20号, 今年3月1日) is that day too
    re.compile(r"(?<!\d)(?<!\d年)()(\d{1,2})\s*月\s*(\d{1,2})\s*(?:日|号)"),
    re.compile(rf"(?i)\b({_MONTH_EN})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:\s*,?\s*(\d{{4}}))?\b"),
    re.compile(rf"(?i)\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_EN})\.?(?:\s*,?\s*(\d{{4}}))?\b"),
)
#: Holidays on a fixed day of the solar calendar, as that day (read after numerals are digits:
#: 双十一 is 双11). Not 五一 or 十一 alone (numbers as well), nor the lunar ones (春节, 七夕, 中秋).
_HOLIDAY_DAYS = {
    "元旦": (1, 1),
    "情人节": (2, 14),
    "妇女节": (3, 8),
    "植树节": (3, 12),
    "愚人节": (4, 1),
    "劳动节": (5, 1),
    "青年节": (5, 4),
    "儿童节": (6, 1),
    "建党节": (7, 1),
    "建军节": (8, 1),
    "教师节": (9, 10),
    "国庆节": (10, 1),
    "国庆": (10, 1),
    "光棍节": (11, 11),
    "双11": (11, 11),
    "双12": (12, 12),
    "平安夜": (12, 24),
    "圣诞节": (12, 25),
    "圣诞": (12, 25),
}
#: A holiday before 前 / 后 is a point of reference (国庆后10月8号), not the day of the fact.
_HOLIDAY = re.compile(f"(?:{'|'.join(sorted(_HOLIDAY_DAYS, key=len, reverse=True))})(?!节?\\s*(?:之|以|过)?[前后])")
_WEEKDAYS = {
    **{str(number): number for number in range(1, 8)},
    **dict(zip("一二三四五六", range(1, 7), strict=True)),
    "日": 7,
    "天": 7,
}
_WEEKDAY = re.compile(r"(?:周|星期|礼拜)([1-7一二三四五六日天])")
#: More weekdays after one, with 周 said once: 周一、三、五, 周一三五, 周六日 (not the 三 of 周一三点).
_WEEKDAY_MORE = re.compile(r"(?:\s*[、,，和及与/]\s*)?([1-6一二三四五六]|(?<=[六6])日)(?![点时号日月天次个年分\d])")
#: How often: 每天 / 天天 / daily, 每周 / 逢周二 / weekly, 每个月 / monthly … (after ``fold``:
#: 星期 and 礼拜 read as 周). Before a weekday only the 每 / 逢 is taken (the weekday is read apart).
_FREQUENCIES = (
    (
        "day",
        re.compile(
            r"(?i)每个?(?:天|日|晚|早)(?:晚上|早上|夜里)?|天天|每天"
            r"|\bdaily\b|\bevery (?:day|night|morning|evening)\b|\bnightly\b"
        ),
    ),
    (
        "week",
        re.compile(
            r"(?i)(?:每个?|逢)周(?![1-7一二三四五六日天])|(?:每个?|逢)(?=周[1-7一二三四五六日天])"
            r"|\bweekly\b|\bevery week\b|\bevery (?=(?:mon|tues|wednes|thurs|fri|satur|sun)day)"
        ),
    ),
    ("month", re.compile(r"(?i)每个?月|按月|\bmonthly\b|\bevery month\b|\beach month\b")),
    ("quarter", re.compile(r"(?i)每个?季度|\bquarterly\b|\bevery quarter\b")),
    ("year", re.compile(r"(?i)每个?年|每一年|\byearly\b|\bannually\b|\bevery year\b")),
)
#: Days, weeks, months and years said relative to when the fact was written (昨天, 上个月, 明年):
#: two facts that both say one must say the same (上个月 / 这个月 differ; 昨晚 / 昨天夜里 agree).
_RELATIVE_TIMES = (
    ("day-2", "前天|前日"),
    ("day-1", "昨天|昨日|昨晚|昨夜|昨儿|\\byesterday\\b"),
    ("day0", "今天|今日|今晚|今早|今儿|\\btoday\\b"),
    ("day+1", "明天|明日|明晚|明早|明儿|\\btomorrow\\b"),
    ("day+2", "后天"),
    ("week-1", "上个?(?:周|星期|礼拜)|\\blast week(?:end)?\\b"),
    ("week0", "(?:这个?|本)(?:周|星期|礼拜)|\\bthis week(?:end)?\\b"),
    ("week+1", "下个?(?:周|星期|礼拜)|\\bnext week(?:end)?\\b"),
    ("month-1", "上个?月|\\blast month\\b"),
    ("month0", "这个?月|本月|\\bthis month\\b"),
    ("month+1", "下个?月|\\bnext month\\b"),
    ("year-2", "前年"),
    ("year-1", "去年|\\blast year\\b"),
    ("year0", "今年|\\bthis year\\b"),
    ("year+1", "明年|\\bnext year\\b"),
)
#: All of them in one pattern, without groups (named groups make every position's try several times
#: slower, and most facts say none); which one a match is comes from ``_RELATIVE_EACH``.
_RELATIVE_TIME = re.compile("(?i)" + "|".join(f"(?:{pattern})" for _, pattern in _RELATIVE_TIMES))
_RELATIVE_EACH = tuple((name, re.compile(f"(?i){pattern}")) for name, pattern in _RELATIVE_TIMES)
_WEEKDAYS_EN = re.compile(r"(?i)\b(mon|tues|wednes|thurs|fri|satur|sun)day\b")
#: Named groups of weekdays (after ``fold``: 星期 and 礼拜 read as 周): the weekend is Saturday and
#: Sunday, the working days Monday to Friday, so that 每个周末 and 每个周一 are two facts.
_WEEKDAY_GROUPS = re.compile(r"(?i)(周末|\bweekends?\b)|(工作日|\bweekdays\b)")
_WEEKDAY_GROUP_DAYS = (frozenset({6, 7}), frozenset({1, 2, 3, 4, 5}))
_WEEKDAY_EN_NUMBER = {"mon": 1, "tues": 2, "wednes": 3, "thurs": 4, "fri": 5, "satur": 6, "sun": 7}
_PERIOD = r"(凌晨|早上|早晨|清晨|上午|中午|下午|傍晚|晚上|夜里|半夜|深夜|晚)?"
_CLOCK = re.compile(
    _PERIOD + r"\s*(\d{1,2})\s*(?:[:：](\d{2})|点钟?(?!点)\s*(半|一刻|三刻|(\d{1,2})\s*分?)?|时(?:(\d{1,2})分)?)"
)
_CLOCK_EN = re.compile(r"(?i)\b(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)")
#: Parts of the day said without a clock time (上午 / 下午, in the morning / at night): both
#: facts naming one must name the same.
_DAY_PARTS = (
    ("morning", re.compile(r"(?i)凌晨|早上|早晨|清晨|上午|一早|\bin the morning\b|\bmornings?\b")),
    ("noon", re.compile(r"(?i)中午|\bnoon\b|\bat lunch(?:time)?\b")),
    ("afternoon", re.compile(r"(?i)下午|\bafternoons?\b")),
    ("evening", re.compile(r"(?i)傍晚|晚上|夜里|半夜|深夜|晚间|[昨今明]晚|\bevenings?\b|\bat night\b|\btonight\b")),
)
_AFTERNOON = ("下午", "傍晚", "晚上", "夜里", "晚", "深夜")

# --- how much ----------------------------------------------------------------------------------
_NUMBER = re.compile(r"\d+(?:\.\d+)?%?")
#: Units said in more than one way, read as one before numbers are paired with their unit.
UNIT_SYNONYMS: tuple[tuple[str, ...], ...] = (
    ("元", "块钱", "块", "人民币"),
    ("公斤", "千克"),
    ("小时", "个钟头", "钟头", "个小时"),
    ("周", "星期", "礼拜"),
    # a count of years: 十周年 is ten years, 两周岁 two years of age (not weeks)
    ("年", "周年"),
    ("岁", "周岁"),
)
_UNIT_WORD = re.compile("|".join(sorted((word for group in UNIT_SYNONYMS for word in group), key=len, reverse=True)))
_UNIT_CANONICAL = {word: group[0] for group in UNIT_SYNONYMS for word in group}
#: Measure words and units (the language's closed class of 量词), longest first: a number is
#: read with the one right after it (after an optional 个), so 3200元 / 3200美元 and 5斤 / 5公斤
#: differ while 双十一买 / 双十一购入 do not.
MEASURE_WORDS = (
    "美元|欧元|日元|英镑|港币|韩元|万元|千元|百元|元|角|毛|公斤|千克|斤|克|吨|公里|千米|厘米|毫米|米|里|平方米|平米|亩|"
    "毫升|升|小时|分钟|秒|天|周|月|年|岁|次|遍|趟|只|条|台|本|张|件|瓶|杯|碗|箱|袋|包|盒|页|集|章|期|名|位|人|口|"
    "头|匹|辆|架|艘|颗|粒|片|份|篇|首|场|门|节|层|楼|号|度|折|倍|分|级|套|双|对|副|幅|顿|家|所|间|部|支|根|棵|朵|"
    "寸|尺|码|届|轮|局|球|站|班|项|笔|单|万|亿|千|百|GB|MB|TB|G|K|k|W|w|kg|km|cm|mm|m|h|min"
)
#: The measure words longest first, so that a word is never read as its first letter (5min, 5kg).
_MEASURE_LONGEST_FIRST = "|".join(
    word + r"(?![A-Za-z])" if word.isascii() else word  # a Latin unit is a whole word: 一个Kindle has none
    for word in sorted(MEASURE_WORDS.split("|"), key=len, reverse=True)
)
_UNIT = re.compile(rf"\s*个?({_MEASURE_LONGEST_FIRST})?")
#: Units that are a multiple of another: 15万元 = 十五万元 (150000元), 4小时 = 240分钟, 一周 = 七天.
_SCALED_UNITS = {
    "万元": (10_000, "元"),
    "千元": (1_000, "元"),
    "百元": (100, "元"),
    "万": (10_000, ""),
    # the shorthand of chat: 8k is 八千, 2w is 两万
    "K": (1_000, ""),
    "k": (1_000, ""),
    "W": (10_000, ""),
    "w": (10_000, ""),
    "亿": (100_000_000, ""),
    "千": (1_000, ""),
    "小时": (60, "分钟"),
    "周": (7, "天"),
    "h": (60, "分钟"),
    "min": (1, "分钟"),
    "分": (1, "分钟"),
    "千克": (1, "公斤"),
    "kg": (1, "公斤"),
    "斤": (0.5, "公斤"),
    "km": (1, "公里"),
    "千米": (1, "公里"),
}
#: 半 as an amount (半小时, 一个半月), not as the half hour of a clock time (3点半).
#: Counting words of speech: 俩 is two (of something), 仨 three.
_COLLOQUIAL_COUNTS = {"俩": "两个", "仨": "三个"}
_COLLOQUIAL_COUNT = re.compile("俩|仨")
#: Half of something said as 一半 is 50 % of it.
_ONE_HALF = re.compile("一半")
#: Money said as 89块9 (read as 89元9 once units are folded): 89.9元.
_MONEY_TENTHS = re.compile(r"(\d+)元(\d)(?![\d.%])(?!\s*(?:角|毛|分))")
_HALF = re.compile(rf"(?<!点)半(?=个?(?:{MEASURE_WORDS}))")
#: Measure words that count the same things: 两次 / 两趟, 两只金毛 / 两条金毛 (the others stay apart).
SAME_COUNT = {"趟": "次", "遍": "次", "条": "只", "头": "只"}


# --- whether -----------------------------------------------------------------------------------
#: Words that hold a negation character without denying the fact (masked before counting).
_NOT_NEGATION = re.compile(
    "(?<![\u3400-\u9fff])不过|不过(?=[，,])|不错|不仅|不只|不但|不少|不久|不同|不断|不管|不论|差不多|不得不|要不|不然|不如|不一定|"
    "了不起|忍不住|对不起|未来|无论|毫不犹豫|非常|并非常|没想到|不久前|无聊|非要|"
    "别人|别的|特别|区别|分别|告别|性别|级别|识别|差别|个别|类别|辨别|否则|是否|能否|可否|无比|未必|"
    # a degree (怕得不行 = very afraid) and a bound before an amount (不超过100元 = 最多100元)
    "得不行|不得了|不(?:超过|足|到|满)(?=\\d|[|])|"
    # idioms whose 不 or 无 says yes: every day without fail, loves it, never tires of it
    "雷打不动|风雨无阻|无[\u3400-\u9fff]不欢|乐此不疲|坚持不懈|锲而不舍|百看不厌|百听不厌|百吃不厌|爱不释手|念念不忘|迫不及待|"
    "滔滔不绝|赞不绝口|必不可少|不可或缺|无微不至|无所不能|无所不知|无话不谈|不亦乐乎|一丝不苟|不折不扣|层出不穷"
)
#: Words that say no in one word (戒烟 = 不再抽烟, 失眠 = 睡不着): counted as a negation, kept in the wording.
_NEGATING_WORD = re.compile("戒(?![指备严心])|停止|暂停|失眠|失败|失业|失联|失约")
_NEGATION_ZH = re.compile("没有|从没|从不|并不|并没|不|没|别|未|无|勿|莫|甭|非|否")
#: Words that say "not like" in one word (讨厌 = 不喜欢, dislike = not like): counted as a negation
#: and read as 喜欢 in the wording, so 不喜欢香菜 / 讨厌香菜 agree and 喜欢 / 讨厌 differ.
_DISLIKE_ZH = re.compile("讨厌|厌恶|反感|憎恶|嫌弃")
#: Words that forbid (禁止 = 不许 = 不准 = 不允许 = 不得): one negation, read as 禁止 in the wording, so
#: 禁止发广告 / 不许发广告 agree and 允许 / 禁止 differ.
_PROHIBITION = re.compile("严禁|禁止|不许|不准|不允许|不得|不可以")
_DISLIKE_EN = re.compile(r"(?i)\b(?:dislike[sd]?|hate[sd]?|hating|disliking)\b")
_NEGATION_EN = re.compile(r"(?i)\b(?:not|never|no|none|nobody|nothing|neither|nor|without|cannot)\b|n't\b")

# --- plan vs done ------------------------------------------------------------------------------
_NOT_PLAN = re.compile(
    "需要|重要|主要|要求|要是|只要|不要|想法|想起|想到|理想|感想|思想|回想|将军|将近|即将到来|准备好了|计划好了|"
    "想念|梦想|幻想|联想|猜想|要素|纪要|摘要|必要|要紧|想象|要好|要么|要命|考虑到|"
    # preparing for something under way (在准备考研 = 在备考), not an intention
    "在准备(?!去|要|把|搬|辞|换|买|卖)|在为[^，。,.；;]{1,12}做准备"
)
_PLAN_ZH = re.compile(
    "打算|准备|计划|预计|预定|将要|将会|将于|想要|就要|快要|想|即将|考虑|"
    # time still to go before the act (还有三年就退休)
    "还有[^，。,.；;]{1,8}就|"
    # a bare 要 before a verb, but not a habit or a need (都要, 还要, 总要, 只要) nor an amount it
    # takes (要40分钟, masked to 要|) nor something ordered (要了一杯)
    "(?<![都也还总就只需])要(?![了求是紧素点|\\d零一二三四五六七八九十几两半])"
)
_PLAN_EN = re.compile(r"(?i)\b(?:will|plan|plans|planning|planned to|going to|intend|intends|want to|wants to|shall)\b")
#: A frequency or a rule before a bare 要 makes it a habit or a duty, not an intention (每天要吃三顿, 一个月要交,
#: 群主规定新人要改名片).
_HABIT = re.compile(
    r"每|天天|经常|平时|平常|总是|通常|一般|逢|规定|群规|必须|(?<!\d)1个(?:月|周)|(?<![\d年月])1(?:年|天|周)(?!\d)"
)
_DONE_ZH = re.compile("已经|已|曾经|曾|了|过")
#: An English act told as done: the past tense (a verb in -ed or a common irregular one) or already.
_DONE_EN = re.compile(
    r"(?i)(?<![a-z])(?:[a-z]{2,}ed|already|went|bought|sold|had|did|got|made|took|saw|came|left|gave|paid|ate|met|"
    r"won|lost|flew|drove|ran|wrote|read|began|became|broke|chose|found|sent|spent|told|thought|was|were)(?![a-z])"
)

# --- wording -----------------------------------------------------------------------------------
#: Characters and words that change no fact: particles, aspect marks (compared apart), degree
#: words, the framing of the historian's sentences. Dropped from the residue's differences.
FILLER_WORDS = (
    "非常|特别|十分|超级|比较|真的|其实|一直|已经|曾经|当时|那时|这次|那次|然后|而且|并且|还有|的话(?=[，,。；;！!？?\\s|]|$)|一般|通常|"
    "一下|一起|一共|总共|大概|大约|左右|目前|现在|如今|正在|刚刚|刚才|一些|有些|有点|一点|这个|那个|"
    "打算|准备|计划|预计|预定|将要|将会|将于|想要|就要|快要|决定|即将|考虑|于是|所以|因为|由于|昵称|号码|"
    "说他|说她|说自己|表示|提到|自己"
)
FILLER_CHARS = frozenset(
    "的了地得着过也就还很挺蛮太真又再呢吗吧啊呀哦嘛么于在是将已把被给和与跟同及并而要想拟个位名只次他她它这那去来都"
)
_FILLER_WORD = re.compile(FILLER_WORDS)
#: 还 as "give back" (还给, 还钱, 还款, 还回去, 还了室友…), not the filler "still" (还在, 还了解).
_RETURN = re.compile("(?<![返偿归])还(?=给|钱|款|清|回|书|了(?!解))")

#: Everyday words said in more than one way (the language's synonyms, not facts about anyone):
#: each group is read as its first member before the wordings are aligned.
SYNONYM_GROUPS: tuple[tuple[str, ...], ...] = (
    *UNIT_SYNONYMS,
    ("喜欢", "喜爱", "热爱", "钟爱", "爱"),
    ("买", "购买", "购入", "入手", "买下"),
    ("去", "前往", "赶往", "去往", "到"),
    ("回", "返回", "回到"),
    ("参加", "参与", "出席"),
    ("觉得", "认为", "感觉"),
    ("告诉", "告知", "通知"),
    ("完成", "做完", "搞定"),
    ("看", "观看", "看了"),
    ("说", "讲"),
    ("当", "做", "担任"),
    ("花", "花费", "用"),
    ("吃", "食用"),
    ("住", "居住"),
    ("工作", "上班"),
    ("学", "学习"),
    ("养", "饲养"),
    ("开始", "着手"),
    ("生日", "诞辰"),
    ("朋友", "好友"),
    ("妻子", "老婆", "太太", "媳妇", "爱人"),
    ("丈夫", "老公"),
    ("父亲", "爸爸", "老爸"),
    ("母亲", "妈妈", "老妈"),
    ("女儿", "闺女"),
    ("读", "就读"),
    ("电话", "手机号", "手机号码", "手机"),
    ("收到", "拿到", "得到"),
    ("降", "减", "下降", "降低", "减少"),
    ("录用", "录取", "接收"),
    ("约好", "约定"),
    ("考上", "考进", "考入"),
    ("退回", "返还", "退还"),
    ("去世", "过世", "离世", "死"),
    ("卖", "卖掉", "出售", "卖出"),
    ("搬到", "搬去", "搬家到"),
)
_SYNONYM = re.compile("|".join(sorted((word for group in SYNONYM_GROUPS for word in group), key=len, reverse=True)))
_CANONICAL = {word: group[0] for group in SYNONYM_GROUPS for word in group}
_SYNONYMS_EN = {
    "purchase": "buy",
    "bought": "buy",
    "love": "like",
    "enjoy": "like",
    "adore": "like",
    "visit": "go",
    "went": "go",
    "travel": "go",
    "attend": "join",
    "join": "join",
    "think": "think",
    "believe": "think",
    "start": "begin",
    "began": "begin",
    "finish": "complete",
    "relocat": "mov",
    "job": "work",
}
_TOKEN = re.compile(rf"[{_CJK}]|[A-Za-z]+(?:'[A-Za-z]+)?")
_NUMERALS = "零〇一二两三四五六七八九十百千万亿"
_NUMERAL_RUN = re.compile(f"[{_NUMERALS}]+")
#: Words written with a numeral that count nothing (一点 only where it is no clock time: 一点半).
_NOT_A_NUMBER = re.compile(
    "二手|一起|一直|一下|一些|一共|一定|一样|一般|一边|一切|一旦|一致|统一|唯一|万一|一会|一点(?![半钟0-9零一二三四五六七八九十])"
)
_PERCENT = re.compile(rf"百分之([{_NUMERALS}\d.]+)")
#: A whole number and a half, read after the units are folded: 四个半小时, 一个半月 (个半 before the
#: unit), 两年半, 三天半 (半 after it).
_AND_A_HALF = re.compile(rf"(\d+|[{_NUMERALS}]+)(?:个半(?=小时|月|周|天|年)|(年|个月|小时|天)半)")
#: Two neighbouring numerals said together are a rough range, not a number: 三四次 is 三到四次
#: (cn2an would read 34), 七八个 七到八个.
_ROUGH_RANGE = re.compile(rf"(?<![{_NUMERALS}])([一二三四五六七八])([二三四五六七八九])(?![{_NUMERALS}])")
