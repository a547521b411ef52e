"""Pre-tokenisation for the keyword index.

Chinese has no spaces, and FTS5's trigram tokenizer cannot match two-character words such as
火锅, so CJK runs are indexed as character unigrams plus bigrams. Latin words are lower-cased,
stop words dropped and a light suffix stemmer applied, so "painted" matches "paint". Numbers
are kept whole. The same function tokenises documents and queries, which is what makes the
match symmetric. A token longer than ``MAX_TOKEN_BYTES`` (in UTF-8) is cut to that length, the
same way on both sides: PostgreSQL refuses a lexeme of 2 KiB or more, and SQLite must give the
same answers.
"""

from __future__ import annotations

import math
import re
import unicodedata

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
_TOKEN_RE = re.compile(rf"[{_CJK}]+|[A-Za-z]+(?:'[A-Za-z]+)?|\d+(?:\.\d+)?")

ENGLISH_STOP_WORDS = frozenset(
    """
    a an the and or but if of to in on at for with by from is are was were be been being am
    do does did done have has had having i you he she it we they me him her us them my your
    his its our their mine yours this that these those what which who whom whose when where
    why how not no so as than too very can will just would could should shall may might
    must there here about into over after before up down out off again then once also some
    any all each both few more most other such only own same s t don now let lets ll ve re
    d m oh yeah hey hi ok okay really like get got go going went gonna wanna thing things
    """.split()  # noqa: SIM905
)

_SUFFIXES = ("ingly", "edly", "ings", "ing", "ies", "ied", "es", "ed", "ly", "s")


def stem(word: str) -> str:
    """A deliberately small suffix stripper: enough to match inflections, never below 3 letters."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            if suffix in ("ies", "ied"):
                return base + "y"
            if len(base) >= 4 and base[-1] == base[-2] and base[-1] not in "aeiouls":
                base = base[:-1]  # running -> run, stopped -> stop
            return base
    return word


#: Longest keyword token, in UTF-8 bytes (PostgreSQL's own limit is 2047 per lexeme).
MAX_TOKEN_BYTES = 200


def cap_token(token: str) -> str:
    """``token`` cut to at most ``MAX_TOKEN_BYTES`` UTF-8 bytes, never inside a character."""
    if len(token) * 4 <= MAX_TOKEN_BYTES:
        return token
    encoded = token.encode("utf-8", "replace")
    if len(encoded) <= MAX_TOKEN_BYTES:
        return token
    return encoded[:MAX_TOKEN_BYTES].decode("utf-8", "ignore")


def _is_cjk(char: str) -> bool:
    return bool(re.match(rf"[{_CJK}]", char))


def keyword_tokens(text: str) -> list[str]:
    """Tokens for both indexing and querying, in text order (repeats kept for term frequency)."""
    tokens: list[str] = []
    normalised = unicodedata.normalize("NFKC", text)
    for match in _TOKEN_RE.finditer(normalised):
        run = match.group(0)
        if _is_cjk(run[0]):
            tokens.extend(run)
            tokens.extend(run[i : i + 2] for i in range(len(run) - 1))
        elif run[0].isdigit():
            tokens.append(cap_token(run))
        else:
            word = run.lower().replace("'", "")
            if word in ENGLISH_STOP_WORDS or len(word) < 2:
                continue
            tokens.append(cap_token(stem(word)))
    return tokens


#: Function characters of spoken Chinese: as query terms they match nearly every fact.
CHINESE_STOP_CHARACTERS = frozenset("的了我你他她它是在很都吗呢吧啊呀哦嗯哈也就还和与这那有个一不没要会能想说对好")


def _is_stop_term(token: str) -> bool:
    return bool(token) and all(char in CHINESE_STOP_CHARACTERS for char in token)


def query_terms(text: str, limit: int = 256) -> list[str]:
    """Distinct query tokens without stop characters, bigrams first, capped at ``limit``."""
    seen: dict[str, None] = {}
    tokens = [token for token in keyword_tokens(text) if not _is_stop_term(token)]
    for token in sorted(tokens, key=lambda tok: 0 if len(tok) >= 2 else 1):
        seen.setdefault(token, None)
    return list(seen)[:limit]


_WIDE = re.compile(r"[\u3000-\u9fff\uf900-\ufaff\uff00-\uffef]")


def estimate_tokens(text: str) -> int:
    """Rough token count (the block's budget): one per CJK or full-width character, one per four
    other characters."""
    wide = len(_WIDE.findall(text))
    return wide + math.ceil((len(text) - wide) / 4)
