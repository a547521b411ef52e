"""What a sentence says of a festival every year, never of one occurrence of it.

* The day it falls on, said by its rule (``definition_spans``): 母亲节是五月第二个星期天, 春节是农历正月初一,
  冬至是一年里白天最短的一天, 冬至是二十四节气之一, 劳动节是五月一号 (a fixed festival and its own date), and
  the other way round (农历正月初一是春节, 五月第二个星期天是母亲节). The festival and the date are both blocked.
  A date that only one year has is no rule: 春节是二月六号吧, 母亲节是五月九号, 中秋节是周三 keep their date.
* How it relates to another (``relation``): 清明和寒食有什么关系, 元宵节和上元节是一回事吗.
* Who keeps it (``observed``): a people or a country (外国人也过春节吗, 韩国也过中秋节, 国外过不过中秋) or a
  count of people (万圣节在中国没什么人过, 很多人过年不回家); a place after 在, 去, 到 is where someone spends
  it (中秋在国外过, 情人节在国内过还是出去玩: a date).
* Its lore (``lore``): 七夕的牛郎织女故事, 中秋的传说, 端午节的传统食物 (not 中秋的诗会, an event).
* What else is customary (``customary_list``): 端午除了粽子还有什么吃的 (not 端午除了放假还有什么福利).
* What it always has (``always_has``): 过年必吃的菜, 《春节序曲》是过年必放的, 元宵节少不了猜灯谜 (not 过年我必须
  回家, nor 这个春节少不了加班: one occurrence named).

Every check reads a bounded window around the mention (the caller's sentence or clause); the definition
scan is one pass of one regular expression over the text.
"""

from __future__ import annotations

import re

from .lexicon import DAY_OF_MONTH, FESTIVAL_ALIASES, FESTIVALS, MONTH_NUMBER, festival_pattern, parse_number

_FESTIVAL = festival_pattern()
_STOP = r"[^，。！？,!?；;\n]"
_WEEKDAY = r"(?:星期|周|礼拜)[一二三四五六日天]"
_CALENDAR = r"(?:农历|阴历|旧历|夏历|公历|阳历|新历)"
_LUNAR_MONTH = rf"(?:正|腊|冬|{MONTH_NUMBER})月"
#: A day of a lunar month as it is said (初五, 十五, 廿三, 三十), not a Gregorian one (15号, 15日).
_LUNAR_DAY = (
    r"(?:初[一二三四五六七八九十]|二十[一二三四五六七八九]?|十[一二三四五六七八九]?|廿[一二三四五六七八九]?|三十)"
    r"(?![号日\d])"
)
#: A rule that gives a festival's day in every year.
_RULE = (
    rf"{_CALENDAR}{_STOP}{{0,12}}"
    rf"|{MONTH_NUMBER}月(?:份)?的?(?:第[一二三四五1-5]个?|最后一个?){_WEEKDAY}"
    rf"|一年(?:里|中|当中|之中|里面|之内){_STOP}{{0,14}}"
    r"|(?:二十四)?节气(?:之一|里|中|的)"
    rf"|{_LUNAR_MONTH}{_LUNAR_DAY}"
)
_MONTH_DAY = rf"(?P<m>{MONTH_NUMBER})月(?P<d>{DAY_OF_MONTH})[日号]"
_COPULA = (
    r"(?:节|日)?\s*(?:在?(?:北方|南方|北方人|南方人|各地|有的地方|有些地方|[北南]边)[，,]?)?"  # 小年北方是腊月二十三
    r"(?:就|也|都|则|本来|本身)?(?:是|在|为|定在|落在|指)\s*(?:每年的?)?"
)
_RULE_BEFORE = (
    rf"{_CALENDAR}{_STOP}{{1,12}}?"
    rf"|{MONTH_NUMBER}月(?:份)?的?(?:第[一二三四五1-5]个?|最后一个?){_WEEKDAY}"
    rf"|一年(?:里|中|当中|之中|里面){_STOP}{{0,14}}?"
    rf"|{_LUNAR_MONTH}{_LUNAR_DAY}"
)
_DEFINITION = re.compile(
    rf"(?P<f>{_FESTIVAL}){_COPULA}(?:{_RULE}|{_MONTH_DAY})"
    rf"|(?:每年的?)?(?:{_RULE_BEFORE}|(?P<m2>{MONTH_NUMBER})月(?P<d2>{DAY_OF_MONTH})[日号])"
    rf"\s*(?:就|也|正|刚好|便)?是\s*(?P<f2>{_FESTIVAL})"
)


def _fixed_date(festival: str, month_raw: str, day_raw: str) -> bool:
    """Whether the month and day are the festival's own fixed date (圣诞节 and 12月25号)."""
    rule = FESTIVALS[FESTIVAL_ALIASES[festival][0]]
    return rule[0] == "fixed" and (parse_number(month_raw), parse_number(day_raw)) == (rule[1], rule[2])


def definition_spans(text: str) -> list[tuple[int, int]]:
    """Spans of the definitions of a festival's day in ``text`` (the festival and its rule together)."""
    spans: list[tuple[int, int]] = []
    for match in _DEFINITION.finditer(text):
        festival, month, day = match.group("f") or match.group("f2"), match.group("m"), match.group("d")
        if match.group("m2"):
            month, day = match.group("m2"), match.group("d2")
        if month and day and not _fixed_date(festival, month, day):
            continue  # 母亲节是五月九号: that year's
        spans.append(match.span())
    return spans


# --- said of every year, around one mention -------------------------------------------------------------------

#: How a festival relates to another it is joined to (or to a name the lexicon does not know: 寒食, 上元节).
_CONJUNCTION = r"(?:和|跟|与|同|及)"
_RELATION_WORDS = (
    r"(?:有什么|有啥|有何|有没有|的)?(?:关系|区别|不同|差别|差异|联系|渊源)"
    r"|(?:是|算)(?:不是)?(?:一回事|同一个节日?|一个节日?)|哪个(?:才|更|最)?(?:是|算)"
)
_RELATED_AFTER = re.compile(rf"(?:节|日)?{_CONJUNCTION}{_STOP}{{1,10}}?(?:{_RELATION_WORDS})")
_RELATED_BEFORE = re.compile(rf"{_CONJUNCTION}$")
_RELATION_RIGHT_AFTER = re.compile(rf"(?:节|日)?{_STOP}{{0,2}}?(?:{_RELATION_WORDS})")
#: A people or a country that keeps a festival, and a count of people (没什么人, 很多人).
_PEOPLE = (
    r"(?<![在去到回来住])(?:外国|国外|西方|欧美|海外|老外|日本|韩国|美国|英国|欧洲|东南亚|港台|香港|台湾|南方|北方|中国"
    r"|国内|广东|福建)人?|(?:年轻|现在的|城里|农村|老一辈的?)人"
)
_COUNTED = r"(?:很多|不少|好多|大部分|大多数|多数|少数|有些|有的|没什么|没几个|没多少|很少有?|越来越少的?)人|没人"
_OBSERVED = re.compile(rf"(?:{_PEOPLE}|{_COUNTED}){_STOP}{{0,5}}?(?:过不过|庆祝|重视|流行|兴|过(?![去来了得完]))")
#: The lore of a festival, as a noun phrase after it (七夕的牛郎织女故事, 中秋的传说); not an event (诗会).
_LORE = re.compile(
    rf"(?:节|日)?(?:的{_STOP}{{0,6}}?|有(?:什么|哪些|啥|没有))?(?:故事|传说|神话|典故|由来|来历|起源|历史|习俗|风俗|民俗"
    r"|传统|寓意|含义|意义|讲究|古诗|诗词|诗句|诗)(?![会社展赛集团])"
    # its name in another language (七夕节的英文怎么说, 中秋节用英语怎么说)
    r"|(?:节|日)?(?:的|用|在)?(?:英文|英语|日语|韩语|拼音|翻译)"
)
#: A people or a region and what it does on the festival (冬至北方吃饺子, 端午节南方赛龙舟); 冬至回北方吃饺子 is
#: where one goes.
_REGIONAL_CUSTOM = re.compile(
    rf"(?:{_PEOPLE})(?:一般|都|也|是|要|会|习惯|还)?(?:吃|喝|赛|划|挂|插|贴|放|包|祭|拜|守岁|赏|登高|扫墓|踏青|进补)"
)
#: The sky on a solar term (冬至这天白天最短, 春分昼夜等长, 夏至太阳直射北回归线): every year's.
_SKY = re.compile(rf"(?:白天|黑夜|昼|夜|日照){_STOP}{{0,4}}?(?:最长|最短|等长|一样长)|直射|昼夜")
#: The items customary on festivals: what is eaten, hung, lit or done.
_CUSTOMARY_ITEMS = (
    r"粽子|月饼|汤圆|元宵|饺子|青团|腊八粥|年糕|春卷|巧果|重阳糕|糖瓜|雄黄酒|菊花酒|艾草|春联|对联|福字|灯笼|花灯|灯谜"
    r"|鞭炮|烟花|红包|龙舟|年夜饭|团圆饭|赏月|登高|扫墓|踏青|守岁|拜年"
)
_CUSTOMARY_LIST = re.compile(
    rf"除了(?:吃|喝|挂|贴|放|包|插|赛|划|看)?(?:{_CUSTOMARY_ITEMS}){_STOP}{{0,4}}?还{_STOP}{{0,6}}?(?:什么|啥|哪些|别的)"
)
#: What a festival is kept for (端午节是为了纪念屈原, 重阳节本来是纪念…).
_KEPT_FOR = re.compile(r"(?:节|日)?(?:本来|原本|最早|其实|据说)?(?:就)?(?:是)?(?:为了)?纪念")
#: What a festival always has: 必 + a verb right after it (过年必吃, 春节必听), 少不了 / 离不开 in its clause.
_ALWAYS_AFTER = re.compile(
    rf"(?:节|日)?(?:必(?![须定然要得胜])[\u4e00-\u9fff]|{_STOP}{{0,4}}?(?:少不了|离不开|缺不了|必不可少|标配))"
)
#: A saying cited (冬至大如年，这是老话; 俗话说过了腊八就是年): a saying is every year's.
_SAYING = re.compile(r"老话|俗话|俗语|谚语|常言道|古话|民谚|老人常说|老辈人说")
#: Before a festival: one occurrence named (这个春节, 这次过年).
_ONE_OCCURRENCE_BEFORE = ("这个", "这次", "那个", "那次", "这回", "那回")


def relation(text: str, start: int, end: int) -> bool:
    """清明和寒食有什么关系 (the first of the two), 七夕跟情人节有啥区别 (either)."""
    if _RELATED_AFTER.match(text, end):
        return True
    return _RELATED_BEFORE.search(text, max(0, start - 1), start) is not None and (
        _RELATION_RIGHT_AFTER.match(text, end) is not None
    )


def observed(sentence: str) -> bool:
    """外国人也过春节吗, 万圣节在中国没什么人过, 冬至北方吃饺子, 冬至这天白天最短."""
    return any(pattern.search(sentence) is not None for pattern in (_OBSERVED, _REGIONAL_CUSTOM, _SKY))


def lore(text: str, end: int) -> bool:
    """七夕的牛郎织女故事, 中秋的传说, 端午节是为了纪念屈原."""
    return _LORE.match(text, end) is not None or _KEPT_FOR.match(text, end) is not None


def saying(sentence: str) -> bool:
    return _SAYING.search(sentence) is not None


def customary_list(sentence: str) -> bool:
    return _CUSTOMARY_LIST.search(sentence) is not None


def always_has(text: str, start: int, end: int) -> bool:
    if text[max(0, start - 2) : start] in _ONE_OCCURRENCE_BEFORE:
        return False
    return _ALWAYS_AFTER.match(text, end) is not None
