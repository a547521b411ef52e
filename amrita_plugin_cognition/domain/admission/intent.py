"""Requests not to remember: an intent about the bot's memory, not the word 记.

A request is a negation whose scope holds a memory verb (别记/不要存/别入库/不要留档/别写进记忆), an
explicit wish (不想让你记住), a retraction (当我没说/就当没听见), an order to forget what was said
(听完就忘了吧/把刚才那段忘掉) or to delete it from the memory. The object decides: a grudge (记仇),
a mistake (别记错/记混), notes, a diary or accounts (记笔记/记日记/记账), money or files (别存钱/
照片别存在手机里) are not the bot's memory; "别忘了带伞" and "帮我记住" ask the opposite.

Requests in other languages and in pinyin are ``foreign``'s, words reported from someone else are
recognised by ``reported``, and requests by co-occurrence by ``requests``; this module joins them
with the learned models (a rule's request checked, a request no rule names read by the model).
"""

from __future__ import annotations

import itertools
import re

from ..regex_start import compile_guarded
from .foreign import foreign_rules_ask
from .learned import LinearModel, do_not_remember_model, request_check_model
from .normalise import clauses
from .reported import reported_before, reports, said_by_the_speaker
from .requests import (
    ASKS_WHAT_IF,
    CONSOLING,
    GAME_NOT_ITS_NAME,
    NOT_ITS_CONTENT,
    SAID_TO_YOU,
    about_a_product,
    about_something_else,
    asks_to_erase,
    explained_away,
    without_quotes,
)

_I = re.IGNORECASE

_NEGATION = compile_guarded(
    r"(?:(?<![要用需])不要|(?<!用)(?<!再也)(?<!终于)(?<!以后)不用|唔好|唔使|覅|嫑|伐要|毋通|毋|咪(?=[记存录留])|不允许|不必|无需|无须|(?<!需)不需要|用不着|没有?必要|请勿|勿|不许|(?<!记)不准|甭|莫要"
    r"|(?:能不能|可以|可不可以|能否|可否)不(?![要用必])"
    r"|(?<![要用需必])不(?=入库|入档|存档|留档|留底|录入|收录|记录(?!片|仪)|保存|存储|记忆|计入|进(?:你的?)?记忆)"
    r"|(?<![特区分告级类性离识辨差鉴派道送诀判惜])(?<!(?<![这那])个)别(?![人的处墅扭致针名克样家号称离具]))"
)
_MEMORY_PLACE = (
    r"(?:(?:你的?|我的?)?(?:长期)?(?:记忆|小本本|本本|本子|备忘录?|数据库|库|档案|脑子)"
    r"|你(?:的)?(?:笔记(?:本)?|记录|资料(?:库)?)|你那(?:里|儿|边)?|(?:关于我的|我的)资料|(?:我的)?(?:用户)?画像)"
)
_VERB = compile_guarded(
    rf"(?P<verb>(?:写|加|放|塞|收|录|记|存|留|纳|列)(?:进|入|到|在){_MEMORY_PLACE}|纳入记忆"
    r"|(?:写|记|存|放|加|录|学|搁|收|装|塞)进去|(?:作为|当作|当成|算作|算进)(?:我的?)?(?:资料|记录|档案|画像|个人信息)"
    r"|(?:入|进)(?:你的?)?(?:记忆|库|数据库|小本本|脑子)|计入(?:你的?)?(?:记忆|档案)"
    r"|持久化|保存|储存|存储|保留|留档|留底|留存|留记录|留下记录|留痕迹?|入库|入档|录入|收录|归档|存档|建档|记录|记忆|记|存"
    r"|(?<![A-Za-z])(?:memori[sz]e|remember|save|record|store)(?![A-Za-z]))"
)
# Weak verbs that mean "put into the memory" only when the clause names the memory.
_PUT = compile_guarded(r"(?P<verb>留|放|写|加|塞|装)")
_NAMES_MEMORY = compile_guarded(
    r"记忆|小本本|本本|备忘|档案|你的?数据库|你的?脑子|脑子里|你那(?:里|儿|边)|你的?记录|你对我的|你(?:记|存)(?:下|住)?的|画像"
)

# Before 记, a character that makes another word: 登记, 笔记, 日记, 牢记, 惦记, 忘记 ...
_COMPOUND_BEFORE_JI = set("登书标笔日牢惦速熟默切谨铭忘追补印胎暗表杂游传札手簿大")
# After 记: a grudge, a mistake, notes and accounts, or "can't".
_JI_OTHER_SENSE = compile_guarded(
    r"仇|恨|坏话|错|混|反|岔|串|漏|成|账|日记|笔记|单词|分|过|名|考勤|工时|流水|性|者|忆犹|载|号|挂|不|在心|心|到心|牢骚|得(?:那么|这么|太|很)"
)
_CUN_OTHER_SENSE = compile_guarded(r"钱|款|折|粮|货|电话|号码|联系人|通讯录|侥幸|幻想|疑|戒心|顾虑|偏见")
_CUN_PLACE = compile_guarded(
    r"(?:在|到|进)(?!你|记忆|小本本|本本|本子|备忘|数据库|库|脑子|档案|里面|去|进去)|(?=\s?[A-Za-z]{3})"
)
_DEGREE = compile_guarded(r"(?:得)?(?:那么|这么|太|那样|这样)")
_OBJECT_NOT_MEMORY = compile_guarded(
    rf"钱|存款|(?:照片|图片|视频|文件|文档|截图){NOT_ITS_CONTENT}|{GAME_NOT_ITS_NAME}|{SAID_TO_YOU}"
    r"|草稿|代码|配置|桌面|手机|电脑|硬盘|云盘|网盘|U盘|浏览器|本地|相册|[CDE]盘|git|仓库|缓存"
    r"|cookie|(?<![a-z])(?:token|api\s?key|secret)s?(?![a-z])|密钥|秘钥|令牌|明文|密文|密码|货|材料|物料|商品|库存|零件|公式|单词|课文|知识点|考点|定理|纪要|会议记录|笔记|日志|日记|账|仇|恨"
    r"|成绩|作业|步数|考勤|工时|心上|心里|心中|培训|讲义|课|考试|讲座|复习|系统|(?<!截)图(?!片)|表格|网页|冰箱|冰柜|冷冻|冷藏"
    r"|字段|前端|后端|接口|服务端|客户端|数据表|表里|localstorage|sessionstorage",
    _I,
)
_FILL_NOT_ABOUT_MEMORY = compile_guarded(
    r"忘|让我|叫我|说(?!的|过)|告诉|讲|怪|骂|管|以为|觉得|担心|怕|老|总|点|按|自己|在[^你您]{0,3}$|(?<![A-Za-z])(?:click|press)"
)
_MEMORY_TOPIC = compile_guarded(r"这个|这条|这段|这事|这件|信息|内容|聊天|对话|我说的|消息|这些|这句")
_ASKS_WHAT_IF = compile_guarded(ASKS_WHAT_IF)
_WISH = compile_guarded(
    r"(?<!不会)(?<!不能)(?<!别)(?<!不要)(?<!不是)(?<!不是真)让(?:你|bot)(?:完全|彻底|永远|再也)?(?:不记得|忘掉|忘了|忘记)"
    r"|(?:不想|不希望|不愿意?|不要|别)(?:让|把)?(?:这个|这件事|这事|这些话?|它|我说的话?)?(?:让|被)(?:你|它|机器人|bot|ai)?(?:给)?"
    r"(?:记|存|保存|写进|录)"
    r"|(?:不想|不希望|不愿意?)(?:让)?(?:你|它|机器人)(?:把|将)?(?:这个|这些|这件事|这事|它|我说的话?)?(?:给)?(?:记|存|保存|写进|录|留着|留下)"
    r"|(?:不想|不希望|不愿意?)[^，。,]{0,8}?(?:在|给)?(?:你|机器人)(?:那边|那里|这边)?(?:留下|留)(?:任何)?(?:记录|痕迹|底)",
    _I,
)
_HEARD_AND_FORGET = compile_guarded(
    r"(?:听|看|说|读|聊)(?:完|过|了)(?:了)?(?:以后|之后)?(?:你)?(?:就|便)?(?:忘|算|清空|清掉|删|失忆|拉倒)"
)
_IMPERATIVE_TAIL = compile_guarded(r"^(?:了|掉|记)?(?:它|这个)?(?:吧|哈|啊|呀|就行|就好)|^了吧|^掉吧")
_UNSAY = compile_guarded(
    r"(?<![应相适正每恰担我他她别])(?:就当|权当|你就当|你当|当)(?:我|伊|他|她|我们|俺|人家)?(?:今天|昨天|前天|那天|上次|这次|刚才|刚刚|之前)?(?:什么都|啥都)?"
    r"(?:没|没有|从没|从来没)(?:说|讲|提|问|发|聊|谈|写|打|这回事|发生|来过|出现过)|(?<![应相适正每恰担我他她别])(?:就当|你就当|你当)(?:作|成)?不知道"
    r"|(?<![应相适正每恰担我他她别])(?:就当|权当|你就当|当)(?:你)?(?:没|没有)(?:听|看)(?:见|到|过)"
    r"|(?<![应相适正每恰担我他她别])(?:就当|权当|你就当|你当|当)(?:我|伊|我们|俺)(?:是|在)?(?:瞎|乱|胡)(?:说|讲|扯|诌|讲讲|说说)"
    r"|(?<![应相适正每恰担我他她别])(?:就当|权当|你就当|你当|当)(?:我|伊|我们|俺)?(?:是)?放了?(?:个|一个)?屁"
)
_AS_IF = compile_guarded(r"^\S{0,4}?(?:一样|似的|一般)")
_DEICTIC = (
    r"(?:这个事|这个|这些|这事儿?|这件事|这段(?:话|对话)?|这句(?:话)?|这条(?:消息)?|那句(?:话)?|那段(?:话)?"
    r"|刚才(?:的|说的)?(?:那句|那段|那些|那条|对话|话)?|刚刚(?:说的)?(?:那些话|那些|话)?|上面(?:那段|的|这些)?"
    r"|我(?:刚才|刚刚|今天|之前)?说的(?:话|那些)?)"
)
_FORGET_THAT = compile_guarded(rf"(?P<ba>把)?{_DEICTIC}(?P<you>你|您)?(?:都|就|也|全)?(?P<me>给我)?(?:忘了|忘掉|忘记)")
_FORGET_WHAT_I_SAID = compile_guarded(
    r"(?:忘了|忘掉|忘记)(?:我)?(?:(?:刚才|刚刚|刚|今天|之前|上面|前面)?(?:说|讲|提|告诉你|发)的(?:话|事|那些|内容|消息)?"
    r"|(?:上一条|上条|前一条|刚才那条|刚发的那条|刚才那句|上一句)(?:消息|话)?)"
)
# "忘记这句话：…", "忘掉上面那段": an order to forget what is pointed at, at the start of a clause.
_FORGET_POINTED = compile_guarded(
    r"^(?:请|麻烦|帮我|你)?(?:把它)?(?:忘了|忘掉|忘记)(?:掉)?(?:这句话?|这段话?|这条(?:消息)?|这些话?|上面(?:的|这些|那段|那句)?"
    r"|刚才(?:那句|那段|那条)(?:话)?)"
)
_GAME = compile_guarded(r"游戏|关卡|这关|进度|副本|读档|存档点|角色|boss|通关|打到|存档位", _I)
_DELETE = compile_guarded(
    r"(?<!不能)(?<!不要)(?<!不用)(?<!不许)(?<!不准)(?<!别)删"  # not a deletion forbidden ("谁也不能删")
    r"|抹掉|抹去|去掉|清除|清空|清掉|清理|剔除|移除|排除|消失|(?<![A-Za-z])del(?:ete)?(?![A-Za-z])",
    re.IGNORECASE,
)

# The memory named first, then "must not hold it": "你的记忆里不要有这条".
_MEMORY_MUST_NOT_HOLD = compile_guarded(
    r"(?:你的?)?(?:记忆|脑子|小本本|记录|数据库)(?:里|中)[^，。！？,!?]{0,4}?(?:不要|别|不许|不能|不准)(?:有|出现|存在|留)"
)
# The bot told not to learn or keep what it was told: "这句 bot 别学也别留".
_ADDRESSES_BOT = compile_guarded(r"(?<![A-Za-z])(?:bot|ai)(?![A-Za-z])|机器人|小助手", re.IGNORECASE)
_NOT_LEARN_OR_KEEP = compile_guarded(r"(?:别|不要|不许|不准)(?:学|留)(?![习生校期])")
# Idioms for "gone once read".
_BURN_AFTER_READING = compile_guarded(
    r"阅后即焚|(?:听|看|说|聊)完即(?:焚|删)|过目即忘|用完即删|聊完就删|当(?:个|一个|回)?树洞|左耳进右耳出|烂在(?:你)?肚子里"
)
# "结束后请遗忘", "请忘记这件事": a polite order to forget.
_PLEASE_FORGET = compile_guarded(
    r"(?:请|麻烦|拜托)(?:你)?(?:把它|把这些?)?(?:遗忘|忘记|忘掉)(?!了?(?:带|拿|关|锁|吃|喝|写|交|去|做|买))"
)
# "忘掉我说我在找工作这事吧": forget what I said about something.
_FORGET_MY_WORDS = compile_guarded(
    r"(?<![我他她都也])(?:忘掉|忘了|忘记)我(?:刚才|之前|刚刚)?说(?:的|过)?[^，。,]{0,14}?(?:这事|那事|这件事|那件事|的事)(?:吧|哈|啊)?"
)
# "别给我留着这个信息": keeping what was said, named as such.
_KEEP_THIS = compile_guarded(r"(?:别|不要|不许|不准)(?:给我)?留着(?:这个|这条|这段|这些|这事)?(?:信息|消息|内容|话)")
# Every request holds one of these (a memory verb, a removal, a retraction, a memory place, an
# English memory word): a message with none is no request, and the rules below are skipped.
_ANY_CUE = compile_guarded(
    r"[记存忘删留录库档焚清抹毁置丢扔移剔废关洞耳肚没画资料写入放塞装整学遗失销撤搁储冇消]|持久|拉倒|脑子|脑袋|脑海|就当|权当|当我|去掉|去除|拿掉|拿走|ctrl"
    r"|저장|기억|기록|잊어|지워|覚え"
    r"|(?<![a-z])(?:remember|rmb|rmbr|remb|memor|forget|4get|forgt|delete|save|stor|record|keep|retain|note|jot|log|purge|erase|wipe|clear|remove"
    r"|pretend|off\s+the|hear|undo|reset|bie|buyao|bu\s+yao|buyong|(?:wang|shan)\s*(?:le|diao|ji|chu))",
    re.IGNORECASE,
)


def has_memory_cue(text: str) -> bool:
    """Whether ``text`` (folded) holds any word a request not to remember is made of."""
    return _ANY_CUE.search(text) is not None


# The words the learned model must see before it is asked: narrower than ``_ANY_CUE`` (whose
# single characters 资, 学, 入, 没 let the rules look further, but say little on their own).
_MODEL_CUE = compile_guarded(
    r"[记存忘删留录库档抹清撤焚毁写耳储]|消(?:掉|除)|(?:收|装|塞)进去|持久|ctrl|[没冇](?:说|讲|听|看|发|问|提|聊|谈)|失忆|格式化|关于我|脑子|小本本|画像|(?:往|进)[^，。,]{0,6}?(?:装|整)"
    r"|(?<![a-z])(?:remember|memor|forget|delete|save|stor|record|keep|log|purge|erase|wipe|clear|remove|undo|hear"
    r"|off\s+the|bie|buyao|bu\s+yao|buyong)",
    re.IGNORECASE,
)


# A request not to remember turns something away: a negation, a removal, a retraction or a
# threat. A message with none of these ("这是一条测试记忆", "鱼的记忆只有七秒") asks nothing of the
# memory, whatever its words; the model is not asked about it. A question in the A-not-A form
# (能不能, 记不记得) negates nothing.
_TURNS_AWAY = compile_guarded(
    # negations, in dialects too
    r"不|别|没|勿|甭|莫|唔|覅|嫑|冇|毋|袂|弗|伐(?=[要记存])|咪(?=[记存录留])|[免表](?=[记存录留])|木有"
    r"|无需|无须|休想|少给|少(?=记|存|录|留)|禁止|拒绝|免了|跳过"
    # removals
    r"|(?<!备)忘|删|抹(?!茶)|擦(?:掉|除|了|干净)|撕(?:掉|了)|抠(?:掉|了|出)|撤|划掉|销毁|注销|除名|丢(?!人|脸)|扔|去掉|移除|剔除"
    r"|拿掉|取消|重置|作废|收回|格式化|消失|失忆|排除|漏掉|略过|忽略"
    # retractions
    r"|清(?:掉|除|空|理|了|一下|干净|零)|关(?:掉|闭|了|一下)|算了|拉倒|焚|耳旁风|耳边风|左耳|树洞|肚子|屁|ctrl"
    r"|就当|当作|当成|权当"
    r"|敢|拉黑|绝交|卸载"  # threats
    r"|n't(?![a-z])|(?<![a-z])(?:off|not|no|never|dont|didnt|cant|wont|forget|delete|erase|wipe|purge|undo|scratch|clear"
    r"|remove|skip|drop|discard|del|nope|bie|bu|buyao|buyong|wang|mo)(?![a-z])",
    re.IGNORECASE,
)
_A_NOT_A = compile_guarded(r"(.)不\1")
# What was said, pointed at: a request may name no memory word ("这条不作数", "你就当这条消息被风吹走了").
_WHAT_WAS_SAID = compile_guarded(
    r"这条|这句|这段|那条|那句|那段|刚才|刚刚|我说的|我讲的|我发的|消息|对话|内容|聊天|这些话|那些话|这事|那事|这件事|那件事|[呢嗰彼](?:句|段|条|啲)|讲过"
)

_CJK = compile_guarded(r"[\u4e00-\u9fff]")
# The models learned from Chinese chat: a message with less Chinese than this is the rules' alone.
MODEL_MIN_CJK = 4


def enough_chinese(text: str, minimum: int = MODEL_MIN_CJK) -> bool:
    """Whether ``text`` has enough Chinese for a learned model to judge it."""
    return len(_CJK.findall(text)) >= minimum


# A rule's request is overruled when the check model (``learned.request_check_model``) finds a
# request unlikely in the whole message and in every part of it that holds a memory word: a short
# request beside a long line of orders and codes ("这个别记：顺丰单号SF…客户问到哪了") keeps its
# part's score. Measured on 4,200 blind sentences, with the rules of the day before each set and
# a model trained without it: 17 of the 29 ordinary sentences the rules took for requests (a film
# about erased memories, someone else's wish, a product's delete button, a cache) were overruled,
# none of the 683 real requests the rules caught, and none of 6,181 requests made up from those
# sets' ordinary sentences ("别给我记这个：…", "…，这个别记哈").
RULES_OVERRULED_BELOW = 0.2
PART_OVERRULED_BELOW = 0.5
_PART_BREAK = compile_guarded(r"[，。！？；\n,!?;:：]|\s+")


def model_consulted(text: str) -> bool:
    """Whether the learned model is asked about ``text`` (folded, quotes of others removed) where no
    rule named a request: it is Chinese chat, holds a memory word or points at what was said
    (``_WHAT_WAS_SAID``), is not plainly about something else (``explained_away``), and turns
    something away (``_TURNS_AWAY``)."""
    if not enough_chinese(text) or (_MODEL_CUE.search(text) is None and _WHAT_WAS_SAID.search(text) is None):
        return False
    if _TURNS_AWAY.search(_A_NOT_A.sub(" ", text)) is None:
        return False
    cues = list(_MODEL_CUE.finditer(text)) or list(_WHAT_WAS_SAID.finditer(text))
    if cues and all(reported_before(text, cue.start()) for cue in cues):
        return False  # someone else's words, reported: "他跟我说 别把这事记心里"
    return not explained_away(text)


def asks_not_to_remember(text: str) -> bool:
    """Whether ``text`` (already folded) asks the bot not to keep it. In Chinese chat the rules
    and the learned models (``learned``) decide together: a rule's request stands unless the check
    model finds it unlikely (``overruled``); where no rule names one, the request model decides
    when the gate (``model_consulted``) lets it. Elsewhere (English, pinyin, Korean, Japanese, or
    too little Chinese for the model) the rules decide alone."""
    text = without_quotes(text)  # someone else's words are not the speaker's request
    cue = has_memory_cue(text)
    if cue and foreign_rules_ask(text):
        return True
    if cue and _chinese_rules_ask(text):
        return not overruled(text, request_check_model())
    return model_consulted(text) and do_not_remember_model().says_yes(text)


def overruled(text: str, model: LinearModel) -> bool:
    """Whether the check ``model`` finds a request unlikely in ``text`` (folded, quotes of others
    removed) and in each of its parts that hold a memory word; never where there is too little
    Chinese for it to read."""
    if not enough_chinese(text) or model.probability(text) >= RULES_OVERRULED_BELOW:
        return False
    parts = (part for part in _PART_BREAK.split(text) if has_memory_cue(part) and enough_chinese(part, 2))
    return all(model.probability(part) < PART_OVERRULED_BELOW for part in parts)


def _chinese_rules_ask(text: str) -> bool:
    if _ASKS_WHAT_IF.search(text):  # "如果我让你忘掉一件事，你真的能忘吗" asks how, not for it
        return False
    if asks_to_erase(text) or _MEMORY_MUST_NOT_HOLD.search(text) or said_by_the_speaker(_WISH, text):
        return True
    product = about_a_product(text)
    if (_BURN_AFTER_READING.search(text) and not product) or _KEEP_THIS.search(text) or _FORGET_MY_WORDS.search(text):
        return True
    if any(not reported_before(text, match.start(), 10) for match in _PLEASE_FORGET.finditer(text)):
        return True
    if _ADDRESSES_BOT.search(text) and _NOT_LEARN_OR_KEEP.search(text):
        return True
    spans = clauses(text)
    if any(_drops_what_was_pointed_at(text[a:b], text[c:d]) for (a, b), (c, d) in itertools.pairwise(spans)):
        return True
    game = bool(_GAME.search(text))  # 存档 of a game, anywhere in the message
    return any(
        _clause_asks(text[start:end], game, product, _previous_clause(text, spans, index))
        for index, (start, end) in enumerate(spans)
    )


def _previous_clause(text: str, spans: list[tuple[int, int]], index: int) -> str:
    """The clause before ``spans[index]`` in the same sentence ("" at a sentence's start)."""
    if index == 0:
        return ""
    (start, end), (next_start, _) = spans[index - 1], spans[index]
    return "" if _SENTENCE_END.search(text, end, next_start) else text[start:end]


# What was pointed at (or the bot's keeping of it) in one clause, dropped in the next: "上次露营迷路哭了
# 那事，删了它", "我直播只有3个观众这事，忘掉忘掉", "记住了你就完了，赶紧删掉". An event cannot be deleted,
# only the memory of it.
_POINTED_AT_END = compile_guarded(r"(?:这|那)(?:件)?(?:事|事儿|事情|段|条|句|些)\s*$|记住|记下|记着|存下|存着")
_DROP_IT = compile_guarded(
    r"^\s*(?P<urge>你|就|赶紧|快|直接|给我)*(?P<verb>删了|删掉|忘了|忘掉|忘记|清掉|抹掉)(?P<tail>(?:它|吧|哈|啊|呀|忘掉|删掉|!)*)\s*$"
)


def _drops_what_was_pointed_at(pointed: str, order: str) -> bool:
    drop = _DROP_IT.match(order) if _POINTED_AT_END.search(pointed) else None
    if drop is None or about_something_else(pointed) or CONSOLING.search(pointed):
        return False
    # an order, not a report ("那条，删了" may say it is done)
    return bool(drop.group("urge") or drop.group("tail") or drop.group("verb").endswith("掉"))


_SENTENCE_END = compile_guarded(r"[。！？!?\n]")


def _clause_asks(clause: str, game: bool, product: bool, previous: str = "") -> bool:
    """Whether ``clause`` asks not to remember; ``previous`` is the clause before it in its sentence."""
    unsay = _UNSAY.search(clause)
    if unsay and not _AS_IF.match(clause[unsay.end() :]) and not _reported_unsay(clause, unsay):
        return True
    if _forgets(clause):
        return True
    deletion = _DELETE.search(clause) if _NAMES_MEMORY.search(clause) else None
    if deletion and not (product or about_something_else(clause) or reported_before(clause, deletion.start(), 16)):
        return True  # not someone else's: "我朋友说他想把前女友从记忆里删掉"
    return any(_negated_memory_verb(clause, negation, game, previous) for negation in _NEGATION.finditer(clause))


def _reported_unsay(clause: str, unsay: re.Match[str]) -> bool:
    """A retraction in someone else's advice ("我爸说我妈唠叨的时候 就当没听见"), unless it is
    said to the bot ("我妈说了我几句 你就当没听见")."""
    return not unsay.group().startswith("你") and reported_before(clause, unsay.start(), 16)


def _forgets(clause: str) -> bool:
    for match in _HEARD_AND_FORGET.finditer(clause):
        before = clause[: match.start()]
        if before.endswith("我") or ("我" in before[-3:] and "你" not in before):
            continue
        said_to_you = "你" in before or "您" in before or "你" in match.group()
        if said_to_you or _IMPERATIVE_TAIL.match(clause[match.end() :]):
            return True
    for match in _FORGET_THAT.finditer(clause):
        tail = clause[match.end() :]
        if tail.startswith(("吗", "么")):
            continue
        before_ba = clause[: match.start()]
        if (
            _IMPERATIVE_TAIL.match(tail)
            or re.match(r"^(?:它|掉)", tail)
            or match.group("me")
            or match.group("you")
            or (match.group("ba") and not before_ba.endswith("我"))
        ):
            return True
    if _FORGET_POINTED.match(clause.lstrip()):
        return True
    for match in _FORGET_WHAT_I_SAID.finditer(clause):
        before = clause[max(0, match.start() - 2) : match.start()]
        if re.search(r"别|不要|不能|没|我|你|要", before) or re.search(r"[吗？?]\s*$", clause):
            continue
        return True
    return False


_ADDRESSED_TO_YOU = compile_guarded(r"你|您")
# The speaker turns to the bot after a report: "队长说了不外传 你也别存档" (not "大爷说 医生你可别记着我").
_TURNS_TO_YOU = compile_guarded(r"(?:^|[\s,，])(?:那|所以|反正)?你(?:也|就)\s*$")


# A clause that names no one before its negation ("可以不用记", "所以也别存") goes on with the words of
# the clause before it, unless that one speaks to the bot: "老师说这个公式考试不考，可以不用记" reports
# the teacher's words; "…你听听就好，别记住" is the speaker's own request.
_NOTHING_NAMED = compile_guarded(
    r"^\s*(?:那|所以|因此|其实|反正|就|也|都|还|可以|可|能|真的|完全|根本|应该|估计|直接|暂时)*\s*$"
)


def _negated_memory_verb(clause: str, negation: re.Match[str], game: bool, previous: str = "") -> bool:
    window = clause[negation.end() : negation.end() + 16]
    match = _VERB.search(window)
    if match is None and _NAMES_MEMORY.search(clause):
        match = _PUT.search(window)
    if match is None:
        return False
    verb, fill = match.group("verb"), window[: match.start()]
    post = clause[negation.end() + match.end() : negation.end() + match.end() + 8]
    topic = clause[: negation.start()]
    reported = reports(topic[-14:]) and not _TURNS_TO_YOU.search(topic)  # a report just before
    if previous and _NOTHING_NAMED.match(topic) and not _ADDRESSED_TO_YOU.search(previous):
        reported = reported or reports(previous[-14:])
    # "别把我刚才骂老板的话记下来": after 把 comes the object, whatever verbs it holds
    if (not fill.startswith("把") and _FILL_NOT_ABOUT_MEMORY.search(fill)) or reported or _DEGREE.match(post):
        return False
    if fill.startswith(("不", "没")):  # "不要不记得我": a double negation wants it kept
        return False
    if _OBJECT_NOT_MEMORY.search(topic[-8:] + "|" + fill + "|" + re.split(r"[\s，。！？,!?]", post[:6])[0]):
        return False
    if verb == "记":
        before = fill[-1:] or clause[negation.end() - 1 : negation.end()]
        if before in _COMPOUND_BEFORE_JI or _JI_OTHER_SENSE.match(post) or re.search(r"仇|恨|坏话|错|不好", post[:4]):
            return False
    if verb == "存" and (_CUN_OTHER_SENSE.search(post[:5]) or _CUN_PLACE.match(post)):
        return False
    return not (verb == "存档" and game and not _MEMORY_TOPIC.search(topic + post))
