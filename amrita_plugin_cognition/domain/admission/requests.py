"""Requests addressed to the bot about what it keeps, beyond a negated memory verb (``intent``):
delete what it stored ("把关于我前任的那些全删了", "清除一下你对我工作单位的记录"), forget it now
("忘掉吧，求你了", "选择性失忆一下"), keep nothing of it ("一个字都别留", "你的记忆里不需要有这段").

Each rule needs the request to be the speaker's own: words quoted from someone else ("朋友跟我说
“这事你听了就忘了吧”") are taken out first, and the object of a deletion must be what was said or
stored, not a file, a photo or a friend.
"""

from __future__ import annotations

import re

from ..regex_start import compile_guarded

# Someone else's words in quotes, introduced as said or asked by them.
_QUOTED = compile_guarded(
    r"(?:说|讲|道|问|告诉我|回复|句|写着|输入|发送|打字|遇到|碰到|检测到|识别到|(?:口头禅|原话|台词|签名|标语|标题|歌词)(?:就)?是?)[:：]?\s*"
    r"[“\"「『‘'][^”\"」』’']{0,80}[”\"」』’']"
)

_ASKS = r"(?:你|您|请|帮我|麻烦|拜托|求你|能不能|可不可以|可以|给我)"
_DELETE_VERB = r"(?:删掉|删了|删除|删咗|删|清理掉?|清掉|清除|清空|清咗|清一清|去掉|移除|抹掉|抹去|剔除|消掉|消除|消失)"
# What the bot keeps or was told.
_STORED = (
    r"(?:记忆|记录|数据库|资料|档案|备忘|记下的|记住的|存下的|存的|记的|关于我|对我的|我说的|我发的|说过的|发过的"
    r"|聊天内容|那些话|醉话|那条|这条|那段|这段|那几条|这几条|那些|消息)"
)
# A file or a game, not what is in it or what it is called ("截图里的内容", "游戏名"): shared with
# ``intent``'s objects that are not the bot's memory.
NOT_ITS_CONTENT = r"(?![^，。,|]{0,3}(?:内容|信息|文字|东西))"
GAME_NOT_ITS_NAME = r"游戏(?![名账昵]|id)"
# How the bot would take a request, asked: "如果我让你忘掉一件事，你真的能忘吗", "假如有人让你删记忆，你会告诉别人吗",
# "假如我跟你说别记，你是直接删还是打标记".
ASKS_WHAT_IF = (
    r"(?:如果|要是|假如|假设|万一|假若|倘若)(?:我|有人|别人|用户|谁|他|她|人家)(?:跟你说?|对你说?|让你|叫你|要你|要求你|请你)"
    r"[^。！？!?]{0,24}?(?:你|bot)"
    r"[^。！？!?]{0,12}?(?:吗|么|还是|[?？]|能不能|会不会|是不是)"
)
# What someone else said to the one addressed: "领导骂你的话别往脑子里放" consoles a friend.
SAID_TO_YOU = r"(?:骂|说|怼|批评|损|笑话|吼|凶)(?:了)?你的(?:话|那些|那几句|那句)"
# What a product or a program should keep: talk about the feature, not a request to it.
_PRODUCT = (
    r"测试用例|用例|单测|单元测试|过滤器|关键词|需求|排期|(?:下个|这个)版本|按钮|开关|产品|原型|设计上|模板|旧版|新版"
    r"|遗忘曲线|遗忘机制|(?<![a-z])pm(?![a-z])|(?:要不要|该不该|应不应该|应该|需不需要)(?:加|支持|做|上线|提供|设计|引入)"
    r"|字段|前端|后端|接口|服务端|客户端|数据表|表结构|localstorage|sessionstorage"
)
_NOT_STORED = compile_guarded(
    # files and things of one's own (what is in a photo or a screenshot is what was said)
    rf"(?:照片|图片|视频|文件|文档){NOT_ITS_CONTENT}"
    rf"|好友|app|软件|应用|{GAME_NOT_ITS_NAME}|代码|注释|备份文件|草稿|联系人|评论|帖子|动态|朋友圈|作业|订单|购物车"
    r"|关卡|这关|副本|读档|存档点|通关|硬盘|网盘|云盘|u盘"
    # a group's own messages, a chat with someone else
    r"|[删退建拉]群|群(?:里的|内的|公告|文件|相册|名|头像|聊天记录)|公告|(?:跟|和)(?![你您])[^，。,]{1,6}的聊天记录"
    # someone else's memories, stories and titles
    r"|(?:别人|他人|他|她|他们|她们|对方|人们|主角|角色|人类|大家)的记忆|主角|女主|男主|小说|剧本|《[^》]{1,20}》"
    r"|(?:电影|剧|番|动漫|故事|漫画)(?:里|中)|讲的(?:就)?是|(?:删除?|清除|消除)记忆的|(?:这|那|一)首歌|歌词|副歌|歌里"
    rf"|{SAID_TO_YOU}"
    # what is withheld, not told: "签了保密协议，内容不能跟你说哈"
    r"|(?:不能|不方便|没法|不可以|不好)(?:跟|和|对)?你(?:说|讲|透露)|(?:不能|不方便|没法)告诉你"
    # a choice or a what-if asked about, not made: "如果能选择性遗忘，你会删掉哪段记忆", "人要是能选择性
    # 失忆，会不会更快乐"
    r"|(?:如果|要是|假如|假设|假若|倘若)[^。！？!?]{0,24}?(?:会|想|要)[^。！？!?]{0,8}?(?:哪|什么|啥|谁)"
    r"|(?:(?:如果|要是|假如|假设)(?:人|人类|大家|每个人)|(?:人|人类|大家|每个人)(?:要是|如果|假如))(?:都)?(?:能|可以|会)"
    r"[^。！？!?]{0,16}?(?:会不会|是不是|好不好|吗|呢)"
    r"|你们?(?:会|想)(?:删|忘|清)[^。！？!?]{0,6}?(?:哪|什么|啥)"
    rf"|{ASKS_WHAT_IF}"
    r"|(?:我妈|我爸|爸妈|父母|老师|领导|老板|他|她|别人|人家)(?:说|讲)的(?:话|那些)"  # others' words
    rf"|{_PRODUCT}",
    re.IGNORECASE,
)
_PRODUCT_TALK = compile_guarded(_PRODUCT, re.IGNORECASE)
_DELETE_REQUEST = compile_guarded(
    rf"{_ASKS}[^。！？!?]{{0,24}}?{_STORED}[^。！？!?]{{0,16}}?{_DELETE_VERB}"
    # an event told, then deleted: only its memory can be ("…被判违规的事你给我永久删除")
    r"|(?:的事|这事|那事|这件事|那件事)儿?\s*(?:你)?(?:给我)?(?:永久|彻底|直接|全部|赶紧|统统)?(?:删掉|删了|删除|抹掉|清掉|清除)"
    rf"|(?<![我他她])(?:请|帮我)?{_DELETE_VERB}(?:一下|掉)?[^。！？!?]{{0,6}}?你[^。！？!?]{{0,12}}?{_STORED}"
)
_DELETE_STORED = compile_guarded(
    rf"(?:之前|以前|刚才|刚刚)?(?:你)?(?:记下|记住|存下|记|存)的[^，。,]{{0,8}}?(?:也|都|全)?{_DELETE_VERB}"
)

# A forget order on its own: "忘掉吧", "忘了它吧", "你就忘了吧", "选择性失忆一下".
_FORGET_NOW = compile_guarded(
    r"(?:^|[，。,\s]|(?<=[你侬汝]))(?:你)?(?:就|赶紧|快|立刻|马上)?(?:都|全|全部|统统)?(?:忘掉|忘了|忘记脱?|忘脱|遗忘)(?:它|这个|伊)?"
    r"\s*(?:吧|哈|啊|呀|好吗|行吗|好不好|好伐|求你了|拜托)"
    r"|(?:你|侬|汝)(?:就|赶紧|快)?给我(?:都|全)?(?:忘掉|忘了|忘记)(?:它|这个)?\s*(?:吧|哈|啊|呀|$)"
)
# Letting go of a person or a grief is not the bot's memory: "忘了吧，那个人不值得你难过".
CONSOLING = compile_guarded(
    r"不值得|难过|伤心|别哭|想开|看开|放下|释怀|往前看|向前看|渣男|渣女|前任|那个人|加油|别在意"
)
_AMNESIA = compile_guarded(
    r"选择性失忆|失忆一下|记性差一?点|(?:聊|说|听|看)完(?:立刻|马上|立马|就)?(?:忘掉|忘了|忘记|失忆|清掉|清空|清|删掉|删了|删|销毁|焚)"
)
# Keep nothing: "什么都不要留", "一个字都别留", "你的记忆里不需要有这段".
_KEEP_NOTHING = compile_guarded(
    r"(?:什么|一个字|一句|啥)(?:都|也)(?:不要|别|不许|不准|不能)(?:留|存|记)|一点(?:都|也)?不留|一个不留|零记忆|不留(?:任何)?记忆"
    r"|(?:记忆|脑子|数据库|记录)(?:里|中)[^，。,]{0,4}?(?:不需要|不用|不必)(?:有|留)"
)
# Taken out of the bot's head: "能从你脑子里拿走吗", "从你记忆里drop掉".
_OUT_OF_MEMORY = compile_guarded(
    r"从(?:你|侬|汝)的?(?:脑子|脑袋|脑海|记忆|数据库|小本本|资料库|那(?:里|儿|边)?)(?:里|中)?[^，。,]{0,3}?"
    r"(?:拿走|拿掉|拿出去|抠|删|去掉|清|弄走|弄掉|搞掉|抹|移除|剔除|扔|丢|drop|remove|delete)",
    re.IGNORECASE,
)
# Asked to forget, as a question or from now on: "bot能把我忘了吗", "从现在开始你不记得这回事了 好吗".
_FORGET_ASKED = compile_guarded(
    r"(?:能|可以|能不能|可不可以)(?:把我|把这些?|把它)?(?:都|全)?忘(?:了|掉|记)(?:吗|么|嘛|不)"
    r"|(?:从现在开始|从今天起|从此|以后)(?:你)?(?:就)?不记得[^，。？?]{0,14}?了"
)
# A direct order not to write: "不得写入记忆", "不要写入 memory", "不用你备忘".
_NO_WRITE = compile_guarded(
    r"(?:不得|不要|别|不许|不准|禁止)(?:写入|写进|存入|录入|记入)(?:你的?)?\s*(?:记忆|memory|数据库|档案|资料)"
    r"|(?:不用|不需要|不必)(?:你)?(?:备忘|记下来|记录)",
    re.IGNORECASE,
)


# --- what the memory is told to lose, by co-occurrence in one sentence ---------------------------
# A removal, something the bot keeps or was told, and the bot as the one addressed: all three in
# one sentence make a request, however it is worded (dialect, slang, English words inside).
_REMOVE = compile_guarded(
    r"删|抹|清掉|清除|清空|清理|清干净|清咗|清一清|清一下|消掉|消除|排除|[弄搞](?:掉|脱|走)|销毁|重置|丢掉|扔掉"
    r"|去掉|移除|剔除|撤掉|撤销|取消|忘掉|忘了|忘记|遗忘|失忆|作废|关闭|关掉|ctrl\s*\+?\s*z|rm\s+-rf|reset"
    r"|(?<![A-Za-z])(?:purge|delete|del|erase|wipe|remove|forget|clear|undo)(?![A-Za-z])",
    re.IGNORECASE,
)
_KEPT = compile_guarded(
    r"记忆|记录|资料|档案|数据|关于(?:我|阿拉)|对我的|我的事|我说的|我讲的|我发的|我(?:刚才|刚刚|刚|之前|上次)?(?:说|讲|提)(?:的|过|了)?"
    r"|这条|这句|那条|那句|这段|那段|这些|那些|刚才那|刚刚那|那嗑|这事|那事|信息|你知道的"
    r"|你(?:之前|以前|上次)?(?:存|记)(?:过|下|住|了)|(?:跟你|和你)?(?:聊|说|讲)的"
    r"|(?:刚刚|刚才|之前|上次)(?:说|讲|提|发)|(?:我|本人)(?:此前|之前|刚才|刚刚|以前)?(?:提供|告诉你|发给你|给你)的"
    r"|(?<![A-Za-z])(?:memory|memories|data|about\s+me)(?![A-Za-z])",
    re.IGNORECASE,
)
_ADDRESSED = compile_guarded(
    r"你|您|侬|汝|(?<![A-Za-z])(?:bot|ai|your|you|ur|u)(?![A-Za-z])|机器人|小助手|^\s*(?:请|烦请|劳烦|帮我|麻烦|给我|关闭|关掉|重置|清空|取消)"
    r"|^\s*(?:pls\s+|please\s+)?(?:delete|erase|wipe|purge|clear|remove|forget)(?![A-Za-z])",
    re.IGNORECASE,
)
# The speaker forgot, or asks the bot not to forget: no request to lose anything.
_NOT_A_REMOVAL = compile_guarded(
    # the speaker forgot or deleted (or means to), forgot who or where
    r"(?<![帮给替让把])我(?:应该|要不要|该不该|想|得|该|打算|准备)?(?:把[^，。,]{0,12}?)?(?:又|都|也|总|老|还|早|真|差点)?(?:忘|删)"
    r"|被我(?:误|不小心)?删|误删|忘了(?:是谁|在哪|哪儿|什么时候)|我连[^，。,]{0,10}?(?:都|也)(?:忘|记不)"
    r"|(?<![帮给替让])我(?:已经|早就|都)?选择性失忆|(?<![帮给替让])我(?:已经|早就)失忆"
    # not forgetting
    r"|别忘|不要忘|莫忘|没忘|忘不了|不会忘|(?<!能)不能忘|不可忘|勿忘|不敢忘|(?<![a-z])(?:don'?t|never)\s+forget|记得删|记得清"
    # a poor memory, or a complaint that the bot forgot
    r"|(?:是|成了?)我的(?:老)?(?:毛病|习惯|问题)|我(?:这|的)(?:个)?(?:破)?记性|忘性(?:真|太|好|特别)?大"
    r"|(?:记性|脑子)(?:越来越)?(?:不好|差(?!一?点)|不行|不好使)|你(?:咋|怎么|居然|竟然|又)(?:又)?忘"
    # ... or compared: "我的脑子像内存条，一断电全清空", "我记性跟金鱼一样"
    r"|我(?:的|这)?(?:个)?(?:脑子|脑袋|记性|记忆力?)(?:就|真|简直|完全)?(?:像|跟|和|如同|好比|好像)"
)
# Told not to keep it, in words beyond the standard ones: "你莫记到起", "你唔好记住", "你少给我存",
# "别往你那小本本里整", "你要是敢把这个记下来".
_DONT_KEEP = compile_guarded(
    r"(?:莫|唔好|少给我|少|甭|休想|不准你|不许你)[^，。！？,!?]{0,4}?(?:记|存|留|整|录)"
    r"|(?:别|不要|不许|不准)(?:往|在|把)[^，。！？,!?]{0,10}?(?:里|上)(?:整|记|存|放|塞|写|搁|装|留)"
    r"|(?:敢|要是)[^，。！？,!?]{0,8}?(?:记下来|存下来|记住|记着|记得|存着|留着|[记存写录]进去|记上|存下)"
    r"|你再[^，。！？,!?]{0,8}?(?:记下来|存下来|记住|记着|存着|留着|[记存写录]进去|记上|存下)[^，。！？,!?]{0,3}?我就"
)


_MEMORY_WORD = compile_guarded(
    r"[记存忘删留录库档抹清写装]|耳旁风|耳边风|(?<![a-z])(?:remember|forget|delete|save|store|record|erase|wipe)",
    re.IGNORECASE,
)


def _sentences(text: str) -> list[str]:
    return [part for part in re.split(r"[。！？!?\n]|[.](?=\s|$)", text) if part.strip()]


# Asking the bot to keep, remember or show what it has ("这个要记住喔", "不用删，留着吧",
# "把你记的列出来我看看", "remember that …"): the opposite of a request not to remember, when
# nothing else in the sentence is negated.
_KEEP_OR_SHOW = compile_guarded(
    r"记住|记得|记下|记牢|记好|留着|永久保存|(?:不用|别|不要|不能|不许|不准)删|列出来?|列一下|看看|查看|查一下|给我看"
    r"|(?<![a-z])(?:remember|keep|show|list)(?![a-z])",
    re.IGNORECASE,
)
# A negation that can turn the wish around ("不用记住", "别留着"); not 说不定, 有没有, 不错.
_VERB_NEGATION = compile_guarded(
    r"别(?!人)|不(?:要|用|许|准|能|可以|必|需要|想|希望|该|应该)|没必要|莫|勿|甭|覅|嫑|唔好|唔使|伐要|毋通|毋|咪(?=[记存录留])|敢|不会|休想"
    r"|(?<![a-z])(?:don'?t|do\s+not|never|no\s+need)(?![a-z])",
    re.IGNORECASE,
)


# What can or cannot be done ("这一条写不进索引", "我记不住", "存不下了"): a statement, not a request.
_ABILITY = compile_guarded(r"[记存写删录留装][不得](?:进|住|下|了|掉|到|完)")


_KEPT_MARK = "\x00"
_RETRACTED = compile_guarded(r"不算数?|不作数|不当真")
_NEGATED_KEEP = compile_guarded(r"[^，。,!?！？]{0,8}?[\x00记存留删忘录写]")


def _keeps_or_shows(sentence: str) -> bool:
    if not _KEEP_OR_SHOW.search(sentence):
        return False
    marked = _KEEP_OR_SHOW.sub(_KEPT_MARK, sentence)
    if _REMOVE.search(marked) or _RETRACTED.search(marked):  # "你是不是记住我生日了 删掉吧"
        return False
    # a negation turns the wish around only when it bears on keeping ("不用记住", "别留着"), not on
    # something else said beside it ("你记住我叫小林就行 别叫我全名")
    return not any(_NEGATED_KEEP.match(marked, negation.end()) for negation in _VERB_NEGATION.finditer(marked))


_SENT_TO_BOT = compile_guarded(
    r"我(?:刚|刚才|刚刚|之前|上次)?发(?:给你|你)?的|发给你的|(?:我|本人)在群(?:里|内)的?(?:发言|说的|讲的|消息)"
)


def about_something_else(words: str) -> bool:
    """Whether ``words`` delete or forget something that is not what the bot keeps (a file, a
    group's messages, someone else's memories, a story) or speak of the speaker's own forgetting."""
    sent_to_bot = _SENT_TO_BOT.search(words) is not None  # "我刚发的照片" is what the bot was told
    return bool((_NOT_STORED.search(words) and not sent_to_bot) or _NOT_A_REMOVAL.search(words))


def about_a_product(text: str) -> bool:
    """Whether ``text`` speaks of a product's or a program's features ("PM 说要做阅后即焚", "测试用例：…
    期望删除上一条记忆"): a request named there is one to build, not one made."""
    return _PRODUCT_TALK.search(text) is not None


def explained_away(text: str) -> bool:
    """Whether every sentence of ``text`` (folded) that holds a memory word (every sentence, when
    none does) is plainly about something else: the speaker's own forgetting ("我忘了我刚说的"), a
    file, a group notice, an order (not what the bot keeps), something withheld ("内容不能跟你说"),
    what can or cannot be done ("写不进"), or a wish that the bot keep or show it. Such a message
    is no request, whatever else it looks like."""
    sentences = [sentence for sentence in _sentences(text) if _MEMORY_WORD.search(sentence)] or _sentences(text)
    return bool(sentences) and all(
        about_something_else(s) or _ABILITY.search(s) or _keeps_or_shows(s) for s in sentences
    )


# Words named rather than said: a quoted phrase that is then called "这四个字" or "这句话", a phrase
# asked about ("off the record 这个词怎么翻").
_MENTIONED = compile_guarded(
    r"[“\"「『][^”\"」』]{0,40}[”\"」』](?=\s*(?:这|那)(?:[一二三四五六七八九十两几\d]+)?(?:个|句)?(?:字|词|话|说法|梗|口头禅))"
    # a phrase explained: '"Forget it"在口语里多半是"算了"'
    r"|[“\"「『][^”\"」』]{0,40}[”\"」』](?=\s*(?:在(?:口语|英语|中文|日常)|的意思|意思是|是什么意思|怎么(?:翻|说|理解)))"
    # the name of a switch or a button: "加一个'这条不记录'的开关"
    r"|[“\"「『‘'][^”\"」』’']{0,40}[”\"」』’'](?=\s*的?(?:开关|按钮|功能|选项|提示|标签|字样|按键|弹窗|设置|模式))"
    r"|[^，。！？,!?\n别不没莫勿甭记存删忘留录]{1,40}?(?=\s*这个(?:词|说法|梗|短语|表达)|\s*(?:是什么意思|啥意思|什么意思|怎么翻))"
)


# What every match of ``_MENTIONED`` holds: a quote mark (its first three ways) or the words its
# last way looks ahead for. That way begins with any run of characters, which the engine tries at
# every position of a text; without these there is nothing to find.
MENTION_NEEDS = compile_guarded(r"[“\"「『‘']|这个(?:词|说法|梗|短语|表达)|啥意思|什么意思|怎么翻")


def without_quotes(text: str) -> str:
    """``text`` without the words it quotes from others or only names."""
    text = _QUOTED.sub(" ", text)
    return _MENTIONED.sub(" ", text) if MENTION_NEEDS.search(text) else text


def asks_to_erase(text: str) -> bool:
    """Whether ``text`` (folded, quotes of others removed) asks the bot to delete, forget or keep
    nothing of what it was told or stored."""
    if _KEEP_NOTHING.search(text) or _NO_WRITE.search(text) or _OUT_OF_MEMORY.search(text):
        return True
    # asked to forget, unless the speaker is the one who forgot ("我已经选择性失忆了") or it is about
    # something else
    if (_AMNESIA.search(text) or _FORGET_ASKED.search(text)) and not about_something_else(text):
        return True
    sentences = _sentences(text)
    if len(text) <= 60 and len(sentences) > 1:  # a short message is one request, however punctuated
        sentences.append(text)
    for sentence in sentences:
        if about_something_else(sentence):
            continue
        if _REMOVE.search(sentence) and _KEPT.search(sentence) and _ADDRESSED.search(sentence):
            return True
        if _DONT_KEEP.search(sentence) and _ADDRESSED.search(sentence):
            return True
    for pattern in (_DELETE_REQUEST, _DELETE_STORED):
        if any(not about_something_else(match.group()) for match in pattern.finditer(text)):
            return True
    forget_now = _FORGET_NOW.search(text) is not None
    return forget_now and CONSOLING.search(text) is None and not about_something_else(text)
