"""Candidate values for the learned secret model: spans of a message that could be a secret by
their shape alone (a password-like or random token, a code of digits, spaced or grouped), less the
values that are public by what they are (a public key, a digest, a pay-to address, a masked or
published number, a hotline, a price or a room with no word near it that could name a code). The
model (``learned``) is asked only about these; the rules (``credentials``, ``contextual``) never
see this module.
"""

from __future__ import annotations

import re

from ..regex_start import compile_guarded
from . import shapes
from .codes import public_test_cards
from .contextual import (
    _A,
    _CHAT_NUMBERS,
    _I,
    _NOT_SECRET_TALK,
    _SEED_WORDS,
    _TRIVIAL_DIGITS,
    _numbers,
    _ordinary,
    _password_like,
    _tokens,
    described,
)
from .rules import Span, shared_publicly

_SPACED_DIGITS = compile_guarded(
    r"(?<![\w.\-])(?P<v>\d(?:[ \-]\d){2,7}|\d{2}(?:[ \-]\d{2}){2,5}|\d{3}[ \-]\d{3})(?![\w.\-])", _A
)
# Codes listed one after another ("73421109 58536843 45801709"): backup codes, not one long number.
_CODE_LIST = compile_guarded(r"(?<![\w.\-])(?P<v>\d{6,10}(?:[ ,，、]+\d{6,10}){2,})(?![\w.\-])", _A)
# A combination in dashes ("36-12-88"): not a date, whose year has four digits.
_DASHED = compile_guarded(r"(?<![\w.\-])(?P<v>\d{1,3}(?:-\d{1,3}){2,5})(?![\w.\-])", _A)
_THREE_DIGITS = compile_guarded(r"(?<![\w./%\-])(?<!\w:)(?P<v>\d{3})(?![\w.:/%\-])", _A)
# Codes in groups (a setup key, recovery codes): four or more groups of four.
_GROUPED = compile_guarded(r"(?<![A-Za-z0-9])(?:[A-Za-z0-9]{4}[ \t,，]+){3,}[A-Za-z0-9]{4}(?![A-Za-z0-9])", _A)
# A short code in capitals with a digit ("KFJD5", "EKS28S").
_CAPS_CODE = compile_guarded(r"(?<![A-Za-z0-9])(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{5,8}(?![A-Za-z0-9])", _A)
# Values that are public by what they are: an address to pay to, a company's registration code,
# an encoding shown decoded, a server's settings.
_PUBLIC_VALUE_TALK = compile_guarded(
    r"收款地址|钱包地址|打赏地址|充值地址|链上|(?<![A-Za-z])(?:address|addr)(?![A-Za-z])"
    r"|信用代码|营业执照|税号|base64|解码|编码|作业|习题|公式|方程|(?<![A-Za-z])git\s+(?:revert|checkout|show|cherry-pick|reset|log|diff|bisect|rebase)"
    r"|^\s*\[[a-z_]+\]\s*$",
    _I | re.MULTILINE,
)
_PUBLIC_BLOCK = compile_guarded(r"-----BEGIN [A-Z ]*PUBLIC KEY-----|ssh-(?:rsa|ed25519|dss) |ecdsa-sha2-")


_HEX = compile_guarded(r"[0-9a-f]{7,64}", _I)
_DIGEST_LENGTHS = (7, 40, 64)
_ALNUM = compile_guarded(r"[0-9A-Za-z]")
_LETTER_TOKEN = compile_guarded(r"(?=[\w!@#$%^&*.+=/\-]*[A-Za-z])[\w!@#$%^&*.+=/\-]{4,}", _A)
_SEPARATED = compile_guarded(r"[0-9A-Za-z\u4e00-\u9fff][ \t,，\-][0-9A-Za-z\u4e00-\u9fff]")
_CAPITAL = compile_guarded(r"[A-Z]")
# A security question asked, not answered ("密保问题：你母亲的名字是什么来着").
# ... or chosen, named by what it asks ("密保问题我选的是'第一只宠物的名字'").
_ONLY_ASKED = compile_guarded(r"(?:什么|啥|哪个|哪里|多少|来着|吗|呢|[?？]|的名字|的名称|哪一?年|哪所学校)\W{0,8}$")
_SECURITY_QUESTION = compile_guarded(
    r"密保|安全问题|安全提示问题|(?<![A-Za-z])security\s+questions?(?![A-Za-z])"
    r"|(?:问题|问我|问你|问的是)[^。！？!?]{0,24}?(?:答案|填的是|答的是|我填|我答|(?<![空要])填\s)",
    _I,
)


def names_security_question(text: str) -> bool:
    """Whether ``text`` (folded) speaks of a security question, and not only to ask it: its
    answer has no shape."""
    return _SECURITY_QUESTION.search(text) is not None and _ONLY_ASKED.search(text[-12:]) is None


# A value shown masked ("6222 **** **** 3108", "3201**********123X") is a value hidden, not given.
_MASK = compile_guarded(r"[*＊]{3,}|[xX]{4,}|•{3,}")


def _masked(text: str, span: Span) -> bool:
    start, end = span
    return bool(_MASK.search(text[max(0, start - 6) : end + 6]))


# A hotline or a mobile number written in groups ("400 800 1234", "138-0013-8000") is no code.
_PHONE = compile_guarded(r"(?<!\d)(?:[48]00[\s\-]?\d{3}[\s\-]?\d{4}|1[3-9]\d[\s\-]?\d{4}[\s\-]?\d{4})(?!\d)")
# A number of four or five digits is asked about only in a message with a word that may name a
# code, a lock or the handing over of a value; without one it is a price, a room or a port.
_SHORT_NUMBER = compile_guarded(r"\d{4,5}")
_STATUS_TALK = compile_guarded(r"状态码|返回码|响应码|(?<![A-Za-z])(?:http|status)(?![A-Za-z])", _I)
_STATUS_CODE = compile_guarded(r"[1-5]\d\d")
# The plain shapes of public codes: a short number, or capitals and digits, maybe in dashed groups
# ("302", "A3-215", "K-3021", "48V350W", "CVE-2024-3094"); a password mixes in lower case or symbols.
_PLAIN_CODE = compile_guarded(r"\d{1,5}|(?=[A-Z0-9\-]*[A-Z])[A-Z0-9]+(?:-[A-Z0-9]+)*")
_ANY_CODE_WORD = compile_guarded(
    r"码|密|口令|验证|锁|卡|门|柜|箱|输|填|登(?!记)|短信|账号|账户|帐号|报|念|发你|给你|数字|位|背面|背后|开机"
    r"|(?<![A-Za-z])(?:pin|code|key|token|pass\w*|pw|pwd|otp)(?![A-Za-z])|(?<![A-Za-z0-9.])mm(?![A-Za-z])",
    _I,
)


# Where someone sits or works: a desk, a seat, a meeting room.
_SEAT_TALK = compile_guarded(r"工位|座位|座号|位子|坐|卡座|卡位|工区|格子间|席位|考场|机位|车厢|登机牌|会议室")
# A message about a device and its parts: its model numbers ("i5-13400F 加 B760M", "WH-1000XM5",
# "RTX4070S") are printed on the box.
_PRODUCT_TALK = compile_guarded(
    r"型号|配置|配[的了]|新配|入手|装机|电脑|主机|显卡|处理器|主板|内存|硬盘|固态|显示器|相机|镜头|耳机|手机|笔记本|平板|机型|芯片|键盘|鼠标"
    r"|音箱|电视|空调|冰箱|洗衣机|路由|(?<![A-Za-z])(?:cpu|gpu|ssd|ram|ddr\d?)(?![A-Za-z])",
    _I,
)
# The shape of a model number: a series in capitals (or one small letter and a generation digit), a
# number, a suffix of a few capitals (i5-13400F, R7-7800X3D, B760M, RTX4070Ti, SN850X, WH-1000XM5,
# DDR5-6000); a word in small letters before digits ("admin123", "dance1122") is a password's shape.
_MODEL_CODE = compile_guarded(
    r"(?-i:(?:[A-Z]{1,5}\d?|[a-z]\d)-?)?\d{2,5}(?-i:[A-Z]{1,3}\d?[A-Z]{0,2}|Ti|Pro|Max|Plus)?(?:-[A-Za-z0-9]{1,5})?"
)
# Words that name a secret, what it opens or how it is typed (narrower than ``_ANY_CODE_WORD``, where 位
# also stands).
_SECRET_WORD = compile_guarded(
    r"码|密|口令|验证|锁|门|柜|箱|按|输|填|保险|账号|账户|帐号|登录|登陆"
    r"|(?<![A-Za-z])(?:pin|code|key|token|pass\w*|pw|pwd|otp)(?![A-Za-z])|(?<![A-Za-z0-9.])mm(?![A-Za-z])",
    _I,
)


def _model_code(text: str, span: Span) -> bool:
    """Whether ``span`` is a whole word of a model number's shape (not the tail of "Lmxbq@2585RV")."""
    start, end = span
    alone = not _GLUED.match(text[start - 1 : start]) and not _GLUED.match(text[end : end + 1])
    return alone and _MODEL_CODE.fullmatch(text, start, end) is not None


_GLUED = compile_guarded(r"[A-Za-z0-9!@#$%^&*_+=/\\.\-]")


def value_candidates(text: str) -> list[Span]:
    """Spans of ``text`` (folded) that could be a secret by their shape alone, whatever the
    message says about them: a password-like or random token, a code of digits (spaced or not).
    Empty when the message is about something public (a public key, a checksum, a commit), so
    that a model is never asked about those."""
    if _ALNUM.search(text) is None and " " not in text:  # no value of any of these shapes
        return []
    spans: list[Span] = []
    # a token that is no number must hold a letter: without one, only the number rules below apply
    for start, end, value in _tokens(text) if _LETTER_TOKEN.search(text) else ():
        value = value.strip(".,")
        # a commit (7 hex digits, as git shows it) or a digest (40 or 64), unless a cue says key (the
        # rules' call); other runs of hex digits (8-digit backup codes, a 32-digit appsecret) may be secrets
        if _HEX.fullmatch(value) and len(value) in _DIGEST_LENGTHS:
            continue
        if _password_like(value) or (len(value) >= 12 and not _ordinary(value) and shapes.high_entropy_key(value)):
            spans.append((start, end))
    # a date in eight digits (生日19980312, 20261203的日志) is a date to the model: a PIN chosen from
    # one is the rules' (密码是我生日19980312)
    spans.extend(match.span("v") for match in _numbers(text) if not shapes.compact_date(match.group("v")))
    if _SEPARATED.search(text):  # codes in groups, digits spaced out, a wallet's words
        spans.extend(
            match.span("v") for pattern in (_SPACED_DIGITS, _DASHED, _CODE_LIST) for match in pattern.finditer(text)
        )
        spans.extend(match.span() for pattern in (_GROUPED, _SEED_WORDS) for match in pattern.finditer(text))
    if _CAPITAL.search(text):
        spans.extend(match.span() for match in _CAPS_CODE.finditer(text) if not _ordinary(match.group()))
    for match in _THREE_DIGITS.finditer(text):  # a CVV, a luggage lock
        if not described(text, match.start(), match.end()):
            spans.append(match.span("v"))
    if not spans or _NOT_SECRET_TALK.search(text) or _PUBLIC_BLOCK.search(text) or _PUBLIC_VALUE_TALK.search(text):
        return []
    # numbers said for what they mean (520), and the weakest passwords, said as examples ("别设123456")
    spans = [
        span
        for span in spans
        if text[span[0] : span[1]] not in _CHAT_NUMBERS and not _TRIVIAL_DIGITS.match(text[span[0] : span[1]])
    ]
    if not _ANY_CODE_WORD.search(text) and all(_PLAIN_CODE.fullmatch(text[start:end]) for start, end in spans):
        # a price, a room, a port, a booth, a product's or a standard's code: without a word that may
        # name a code, values of these shapes were secrets in 2 of about 160 labelled lines
        return []
    if _SEAT_TALK.search(text) and not _SECRET_WORD.search(text):
        # "我工位号3F117", "座位 C12", "我搬到 8F-B36 了，原来那个工位给新人了": a desk's, a seat's or a
        # room's number, in a message that names no code, password or lock
        spans = [span for span in spans if not _PLAIN_CODE.fullmatch(text[span[0] : span[1]])]
    if _PRODUCT_TALK.search(text) and not _SECRET_WORD.search(text):
        models = [span for span in spans if _model_code(text, span)]
        spans = [span for span in spans if not any(start <= span[0] and span[1] <= end for start, end in models)]
    if _STATUS_TALK.search(text):  # "状态码 401 是未认证，403 是无权限"
        spans = [span for span in spans if not _STATUS_CODE.fullmatch(text[span[0] : span[1]])]
    published = public_test_cards(text) + [match.span() for match in _PHONE.finditer(text)]
    return sorted(
        {
            span
            for span in spans
            if not _masked(text, span)
            and not shared_publicly(text, span[0])
            and not any(start <= span[0] and span[1] <= end for start, end in published)
        }
    )
