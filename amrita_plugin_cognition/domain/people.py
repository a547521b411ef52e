"""Who a text names: the one person matcher of delete-all (``erasure``) and opt-out (``governance``).

A text *names* user U when it holds

* U's QQ number as a whole number (never inside a longer one), in any writing (``numbers_in``):
  decimal digits of any script (ASCII, full-width, …); Chinese numerals read digit by digit
  (一二三四五, 幺 for one, 零/〇 for nought, the financial forms 壹贰叁…); Chinese numerals with
  units, as cn2an reads them (十二万三千四百五十六, 一亿二千三百四十五万…); and a number written in
  groups split by spaces or dashes (1234 5678 9, 138-1234-5678), of which any run of consecutive
  groups counts (each group is a whole run of digits);
* or one of U's nicknames, where a nickname stands for U alone only when ``name_problem`` finds
  nothing against it. The rule, so that one short or ordinary nickname never takes half the
  database with it:

  - at least two CJK characters, or at least three letters and digits with one letter among them;
    a Latin name matches as a whole word only ("tom" is not in "tomorrow"); one character (小, A)
    or a name of symbols and emoji alone is never looked for;
  - not an ordinary word: not made of Chinese function characters only (哈哈, 好的), not an English
    stop word, not a pronoun, relative time or relative place of the gate's lexicon (他们, 今天,
    这里), not a time the resolver reads (周五, 元旦), not a number (a number is a number, read as
    such);
  - used by no other user of the bot account (two people called 小明: the name alone says which of
    them neither way), and a mention inside someone else's longer nickname is no mention (小明 in
    小明明, when 小明明 is another user).

Names and texts are compared folded: NFKC, case-folded, format characters, variation selectors and
Hangul fillers dropped, whitespace runs read as one space; a nickname loses the symbols around it
(🐱小明~ is looked for as 小明). What is not looked for is reported (``PersonMatcher.kept``), so that
an erasure can say which of the nicknames it could not find by themselves.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

from .clock import UTC
from .tokenize import CHINESE_STOP_CHARACTERS, ENGLISH_STOP_WORDS

# ---------------------------------------------------------------------------------- folding

_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f"
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e0fff]"
)
_SPACES = re.compile(r"\s+")
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af\U00020000-\U0002ffff"
_CJK_CHAR = re.compile(f"[{_CJK}]")


def fold(text: str) -> str:
    """How names and texts are compared (see the module docstring)."""
    return _SPACES.sub(" ", _INVISIBLE.sub("", unicodedata.normalize("NFKC", text)).casefold())


# ---------------------------------------------------------------------------------- numbers

#: Chinese numerals read digit by digit (a QQ number read out: 幺三五…).
_CHINESE_DIGITS = {
    **dict.fromkeys("零〇○", "0"),
    **dict.fromkeys("一壹幺", "1"),
    **dict.fromkeys("二贰貳", "2"),
    **dict.fromkeys("三叁參", "3"),
    **dict.fromkeys("四肆", "4"),
    **dict.fromkeys("五伍", "5"),
    **dict.fromkeys("六陆陸", "6"),
    **dict.fromkeys("七柒", "7"),
    **dict.fromkeys("八捌", "8"),
    **dict.fromkeys("九玖", "9"),
}
_DIGITISH = r"\d" + "".join(_CHINESE_DIGITS)
#: What may split a number into groups: a few spaces or dashes (never a line break).
_SEPARATOR = "[ \t\u00a0\u2000-\u200a\u202f\u205f\u3000\\-\u2010-\u2015\u2212\ufe58\ufe63\uff0d]{1,3}"
_PLAIN_CHAIN = re.compile(rf"\d+(?:{_SEPARATOR}\d+)*")
_MIXED_CHAIN = re.compile(rf"[{_DIGITISH}]+(?:{_SEPARATOR}[{_DIGITISH}]+)*")
_PLAIN_GROUP = re.compile(r"\d+")
_MIXED_GROUP = re.compile(rf"[{_DIGITISH}]+")
_WITH_UNITS = re.compile(r"[\d零〇○一二两三四五六七八九十百千万亿壹贰貳叁參肆伍陆陸柒捌玖拾佰仟萬億]+")
_BIG_UNIT = re.compile("[万亿萬億]")
#: Consecutive groups joined into one number at most (a phone number has three, 3-4-4).
MAX_GROUPS = 6


def _ascii_digits(group: str) -> str:
    if group.isascii():
        return group
    return "".join(_CHINESE_DIGITS.get(char) or str(unicodedata.decimal(char)) for char in group)


def _joined(chain: str, groups: re.Pattern[str], found: set[str]) -> None:
    parts = [_ascii_digits(part) for part in groups.findall(chain)]
    for start in range(len(parts)):
        for end in range(start + 1, min(len(parts), start + MAX_GROUPS) + 1):
            found.add("".join(parts[start:end]))


def numbers_in(text: str, min_digits: int = 1) -> set[str]:
    """Every whole number ``text`` names, in any of the writings of the module docstring, as
    ASCII digits (those of at least ``min_digits`` digits; a few shorter ones may come along). A
    Chinese digit next to an Arabic one is read both ways (第一10001 names 10001)."""
    return _numbers(_INVISIBLE.sub("", unicodedata.normalize("NFKC", text)), min_digits)


def _numbers(folded: str, min_digits: int) -> set[str]:
    found: set[str] = set()
    for match in _PLAIN_CHAIN.finditer(folded):
        if match.end() - match.start() >= min_digits:
            _joined(match.group(), _PLAIN_GROUP, found)
    for match in _MIXED_CHAIN.finditer(folded):
        chain = match.group()
        if len(chain) >= min_digits and any(char in _CHINESE_DIGITS for char in chain):
            _joined(chain, _MIXED_GROUP, found)
    for match in _WITH_UNITS.finditer(folded):
        span = match.group()
        if _BIG_UNIT.search(span):
            value = _read_with_units(span)
            if value:
                found.add(value)
    return found


@lru_cache(maxsize=4096)
def _read_with_units(span: str) -> str:
    import cn2an  # on use, like the tables below: importing this module stays cheap

    try:
        value = cn2an.cn2an(span.replace("〇", "零").replace("○", "零"), "smart")
    except (ValueError, KeyError, IndexError, TypeError):
        return ""
    return str(int(value)) if float(value).is_integer() and value >= 0 else ""


# ---------------------------------------------------------------------------------- nicknames

#: How the historian writes a person into a fact (``engine/historian_sources.person``): the QQ
#: number with the nickname it was seen with, which names that number's owner, nobody else.
QQ_WITH_NICKNAME = re.compile(r"QQ号(\d{5,20})（昵称([^）]{1,64})）")

TOO_SHORT = "too_short"
NO_LETTERS = "no_letters"
NUMBER = "number"
COMMON = "common"
SHARED = "shared"
#: Why a nickname is not looked for by itself, in Chinese (erasure answers).
REASONS_ZH = {
    TOO_SHORT: "太短",
    NO_LETTERS: "没有文字",
    NUMBER: "是数字",
    COMMON: "是常用词",
    SHARED: "别人也用过",
}
MIN_CJK = 2
MIN_LETTERS = 3


@lru_cache(maxsize=1)
def _ordinary_words() -> re.Pattern[str]:
    """Pronouns and relative times and places (the gate's lexicon), as one pattern: built on the
    first nickname checked, so that importing this module does not compile it."""
    from .gate_lexicon import PROBLEM_ENTRIES, PRONOUN, RELATIVE_PLACE, RELATIVE_TIME

    return re.compile(
        "|".join(
            f"(?:{pattern})"
            for kind, _rule, pattern in PROBLEM_ENTRIES
            if kind in (PRONOUN, RELATIVE_TIME, RELATIVE_PLACE)
        )
    )


#: Any day will do: the resolver is asked whether a name reads as a time, not which.
_SOME_DAY = datetime(2026, 1, 15, 12, tzinfo=UTC)


def name_core(name: str) -> str:
    """A nickname as it is looked for: folded, without the symbols around it."""
    core = fold(name).strip()
    start, end = 0, len(core)
    while start < end and not core[start].isalnum():
        start += 1
    while end > start and not core[end - 1].isalnum():
        end -= 1
    return core[start:end]


def _latin(char: str) -> bool:
    return char.isalnum() and not _CJK_CHAR.match(char)


def name_problem(core: str) -> str | None:
    """Why this nickname (``name_core``) is not looked for by itself, or None when it is."""
    letters = [char for char in core if char.isalnum()]
    if not letters:
        return NO_LETTERS
    if all(char.isdigit() or char in _CHINESE_DIGITS for char in letters):
        return NUMBER
    cjk = sum(1 for char in letters if _CJK_CHAR.match(char))
    if cjk < MIN_CJK and not (len(letters) >= MIN_LETTERS and any(char.isalpha() for char in letters)):
        return TOO_SHORT
    if _ordinary_word(core):
        return COMMON
    return None


@lru_cache(maxsize=4096)
def _ordinary_word(core: str) -> bool:
    plain = core.replace(" ", "")
    if all(char in CHINESE_STOP_CHARACTERS for char in plain) or core in ENGLISH_STOP_WORDS:
        return True
    if _ordinary_words().fullmatch(plain):
        return True
    from .timeresolve import resolve_times

    return any(len(mention.text) >= len(plain) for mention in resolve_times(plain, _SOME_DAY))


@dataclass(frozen=True, slots=True)
class KeptName:
    """A nickname of a user that is not looked for by itself, and why (``REASONS_ZH``)."""

    name: str
    reason: str


@dataclass(frozen=True, slots=True)
class _Name:
    core: str
    #: Longer nicknames of other users that hold this one, with where it sits in each.
    blockers: tuple[tuple[str, int], ...]
    latin_start: bool
    latin_end: bool

    def occurs_in(self, folded: str, beside: tuple[str, ...] = ()) -> bool:
        """Whether the name stands in ``folded`` by itself: not inside a longer word (Latin),
        another user's longer nickname, or a name in ``beside`` (folded cores, see
        ``PersonMatcher.named_in``) that holds it."""
        blockers = self.blockers
        if beside:
            blockers += tuple(
                (other, offset) for other in beside if self.core in other for offset in _offsets(other, self.core)
            )
        start = folded.find(self.core)
        while start >= 0:
            end = start + len(self.core)
            if not (
                (self.latin_start and start > 0 and _latin(folded[start - 1]))
                or (self.latin_end and end < len(folded) and _latin(folded[end]))
                or any(folded.startswith(longer, start - offset) for longer, offset in blockers if start >= offset)
            ):
                return True
            start = folded.find(self.core, start + 1)
        return False


class PersonMatcher:
    """Finds the users of ``people`` (user id -> the nicknames they were seen with) in texts.
    ``others`` are the nicknames of the bot account's other users: a nickname one of them used
    too is not looked for, and their longer nicknames hide the ones they contain."""

    def __init__(self, people: Mapping[str, Iterable[str]], others: Mapping[str, Iterable[str]] | None = None) -> None:
        self.ids = frozenset(people)
        users_of: dict[str, set[str]] = {}
        for user_id, names in (*(others or {}).items(), *people.items()):
            for name in names:
                core = name_core(str(name))
                if core:
                    users_of.setdefault(core, set()).add(user_id)
        self._names: dict[str, tuple[_Name, ...]] = {}
        kept: dict[str, list[KeptName]] = {}
        for user_id, names in people.items():
            looked_for: dict[str, _Name] = {}
            for name in dict.fromkeys(str(name) for name in names):
                core = name_core(name)
                problem = name_problem(core) if core else NO_LETTERS
                if problem is None and users_of.get(core, set()) - self.ids:
                    problem = SHARED
                if problem is not None:
                    if name.strip() and all(item.name != name.strip() for item in kept.get(user_id, [])):
                        kept.setdefault(user_id, []).append(KeptName(name.strip(), problem))
                    continue
                blockers = tuple(
                    (longer, offset)
                    for longer, owners in users_of.items()
                    if longer != core and core in longer and owners - {user_id}
                    for offset in _offsets(longer, core)
                )
                looked_for[core] = _Name(core, blockers, _latin(core[0]), _latin(core[-1]))
            if not user_id.isdigit():  # an account id of another platform: looked for as a word
                core = fold(user_id)
                looked_for.setdefault(core, _Name(core, (), _latin(core[0]), _latin(core[-1])))
            self._names[user_id] = tuple(looked_for.values())
        self._kept = kept
        self._numeric = frozenset(user_id for user_id in self.ids if user_id.isdigit())
        self._min_digits = min((len(user_id) for user_id in self._numeric), default=1)
        #: One pass that tells whether a text may hold a number that long (most texts hold none).
        self._number_hint = re.compile(
            rf"[{_DIGITISH}](?:{_SEPARATOR[:-5]}{{0,3}}[{_DIGITISH}]){{{max(0, self._min_digits - 1)},}}|[万亿萬億]"
        )

    @classmethod
    def numbers_only(cls, user_ids: Iterable[str]) -> PersonMatcher:
        """A matcher that knows no nicknames (the QQ numbers alone)."""
        return cls({user_id: () for user_id in user_ids})

    def kept(self, user_id: str) -> list[KeptName]:
        """The nicknames of ``user_id`` not looked for by themselves."""
        return list(self._kept.get(user_id, []))

    def looked_for(self, user_id: str) -> list[str]:
        """The nicknames of ``user_id`` that are looked for (folded)."""
        return [name.core for name in self._names.get(user_id, ())]

    def named_in(self, text: str, beside: Iterable[str] = ()) -> set[str]:
        """The users of this matcher that ``text`` names. ``beside`` are the names of the
        people the text is by or about (its speaker, its subject, a card's owner): where one of
        theirs is written, it is them, not a user of this matcher who shares or holds that name
        (小明 writes "小明第三次…" while another 小明 opted out). A nickname the text itself
        gives to another QQ number (``QQ号<id>（昵称<name>）``) counts as beside too."""
        if not text or not self.ids:
            return set()
        folded = fold(text)  # case-folding and one space per run change no digit
        found: set[str] = set()
        if self._numeric and self._number_hint.search(folded):
            found = _numbers(folded, self._min_digits) & self._numeric
        if len(found) == len(self.ids):
            return found
        given = [name for user_id, name in QQ_WITH_NICKNAME.findall(text) if user_id not in self.ids]
        cores = tuple(dict.fromkeys(core for core in map(name_core, (*beside, *given)) if core))
        for user_id, names in self._names.items():
            if user_id not in found and any(name.core in folded and name.occurs_in(folded, cores) for name in names):
                found.add(user_id)
        return found

    def names(self, text: str, user_id: str | None = None, beside: Iterable[str] = ()) -> bool:
        """Whether ``text`` names ``user_id`` (None: any user of this matcher)."""
        named = self.named_in(text, beside)
        return bool(named) if user_id is None else user_id in named


def _offsets(longer: str, core: str) -> list[int]:
    offsets, start = [], longer.find(core)
    while start >= 0:
        offsets.append(start)
        start = longer.find(core, start + 1)
    return offsets


# ---------------------------------------------------------------------------------- cutting

_SENTENCE_END = re.compile(r"(?<=[。！？!?；;…])")


def without_lines(text: str, names: Callable[[str], bool]) -> str:
    """``text`` without the lines that ``names`` (a memo keeps its other lines)."""
    return "\n".join(line for line in text.splitlines() if not names(line))


def without_sentences(text: str, names: Callable[[str], bool]) -> str:
    """``text`` without the sentences that ``names``; a line left empty goes (a card's sections)."""
    kept: list[str] = []
    for line in text.splitlines():
        if not names(line):
            kept.append(line)
            continue
        rest = "".join(part for part in _SENTENCE_END.split(line) if part and not names(part)).strip()
        if rest:
            kept.append(rest)
    return "\n".join(kept)


@dataclass(frozen=True, slots=True)
class CardText:
    """What a card part shows: its name, tags and sections (evaluation, body, roast)."""

    name: str
    tags: tuple[str, ...]
    sections: dict[str, str]

    def cut(self, names: Callable[[str], bool], *, keep_name: bool = False) -> CardText:
        """Without what ``names``: the name (unless ``keep_name``: a user card's own name is its
        owner's), the tags and the sentences of the sections that do (``without_sentences``)."""
        sections = {key: without_sentences(text, names) if names(text) else text for key, text in self.sections.items()}
        tags = tuple(tag for tag in self.tags if not names(tag))
        name = self.name if keep_name or not names(self.name) else ""
        return CardText(name, tags, sections)

    @property
    def is_empty(self) -> bool:
        return not any(text.strip() for text in self.sections.values())


def without_messages(items: list[Any], drops: Callable[[dict[str, Any]], bool]) -> list[Any]:
    """Context messages (``speaker_id``, ``speaker``, ``text``; a turn's ``input`` and ``reply``)
    without those ``drops`` and the bot's reply (no ``speaker_id``) right after a dropped one: a
    reply to a message that goes, goes with it. What is not a message is kept."""
    kept: list[Any] = []
    dropped = False
    for item in items:
        if not isinstance(item, dict):
            kept.append(item)
            continue
        if (not item.get("speaker_id") and dropped) or drops(item):
            dropped = True
            continue
        dropped = False
        kept.append(item)
    return kept
