"""Codes and numbers: one-time codes near a code cue, CVVs, lock combinations, security-question
answers, recovery codes, and identity, passport and bank card numbers (the MOD 11-2 check of a
身份证号, Luhn for cards). Each rule finds a candidate value and checks it (``rules.value_spans``)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..regex_start import compile_guarded
from . import shapes
from .rules import _A, _I, _NOT_A_VALUE_AFTER, BANK_SHORT_NAME, PUZZLE_TALK, Rule, Span, _after, _always, _value_spans

# --- one-time codes, security answers, recovery codes -------------------------------------------

_OTP_ALNUM_CUES = ("提取码", "分享码", "授权码", "兑换码", "兑奖码", "激活码", "卡密", "核销码")
_OTP_PICKUP_CUES = ("取件码", "取货码", "提货码", "取票码", "开锁码", "开门码")
_OTP_CUE = (
    r"(?P<cue>验证码|(?<![a-z])yanzhengma|校验码|动态码|确认码|登录码|短信码|认证码|授权码|提取码|分享码|取件码|取货码|提货码|取票码|核销码|兑奖码|兑换码"
    r"|开锁码|开门码|激活码|卡密|一次性(?:密码|验证码|口令)|动态(?:密码|口令)|临时密码|验证代码"
    r"|(?:安全验证|验证|校验|认证|登录|短信)(?:用)?的码|收到(?:了)?(?:一?个|一条|的)?码"
    r"|(?<![A-Za-z])yzm(?![A-Za-z])"
    r"|(?<![A-Za-z])(?:otp|2fa\s*code|verification\s+code|security\s+code|auth(?:entication)?\s+code|login\s+code"
    r"|one[\s-]time\s+(?:code|password|passcode))(?![A-Za-z]))"
)
_OTP_VALUE = (
    r"(?<![\w\-])(?P<v>[A-Za-z0-9]{4,6}(?:-[A-Za-z0-9]{4,6}){2,5}"
    r"|(?:[A-Za-z]?\d{1,3}-){1,3}\d{2,5}|\d(?: \d){3,7}|\d{2,3}(?: \d{2,3}){1,3}|\d{4,8}|[A-Za-z0-9]{4,32})"
    r"(?![\w\-]|\.\d)"
)
_OTP = compile_guarded(_OTP_CUE + r"(?P<w>[^。！？；!?;\n\d]{0,12}?)" + _OTP_VALUE, _I)
_OTP_REVERSE = compile_guarded(
    r"(?<![\w\-])(?P<v>\d{4,8})\s*(?:就是|是|为)\s*(?:你|您|我)?(?:的)?(?:本次)?(?:的)?(?:登录|短信|手机|注册|支付|身份)?"
    + _OTP_CUE,
    _I,
)
_OTP_GAP_BLOCK = compile_guarded(
    r"不|没|未|别|重发|重新|几|多少|客服|电话|热线|拨|秒|分钟|倒计时|有效期|过期|失败|错误|号|金额|价格|元|地址|第|订单|位|算法"
    r"|(?i:(?<![a-z])(?:iso|iec|gb|rfc|ieee|ansi|din|jis|astm|mod)(?![a-z]))"  # a standard named: "校验码按 ISO 7064"
)
_OTP_TIGHT_GAP = compile_guarded(r"^\s*(?:(?:是|为|就是|[:：=]|is)\s*)?$", _I)
_SERVICE_NUMBER = compile_guarded(r"^(?:100\d\d|95\d{3}|96\d{3}|12[0-3]\d\d|[48]00\d{7})$", _A)
_CVV = compile_guarded(
    r"(?:(?<![A-Za-z])(?:cvv2?|cvc2?|cvn2?)(?![A-Za-z])|安全码|卡背面?(?:的)?(?:后)?三位(?:数字|数)?"
    r"|签名(?:栏|条)[^，。！？,!?\d]{0,8}?(?:三位|三个)(?:数字|数|码)?|卡背(?:面|后)?[^，。！？,!?\d]{0,8}?(?:三位|三个)(?:数字|数|码)?)"
    r"\s*(?:[(（][^)）]{0,16}[)）])?\s*(?:是|为|[:：])?\s*"
    r"(?<!\d)(?P<v>\d{3,4})(?!\d)",
    _I,
)

_CVV_REVERSE = compile_guarded(
    r"(?<!\d)(?P<v>\d{3,4})(?!\d)[^。！？!?\n\d]{0,8}?(?:就是|即|是)?\s*(?:(?<![A-Za-z])(?:cvv2?|cvc2?|cvn2?)(?![A-Za-z])|安全码)",
    _I,
)

# A code typed in pinyin, its digits too: "yanzhengma wu san ba ling yi jiu".
_PINYIN_DIGIT = r"(?:ling|yi|yao|er|liang|san|si|wu|liu|qi|ba|jiu|dong|guai|gou)"
_PINYIN_CODE = compile_guarded(
    r"(?<![a-z])(?:yanzhengma|yzm|mima|mi\s?ma|kouling|code|pin)\s*(?:shi|is|[:：=])?\s*"
    rf"(?P<v>{_PINYIN_DIGIT}(?:\s*{_PINYIN_DIGIT}){{3,7}})(?![a-z])",
    _I,
)

# A lock's combination ("行李箱密码锁 179", "保险柜是 590314").
_LOCK_COMBINATION = compile_guarded(
    r"(?:(?:密码锁|密码箱|行李箱|保险柜|保险箱|门锁|车锁|挂锁)[^，。！？,!?\d]{0,6}?(?:密码)?(?:是|为|[:：]|改成了?|换成了?)?"
    r"|(?<![a-z])(?:lock|locker|safe|padlock)\s+(?:combo|combination|code)\s*(?:is|was|[:=])?)\s*"
    r"(?<![\d.])(?P<v>\d{3,8}|\d{1,3}(?:-\d{1,3}){2,4})(?![\d.])",
    _I,
)

_SQ_CUE = r"(?:密保|安全(?:提示)?问题|(?:密码)?提示问题|(?<![A-Za-z])security\s+questions?)"
_SQ_CONNECT = (
    r"(?:[:：=]|都是|就是|分别是|分别为|依次是|依次为|(?:按)?顺序是|是|为|is|(?:我)?(?:填|设|写|选|答|回答)的(?:是)?)"
)
_SQ_VALUE = r"(?P<v>[^，。！？,!?；,!?;\n]{1,40})"
_SECURITY_ANSWERS = (
    compile_guarded(rf"{_SQ_CUE}[^。！!\n]{{0,24}}?(?:答案|answer)\s*{_SQ_CONNECT}\s*{_SQ_VALUE}", _I),
    compile_guarded(rf"{_SQ_CUE}[^。！!\n]{{0,24}}?(?<![回问])答\s+{_SQ_VALUE}", _I),
    # "安全问题1 小学班主任的名字：黄建华": a question, then its answer after the colon
    compile_guarded(rf"(?:密保问题|安全(?:提示)?问题|提示问题)\s*\d?\s*[^：:？?\n，。]{{2,20}}[：:]\s*{_SQ_VALUE}", _I),
    # "密保里第一只宠物的名字是团子21"
    compile_guarded(
        rf"{_SQ_CUE}[^。！!\n]{{0,16}}?(?:名字|名称|学校|城市|老师|颜色|车|地方)(?:是|叫)\s*{_SQ_VALUE}", _I
    ),
    # "我填的是 x" gives the answer; "设的是 x" names the question chosen
    compile_guarded(rf"{_SQ_CUE}[^。！!\n]{{0,24}}?(?:我|当时)?(?:答|回答|填|写)的(?:是)?\s*{_SQ_VALUE}", _I),
    compile_guarded(
        rf"{_SQ_CUE}[^？?\n。:：]{{0,8}}[:：]\s*[^？?\n。]{{2,30}}[？?]\s*(?:答案\s*(?:是|为|[:：])?\s*)?{_SQ_VALUE}",
        _I,
    ),
    compile_guarded(rf"(?<![A-Za-z])security\s+answers?\s*{_SQ_CONNECT}\s*{_SQ_VALUE}", _I),
    compile_guarded(rf"{_SQ_CUE}[^。！？!?\n]{{0,24}}?(?:→|->|=>|⇒)\s*{_SQ_VALUE}", _I),
)
_SQ_TALK = compile_guarded(rf"{_SQ_CUE}|security\s+answer", _I)
_SQ_NOT_AN_ANSWER = compile_guarded(r"^\s*(?:什么|啥|多少|忘|不|没|记不|想不|是什么|呢)|(?:吗|呢|么|\?|？)\s*$")

_RC_CUE = (
    r"(?:恢复码|恢复代码|备用码|备份码|备用验证码|救援码|紧急码"
    r"|(?<![A-Za-z])(?:recovery|backup|2fa|scratch)\s+codes?(?![A-Za-z]))"
)
_RC_CODE = r"(?:[A-Za-z0-9]{3,10}(?:-[A-Za-z0-9]{3,10})+|\d{4}\s\d{4}|[A-Za-z0-9]{6,12})"
_RECOVERY_CODES = compile_guarded(
    rf"{_RC_CUE}(?P<w>[^。！？!?\n\d]{{0,8}}?)(?<![\w\-])(?P<v>{_RC_CODE}(?:(?:\s*[,，、;；]\s*|\s+){_RC_CODE})*)(?![\w\-])",
    _I,
)
_RC_GAP_BLOCK = compile_guarded(r"丢|忘|用完|生成|下载|打印|保存|存|不|没|放|在哪|什么|多少|几")

# --- identity and card numbers ------------------------------------------------------------------

_ID_NUMBER = compile_guarded(
    r"(?<![\w])(?P<v>[1-8]\d{5} ?(?:19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01]) ?\d{3}[\dXx])(?![\w])", _A
)
_OLD_ID_NUMBER = compile_guarded(r"(?<![\w])(?P<v>[1-8]\d{7}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3})(?![\w])", _A)
_ID_CUE = compile_guarded(r"身份证|证件|身份号|公民身份|实名|居民身份|id\s*card", _I)
_PASSPORT = compile_guarded(
    r"(?:护照|passport|港澳通行证|通行证)(?:号码?|\s*no\.?|\s*number)?\s*(?:是|为|[:：])?\s*(?<![\w])(?P<v>[A-Za-z]{1,2}\d{7,8})(?![\w])",
    _I,
)
_CARD = compile_guarded(r"(?<![\w.\-])(?P<v>\d{4,6}(?:[ \-]\d{1,7}){2,6}|\d{15,19})(?![\w\-]|\.\d)", _A)
_CARD_CUE_BEFORE = compile_guarded(
    rf"(?:银行卡|{BANK_SHORT_NAME}卡|卡号|信用卡|借记卡|储蓄卡|工资卡|银联|card|转账到|打钱到|转到|汇款到|打到|收款|账户|开户|的卡)"
    r"[^，。！？,!?\d]{0,8}$",
    _I,
)
_CARD_CUE_AFTER = compile_guarded(r"^[^，。！？,!?\d]{0,6}(?:这张卡|的卡|那张卡|户名|开户|卡号)", _A)
_NOT_CARD_BEFORE = compile_guarded(
    r"(?:订单|单号|运单|快递|流水|交易号|编号|工单|发票|批次|序列号|条码|imei|tracking|order|uid|时间戳|timestamp|群号|qq|电话|手机(?:号|尾号|串号)"
    r"|学号|工号|考号|准考证|雪花|hash|哈希|(?<![A-Za-z])(?:id|sn)(?![A-Za-z]))[^，。！？,!?\d]{0,8}$",
    _I,
)


# A device's verification code on its sticker ("验证码HKZPWM"): six capitals right after the cue.
_DEVICE_CODE = compile_guarded(r"[A-Z]{6}")


def _otp_ok(match: re.Match[str], text: str) -> bool:
    cue, gap, value = match.group("cue"), match.group("w"), match.group("v")
    if _OTP_GAP_BLOCK.search(gap):
        return False
    if value.replace(" ", "").isdigit():
        value = value.replace(" ", "")
        return (
            not _SERVICE_NUMBER.match(value)
            and not _NOT_A_VALUE_AFTER.match(_after(match, text))
            and not re.match(r"\s*(?:号|楼|栋|室|层|箱|排|座|公里|km)", _after(match, text), _I)
        )
    if "-" in value:
        return cue in _OTP_PICKUP_CUES or (cue in _OTP_ALNUM_CUES and bool(_OTP_TIGHT_GAP.match(gap)))
    if _DEVICE_CODE.fullmatch(value) and len(set(value)) > 2 and _OTP_TIGHT_GAP.match(gap):  # "验证码HKZPWM"
        return True
    return cue in _OTP_ALNUM_CUES and bool(_OTP_TIGHT_GAP.match(gap)) and not shapes.is_placeholder(value)


def _otp_reverse_ok(match: re.Match[str], text: str) -> bool:
    return not _SERVICE_NUMBER.match(match.group("v"))


def _cvv_ok(match: re.Match[str], text: str) -> bool:
    return not _NOT_A_VALUE_AFTER.match(_after(match, text))


def _lock_ok(match: re.Match[str], text: str) -> bool:
    return _cvv_ok(match, text) and not PUZZLE_TALK.search(text)  # a game's prop safe is every player's


def _security_answers(text: str) -> Iterator[Span]:
    if not _SQ_TALK.search(text):  # every pattern names a security question
        return
    for pattern in _SECURITY_ANSWERS:
        for match in pattern.finditer(text):
            value = match.group("v")
            if value.strip() and not _SQ_NOT_AN_ANSWER.search(value):
                start, end = match.span("v")
                start += len(value) - len(value.lstrip())
                yield start, end - (len(value) - len(value.rstrip()))


def _recovery_ok(match: re.Match[str], text: str) -> bool:
    return not _RC_GAP_BLOCK.search(match.group("w")) and any(char.isdigit() for char in match.group("v"))


def _id_numbers(text: str) -> Iterator[Span]:
    for match in _ID_NUMBER.finditer(text):
        value = match.group("v").replace(" ", "")
        if not shapes.id_card_date_valid(value):
            continue
        if shapes.id_card_checksum_valid(value) or _id_cued(match, text):
            yield match.span("v")
    for match in _OLD_ID_NUMBER.finditer(text):
        if _id_cued(match, text):
            yield match.span("v")


def _id_cued(match: re.Match[str], text: str) -> bool:
    before = text[max(0, match.start() - 12) : match.start()]
    after = text[match.end() : match.end() + 8]
    return bool(_ID_CUE.search(before) or _ID_CUE.search(after))


def _card_prefixes(run: str) -> Iterator[str]:
    """The card numbers a run of digits can start with: the whole run, or, for a run written in
    groups, each first few groups of 15-19 digits (a card number followed by its expiry and CVV)."""
    groups = re.split(r"[ \-]", run)
    for count in range(len(groups), 0, -1):
        digits = "".join(groups[:count])
        if 15 <= len(digits) <= 19:
            yield digits


def public_test_cards(text: str) -> list[Span]:
    """Spans of the card numbers in ``text`` that the payment networks publish for testing."""
    return [
        match.span("v")
        for match in _CARD.finditer(text)
        if any(digits in shapes.PUBLIC_TEST_CARDS for digits in _card_prefixes(match.group("v")))
    ]


def _card_numbers(text: str) -> Iterator[Span]:
    for match in _CARD.finditer(text):
        before = text[max(0, match.start() - 14) : match.start()]
        if _NOT_CARD_BEFORE.search(before):
            continue
        cued = bool(_CARD_CUE_BEFORE.search(before) or _CARD_CUE_AFTER.match(text[match.end() : match.end() + 10]))
        for digits in _card_prefixes(match.group("v")):
            if digits in shapes.PUBLIC_TEST_CARDS:
                break
            if cued or (len(digits) >= 16 and digits[0] in "3456" and shapes.luhn_valid(digits)):
                yield match.span("v")  # the whole run: what follows the number is its expiry or CVV
                break


CODE_RULES: tuple[tuple[str, Rule], ...] = (
    ("one_time_code", _value_spans(_OTP, _otp_ok)),
    ("one_time_code", _value_spans(_OTP_REVERSE, _otp_reverse_ok)),
    ("one_time_code", _value_spans(_PINYIN_CODE, _always)),
    ("cvv", _value_spans(_CVV, _cvv_ok)),
    ("cvv", _value_spans(_CVV_REVERSE, _cvv_ok)),
    ("password", _value_spans(_LOCK_COMBINATION, _lock_ok)),
    ("security_answer", _security_answers),
    ("recovery_code", _value_spans(_RECOVERY_CODES, _recovery_ok)),
    ("id_card", _id_numbers),
    ("passport", _value_spans(_PASSPORT, _always)),
    ("bank_card", _card_numbers),
)
