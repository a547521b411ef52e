"""Compile a rule's pattern so that a search skips, at one character's cost, the positions where
no match can start.

Python's regex engine finds where a match may start by itself when a pattern begins with a
character: it skips to the next place that character (or one of a set) occurs. A pattern that
begins with a lookbehind (``(?<![A-Za-z])pass``, ``(?<!流量)(?<!财富)…密码``) gets none of that: the
engine tries every lookbehind at every position of the text, and such a pattern costs ten times
what the same pattern without them does on a text it does not match, which is nearly every text
admission reads. ``compile_guarded`` reads the pattern's syntax tree, finds the characters its
first consumed character can be, and puts them in front as a lookahead (``(?=[密口pm…])(?:…)``), a
one-character test in the same flags. The lookahead is a condition every match already meets, so
what the pattern matches, its groups and their spans do not change; a pattern whose first
character cannot be named (``.``, a negated class, a back reference, scoped flags, a pattern that
can match nothing) or that begins with a character already is compiled as it is.
"""

from __future__ import annotations

import re
from typing import Any

try:  # the parser's home since Python 3.11
    from re import _constants as _sre  # type: ignore[attr-defined]
    from re import _parser as _parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as _sre  # type: ignore[no-redef]
    import sre_parse as _parse  # type: ignore[no-redef]

__all__ = ["compile_guarded", "start_class"]

_ZERO_WIDTH = {_sre.ASSERT, _sre.ASSERT_NOT, _sre.AT}
_REPEATS = {_sre.MAX_REPEAT, _sre.MIN_REPEAT, getattr(_sre, "POSSESSIVE_REPEAT", _sre.MAX_REPEAT)}
_CATEGORIES = {
    _sre.CATEGORY_DIGIT: r"\d",
    _sre.CATEGORY_NOT_DIGIT: r"\D",
    _sre.CATEGORY_SPACE: r"\s",
    _sre.CATEGORY_NOT_SPACE: r"\S",
    _sre.CATEGORY_WORD: r"\w",
    _sre.CATEGORY_NOT_WORD: r"\W",
}
_FLAGS_GROUP = re.compile(r"\(\?[aiLmsux]+\)")


class _Unnamed(Exception):
    """The first character of a match cannot be named as a class."""


def compile_guarded(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, with the lookahead of its first characters in front when
    the pattern begins with an assertion (the module's docstring says why and when)."""
    # flags inside the pattern must stay at its very start; the parse raises re.error as compile would
    guard = None if _FLAGS_GROUP.match(pattern) else start_class(pattern, flags)
    return re.compile(pattern if guard is None else f"(?=[{guard}])(?:{pattern})", flags)


def start_class(pattern: str, flags: int = 0) -> str | None:
    """The body of a character class holding every character a match of ``pattern`` can begin
    with (read in the pattern's own flags), when the pattern begins with an assertion and such a
    class can be named; otherwise ``None``."""
    parsed = _parse.parse(pattern, flags)
    if parsed.state.flags & re.VERBOSE or not _begins_with_assertion(list(parsed)):
        return None
    try:
        items, can_be_empty = _first(list(parsed))
    except _Unnamed:
        return None
    return None if can_be_empty or not items else "".join(sorted(items))


def _begins_with_assertion(sequence: list[tuple[Any, Any]]) -> bool:
    if not sequence:
        return False
    op, av = sequence[0]
    if op in _ZERO_WIDTH:
        return True
    if op is _sre.BRANCH:
        return any(_begins_with_assertion(list(branch)) for branch in av[1])
    if op is _sre.SUBPATTERN:
        return _begins_with_assertion(list(av[-1]))
    return False


def _first(sequence: list[tuple[Any, Any]]) -> tuple[set[str], bool]:
    """The class items a match of ``sequence`` can begin with, and whether it can match nothing."""
    items: set[str] = set()
    for op, av in sequence:
        found, can_be_empty = _first_of(op, av)
        items |= found
        if not can_be_empty:
            return items, False
    return items, True


def _first_of(op: Any, av: Any) -> tuple[set[str], bool]:
    if op in _ZERO_WIDTH:  # consumes nothing: the next element's first character is the match's
        return set(), True
    if op is _sre.LITERAL:
        return {_literal(av)}, False
    if op is _sre.IN:
        return _class_items(av), False
    if op is _sre.BRANCH:
        items: set[str] = set()
        any_empty = False
        for branch in av[1]:
            found, can_be_empty = _first(list(branch))
            items |= found
            any_empty = any_empty or can_be_empty
        return items, any_empty
    if op is _sre.SUBPATTERN:
        _group, add_flags, del_flags, body = av
        if add_flags or del_flags:  # the class would be read in other flags than the pattern's
            raise _Unnamed
        return _first(list(body))
    if op in _REPEATS:
        low, _high, body = av
        found, can_be_empty = _first(list(body))
        return found, can_be_empty or low == 0
    if op is getattr(_sre, "ATOMIC_GROUP", None):
        return _first(list(av))
    raise _Unnamed  # any character, a negated literal, a back reference, a conditional


def _class_items(av: list[tuple[Any, Any]]) -> set[str]:
    items = set()
    for op, value in av:
        if op is _sre.LITERAL:
            items.add(_literal(value))
        elif op is _sre.RANGE:
            items.add(f"{_literal(value[0])}-{_literal(value[1])}")
        elif op is _sre.CATEGORY and value in _CATEGORIES:
            items.add(_CATEGORIES[value])
        else:  # a negated class (NEGATE), or a category with no short name
            raise _Unnamed
    return items


def _literal(code: int) -> str:
    return re.escape(chr(code))  # escapes "-", "]", "^" and "\\" too: safe inside a class
