"""What every secret rule shares: the regex flags, the clause and quote classes, the value span
helpers, and the words after a value that make it a count or a unit rather than a secret."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from ..regex_start import compile_guarded

_A = re.ASCII  # \w, \d, \s and \b are ASCII: a CJK character next to a value is a boundary
_I = re.IGNORECASE | _A
_STOP = r"[^，。！？,!?；,!?;\n]"  # a character inside one clause
_QUOTE = r"[\"'“‘「『`]?"
_PW_CHARS = r"A-Za-z0-9!@#$%^&*._+\-=~?/\\|<>\[\]{}"
_PW_VALUE = rf"(?<![{_PW_CHARS}])(?P<v>[{_PW_CHARS}]{{3,64}})(?![{_PW_CHARS}])"
# 密码 as a figure of speech, "the secret of": 流量密码, 财富密码, 摩斯密码.
_FIGURATIVE_PASSWORD = r"(?<!流量)(?<!财富)(?<!摩斯)(?<!成功)(?<!幸福)(?<!快乐)(?<!长寿)(?<!致富)(?<!生命)"


# A bank named short, one character and 行 (工行, 招行, and any other bank's), not the words that end in 行 and
# can stand where a bank does ("是不行的", "可行", "流行", "进行") nor a count of lines ("第三行卡住了").
BANK_SHORT_NAME = r"(?![不可流进一二两三四五六七八九十几多])[\u4e00-\u9fff]行"


# After a value: a count, a unit or an example marker means the "value" is not a password.
_NOT_A_VALUE_AFTER = compile_guarded(
    r"\s*(?:位|个|次|天|小时|分钟|秒|年(?![底初中])|月(?![底初中])|日(?![后常])|号|岁|块|元|%|字|以上|以内|左右|多|bit|加密|哈希|算法|格式|方式|字段|校验|编码"
    r"|这种|之类|那样|这样|一类|开头|结尾|的人|的用户|(?:设|改|给|定|弄|换|说)的|告诉|知道|管|chars?\b|characters?\b|digits?\b|times?\b)",
    _I,
)
# A value shown as an example or a placeholder ("示例密码 P@ssw0rd 只是占位符", "教程里那个 password123
# 只是举例") gives nothing away.
_EXAMPLE_NAMED = compile_guarded(
    r"示例|样例|举例|举个例子|打个比方|例如|比如|占位|教程|例题|习题|假设|假如|随便(?:填|输|写|设)|(?<![A-Za-z])(?:example|sample|placeholder)(?![A-Za-z])",
    _I,
)
_EXAMPLE_AFTER = compile_guarded(
    r"^[^，。！？,!?]{0,4}?(?:只是|就是|是)?(?:占位符?|示例|演示|假(?:的|数据)|(?:官方)?示例值|样例|举(?:个)?例|(?:打)?比方|例子)",
    _I,
)
Span = tuple[int, int]


def named_example(text: str, start: int, end: int) -> bool:
    """Whether the value at ``start:end`` of ``text`` is named an example or a placeholder."""
    return bool(_EXAMPLE_NAMED.search(text[max(0, start - 12) : start]) or _EXAMPLE_AFTER.match(text[end : end + 14]))


# A puzzle's code is the game's, and every player's: "密室逃脱第二关答案是 0315", "解谜游戏 密码是3-1-4".
PUZZLE_TALK = compile_guarded(
    # the game, not the shop that hosts it ("剧本杀店后门密码锁 951357" is the shop's door)
    r"(?:密室|剧本杀|桌游)(?!店|馆|吧|的店)|谜题|谜底|解谜|攻略里|通关攻略|24点|算24|数独|(?<![A-Za-z])(?:escape\s+room|puzzle)",
    _I,
)

# A share or redeem code the sender calls public ("提取码 x36t 随便传", "全服兑换码 ANNIV2024 大家都能领").
_SHARE_CODE_BEFORE = compile_guarded(r"(?:提取码|兑换码|礼包码|口令码)[^，。！？,!?]{0,4}$")
_SHARED_PUBLICLY = compile_guarded(
    r"公开|随便(?:传|转|下|发|用|看)|大家都能|全班都能|都可以下|全服|官方|人人都能|直播(?:间)?(?:里)?发的|主播发|公告"
)


def shared_publicly(text: str, start: int) -> bool:
    """Whether the value at ``start`` of ``text`` is a share or redeem code given to everyone."""
    return bool(_SHARE_CODE_BEFORE.search(text[max(0, start - 12) : start]) and _SHARED_PUBLICLY.search(text))


Rule = Callable[[str], Iterator[Span]]


def _value_spans(pattern: re.Pattern[str], check: Callable[[re.Match[str], str], bool]) -> Rule:
    def rule(text: str) -> Iterator[Span]:
        for match in pattern.finditer(text):
            if check(match, text):
                yield _trimmed(match, text)

    return rule


def _trimmed(match: re.Match[str], text: str) -> Span:
    """The value's span without trailing sentence punctuation that the value pattern let in."""
    start, end = match.span("v")
    while end > start + 1 and text[end - 1] in ".,?~":
        end -= 1
    return start, end


def _after(match: re.Match[str], text: str, group: str = "v") -> str:
    return text[match.end(group) : match.end(group) + 12]


def _always(match: re.Match[str], text: str) -> bool:
    """The check of a pattern whose match is the secret (a private key block, an Authorization header)."""
    return True
