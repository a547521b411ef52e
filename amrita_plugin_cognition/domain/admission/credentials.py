"""Credentials: a secret value next to its cue, judged by the value's shape. Passwords, accounts,
cookies, sessions and connection strings are here; keys and tokens are in ``keys``, codes and numbers
in ``codes``, the shared helpers in ``rules``, the second layer (what a message is about) in
``contextual``.

Each rule is a pattern that finds a candidate value and a check of that value (Luhn for card
numbers, the MOD 11-2 check of a 身份证号, cookie and connection-string syntax, the entropy of a
key, a one-time code of 4-8 digits near a code cue). A cue word with no value after it ("密码忘了",
"验证码收不到", "token 用完了") is ordinary talk. Rules return the spans to hide, never the cue.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from ..regex_start import compile_guarded
from . import shapes
from .codes import CODE_RULES
from .contextual import contextual_secrets
from .keys import KEY_RULES
from .rules import (
    _A,
    _FIGURATIVE_PASSWORD,
    _I,
    _NOT_A_VALUE_AFTER,
    _PW_CHARS,
    _PW_VALUE,
    _QUOTE,
    _STOP,
    PUZZLE_TALK,
    Rule,
    Span,
    _after,
    _always,
    _trimmed,
    _value_spans,
    named_example,
    shared_publicly,
)


@dataclass(frozen=True, slots=True)
class Secret:
    start: int
    end: int
    kind: str


# --- passwords -------------------------------------------------------------------------------

_PW_CUE = (
    rf"(?:{_FIGURATIVE_PASSWORD}密\s?码(?!学|锁|箱|柜|本|器|机|盘|管理|子|破解|策略|框|强度|长度|规则|芯片|错误|保护|输错)"
    r"|口令|pin\s*码|解压码|开锁码|(?<![\u4e00-\u9fff])密(?=[:：]?\s*[A-Za-z0-9!@#$%^&*])"
    r"|蜜码|秘码|(?<![A-Za-z0-9])(?:password|passwd|passcode|passphrase|pwd|psw|mima|mi\s?ma)(?![A-Za-z])"
    r"|(?<![A-Za-z])(?:pass|pin|pw)(?=\s*[:=：]))"
)
_MODIFIER = (
    r"(?:我|他|她|你|都|也|就|还|一直|其实|应该|好像|现在|目前|暂时|默认|初始|统一|原来|之前|以前|已经"
    r"|刚刚|刚|后来|全都|全)"
)
_CONNECT_WORD = (
    r"(?:[:：=]|is|was|是|为|叫|即"
    r"|(?<![a-z])shi(?![a-z])"  # pinyin: "mi ma shi qiuqiu0612"
    r"|(?:设置|设|修改|改|换|更|重置|定|弄|变)(?:成|为)(?:了)?"
    r"|(?:设|写|填|输|用|定|记|存)的(?:是)?|输入|填|输)"
)
# Spaces, not line breaks: "DB_PASSWORD=" on one line of a config and "DEBUG=false" on the next
# are two settings, the second no password.
_CONNECT = (
    rf"[ \t]*(?:{_MODIFIER}[ \t]*){{0,3}}(?P<conn>{_CONNECT_WORD})?[ \t]*(?:(?:默认|初始)的?[ \t]*)?(?:[:：][ \t]*)?"
    rf"{_QUOTE}[ \t]*"
)

# Words in the gap between a password cue and a value that make the value something else.
_LOOSE_BLOCK = compile_guarded(
    r"忘|错|丢|泄|漏|不|没|别|少|多|长|要求|需|必须|位|找回|管理|生成|加密|哈希|存|记在|写在|策略|规则|强度|复杂|格式|太|过期"
    r"|框|提示|字段|表|用|页|界面|重置|登录|提交|像|比如|例如|类似|建议|推荐|规定|改|换|挪|移|搬|放到|放在|连|[A-Za-z0-9]"
)

_PASSWORD = compile_guarded(_PW_CUE + _CONNECT + _PW_VALUE, _I)
_PASSWORD_LOOSE = compile_guarded(_PW_CUE + rf"(?P<w>{_STOP}{{1,14}}?)" + _PW_VALUE, _I)
_PASSWORD_REVERSE = compile_guarded(
    _PW_VALUE + rf"\s*(?:就是|即是|是|为)\s*(?P<w>{_STOP}{{0,12}}?)(?:的)?{_PW_CUE}(?!学|锁|箱|管理)", _I
)
_REVERSE_BLOCK = compile_guarded(r"管理|生成|用来|不|没|例|比如|像|存|记")
# "密码忘了又找回来了，新的是 xxx": the value named as the new or current one, later in the sentence.
_PASSWORD_NEW = compile_guarded(
    _PW_CUE
    + r"[^。！？!?\n]{0,24}?(?:新的|新密码|现在的?|目前的?|改成了?|换成了?|变成了?|设成了?)\s*(?:是|为|[:：])?\s*"
    + _QUOTE
    + _PW_VALUE,
    _I,
)

_ACCOUNT_CUE = (
    r"(?:账号|帐号|账户|帐户|用户名|登录名|登录账号|邮箱|号"
    r"|(?<![A-Za-z])(?:email|e-mail|user(?:name)?|login|uid|id)(?![A-Za-z]))"
)
_ACCOUNT_VALUE = r"(?<![\w.@\-])(?P<acct>[A-Za-z0-9_.@\-]{3,40})(?![\w.@\-])"
_ACCOUNT_PAIR = compile_guarded(
    rf"{_ACCOUNT_CUE}\s*(?:是|为|[:：=])?\s*{_ACCOUNT_VALUE}\s*[,，/／|;；、\s]*(?:[\u4e00-\u9fff]{{1,4}})?\s*"
    rf"(?:{_PW_CUE}|(?<![A-Za-z])(?:mm|pw|pass)(?![A-Za-z])){_CONNECT}{_PW_VALUE}",
    _I,
)
_ACCOUNT_SLASH_PASSWORD = compile_guarded(
    rf"(?:账号|帐号|账户|帐户|登录|后台|管理员|(?<![A-Za-z])(?:login|account)(?![A-Za-z]))[^，。！？,!?\n]{{0,6}}?[:：]?\s*"
    rf"{_ACCOUNT_VALUE}"
    rf"\s*[/／|]\s*{_PW_VALUE}",
    _I,
)
_ACCOUNT_AND_PASSWORD = compile_guarded(
    rf"(?:账密|(?:账号|帐号|用户名|号)(?:和|与|/)?密码)\s*(?:都?是|为|[:：])?\s*{_ACCOUNT_VALUE}\s*[/／|,，\s]\s*{_PW_VALUE}",
    _I,
)

# An e-mail address or a mobile number, a separator, then a password-shaped token (the way account
# lists are traded: "name@mail.com----p@ss", "138xxxxxxxx / Pass123#"), no cue needed.
_BARE_ACCOUNT_PAIR = compile_guarded(
    r"(?<![\w.@\-])(?P<acct>[A-Za-z0-9_.+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}|1[3-9]\d{9})"
    rf"\s*(?:-{{2,}}|[/／|｜]|[:：])\s*(?P<v>[{_PW_CHARS}]{{3,64}})(?![{_PW_CHARS}])",
    _A,
)

# A password on a command line: redis-cli -a x, mysql -px / -p x, --password x, sshpass -p x.
_CLI_PASSWORD = compile_guarded(
    r"(?:(?<![\w\-])(?-i:-a|-p)[ \t]*|(?<![\w\-])--(?:password|passwd|pass|auth|token|secret)(?:[ \t]+|=))"
    r"[\"']?(?P<v>[!#-&(-~]{4,})",
    _I,
)
# -a and -p are a password in a command that logs in somewhere: one that names a user or a host (-u root,
# -h 10.0.3.8, --user, root@47.96.1.2), whatever the tool; elsewhere -p is a port, a path, a profile …
_LOGIN_COMMAND = compile_guarded(
    r"(?<![\w\-])(?-i:-[uhU])(?:[ \t]*[\w.\-]|(?=[\w.]))|(?<![\w\-])--(?:user(?:name)?|host)(?![\w\-])"
    r"|(?<![\w.\-])[\w.\-]+@[\w.\-]+",
    _I,
)

_ACCOUNT_TALK = compile_guarded(
    rf"{_ACCOUNT_CUE}|{_PW_CUE}|账密|后台|管理员|(?<![A-Za-z])(?:mm|pw|pass|account)(?![A-Za-z])", _I
)

# --- cookies, session tokens, connection strings ---------------------------------------------

_COOKIE_PAIR = r"[A-Za-z_][\w.\-]*=[^\s;,，。'\"]*"
_COOKIE = compile_guarded(
    rf"(?<![A-Za-z])(?:set-)?cookies?(?![A-Za-z])[^，。！？,!?\n=]{{0,8}}?(?P<v>{_COOKIE_PAIR}(?:\s*;\s*{_COOKIE_PAIR})*;?)",
    _I,
)
# A cookie's or a header's name that says it holds a session: one of the words for it anywhere in the name
# (sessionid, PHPSESSID, connect.sid, csrftoken, x-xsrf-token, remember_token, wordpress_logged_in_…).
_SESSION_NAMED = r"(?:[A-Za-z_][\w.\-]*?)?(?:sess|sid|token|csrf|xsrf|logged_in)[\w.\-]*"
# Pairs joined by ";" are a cookie as it is copied from a browser, with or without the word cookie before
# it ("SESSDATA=…; bili_jct=…; DedeUserID=…"): once one of its names says session, every value in it is the
# login's.
_COOKIE_STRING = compile_guarded(rf"(?<![\w.\-]){_COOKIE_PAIR}(?:\s*;\s*{_COOKIE_PAIR})+;?", _I)
_SESSION_NAME = compile_guarded(rf"(?:^|;)\s*{_SESSION_NAMED}=", _I)
_SESSION_GENERIC = (
    r"access[_-]?token|refresh[_-]?token|id[_-]?token|auth[_-]?token|authtoken|x-auth-token|x-access-token|x-api-key"
    r"|api[_-]?token|token|auth|ticket|session|sess|sid|sub|_t"
)
_SESSION = compile_guarded(
    rf"(?<![\w.\-])(?P<k>{_SESSION_NAMED}|{_SESSION_GENERIC})[\"']?[ \t]*(?:=|:(?!//))[ \t]*[\"']?"
    rf"(?P<v>[^\s;&,，。\"'<>]{{8,}})",
    _I,
)
_AUTHORIZATION = compile_guarded(
    r"(?:authorization\s*[:：=]\s*(?:bearer|basic|token|bot|digest)|(?<![A-Za-z])bearer)\s+"
    r"(?P<v>[A-Za-z0-9._~+/=\-]{12,})",
    _I,
)
# A presigned URL's signature opens the object to whoever holds it ("…?Expires=…&Signature=Xk2p…").
_URL_SIGNATURE = compile_guarded(r"[?&](?:[\w\-]*signature|sig|sign)=(?P<v>[A-Za-z0-9%+/=_\-]{6,})", _I)
_URL_CREDENTIALS = compile_guarded(r"(?<![\w])[a-z][a-z0-9+.\-]{1,20}://[^\s:/@]*:(?P<v>[^\s/]+)@[^\s@/]+", _I)
_GO_DSN = compile_guarded(r"(?<![\w/:])[\w.\-]+:(?P<v>[^\s@/]+)@(?:tcp|unix|udp)\(", _I)
_ASSIGNMENT = compile_guarded(
    r"(?<![\w.\-])(?P<k>(?:[A-Za-z_][\w\-]*?)?(?:password|passwd|pwd|pass|secret|token|api[_-]?key|apikey|access[_-]?key"
    r"|private[_-]?key|app[_-]?key|auth[_-]?key|key)[\w\-]*)[\"'`]?[ \t]*(?:=|:(?!//))[ \t]*[\"'`]?"
    r"(?P<v>[^\s;&,，。\"'`]+)",
    _I,
)
_ASSIGNMENT_NOT_SECRET = compile_guarded(
    r"max|min|len|(?<!ac)count|num|limit|size|expir|ttl|timeout|type|url|uri|endpoint|file|path|name|policy|hash|salt|reset"
    r"|prompt|usage|budget|cost|price|rule|field|input|label|hint|enabled|required|header|param|format",
    _I,
)

# The start of a URL up to its user-info colon, with no space: a cue right after it fills the
# password's place in a template.
_IN_URL_TEMPLATE = compile_guarded(r"[a-z][a-z0-9+.\-]{1,20}://[^\s/@]*:$", _I)


def _password_ok(match: re.Match[str], text: str) -> bool:
    value = match.group("v")
    if PUZZLE_TALK.search(text):
        return False  # a puzzle's code is every player's
    if _IN_URL_TEMPLATE.search(text[max(0, match.start() - 40) : match.start()]):
        return False  # "mysql://用户名:密码@host": the cue is the template's placeholder, not a label
    # A Chinese cue is rarely followed by an English word that is not the password itself.
    explicit = bool(match.groupdict().get("conn")) or match.group()[0] in "密口"
    if _NOT_A_VALUE_AFTER.match(_after(match, text)):
        return False
    return shapes.plausible_password(value.rstrip(".,?"), explicit=explicit)


_NO_PASSWORD_BEFORE = compile_guarded(r"(?:不要|不用|不需要|没有|无需|免)\s*$")


def _password_loose_ok(match: re.Match[str], text: str) -> bool:
    gap = match.group("w")
    if _LOOSE_BLOCK.search(gap) or _NOT_A_VALUE_AFTER.match(_after(match, text)):
        return False
    if _NO_PASSWORD_BEFORE.search(text, 0, match.start()):  # "不要密码 连 Museum-Guest": there is none
        return False
    return shapes.strong_password(match.group("v"))


def _password_reverse_ok(match: re.Match[str], text: str) -> bool:
    value = match.group("v")
    if _REVERSE_BLOCK.search(match.group("w")):
        return False
    return shapes.strong_password(value) or (value.isdigit() and len(value) >= 6)


def _account_pairs(text: str) -> Iterator[Span]:
    if not _ACCOUNT_TALK.search(text):  # every pattern below names an account or a password
        return
    for pattern in (_ACCOUNT_PAIR, _ACCOUNT_AND_PASSWORD, _ACCOUNT_SLASH_PASSWORD):
        for match in pattern.finditer(text):
            value = match.group("v")
            if pattern is _ACCOUNT_SLASH_PASSWORD and not shapes.strong_password(value):
                continue
            if not shapes.plausible_password(value, explicit=True):
                continue
            if _NOT_A_VALUE_AFTER.match(_after(match, text)):
                continue
            yield match.span("acct")
            yield _trimmed(match, text)


_EMAIL = compile_guarded(r"[A-Za-z0-9_.+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}", _A)


# After an e-mail address and a slash, another way to reach the same person named by what it is, not by whose
# service it is (a@b.com/13812345678, a@b.com/email, a@b.com/https://…).
_CONTACT_AFTER = compile_guarded(
    r"(?:tel|phone|mobile|email|mail|com|cn|net)"
    r"|1[3-9]\d{9}|[48]00-?\d{3}-?\d{4}|0\d{2,3}-?\d{7,8}|(?:https?:|www\.)\S*",
    _I,
)


def _bare_account_pairs(text: str) -> Iterator[Span]:
    for match in _BARE_ACCOUNT_PAIR.finditer(text):
        value, account = match.group("v"), match.group("acct")
        word_start = max(text.rfind(" ", 0, match.start()), text.rfind("\n", 0, match.start())) + 1
        inside_url = "://" in text[word_start : match.end() + 3]
        if _EMAIL.fullmatch(value) or inside_url:
            continue
        # An e-mail address, a slash (or a bar, or dashes) and a word is how an account and its password
        # are written down ("lisi@163.com/qwerty", "a@b.com / 12345678"): any password-like word then,
        # unless it is another way to reach the same person. A colon or a mobile number asks for more.
        slash = "@" in account and match.group()[len(account) :].strip()[:1] in "/／|｜-"
        if slash and not _CONTACT_AFTER.fullmatch(value):
            if not shapes.plausible_password(value, explicit=True):
                continue
        elif not shapes.strong_password(value):
            continue
        yield match.span("acct")
        yield match.span("v")


def _password_new_ok(match: re.Match[str], text: str) -> bool:
    if _NOT_A_VALUE_AFTER.match(_after(match, text)):
        return False
    return shapes.plausible_password(match.group("v").rstrip(".,?"), explicit=True)


def _cli_password_ok(match: re.Match[str], text: str) -> bool:
    value = match.group("v")
    short = match.group().startswith("-") and not match.group().startswith("--")
    if short and (not _LOGIN_COMMAND.search(text) or not any(char.isalpha() for char in value)):
        return False
    return not shapes.is_placeholder(value) and not value.startswith(("$", "-")) and not value.isdigit()


def _cookie_ok(match: re.Match[str], text: str, group: int | str = "v") -> bool:
    values = [pair.split("=", 1)[1] for pair in re.split(r"\s*;\s*", match.group(group)) if "=" in pair]
    return any(len(value) >= 6 and not shapes.is_placeholder(value) for value in values)


def _session_ok(match: re.Match[str], text: str) -> bool:
    name, value = match.group("k").lower(), match.group("v")
    if shapes.is_placeholder(value):
        return False
    if re.fullmatch(_SESSION_NAMED, name, _I):
        return len(set(value)) >= 5 and not value.isalpha()
    return shapes.high_entropy_key(value)


def _cookie_strings(text: str) -> Iterator[Span]:
    for match in _COOKIE_STRING.finditer(text):
        if _SESSION_NAME.search(match.group()) and _cookie_ok(match, text, 0):
            yield match.span()


def _connection_ok(match: re.Match[str], text: str) -> bool:
    value = match.group("v")
    return not shapes.is_placeholder(value) and any(char.isascii() and char.isalnum() for char in value)


def _assignment_ok(match: re.Match[str], text: str) -> bool:
    name, value = match.group("k"), match.group("v")
    if _ASSIGNMENT_NOT_SECRET.search(name) or shapes.is_placeholder(value):
        return False
    if re.search(r"pass|pwd", name, _I):
        return shapes.plausible_password(value, explicit=True)
    # a named key or token ("?key=ab93kd8Fq2Zt" in a stream's push URL) may be short but mixed
    return shapes.high_entropy_key(value) or (len(value) >= 10 and shapes.char_classes(value) >= 3)


_RULES: tuple[tuple[str, Rule], ...] = (
    ("connection", _value_spans(_URL_CREDENTIALS, _connection_ok)),
    ("connection", _value_spans(_GO_DSN, _connection_ok)),
    ("cookie", _value_spans(_COOKIE, _cookie_ok)),
    ("cookie", _cookie_strings),
    ("session", _value_spans(_SESSION, _session_ok)),
    ("session", _value_spans(_AUTHORIZATION, _always)),
    ("session", _value_spans(_URL_SIGNATURE, _connection_ok)),
    ("assignment", _value_spans(_ASSIGNMENT, _assignment_ok)),
    ("account", _account_pairs),
    ("account", _bare_account_pairs),
    ("password", _value_spans(_CLI_PASSWORD, _cli_password_ok)),
    ("password", _value_spans(_PASSWORD, _password_ok)),
    ("password", _value_spans(_PASSWORD_LOOSE, _password_loose_ok)),
    ("password", _value_spans(_PASSWORD_REVERSE, _password_reverse_ok)),
    ("password", _value_spans(_PASSWORD_NEW, _password_new_ok)),
    *KEY_RULES,
    *CODE_RULES,
)


def _given_away(text: str, start: int, end: int) -> bool:
    """Whether the value at ``start:end`` is a real one: not named an example, not a public share code."""
    return not (named_example(text, start, end) or shared_publicly(text, start))


# Every rule but the security answer's looks for a value of ASCII letters or digits (digits read out
# in Chinese are folded to ASCII first): a message with none, most Chinese chat, is spared them.
_ASCII_ALNUM = compile_guarded(r"[A-Za-z0-9]")
_NON_ASCII_RULES = tuple((kind, rule) for kind, rule in _RULES if kind == "security_answer")


def find_secrets(text: str) -> list[Secret]:
    """Secret values in ``text`` (already folded), merged where they overlap, in order."""
    rules = _RULES if _ASCII_ALNUM.search(text) else _NON_ASCII_RULES
    found = sorted(
        (start, end, kind)
        for start, end, kind in [(start, end, kind) for kind, rule in rules for start, end in rule(text)]
        + list(contextual_secrets(text))
        if end > start and _given_away(text, start, end)
    )
    merged: list[Secret] = []
    for start, end, kind in found:
        if merged and start <= merged[-1].end:
            last = merged[-1]
            merged[-1] = Secret(last.start, max(last.end, end), last.kind)
        else:
            merged.append(Secret(start, end, kind))
    return merged
