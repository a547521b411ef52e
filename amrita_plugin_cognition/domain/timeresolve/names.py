"""Shops, firms and places whose names begin with a time word (星期五餐厅, 周末咖啡, 今日资本, 明天科技,
八月照相馆): the time word is part of a name, no date.

A time word right before a shop or a firm is read as a name only where the grammar wants a noun phrase:

* a shop (餐厅, 咖啡馆, 书店, 照相馆 ...) after a weekday, 周末 or a month: the pair follows a word that takes
  a place or a name (在, 去, 到, 那家, 一家, 叫, 的 ...), or (after a weekday) is followed by 的, by what a
  shop does (新开, 关门, 明天开业 ...) or by another day (星期五餐厅今天打折). After a day word (今天, 明天 ...)
  only 在, 去, 进, 逛, 家, 叫 take it (我在今天咖啡馆等你), since 到今天餐厅都没开门 is until today.
  周五咖啡馆见, 星期五咖啡厅人肯定很多 keep their Friday: a day and a place side by side.
  A colon after 店, 家, 叫 or 名 takes a name too (推荐一家店：周末小馆).
* a shop after any time word (a lunar day such as 初一 too) with a word of a name between them: an animal, a
  plant, nature (三月兔甜品店, 周末小院餐厅, 明日森林书店, 十月猫咖啡馆); a cuisine or a kind (西餐厅, 自助餐厅,
  花园餐厅) is no such word, so 周六西餐厅约会 and 明天花园餐厅见 keep their day. The same word before a work
  (四月物语这部电影) names the work.
* a shop after a day word or a month followed by a brand (今天便利店这个牌子, 明天咖啡是个连锁品牌); after a month
  or a lunar day followed by 的 or what it brings out (十二月甜品的芋泥, 八月小馆新出了秋季菜单); after a written
  day word (明日, 昨日, 今日, 后日), a word or two of a name may stand between, followed by 的 or a floor
  (明日书店二楼, 昨日花园餐厅的环境), since 明日餐厅暂停营业 is a notice for tomorrow.
* a firm after a weekday, a day word, a month or a lunar day (今天, 明天, 今日, 初一 ...): a word that only ends a
  firm's name (科技, 资本, 传媒, 控股, 影业, 地产, 文创 ...), unless a generic noun follows (科技股, 资本市场, 科技馆:
  今天科技股大涨 is today); 集团, 工作室, 公司, a trade (教育, 网络, 汽车 ...) and the names of buildings (广场, 大厦,
  中心 ...) only after a word that takes a name (在今天集团上班, 我在今天网络上班, 隔壁就是明天广场) or before
  有限公司, since 今天公司开会, 今天网络不好 and 明天集团领导来检查 are days.
"""

from __future__ import annotations

import re

_WEEKDAY = r"(?<![上下这本每])(?:(?:周|星期|礼拜)[一二三四五六日天]|周末)"
_MONTH = r"(?<![\d一二三四五六七八九十年])(?:十[一二]|[一二三四五六七八九十])月"
_DAY = r"今天|明天|后天|昨天|前天|今日|明日|昨日|后日"
#: The written day words, which head a shop's name more often than a notice (明日书店二楼, 昨日花园餐厅的环境).
_WRITTEN_DAY = r"今日|明日|昨日|后日"
_LUNAR_DAY = r"(?<![月年初])初[一二三四五六七八九十]"

_SHOP = (
    r"餐厅|餐馆|饭店|饭馆|酒家|小馆|小厨|咖啡馆|咖啡厅|咖啡店|咖啡屋|咖啡|酒吧|酒馆|清吧|面包房|面包店|烘焙坊|烘焙"
    r"|甜品店|甜品|蛋糕店|书店|书屋|花店|花坊|便利店|火锅|烧烤|烤肉|茶餐厅|茶馆|茶室|奶茶|影院|影城|民宿|客栈"
    r"|杂货铺|理发店|美甲店|健身房|画室|琴行|小店|照相馆|影楼|超市|药店|药房|书局|面包坊|面馆|粉店|饼屋"
)
#: The shop words that are no food or drink as well (咖啡, 火锅, 甜品 are both).
_SHOP_ONLY = (
    r"餐厅|餐馆|饭店|饭馆|酒家|小馆|小厨|咖啡馆|咖啡厅|咖啡店|咖啡屋|酒吧|酒馆|清吧|面包房|面包店|烘焙坊|甜品店|蛋糕店|书店"
    r"|书屋|花店|花坊|便利店|茶餐厅|茶馆|茶室|影院|影城|民宿|客栈|杂货铺|理发店|美甲店|健身房|画室|琴行|照相馆|影楼|超市|药店"
    r"|书局|面包坊|面馆|粉店|饼屋"
)
#: Words of a shop's name between a time word and the shop: animals, plants, nature and the like (三月兔甜品店,
#: 周末小院餐厅, 明日森林书店). A cuisine or a kind (西餐厅, 自助餐厅, 花园餐厅) is none of them.
_NAME_WORD = (
    r"兔|猫|狗|熊|鹿|鱼|鸟|象|狐狸?|羊|鲸|龟|蜂|蝶|鸽|鹤|雀|鹅|猴|狮|虎"
    r"|森林|树|森|林|草|叶|竹|松|樱|桃|橘|柚|柠檬|星空|星球|星|月光|阳光|风|雨|雪|云|海|岛|山|湖|溪|泉"
    r"|小院|院子|小屋|木屋|之家|时光|物语|故事|日记|手记|记忆|盒子|口袋"
)
#: A brand or a chain named right after the shop (今天便利店这个牌子, 后天超市这家连锁).
_BRAND_AFTER = r"(?:是个|是一个|是家|是一家)?(?:连锁)?(?:这个|这家|这)?(?:牌子|品牌|连锁|加盟)"
#: After a month's or a lunar day's shop: what the shop has or brings out (十二月甜品的芋泥, 八月小馆新出了秋季菜单).
_NAMED_SHOP_AFTER = rf"的|新出|新上|上新|推出|出的|做的|家的|{_BRAND_AFTER}"
#: A work named after a time word and a name word (四月物语这部电影).
_WORK_AFTER = (
    r"这部|这首|这本|这张|这档|这个(?:电影|节目|综艺|剧|番|游戏|歌)"
    r"|是(?:一部|一首|一本|一张|个|一个)?(?:电影|歌|书|专辑|综艺|节目|剧|番|游戏|小说)"
)
#: After a written day word's shop (a word or two of its name may come between): what the shop has or where in
#: it (明日书店的咖啡, 明日书店二楼, 昨日花园餐厅的环境).
_WRITTEN_AFTER = r"的|[一二三四五六七八九\d]楼|楼上|楼下|里面|里头"
#: Words right before a noun phrase: a place or a firm is named after them (在…, 去…, 那家…, 叫…, 楼下的…).
_TAKES_A_NAME_WORDS = (
    *"在去到进逛来回从于家叫的和跟与是",
    *("到了", "去了", "进了", "入职", "加入", "跳槽到", "投了", "收购了", "供职于", "就职于"),
    # a name given after a colon (推荐一家店：周末小馆, 店名叫：星期天咖啡)
    *("店：", "店:", "家：", "家:", "叫：", "叫:", "名：", "名:"),
)
_AFTER_A_NAME_TAKER = "(?:" + "|".join(f"(?<={word})" for word in _TAKES_A_NAME_WORDS) + ")"
#: What a shop does or has, right after its name.
_SHOP_AFTER = (
    r"(?:的|新开|开了|开业|关门|关了|倒闭|搬|装修|上新|新上|新出|推出|出的|做的|家的"
    r"|[^，。！？\s]{1,3}?(?:开业|开张|试营业|倒闭|关门|装修|搬家)"  # 周五餐厅明天开业
    # another day right after: 星期五餐厅今天打折, 周末咖啡今天人好多 (a day and a day do not stack)
    r"|今天|明天|昨天|后天|今晚|这周|下周|上周|最近"
    rf"|{_BRAND_AFTER})"
)
#: Words that only end a firm's name.
_FIRM = r"(?:网络|信息|数字|智能|文化)?(?:科技|资本|传媒|控股|影业|影视|实业|置业|地产|文创)"
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
    rf"|{_AFTER_A_SHOP_TAKER}(?P<c>{_DAY})(?:{_SHOP})"
    rf"|(?P<d>{_WEEKDAY}|{_MONTH}|{_DAY}|{_LUNAR_DAY})(?:{_NAME_WORD})(?:{_SHOP_ONLY})"
    rf"|(?P<e>{_MONTH}|{_DAY})(?:{_SHOP})(?={_BRAND_AFTER})"
    rf"|(?P<f>{_WRITTEN_DAY})(?:(?:[\u4e00-\u9fff]{{1,2}}?)?(?:{_SHOP_ONLY})|{_SHOP})(?={_WRITTEN_AFTER})"
    rf"|(?P<g>{_MONTH}|{_LUNAR_DAY})(?:{_SHOP})(?={_NAMED_SHOP_AFTER})"
    rf"|(?P<h>{_WEEKDAY}|{_MONTH}|{_DAY}|{_LUNAR_DAY})(?:{_NAME_WORD})(?={_WORK_AFTER}))"
)
_FIRM_NAME = re.compile(
    rf"(?P<a>{_WEEKDAY}|{_DAY}|{_LUNAR_DAY}|{_MONTH}){_FIRM}(?:{_NAME_ENDING}|(?!{_GENERIC_AFTER}))"
    rf"|{_AFTER_A_NAME_TAKER}(?P<b>{_WEEKDAY}|{_DAY}){_FIRM_OR_OWN}"
    rf"|(?P<c>{_WEEKDAY}|{_DAY}){_FIRM_OR_OWN}?{_NAME_ENDING}"
)


def business_names(text: str) -> list[tuple[int, int]]:
    """Spans of the time words in ``text`` that begin the name of a shop or a company."""
    spans: list[tuple[int, int]] = []
    for pattern in (_SHOP_NAME, _FIRM_NAME):
        for match in pattern.finditer(text):
            group = next(name for name in "abcdefgh" if name in match.re.groupindex and match.group(name))
            spans.append(match.span(group))
    return spans
