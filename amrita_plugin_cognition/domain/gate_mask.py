"""The gate's first step: opaque spans masked, keeping offsets (pure, no I/O, linear in the text).

A named user ``QQ号<id>`` and its ``（昵称…）``, titles 《…》, quotations “…” 「…」 『…』 "…", group
numbers, URLs, e-mail addresses and code are not the fact's own wording: whatever a nickname, a
song title or a quoted sentence says, the gate does not read it. A nickname or a name quoted once
is the same name unquoted later on (关注歌手“李明天”…看了李明天的演出), so its later occurrences are
masked too.

Every step is one pass (bracket and quote partners come from one stack walk, not a scan per
opening mark), so a fact of any length costs time in proportion to its length.
"""

from __future__ import annotations

import re
from bisect import bisect_right

PERSON = "\ue000"  # a named user: QQ号… and its （昵称…）
OPAQUE = "\ue001"  # a title, a quotation, a group number, a URL
MARKS = (PERSON, OPAQUE)
DIGIT = "0-9０-９"

_PERSON_ID = re.compile(rf"QQ\s*号?\s*[:：]?\s*[{DIGIT}]{{5,}}", re.IGNORECASE)
# （昵称…）, also after the QQ number inside the same brackets: （QQ号3601928374，昵称…）
_NAME_OPENERS = re.compile(
    rf"[（(]\s*(?:QQ\s*号?\s*[:：]?\s*[{DIGIT}]{{5,}}\s*[，,、;；]\s*)?(?:昵称|群昵称|群名片|网名|备注)", re.IGNORECASE
)
_GROUP_OPENERS = re.compile(r"[（(]\s*群名")
_OPAQUE_SPANS = re.compile(
    rf"群号?\s*[:：]?\s*[{DIGIT}]{{5,}}|(?:https?://|www\.)[^\s，。；！？、）)】」』”\"']+"
    r"|(?<![\w.+-])[\w.+-]+@[\w-]+\.[\w.-]+|`[^`\n]+`"  # an address from the start of its run only
)
_PAIRS = {"《": "》", "〈": "〉", "“": "”", "‘": "’", "「": "」", "『": "』", '"': '"'}
#: A fact names a few people and titles; past this many distinct names, the rest are not looked
#: for again unquoted (each name is one pass over the text).
MAX_NAMES = 16


def partners(text: str, openers: str, closers: str) -> dict[int, int]:
    """For each opening mark of ``text`` that is closed, the index just past its closing mark
    (nesting aware; marks of other kinds are ignored)."""
    found: dict[int, int] = {}
    stack: list[int] = []
    for mark in re.finditer(f"[{re.escape(openers + closers)}]", text):
        if mark.group() in openers:
            stack.append(mark.start())
        elif stack:
            found[stack.pop()] = mark.end()
    return found


def mask(text: str) -> str:
    """``text`` with its opaque spans replaced by ``PERSON`` / ``OPAQUE`` marks (same length)."""
    chars = list(text)

    def fill(start: int, end: int, mark: str) -> None:
        chars[start:end] = mark * (end - start)

    for match in _PERSON_ID.finditer(text):
        fill(match.start(), match.end(), PERSON)
    names: list[str] = []
    brackets = partners(text, "（(", "）)")
    for openers, mark in ((_NAME_OPENERS, PERSON), (_GROUP_OPENERS, OPAQUE)):
        for match in openers.finditer(text):
            end = brackets.get(match.start(), -1)
            if end > 0:
                fill(match.start(), end, mark)
                if end - 1 - match.end() >= 2:
                    names.append(text[match.end() : end - 1])
    for match in _OPAQUE_SPANS.finditer(text):
        fill(match.start(), match.end(), OPAQUE)
    current = "".join(chars)  # quotes inside a nickname are gone already
    quoted = [name for name in names if not name.isascii()]
    closing = {opener: partners(current, opener, closer) for opener, closer in _PAIRS.items() if opener != closer}
    straight = [mark.start() for mark in re.finditer('"', current)]
    index = 0
    while index < len(current):
        char = current[index]
        if char == '"':  # straight quotes do not nest: the next one closes it
            after = bisect_right(straight, index)
            end = straight[after] + 1 if after < len(straight) else -1
        else:
            end = closing[char].get(index, -1) if char in closing else -1
        if end > 0:
            fill(index, end, OPAQUE)
            if end - index >= 4:
                quoted.append(text[index + 1 : end - 1])
        index = max(end, index + 1)
    # a nickname or a name quoted once is the same name unquoted later on (关注歌手“李明天”…看了李明天的演出,
    # （昵称当年明月）…当年明月写的书)
    for name in list(dict.fromkeys(quoted))[:MAX_NAMES]:
        start = text.find(name)
        while start >= 0:
            fill(start, start + len(name), OPAQUE)
            start = text.find(name, start + len(name))
    return "".join(chars)
