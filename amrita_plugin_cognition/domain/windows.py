"""Long texts read in windows (pure, no I/O): what keeps a rule-based reader linear.

The time resolver and admission read a text with rules that look around each match (its clause,
its sentence, the words before it); on a long text without breaks those looks grow with the text,
and the reader with its square. A text longer than a window is read window by window instead: cut
at a sentence end outside quotes and brackets where there is one, else at a clause break, else at
the window's size, so each rule still sees its sentence whole (a window ends where the text would
have ended a sentence anyway). Texts up to a window, which is every text a chat turn or a stored
fact holds at the default limits, are read whole as before.
"""

from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"[。！？!?\n]+")
_CLAUSE_BREAK = re.compile(r"[，,；;、…~～\s]+")
_OPENERS = "“‘「『《〈（(【[{"
_CLOSERS = "”’」』》〉）)】]}"
_QUOTES = re.compile(rf"[{re.escape(_OPENERS + _CLOSERS)}]")


def _depths(text: str) -> list[int]:
    """For each character, how many quotes or brackets are open before it (one pass)."""
    depths = [0] * (len(text) + 1)
    depth = 0
    position = 0
    for mark in _QUOTES.finditer(text):
        for index in range(position, mark.start() + 1):
            depths[index] = depth
        position = mark.start() + 1
        depth = depth + 1 if mark.group() in _OPENERS else max(0, depth - 1)
    for index in range(position, len(text) + 1):
        depths[index] = depth
    return depths


def _last_cut(pattern: re.Pattern[str], text: str, start: int, stop: int, depths: list[int] | None) -> int:
    """The end of the last match of ``pattern`` in text[start:stop] (outside quotes when
    ``depths`` is given), or -1."""
    cut = -1
    for match in pattern.finditer(text, start, stop):
        if depths is None or depths[match.start()] == 0:
            cut = match.end()
    return cut


def windows(text: str, size: int) -> list[tuple[int, str]]:
    """(offset, window) pairs covering ``text`` in order, each at most ``size`` characters; one
    pair for a text that fits."""
    if len(text) <= size:
        return [(0, text)]
    depths = _depths(text)
    found: list[tuple[int, str]] = []
    start = 0
    while start < len(text):
        stop = min(len(text), start + size)
        if stop < len(text):
            cut = _last_cut(_SENTENCE_END, text, start + 1, stop, depths)
            if cut <= start:
                cut = _last_cut(_CLAUSE_BREAK, text, start + 1, stop, None)
            stop = cut if cut > start else stop
        found.append((start, text[start:stop]))
        start = stop
    return found
