"""Requests not to remember in English, pinyin, Korean and Japanese ("don't save this", "bie ji a",
"저장하지 마", "記録しないで"): the learned models know too little of them, so these rules decide alone."""

from __future__ import annotations

import re

from ..regex_start import compile_guarded
from .reported import said_by_the_speaker
from .requests import about_a_product

_I = re.IGNORECASE

_EN_OBJECT = (
    r"(?:this|that|it|what|anything|everything|any|these|those|my|our|the\s+(?:conversation|chat|last))(?![a-z])"
)
_EN_DONT = compile_guarded(
    r"(?<![a-z'])(?:please\s+|pls\s+|plz\s+)?(?:don'?t|do\s+not|never|(?:can|could|would)\s+(?:you|u)\s+not)\s+(?:ever\s+)?"
    rf"(?:(?:remember|memori[sz]e|record|save|store|log|keep|retain|write\s+down|note(?:\s+down)?)\s+{_EN_OBJECT}"
    r"|keep\s+(?:a\s+|any\s+)?(?:record|note|log|copy)s?\s+of"
    rf"|(?:write|note|jot)\s+{_EN_OBJECT}\s+down"
    r"|want\s+(?:you|it|the\s+bot)\s+to\s+(?:remember|record|save|store|keep|memori[sz]e)"
    r"|(?:remember|memori[sz]e|record|save|store)(?=\s*(?:$|[^\x00-\x7f]|[.!,;:)])))"
    rf"|no\s+need\s+to\s+(?:keep|remember|store|save|record)\s+{_EN_OBJECT}"
    # abbreviated: "dnt rmb this plz"
    r"|(?<![a-z])(?:dnt|dont|don'?t)\s+(?:rmb|rmbr|remb|rember|memo)\s+(?:this|that|it|pls|plz)(?![a-z])"
    r"|(?:^|[,.!?;]\s*)(?:but\s+)?not\s+in\s+(?:your|ur)\s+(?:memory|memories|records?|notes|db|database)"
    r"|keep\s+(?:this|that|it)\s+out\s+of\s+(?:your|ur)\s+(?:memory|memories|records?|notes|db|database)"
    r"|pretend\s+(?:you|u)\s+(?:never|didn'?t)\s+(?:heard?|saw|see|read)"
    r"|(?:rather|prefer(?:\s+it\s+if)?)\s+(?:you|u)\s+(?:not|didn'?t|don'?t|never)\s+(?:keep|remember|store|save|record|log|memori[sz]e)",
    _I,
)
_EN_ERASE_MINE = compile_guarded(
    r"(?:^|[,.!?;，。！？]\s*|(?:please|pls|plz|bot|hey|can\s+(?:you|u)|could\s+(?:you|u))[\s,]+)"
    r"(?:wipe|delete|erase|clear|purge|remove|forget|rm\s+-rf)\s+(?:all\s+)?(?:of\s+)?(?:my|your)\s+"
    r"(?:data|info|information|details|records?|history|memor(?:y|ies)|profile|stuff)(?![a-z])"
    r"|(?<![a-z])rm\s+-rf\s+(?:你|your|my)"
    r"|(?<![a-z])(?:wipe|delete|erase|clear|purge|remove|forget|drop|scratch)\s+(?:whatever|everything|anything|all|what)\s+"
    r"(?:that\s+)?(?:you|u)(?:'ve|\s+have)?\s+(?:stored|saved|recorded|kept|know|remember|learned|got)"
    r"|(?<![a-z])(?:wipe|delete|erase|remove|drop|scratch|purge)\s+(?:that|this|it|those|these)\s+(?:from|out\s+of)\s+"
    r"(?:your|ur|the\s+bot'?s?)\s+(?:memory|memories|records?|database|db|notes|brain|head)",
    _I,
)
# "Please delete what I told you about my salary" (as an order: not "she told me to delete …").
_EN_ERASE_TOLD = compile_guarded(
    r"(?<![a-z])(?:wipe|delete|erase|remove|drop|scratch|purge)\s+(?:what|everything|anything|all|whatever)\s+(?:that\s+)?i\s+"
    r"(?:just\s+)?(?:told|said\s+to|shared\s+with|mentioned\s+to|sent)\s+(?:you|u)(?![a-z])",
    _I,
)
_EN_SUBJECT = compile_guarded(r"(?:^|\s)(?:i|we|they|he|she|you|it|people|u)\s*$", _I)
_EN_FORGET = compile_guarded(
    r"(?<![a-z'])(?:please|pls|plz|just|so)\s+forget\s+(?:about\s+)?it(?![a-z])"  # "… about me — please forget it"
    r"|(?<![a-z'])forget\s+(?:about\s+)?(?:this|that|what\s+i|everything\s+(?:i|you\s+know|about)|all\s+(?:of\s+)?this"
    r"|(?:that\s+)?i\s+(?:ever\s+)?(?:said|mentioned|told|brought\s+up|sent)|my|me)\b"
    # in chat shorthand: "plz 4get wat i said"
    r"|(?<![a-z'])(?:4get|forgt|frget)\s+(?:about\s+)?(?:this|that|it|wat|what|wht|my|me)(?![a-z])",
    _I,
)
# Before "forget": a subject (maybe with an adverb: "I always forget my keys") or a modal makes it
# a statement, not an order.
_EN_NOT_FORGET = compile_guarded(
    r"(?:(?<![a-z])(?:i|we|you|u|they|he|she|people)\s+(?:[a-z]+ly|always|often|sometimes|never|still|also|just|even"
    r"|usually|kinda|totally|def)\s+"
    r"|(?:don'?t|never|not|i|we|to|you|will|won'?t|can'?t|might|may|would|could|should|dont|'ll|'d))\s*$",
    _I,
)
# English inside Chinese has no word boundary before it ("这句off the record哈"): letters bound it.
# Korean and Japanese, written by people who chat in them: "방금 내가 한 말 저장하지 마", "記録しないで".
_OTHER_LANGUAGES = compile_guarded(
    r"(?:저장|기억|기록)(?:하지|하진)\s*마|잊어\s*(?:줘|버려|주세요)|지워\s*(?:줘|주세요)"
    r"|(?:記録|保存|記憶)しないで|覚えないで|忘れて(?:ください|くれ|ね)"
)
_EN_OFF_RECORD = compile_guarded(
    r"(?<![a-z])off\s+the\s+record(?![a-z])|(?<![a-z])(?:didn'?t|did\s+not|never)\s+hear\s+(?:this|that|it|me)(?![a-z])",
    _I,
)


# Chinese typed in pinyin: "bie ji", "buyao cun", "bu yao jilu".
_PINYIN = compile_guarded(
    r"(?<![a-z])(?:bie|buyao|bu\s+yao|buyong|bu\s+yong)\s*(?:ji|cun|jilu|ji\s+lu|baocun|bao\s+cun|jizhu|ji\s+zhu)(?![a-z])"
    r"|(?<![a-z])(?:ni\s*)?(?:wang|shan)\s*(?:le|diao|ji|chu)\s*(?:ba|ha|a)(?![a-z])"
    # "bie wang nao zi li ji a": a few words between (not 别忘了 "bie wang le", not 记得 "ji de")
    r"|(?<![a-z])(?:bie|buyao|bu\s+yao)\s+(?!wang\s*(?:le|ji|diao))(?:[a-z]+\s+){1,6}"
    # not a word that only ends in ji (自己 zi ji, 手机 shou ji, 日记 ri ji, 司机 si ji …)
    r"(?<!zi )(?<!shou )(?<!ri )(?<!bi )(?<!deng )(?<!biao )(?<!wang )(?<!si )(?<!fei )(?<!yi )(?<!ji )"
    r"(?:ji|cun|jilu|baocun|jizhu)(?!\s*de)(?![a-z])"
    # "wang ji wo gang cai shuo de hua": forget what I just said
    r"|(?<![a-z])(?:wang|shan)\s*(?:le|diao|ji|chu)\s+(?:wo\s*)?(?:gang(?:\s*(?:cai|gang))?|zhe\s*(?:ge|tiao|ju|duan)|na\s*(?:ge|tiao|ju|duan)|shang\s*mian)(?![a-z])",
    re.IGNORECASE,
)


_TITLE = compile_guarded(r"《[^》]{0,40}》")


# A feature talked about, not a request made: 'Our PM wants a "forget me" button'.
_EN_PRODUCT = compile_guarded(
    r"(?<![a-z])(?:button|feature|toggle|endpoint|roadmap|spec|requirement|ticket|user\s+story|sprint|pm)s?(?![a-z])",
    _I,
)


def _english(text: str) -> bool:
    text = _TITLE.sub(" ", text)  # a title is named, not said: 《Forget Me Not》
    if _EN_PRODUCT.search(text) or about_a_product(text):
        return False
    if _EN_OFF_RECORD.search(text) or _EN_ERASE_MINE.search(text):
        return True
    for match in _EN_DONT.finditer(text):
        if "want" in match.group().lower() or not _EN_SUBJECT.search(text[: match.start()]):
            return True
    orders = [*_EN_FORGET.finditer(text), *_EN_ERASE_TOLD.finditer(text)]
    return any(not _EN_NOT_FORGET.search(text[: match.start()]) for match in orders)


def foreign_rules_ask(text: str) -> bool:
    """A request in English, pinyin, Korean or Japanese: the learned model knows too little of them."""
    return _english(text) or bool(_PINYIN.search(text)) or said_by_the_speaker(_OTHER_LANGUAGES, text)
