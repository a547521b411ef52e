"""Length-preserving folding and clause spans, shared by the secret and intent rules.

Every rule runs on ``fold(text)``, which keeps each character at its index, so a span found in the
folded text is the same span in the text as said (redaction replaces it there).
"""

from __future__ import annotations

import re

from ..regex_start import compile_guarded

# Traditional forms of the characters the rules look for, folded one to one onto the simplified.
_TRADITIONAL = (
    "碼驗證號賬帳鑰記別錄讓說憶儲錢憑護資庫檔寫刪裡這個條聽過沒當講問們話"
    "後會為還給幫將確認權貨單態動憑據碼銀補辦凍結卡應該統設換舊"
)
_SIMPLIFIED = (
    "码验证号账账钥记别录让说忆储钱凭护资库档写删里这个条听过没当讲问们话"
    "后会为还给帮将确认权货单态动凭据码银补办冻结卡应该统设换旧"
)


# Pinyin typed with tone marks ("wàng diào wǒ gāng shuō de"), folded to the letters without them.
_TONED = "āáǎàēéěèīíǐìōóǒòūúǔùǖǘǚǜüĀÁǍÀĒÉĚÈĪÍǏÌŌÓǑÒŪÚǓÙ"
_TONELESS = "aaaaeeeeiiiioooouuuuvvvvvAAAAEEEEIIIIOOOOUUUU"


def _build_table() -> dict[int, str]:
    table = {0xFF01 + offset: chr(0x21 + offset) for offset in range(0x5E)}  # full-width ASCII
    for space in (0x00A0, 0x3000, 0x202F, 0x205F, *range(0x2000, 0x200B)):
        table[space] = " "
    table.update({ord(old): new for old, new in zip(_TRADITIONAL, _SIMPLIFIED, strict=True)})
    table.update({ord(old): new for old, new in zip(_TONED, _TONELESS, strict=True)})
    return table


_TABLE = _build_table()

# A clause ends at sentence or clause punctuation (the colon does not end one: "密码：x").
_CLAUSE_BREAK = compile_guarded(r"[，。！？；\n]|[!?;,](?=\s|$|[^\x00-\x7f])|\.(?=\s|$)|…+")


# Digits read out one by one ("密码是六四九零七六", "验证码是五四二五九四"): a run of four or more
# Chinese digit characters is a number; shorter runs are words (一一, 三五个), and so are the
# doubled pairs of idioms (七七八八, 三三两两).
_CN_DIGITS = {
    "零": "0",
    "〇": "0",
    "幺": "1",
    "一": "1",
    "二": "2",
    "三": "3",
    "四": "4",
    "五": "5",
    "六": "6",
    "七": "7",
    "八": "8",
    "九": "9",
    # read out the radio way: 幺 (1), 两 (2), 拐 (7), 勾 (9), 洞 (0)
    "两": "2",
    "拐": "7",
    "勾": "9",
    "洞": "0",
}
_CN_DIGIT_RUN = compile_guarded(f"[{''.join(_CN_DIGITS)}]{{4,}}叉?")
# Read out with pauses: one at a time ("六 一 六 五 三 零") or in groups ("七一零 七三三").
_CN = f"[{''.join(_CN_DIGITS)}]"
_CN_SPACED_DIGITS = compile_guarded(
    f"(?<!{_CN}){_CN}(?:[ ,，、]{_CN}){{3,}}(?!{_CN})|(?<!{_CN}){_CN}{{3}}(?:[ ,，、]{_CN}{{3}})+(?!{_CN})"
)


# Three digits read out after a card's security-code cue ("cvv是六八二").
_CN_CVV = compile_guarded(
    f"((?:cvv2?|cvc2?|cvn2?|安全码)\\s*(?:是|为|[:：])?\\s*)([{''.join(_CN_DIGITS)}]{{3}})(?![{''.join(_CN_DIGITS)}])",
    re.IGNORECASE,
)


def fold(text: str) -> str:
    """Full-width ASCII to ASCII, traditional cue characters to simplified, digits read out in
    Chinese to ASCII digits; same length."""
    folded = text.translate(_TABLE)
    if _CN_DIGIT_RUN.search(folded) is not None:
        folded = _CN_DIGIT_RUN.sub(_digits, folded)
    if _CN_SPACED_DIGITS.search(folded) is not None:
        folded = _CN_SPACED_DIGITS.sub(
            lambda match: "".join(_CN_DIGITS.get(char, char) for char in match.group()), folded
        )
    if _CN_CVV.search(folded) is not None:
        folded = _CN_CVV.sub(
            lambda match: match.group(1) + "".join(_CN_DIGITS[char] for char in match.group(2)), folded
        )
    return folded


def _digits(match: re.Match[str]) -> str:
    """The run as ASCII digits; a 叉 after seventeen of them is the X of a 身份证号."""
    run = match.group()
    if len(run) == 4 and run[0] == run[1] != run[2] == run[3]:  # 七七八八, 三三两两: words, not a number
        return run
    digits = "".join(_CN_DIGITS.get(char, char) for char in run.rstrip("叉"))
    if run.endswith("叉"):
        digits += "X" if len(digits) == 17 else "叉"
    return digits


def clauses(text: str) -> list[tuple[int, int]]:
    """(start, end) of each non-empty clause, in order."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _CLAUSE_BREAK.finditer(text):
        if match.start() > start:
            spans.append((start, match.start()))
        start = match.end()
    if start < len(text):
        spans.append((start, len(text)))
    return [(begin, end) for begin, end in spans if text[begin:end].strip()]
