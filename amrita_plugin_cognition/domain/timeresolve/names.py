"""Shops, firms and places whose names begin with a time word (星期五餐厅, 周末咖啡, 今日资本, 明天科技,
八月照相馆): the time word is part of a name, no date.

A time word right before a shop or a firm is read as a name only where the grammar wants a noun phrase:

* a shop (餐厅, 咖啡馆, 书店, 照相馆 ...) after a weekday, 周末 or a month: the pair follows a word that takes
  a place or a name (在, 去, 到, 那家, 一家, 叫, 的 ...), or (after a weekday) is followed by 的, by what a
  shop does (新开, 关门, 明天开业 ...) or by another day (星期五餐厅今天打折). After a day word (今天, 明天 ...)
  only 在, 去, 进, 逛, 家, 叫 take it (我在今天咖啡馆等你), since 到今天餐厅都没开门 is until today.
  周五咖啡馆见, 星期五咖啡厅人肯定很多 keep their Friday: a day and a place side by side.
* a firm after a weekday or a day word (今天, 明天, 今日 ...): a word that only ends a firm's name (科技,
  资本, 传媒, 控股, 影业, 地产 ...), unless a generic noun follows (科技股, 资本市场, 科技馆: 今天科技股大涨 is
  today); 集团, 工作室, 公司, a trade (教育, 网络, 汽车 ...) and the names of buildings (广场, 大厦, 中心 ...)
  only after a word that takes a name (在今天集团上班, 我在今天网络上班, 隔壁就是明天广场) or before 有限公司,
  since 今天公司开会, 今天网络不好 and 明天集团领导来检查 are days.
"""

from __future__ import annotations

import re

_WEEKDAY = r"(?<![上下这本每])(?:(?:周|星期|礼拜)[一二三四五六日天]|周末)"
_MONTH = r"(?<![\d一二三四五六七八九十年])(?:十[一二]|[一二三四五六七八九十])月"
_DAY = r"今天|明天|后天|昨天|前天|今日|明日|昨日|后日"

_SHOP = (
    r"餐厅|餐馆|饭店|饭馆|酒家|小馆|小厨|咖啡馆|咖啡厅|咖啡店|咖啡屋|咖啡|酒吧|酒馆|清吧|面包房|面包店|烘焙坊|烘焙"
    r"|甜品店|甜品|蛋糕店|书店|书屋|花店|花坊|便利店|火锅|烧烤|烤肉|茶餐厅|茶馆|茶室|奶茶|影院|影城|民宿|客栈"
    r"|杂货铺|理发店|美甲店|健身房|画室|琴行|小店|照相馆|影楼"
)
#: Words right before a noun phrase: a place or a firm is named after them (在…, 去…, 那家…, 叫…, 楼下的…).
_TAKES_A_NAME_WORDS = (
    *"在去到进逛来回从于家叫的和跟与是",
    *("到了", "去了", "进了", "入职", "加入", "跳槽到", "投了", "收购了", "供职于", "就职于"),
)
_AFTER_A_NAME_TAKER = "(?:" + "|".join(f"(?<={word})" for word in _TAKES_A_NAME_WORDS) + ")"
#: What a shop does or has, right after its name.
_SHOP_AFTER = (
    r"(?:的|新开|开了|开业|关门|关了|倒闭|搬|装修|上新|新上|新出|推出|出的|做的|家的"
    r"|[^，。！？\s]{1,3}?(?:开业|开张|试营业|倒闭|关门|装修|搬家)"  # 周五餐厅明天开业
    # another day right after: 星期五餐厅今天打折, 周末咖啡今天人好多 (a day and a day do not stack)
    r"|今天|明天|昨天|后天|今晚|这周|下周|上周|最近)"
)
#: Words that only end a firm's name.
_FIRM = r"(?:网络|信息|数字|智能|文化)?(?:科技|资本|传媒|控股|影业|影视|实业|置业|地产)"
#: Words that end a firm's name but also name one's own group, studio or company (明天集团领导来检查).
_FIRM_OR_OWN = (
    r"(?:集团|工作室|公司|娱乐|股份|教育|培训|网络|文化|数码|电子|信息|软件|物流|医药|食品|服饰|家居|汽车|电器|通信"
    r"|能源|生物|广告|咨询|设计|事务所|律所|银行|保险|广场|大厦|中心|商场|大楼|公寓|小区|花园)"
)
_NAME_ENDING = r"(?:股份)?有限(?:责任)?公司"
#: A generic noun after 科技, 资本 …: a sector, a market or a place, not a firm (科技股, 资本市场, 科技馆).
_GENERIC_AFTER = (
    r"股(?!份)|板块|行业|类|圈|领域|概念|新闻|界|巨头|企业|公司|从业|展|大会|峰会|发布会|频道|节目|栏目|市场|运作|主义"
    r"|家|部|课|人|剧|专业|馆|园|城|中心|广场|大厦|楼|中介|小组|组|学|校|院|片|作品|圈"
)

#: The narrower words that take a shop named with a day word: 到今天 and 从明天 are times (到今天餐厅都没开).
_AFTER_A_SHOP_TAKER = "(?:" + "|".join(f"(?<={word})" for word in ("在", "去", "进", "逛", "家", "叫")) + ")"
_SHOP_NAME = re.compile(
    rf"(?:{_AFTER_A_NAME_TAKER}(?P<a>{_WEEKDAY}|{_MONTH})(?:{_SHOP})|(?P<b>{_WEEKDAY})(?:{_SHOP})(?={_SHOP_AFTER})"
    rf"|{_AFTER_A_SHOP_TAKER}(?P<c>{_DAY})(?:{_SHOP}))"
)
_FIRM_NAME = re.compile(
    rf"(?P<a>{_WEEKDAY}|{_DAY}){_FIRM}(?:{_NAME_ENDING}|(?!{_GENERIC_AFTER}))"
    rf"|{_AFTER_A_NAME_TAKER}(?P<b>{_WEEKDAY}|{_DAY}){_FIRM_OR_OWN}"
    rf"|(?P<c>{_WEEKDAY}|{_DAY}){_FIRM_OR_OWN}?{_NAME_ENDING}"
)


def business_names(text: str) -> list[tuple[int, int]]:
    """Spans of the time words in ``text`` that begin the name of a shop or a company."""
    spans: list[tuple[int, int]] = []
    for pattern in (_SHOP_NAME, _FIRM_NAME):
        for match in pattern.finditer(text):
            group = next(name for name in ("a", "b", "c") if name in match.re.groupindex and match.group(name))
            spans.append(match.span(group))
    return spans
