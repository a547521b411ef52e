"""Words the resolver reads around a mention (``context.py``): habit markers, compound-word guards,
tense markers (future, past, weak past, bookings, changed plans) and clause breaks.

Everything here is data; ``context.Scan`` decides with it.
"""

from __future__ import annotations

import re

#: Habit markers right before a recurring expression (每周五, 每个月15号, 逢年过节, 一到周末).
HABIT_BEFORE = re.compile(r"(?:每逢|每到|一到|每|逢|隔)(?:个月的?|个|年的?|月的?|周|星期|礼拜)?$")
#: Habit markers right after a bare weekday / weekend (周末都在加班 = every weekend).
HABIT_AFTER = ("都", "一般", "通常", "总是", "经常", "常常", "往往", "基本上")
HABIT_CLAUSE_WORDS = (
    *("平时", "通常", "一般", "总是", "经常", "往往", "每次", "从来", "从不", "每年", "年年"),
    # the years, not one of them (小时候过年最开心, 这几年过年都不回家, 过年的年味越来越淡了)
    *("小时候", "从小", "这些年", "这几年", "近几年", "近些年", "越来越"),
)
#: Before the mention only: the time before now, in general (以前过年能收好多压岁钱); after it, 以前 is a
#: qualifier (春节以前把钱还我).
HABIT_BEFORE_WORDS = ("以前", "从前")

#: A festival's custom asked about or explained (为什么端午节要吃粽子, 冬至吃饺子的由来): the custom of every
#: year, no date. Both a why or a custom word and a customary act must be in the sentence: 为什么端午节还要
#: 加班 is about this year's.
CUSTOM_WORDS = re.compile(
    r"为什么|为啥|为何|干嘛要|为了什么|为了啥|是为了|习俗|风俗|传统|讲究|纪念"
    r"|规定|政策|北方[^。！？]{0,12}南方|南方[^。！？]{0,12}北方|各地|有的地方|有些地方"
)
CUSTOM_ACTS = re.compile(
    r"吃|喝|挂|插|贴|赏|守岁|拜年|发红包|放鞭炮|放烟花|放河灯|龙舟|登高|扫墓|踏青|祭|点灯|猜灯谜|戴|免费|放假|调休"
    # its name or its date asked about (中秋节为什么叫中秋, 清明节的日期为什么是固定的), not 为什么中秋节叫我加班
    r"|叫(?:做)?(?![你我他她它])|名字|名称|得名|叫法|日期"
    r"|进补|送花|送礼|穿|讨糖|敬老|月亮"
)
#: The origin or the meaning of a festival or of something of it, asked or told (端午节的由来, 万圣节的南瓜灯
#: 是怎么来的, 春节贴福字有什么说法): every year's, whatever is done.
ORIGIN_WORDS = re.compile(r"怎么来的|从哪来的|由来|来历|起源|寓意|说法|含义|象征|典故|传过来|传进来|传入|传到中国|发源")
#: A why asked of someone (你为什么冬至不回家吃饺子): about that person's day, not a custom.
CUSTOM_ASKED_OF_SOMEONE = re.compile(r"[你他她]们?(?:[那这]天)?(?:为什么|为啥|为何)|(?:为什么|为啥|为何)[你他她]")
#: Right after a festival: it is defined or named as another (七夕是中国的情人节吗, 重阳节是老人节, 春节是最重要的
#: 节日): neither is a date.
DEFINED_AS_A_FESTIVAL = re.compile(
    r"(?:节)?\s*(?:在[^，。！？,!?\n\d是]{1,4}?)?(?:(?:就是|也是|既是|是|又叫|也叫|又称|也称|俗称|被称为|被叫做|算是)"
    r"[^，。！？,!?\n\d]{0,10}?节日?"
    # ... or the day of what is done on it (七夕是牛郎织女相会的日子), not someone's own (国庆是我们结婚的日子)
    r"|(?:就是|也是|是)[^，。！？,!?\n\d我你他她咱]{0,10}?(?:日子|时节))"
    r"(?:吗|呢|吧|啊|嘛)?\s*(?:[，。！？,!?\n~～]|$)"
)
#: Two festivals compared in a sentence (圣诞节在国外比春节还热闹, 圣诞节就跟我们的春节一样): neither is a date.
COMPARED = re.compile(r"比|一样|不如|相比|比起|像|相当于|等于|好比|类似|对应")
#: Words of a general statement about a recurring date: what one most fears or likes about it (过年回家最怕
#: 亲戚问工资), what it always is (情人节的玫瑰都是溢价卖的).
GENERAL_STATEMENT = re.compile(r"最怕|最烦|最讨厌|最头疼|最喜欢|最期待|都是[^，。！？,!?]{0,8}的(?:[，。！？,!?]|$)")

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
    "天": "真空气堂生使地涯然才天数赋性意色文线台鹅桥窗际命神子亮黑晴冷热暖凉阴籁庭经国王平灾敌机职",
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
#: ... and with what was booked between the verb and 了 (今年春节抢到票了吗, 订好酒店了).
BOOKED_WITH_OBJECT = re.compile(
    r"(?:抢到|买到|订到|订好|定好|买好|约好|请好|预约到|挂到)(?:火车|高铁|机|车|门|船)?(?:票|位子?|座位?|房间?|酒店|民宿|号|假)$"
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
