"""Someone else's words, reported: "老师说请忘记…", "他跟我说 别把这事记心里", "有个姐妹让bot忘了她的地址".
What follows a report is not the speaker's own request (nor is a report that was never made: "还没跟家里说")."""

from __future__ import annotations

import re

from ..regex_start import compile_guarded

_REPORTED = compile_guarded(
    r"(?:老师|他|她|妈|爸|领导|老板|老大|主管|经理|组长|班长|教授|同学|朋友|闺蜜|室友|同事|老公|老婆|对象|男朋友|女朋友|奶奶|爷爷|外婆|姥姥"
    r"|婆婆|公公|大爷|大妈|阿姨|叔叔|顾客|患者|病人|孩子|用户|客户|网友|有人|别人|人家|大家|网上|书上|医生|教练|师傅|学长|学姐"
    r"|姐妹|兄弟|哥们|群友|大佬|有个人|班主任|辅导员|校长|主任|队长|店长|房东|物业|客服|导游|教官|护士|律师|邻居|亲戚|舅|姑|姨"
    r"|表哥|表姐|堂哥|堂姐|师父|前辈|上司|面试官|家长|宝妈)"
    r"[^，。,你您]{0,6}?(?:说|讲|让|叫|要求|劝)(?!的)"
    r"|是谁说的|俗话说|老话说|古人说|有句话(?:说|叫)|[\u4e00-\u9fff]{1,3}问我"
    r"|(?:跟|对|和)(?![你您])[^，。,]{1,6}(?:说|讲)(?!的)"
)


def said_by_the_speaker(pattern: re.Pattern[str], text: str) -> bool:
    """Whether ``pattern`` matches words that are not reported from someone else ("韩国网友说 잊어버려",
    "有个姐妹让bot忘了她的地址": the match's own first word may be the report's verb)."""
    return any(not reported_before(text, match.start() + 1, 13) for match in pattern.finditer(text))


def reported_before(text: str, position: int, window: int = 12) -> bool:
    """Whether the ``window`` characters before ``position`` report someone else's words ("老师说请忘记…",
    "他跟我说 别把这事记心里"), so that what follows is not the speaker's."""
    return reports(text[max(0, position - window) : position])


# A report not made: "还没跟家里说", "没告诉爸妈".
_NOT_TOLD = compile_guarded(r"[没不未](?:有)?(?:跟|和|对|告诉)[^，。,]{0,3}$")


def reports(words: str) -> bool:
    """Whether ``words`` report someone else's words (not a report that was not made)."""
    return any(not _NOT_TOLD.search(words[: match.start() + 1]) for match in _REPORTED.finditer(words))
