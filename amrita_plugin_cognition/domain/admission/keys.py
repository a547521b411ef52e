"""Keys and tokens: by their shape whoever issued them (a prefixed key, an access key's id, a bot's
id and secret, a JWT, a URL that carries its secret, a private key block), after a key's cue (``密钥是
…``, ``api_key: …``) when the value is random enough, and a wallet's seed phrase after its cue. The
other credentials are in ``credentials``, codes and numbers in ``codes``."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..regex_start import compile_guarded
from . import shapes
from .rules import _A, _I, Rule, Span, _always, _value_spans

# Keys known by their shape, whoever issued them:
# * a prefix of one to three short words, each ended by _, - or a dot, and a random tail (sk-proj-…, ghp_…,
#   glpat-…, hf_…, sk_live_…, xoxb-…, github_pat_…, ya29.…): the tail mixes capitals, small letters and digits;
# * a number, a colon and a long random tail (a bot's id and its secret);
# * three parts joined by dots, the last one random (a JWT, a bot token, SG.….…);
# * the body of an OpenSSH private key ("openssh-key-v1" in base64);
# * a URL that carries its secret: a hook's (a path through hook(s)/webhook(s), or a host hooks.…) with a
#   random last segment, or a key right after the API's version in the path (…/v2/<key>).
_PREFIXED_KEY = compile_guarded(
    r"(?:(?<=://)|(?<![\w\-./@]))(?P<prefix>(?:[A-Za-z][A-Za-z0-9]{0,9}[_\-.]){1,3})(?P<tail>[A-Za-z0-9][\w\-]{19,})"
    r"(?![\w\-]|\.[A-Za-z0-9])",  # not a file's or a host's name (report_v2_….pdf)
    _A,
)
# ... or an access key's id: twenty capitals and digits, opening with four capitals.
_KEY_ID = compile_guarded(r"(?<![\w\-./@])[A-Z]{4}(?=[A-Z]*\d)[A-Z0-9]{16}(?![\w\-])", _A)
_BOT_TOKEN = compile_guarded(r"(?<![\w:])\d{6,12}:[\w\-]{30,}(?![\w\-])", _A)
_DOTTED_TOKEN = compile_guarded(
    r"eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*"  # JWT
    r"|(?<![\w.])[A-Za-z0-9_\-]{2,30}\.[A-Za-z0-9_\-]{6,}\.(?P<tail>[A-Za-z0-9_\-]{16,})(?![\w.])",
    _A,
)
_OPENSSH_BODY = compile_guarded(r"(?<![A-Za-z0-9+/])b3BlbnNzaC1rZXktdjE[A-Za-z0-9+/=]{16,}", _A)
_SECRET_URL = compile_guarded(
    r"(?:https?://)?(?:hooks?\.(?:[\w\-]+\.)+[a-z]{2,}(?:/[\w.\-]+)*"
    r"|(?:[\w\-]+\.)+[a-z]{2,}(?::\d+)?(?:/[\w.\-]+)*?/(?:hooks?|webhooks?)(?:/[\w.\-]+)*)"
    r"/(?P<last>[\w\-]{16,})/?(?![\w\-/])"
    r"|(?:https?://)?(?:[\w\-]+\.)+[a-z]{2,}(?::\d+)?/(?:[\w\-]+/)*v\d{1,2}/(?P<key>[\w\-]{24,})/?(?![\w\-/])",
    _I,
)
_KEY_CUE = (
    r"(?:(?<![A-Za-z])(?:api[\s_-]?key|apikey|app[\s_-]?key|app[\s_-]?secret|client[\s_-]?secret"
    r"|[a-z]{0,8}?secret(?:[\s_-]?(?:key|id|access[\s_-]?key))?|access[\s_-]?key(?:[\s_-]?(?:id|secret))?|signing[\s_-]?key"
    r"|webhook[\s_-]?secret|private[\s_-]?key|bot[\s_-]?token|token|key|ak|sk)(?![A-Za-z])"
    r"|令牌|密钥|秘钥|密匙|私钥|凭证|凭据)"
)
_KEY = compile_guarded(
    _KEY_CUE
    # between the cue and the value: a few Chinese words, or a format named ("私钥 WIF 格式 5Kb8…")
    + r"\s*(?:[^\x00-\x7f，。！？；\n]{0,6}?|[A-Za-z]{2,8}\s*[^\x00-\x7f，。！？；\n]{1,4}?)?"
    + r"\s*(?:[:：=]|是|为|is)?\s*[\"'“`]?(?<![\w+/.\-])"
    r"(?P<v>(?:0x)?[A-Za-z0-9_\-+/=.]{16,})(?![\w+/=\-])",
    _I,
)
_PUBLIC_BEFORE = compile_guarded(r"(?:public|pub|公)\s*$", _I)
_PRIVATE_KEY = compile_guarded(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
    r"(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s:,\-]*)"
    # without its armour: the DER of a private key starts with a SEQUENCE and version 0 (PKCS#1
    # "MIIEowIBAAK…", PKCS#8 "MIIEvQIBADAN…"); a public key's ("MIIBIjANBgkq…") has no version
    r"|(?<![A-Za-z0-9+/])MII[A-Za-z0-9+/]{3}IBA[AD][A-Za-z0-9+/=]{30,}"
)
_SEED_PHRASE = compile_guarded(
    r"(?:助记词|seed\s*phrase|mnemonic(?:\s*(?:phrase|words))?|recovery\s*phrase"
    r"|(?:备份|恢复|钱包)的?\s*(?:12|24|十二|二十四)\s*个?(?:词|单词))[^。！？\n]{0,6}?(?:[:：=]|是|为)?\s*"
    r"(?P<v>(?:\d{1,2}[.、)]\s*)?[a-z]{3,8}(?:[\s,]+(?:\d{1,2}[.、)]\s*)?[a-z]{3,8}){4,23})",
    _I,
)


def _key_ok(match: re.Match[str], text: str) -> bool:
    value = match.group("v")
    if _PUBLIC_BEFORE.search(text[max(0, match.start() - 8) : match.start()]):
        return False
    if value.startswith("/") or "//" in value or ("." in value and not any(char.isdigit() for char in value)):
        return False
    return shapes.high_entropy_key(value)


def _random_tail(value: str) -> bool:
    """A key's random part: long, varied, mixing capitals, small letters and digits (not a hex digest's
    one case, not words joined by dashes); ghp_XXXXXXXX… is a key masked in a tutorial."""
    core = value.replace("-", "").replace("_", "")
    mixed = any(c.isupper() for c in core) and any(c.islower() for c in core) and any(c.isdigit() for c in core)
    return mixed and len(set(core[-16:])) > 3 and shapes.high_entropy_key(core) and not shapes.is_placeholder(value)


def _url_key(value: str) -> bool:
    """A key in a URL's path: random, with digits, in both cases or in hex (a UUID's too), not a page's
    slug of words ("getting-started-with-the-api")."""
    core = value.replace("-", "")
    cased = any(c.isupper() for c in core) and any(c.islower() for c in core)
    hexadecimal = re.fullmatch(r"[0-9a-f]{32,}", core) is not None
    digits = any(c.isdigit() for c in core) and any(c.isalpha() for c in core)
    return digits and (cased or hexadecimal) and shapes.high_entropy_key(core) and len(set(core)) > 8


def _shaped_keys(text: str) -> Iterator[Span]:
    for match in _PREFIXED_KEY.finditer(text):
        if _random_tail(match.group("tail")):
            yield match.span()
    for match in _KEY_ID.finditer(text):
        if len(set(match.group())) > 8:
            yield match.span()
    for match in _DOTTED_TOKEN.finditer(text):
        if match.group("tail") is None or _random_tail(match.group("tail")):
            yield match.span()
    for pattern in (_BOT_TOKEN, _OPENSSH_BODY):
        for match in pattern.finditer(text):
            if len(set(match.group()[-16:])) > 3 and not shapes.is_placeholder(match.group()):
                yield match.span()
    for match in _SECRET_URL.finditer(text):
        if _url_key(match.group("last") or match.group("key")):
            yield match.span()


def _private_keys(text: str) -> Iterator[Span]:
    for match in _PRIVATE_KEY.finditer(text):
        start, end = match.span()
        while end > start and text[end - 1].isspace():
            end -= 1
        yield start, end


KEY_RULES: tuple[tuple[str, Rule], ...] = (
    ("private_key", _private_keys),
    ("api_key", _shaped_keys),
    ("api_key", _value_spans(_KEY, _key_ok)),
    ("seed_phrase", _value_spans(_SEED_PHRASE, _always)),
)
