"""The wording step of the near-duplicate check: what two facts' leftover words say once every part
the rules read agrees (``duplicates.judge_parts``). Pure, no I/O.

The two residues (``fact_parts``: the wording with who, when, how much, negations and plans taken
out) are aligned token by token. A short stretch between the same neighbours on both sides is a
word put in the place of another (成都 / 重庆, 小明 / 小红, 火锅 / 烧烤) unless the thesaurus
files the two as one word said otherwise (读 / 上, 妻子 / 老婆; ``_said_otherwise``); words
reworded on both sides with no such stretch are a paraphrase when the vectors are close
(``REWORD_SIMILARITY``); words added on one side are filler when few and the vectors close, never
a person added after "with".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

from . import thesaurus
from .fact_lexicon import MEASURE_WORDS, NICKNAME_MARKS
from .fact_parts import BOUNDARY, FactParts

#: One side may say up to ``MAX_EXTRA`` content tokens more (新电脑 / 电脑, 回老家 / 回家) only
#: when the vectors are this close.
MAX_EXTRA = 2
EXTRA_SIMILARITY = 0.70
#: A run of at most this many tokens between the same neighbours on both sides is a word put in
#: the place of another (``_slot``).
SLOT_TOKENS = 4
#: Words reworded on both sides (no word in the place of another) are a paraphrase from this
#: cosine on.
REWORD_SIMILARITY = 0.75

#: "With someone": what follows one of these on one side only is a person added, never filler.
_COMPANION = re.compile(r"(?:和|跟|与|同|陪|带着)(\w)")


def _slot(first: FactParts, second: FactParts, only_first: set[str], only_second: set[str]) -> tuple[str, bool] | None:
    """A word put in the place of another: the two wordings aligned, a short stretch on each side
    between the same neighbours (在[成都]吃 / 在[重庆]吃, [女]儿 / 儿[子], [话]费 / [网]费) is
    another thing of the same kind, not a rewording, unless the two stretches are synonyms
    (``_said_otherwise``: 读 / 上 大班, 妻子 / 老婆). Stretches one token apart are one stretch;
    words said elsewhere on the other side (a reordering) are not part of it."""
    groups: list[tuple[list[str], list[str], list[int]]] = []
    last_end = -10
    matcher = SequenceMatcher(None, first.residue, second.residue, autojunk=False)
    for tag, start_first, end_first, start_second, end_second in matcher.get_opcodes():
        if tag == "equal":
            continue
        taken_first = [token for token in first.residue[start_first:end_first] if token in only_first]
        taken_second = [token for token in second.residue[start_second:end_second] if token in only_second]
        if groups and (
            start_first == last_end or (start_first - last_end == 1 and first.residue[last_end] != BOUNDARY)
        ):
            groups[-1][0].extend(taken_first)
            groups[-1][1].extend(taken_second)
            groups[-1][2][1], groups[-1][2][3] = end_first, end_second
        else:
            groups.append((taken_first, taken_second, [start_first, end_first, start_second, end_second]))
        last_end = end_first
    for taken_first, taken_second, span in groups:
        if (
            taken_first
            and taken_second
            and max(len(taken_first), len(taken_second)) <= SLOT_TOKENS
            and not _said_otherwise(first.residue, second.residue, *span)
        ):
            word_first, word_second = "".join(taken_first), "".join(taken_second)
            left = first.residue[span[0] - 1] if span[0] > 0 else ""
            return f"{word_first} ≠ {word_second}", _names(word_first, word_second, left)
    return None


#: The commonest one-character family names, and the marks a nickname starts with (小明, 老王, 阿杰):
#: the shape of a person's name, not anyone's name.
_SURNAMES = frozenset(
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖萧田董袁潘于蒋蔡余杜叶程苏魏吕丁"
    "任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔"
    "向汤"
)
_NICKNAME_MARKS = frozenset(NICKNAME_MARKS)
_CJK_WORD = re.compile(r"[\u3400-\u9fff]{2,3}")


def _name_shaped(word: str) -> bool:
    return bool(_CJK_WORD.fullmatch(word)) and (word[0] in _SURNAMES or (word[0] in _NICKNAME_MARKS and len(word) == 2))


def _names(first: str, second: str, left: str) -> bool:
    """Whether a word put in the place of another is a person's name in the place of another's
    (萧然 / 程诚, 小张 / 小王: one character after the same 小/老/阿 or family name)."""
    if len(first) == 1 and len(second) == 1 and (left in _NICKNAME_MARKS or left in _SURNAMES):
        first, second = left + first, left + second
    # a family name alone is what is left of a name whose other character reads as filler (彭于)
    return (
        (_name_shaped(first) or first in _SURNAMES)
        and (_name_shaped(second) or second in _SURNAMES)
        and (len(first) > 1 or len(second) > 1)
    )


#: How many shared neighbours on each side may complete a differing stretch into a word (读 / 上
#: with 学 after them: 读书 is no word of the pair, but 上学 / 读 ... each side is tried).
_CONTEXT = 2


def _without_edge_boundaries(tokens: tuple[str, ...], start: int, end: int) -> tuple[int, int]:
    """``tokens[start:end]`` without the boundaries at either end."""
    while start < end and tokens[start] == BOUNDARY:
        start += 1
    while end > start and tokens[end - 1] == BOUNDARY:
        end -= 1
    return start, end


def _said_otherwise(
    first: tuple[str, ...],
    second: tuple[str, ...],
    start_first: int,
    end_first: int,
    start_second: int,
    end_second: int,
) -> bool:
    """Whether the stretch ``first[start_first:end_first]`` and ``second[start_second:end_second]``
    (aligned, between the same neighbours) say one word in two ways: the two stretches, each
    completed by the same shared neighbours (none, or up to ``_CONTEXT`` tokens before and after),
    are synonyms in the thesaurus (妻子 / 老婆; 读 / 上 before 大班 is tried as 读大 / 上大 too)."""
    start_first, end_first = _without_edge_boundaries(first, start_first, end_first)
    start_second, end_second = _without_edge_boundaries(second, start_second, end_second)
    stretch_first, stretch_second = first[start_first:end_first], second[start_second:end_second]
    if not stretch_first or not stretch_second or BOUNDARY in stretch_first or BOUNDARY in stretch_second:
        return False
    before: list[str] = []
    for offset in range(1, _CONTEXT + 1):
        if start_first - offset < 0 or start_second - offset < 0:
            break
        token = first[start_first - offset]
        if token == BOUNDARY or token != second[start_second - offset]:
            break
        before.insert(0, token)
    after: list[str] = []
    for offset in range(_CONTEXT):
        if end_first + offset >= len(first) or end_second + offset >= len(second):
            break
        token = first[end_first + offset]
        if token == BOUNDARY or token != second[end_second + offset]:
            break
        after.append(token)
    word_first, word_second = "".join(stretch_first), "".join(stretch_second)
    # the longest completion that is a word on either side decides: 自行 / 电动 before 车 are read
    # as 自行车 / 电动车 (no synonyms), not as the two fragments
    completions = sorted(
        ((left, right) for left in range(len(before) + 1) for right in range(len(after) + 1)),
        key=lambda sizes: -(sizes[0] + sizes[1]),
    )
    for left, right in completions:
        prefix, suffix = "".join(before[len(before) - left :]), "".join(after[:right])
        candidate_first, candidate_second = prefix + word_first + suffix, prefix + word_second + suffix
        if thesaurus.known(candidate_first) or thesaurus.known(candidate_second):
            return thesaurus.synonyms(candidate_first, candidate_second)
    return False


@dataclass(frozen=True, slots=True)
class WordingDifference:
    """What differs in the wording (``detail``), and whether it is a person's name put in the
    place of another's (``names``: the person differs, not the words)."""

    detail: str
    names: bool = False


def _relative_specified(longer: str, shorter: str, extra: set[str]) -> str | None:
    """A word of people in the shorter fact (父母, 哥哥) made another one in the longer by the
    characters it has more (岳父母, 表哥): another person, not a word added. A kin word of one
    character left is read doubled, as it is said alone (表哥 less 表 is 哥: 哥哥)."""
    for size in (2, 3, 4):
        for start in range(len(longer) - size + 1):
            word = longer[start : start + size]
            if not any(char in extra for char in word) or not thesaurus.person(word):
                continue
            rest = "".join(char for char in word if char not in extra)
            rest = rest * 2 if len(rest) == 1 else rest
            if rest and thesaurus.person(rest) and rest in shorter and not thesaurus.synonyms(rest, word):
                return f"{rest} ≠ {word}"
    return None


#: What ends a clause (not the ASCII full stop: 89.9元 is one number).
_CLAUSE = re.compile(r"[，,；;。！!？?]")


def _clause_added(longer: str, shorter: FactParts, extra: set[str]) -> str | None:
    """A clause the longer fact has beyond the shorter one's, with a word of its own in it, the rest
    of the longer fact saying all the shorter one says (不吃香菜 / 不吃香菜，但吃葱): something more
    is told, not the same fact said again."""
    clauses = [clause.strip() for clause in _CLAUSE.split(longer) if clause.strip()]
    if len(clauses) <= len([clause for clause in _CLAUSE.split(shorter.text) if clause.strip()]):
        return None
    said = set(shorter.residue) - {BOUNDARY}
    for clause in clauses:
        rest = longer.replace(clause, "")
        if clause not in shorter.text and extra & set(clause) and all(token in rest for token in said):
            return clause
    return None


#: A measure word before a noun counts it (领养了条狗 / 领养了一只狗), it does not narrow it.
_MEASURE = frozenset(MEASURE_WORDS.split("|"))


def _modifier_added(longer: tuple[str, ...], shorter: tuple[str, ...], extra: set[str]) -> str | None:
    """Characters the longer fact puts right before a word both facts say, in one run with it and
    where the shorter fact has that word after a boundary or at its start (车 / 电动车, 班 /
    隔壁班, 经理 / 副经理): the thing made narrower or another of its kind, which the wording check
    decides, not a word said in passing."""
    for start in range(len(longer)):
        if longer[start] not in extra or (start and longer[start - 1] in extra):
            continue
        end = start
        while end < len(longer) and longer[end] in extra:
            end += 1
        if end >= len(longer) or longer[end] == BOUNDARY or "".join(longer[start:end]) in _MEASURE:
            continue
        head = longer[end]
        for at, token in enumerate(shorter):
            if token == head and (at == 0 or shorter[at - 1] == BOUNDARY):
                return "".join(longer[start:end])
    return None


def wording_difference(first: FactParts, second: FactParts, similarity: float) -> WordingDifference | None:
    """What differs in the wording, or None when it is a paraphrase. The words are compared as
    sets (a word said twice on one side, 游泳馆游泳 / 游泳, adds nothing). Words on both sides that
    the other lacks are a rewording when none of them takes the place of another (``_slot``) and
    the vectors are close (``REWORD_SIMILARITY``)."""
    only_first = set(first.residue) - set(second.residue) - {BOUNDARY}
    only_second = set(second.residue) - set(first.residue) - {BOUNDARY}
    if only_first and only_second:
        slot = _slot(first, second, only_first, only_second)
        if slot is not None:
            return WordingDifference(*slot)
        if similarity < REWORD_SIMILARITY:
            return WordingDifference(f"{''.join(sorted(only_first))} ≠ {''.join(sorted(only_second))}")
        return None
    extra = only_first or only_second
    size = len(extra)
    if size and (size > MAX_EXTRA or similarity < EXTRA_SIMILARITY):
        return WordingDifference(f"+{''.join(sorted(extra))}")
    longer = first if only_first else second
    shorter = second if only_first else first
    added = _clause_added(longer.text, shorter, extra)
    if added:
        return WordingDifference(f"+{added}")
    relative = _relative_specified(longer.text, shorter.text, extra)
    if relative:
        return WordingDifference(relative, names=True)
    modifier = _modifier_added(longer.residue, shorter.residue, extra)
    if modifier:
        return WordingDifference(f"+{modifier}")
    if (
        size
        and _COMPANION.search(longer.text)
        and any(marker.group(1)[:1] in extra for marker in _COMPANION.finditer(longer.text))
    ):
        return WordingDifference(f"+with {''.join(sorted(extra))}")
    return None
