"""Whether a card part rebuilt after a forget still carries what was forgotten (pure).

A rebuild (``engine/profile_rebuild.py``) rewrites a card part from the facts that are left after
one it cited was forgotten or erased. The queue keeps no text of the forgotten fact (by design:
an erasure has nothing to scrub there), so the check works from what is left: the version that
cited the fact (the current card, whose text the forget did not touch) and the facts the part may
still be built from. A rebuilt part **still carries the forgotten content** when it keeps, from
that version, distinctive content that none of those facts supports:

* a number of two or more digits (NFKC: full-width digits are digits),
* a Latin word of two or more letters (stop words aside),
* a run of three or more CJK characters: consecutive character pairs that the old version has,
  that the new one keeps in the same order, and that no remaining fact has.

The extreme case is the model returning the card unchanged; a card that keeps only what the
remaining facts say passes however much of the old wording it reuses. What the old version said
that no remaining fact supports may also be the model's own commentary written then (a roast, an
evaluation): the check cannot tell it from the forgotten fact's content, so it counts too, which
errs on the side of the forget: the retry names the spans and asks for them to go.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .tokenize import ENGLISH_STOP_WORDS, stem

_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]+")
_NUMBER = re.compile(r"[0-9]+")
_WORD = re.compile(r"[a-z]+")
#: Shortest CJK run that counts as carried content (in characters).
MIN_CJK_RUN = 3
#: Spans named in the feedback of a retry.
NAMED_MAX = 8


def _normal(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def _pairs(text: str) -> set[str]:
    return {run[index : index + 2] for run in _CJK_RUN.findall(text) for index in range(len(run) - 1)}


def _numbers(text: str) -> set[str]:
    return {number.lstrip("0") or "0" for number in _NUMBER.findall(text) if len(number) >= 2}


def _words(text: str) -> set[str]:
    return {stem(word) for word in _WORD.findall(text) if len(word) >= 2 and word not in ENGLISH_STOP_WORDS}


@dataclass(frozen=True, slots=True)
class Residue:
    """What a rebuilt part kept of the old version without support (empty: nothing)."""

    spans: tuple[str, ...] = ()

    @property
    def carries(self) -> bool:
        return bool(self.spans)

    def feedback(self) -> str:
        """The problem named to the model on the retry (Chinese)."""
        named = "、".join(f"“{span}”" for span in self.spans[:NAMED_MAX])
        return (
            f"卡片仍保留了旧版本里的这些内容：{named}，但列出的记忆都不支持它们，它们可能来自已删除的记忆："
            "请删去（评价、吐槽也要改写），只写列出的记忆支持的内容"
        )


def _cjk_spans(new: str, old_pairs: set[str], supported: set[str]) -> list[str]:
    """The runs of ``new`` of at least ``MIN_CJK_RUN`` characters whose every character pair
    the old version has and no supporting text has."""
    spans: list[str] = []
    for run in _CJK_RUN.findall(new):
        start: int | None = None
        for index in range(len(run)):  # pair (index, index + 1); the last index closes a run
            pair = run[index : index + 2]
            carried = len(pair) == 2 and pair in old_pairs and pair not in supported
            if carried and start is None:
                start = index
            elif not carried and start is not None:
                if index + 1 - start >= MIN_CJK_RUN:
                    spans.append(run[start : index + 1])
                start = None
    return spans


def residue(old: Iterable[str], new: Iterable[str], supporting: Sequence[str]) -> Residue:
    """What the texts ``new`` (a rebuilt part's sections and tags) keep of the texts ``old`` (the
    version that cited the forgotten fact) that none of ``supporting`` (the facts the part may
    still be built from) supports (see the module docstring)."""
    old_text = _normal("\n".join(old))
    new_text = _normal("\n".join(new))
    support_text = _normal("\n".join(supporting))
    spans = _cjk_spans(new_text, _pairs(old_text), _pairs(support_text))
    spans += sorted((_numbers(new_text) & _numbers(old_text)) - _numbers(support_text))
    spans += sorted((_words(new_text) & _words(old_text)) - _words(support_text))
    return Residue(tuple(dict.fromkeys(spans)))
