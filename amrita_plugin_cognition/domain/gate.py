"""The absoluteness gate: is a fact the historian rewrote self-contained? Pure, no I/O.

A fact passes when a reader who never saw the chat can place it: no unresolved pronoun (他, 我们,
对方, 这个项目), no time relative to the moment of speaking (昨天, 上周五, 三天前, 最近, 那天), no
place relative to the speaker (这里, 本地, 在附近), and every explicit numeric id of the source
observation kept byte-identical (the drift check).

How it reads a fact:

1. Opaque spans are masked, keeping offsets (``gate_mask.py``): a named user ``QQ号<id>`` and its
   ``（昵称…）``, titles 《…》, quotations “…” 「…」 『…』 "…", group numbers, URLs and code. Whatever
   a nickname, a song title or a quoted sentence says is not the fact's own wording.
2. The rest is segmented leftmost-longest against the lexicon (``gate_rules.py`` over
   ``gate_lexicon.py`` and ``gate_lexicon_en.py``, Chinese and English alike): problem words compete
   with ordinary words that contain them (其他, 日本, 相当, 爱上 …), so 其他 never yields 他 and
   相当天真 never yields 当天.
3. Problem words with a rule get a context check: anaphors need an absolute date before them,
   附近 needs an anchor (春熙路附近), a weekday or a festival passes as a habit, 自己 (and English
   he, she, they) needs someone named before it. The decisions on ambiguous words are listed in
   the two lexicons.
4. A fact with words in a script the gate cannot read (kana, hangul, Cyrillic …) is not known to
   be absolute: it fails as ``unreadable`` (no retry is asked for it; it is kept, marked).
5. Required ids are looked up as whole digit runs: 10001 is not kept by 100012.

Every step is linear in the length of the fact: a 100 kB answer is read in well under a second
(``bench/historian_cpu.py``), and the historian cuts answers to the fact limit before it reads.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

from . import gate_lexicon as lex
from .gate_mask import DIGIT, mask
from .gate_rules import Reading, problems

ID_DRIFT = "id_drift"
#: A word in a script the gate does not read: the fact is kept, marked not absolute, not retried.
UNREADABLE = "unreadable"
KIND_LABELS = {
    lex.PRONOUN: "代词",
    lex.RELATIVE_TIME: "相对时间",
    lex.RELATIVE_PLACE: "相对地点",
    UNREADABLE: "无法核对的文字",
}
# Letters of scripts the gate does not read, two or more in a row: kana, hangul, Cyrillic, Greek,
# Arabic, Hebrew, Thai, Devanagari.
_OTHER_SCRIPT = re.compile(
    r"[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f\u1100-\u11ff\u3130-\u318f\uac00-\ud7af"
    r"\u0370-\u03ff\u0400-\u052f\u0590-\u05ff\u0600-\u06ff\u0e00-\u0e7f\u0900-\u097f]{2,}"
)


@dataclass(frozen=True, slots=True)
class GateProblem:
    kind: str  # "pronoun" | "relative_time" | "relative_place" | "unreadable" | "id_drift"
    word: str  # the offending word, or the missing id
    start: int  # span in the checked text; -1 for id_drift
    end: int


@dataclass(frozen=True, slots=True)
class GateVerdict:
    problems: tuple[GateProblem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def id_drift(self) -> bool:
        return any(problem.kind == ID_DRIFT for problem in self.problems)

    def feedback(self) -> str:
        """Chinese feedback for the retry prompt; empty when the fact passed, or failed only on
        words the gate cannot read (a retry could not mend those)."""
        words: list[str] = []
        ids: list[str] = []
        for problem in self.problems:
            if problem.kind == UNREADABLE:
                continue
            if problem.kind == ID_DRIFT:
                if problem.word not in ids:
                    ids.append(problem.word)
                continue
            item = f"“{problem.word}”（{KIND_LABELS.get(problem.kind, problem.kind)}）"
            if item not in words:
                words.append(item)
        parts = []
        if words:
            parts.append("以下词语需要改写为绝对表述：" + "、".join(words))
        if ids:
            parts.append("以下编号必须原样保留：" + "、".join(ids))
        return "；".join(parts)


# --- numeric ids -----------------------------------------------------------------------------

_ID_RUN = re.compile(rf"(?<![{DIGIT}])[{DIGIT}]{{5,}}(?![{DIGIT}])")
_ID_MARKER = re.compile(r"(?:QQ|群|号|ID|uid|编号|单号|账号|工号|学号|订单)\s*[:：#]?\s*$", re.IGNORECASE)
_FULL_WIDTH = str.maketrans("０１２３４５６７８９", "0123456789")


def _reads_as_date(run: str) -> bool:
    digits = run.translate(_FULL_WIDTH)
    if len(digits) != 8 or not 1900 <= int(digits[:4]) <= 2099:
        return False
    try:
        date(int(digits[:4]), int(digits[4:6]), int(digits[6:]))
    except ValueError:
        return False
    return True


def explicit_ids(text: str) -> set[str]:
    """The numeric ids of a source text: every maximal run of five or more digits (QQ and group
    numbers, order numbers, amounts), as written. An eight-digit run that reads as a calendar date
    (YYYYMMDD, 1900-2099) is taken for a date, not an id, unless an id marker (QQ, 群, 号, ID,
    编号, 单号 …) stands right before it: the historian may rightly rewrite 20261129 as 2026-11-29."""
    found: set[str] = set()
    for match in _ID_RUN.finditer(text):
        run = match.group()
        if _reads_as_date(run) and not _ID_MARKER.search(text, max(0, match.start() - 6), match.start()):
            continue
        found.add(run)
    return found


def missing_ids(required_ids: Iterable[str], text: str) -> list[str]:
    """The required ids that do not occur in ``text`` as a whole digit run, in the given order."""
    missing: list[str] = []
    for raw in required_ids:
        wanted = str(raw).strip()
        if not wanted or wanted in missing:
            continue
        pattern = rf"(?<![{DIGIT}]){re.escape(wanted)}(?![{DIGIT}])"
        if re.search(pattern, text) is None:
            missing.append(wanted)
    return missing


# --- the gate --------------------------------------------------------------------------------


def check_fact(text: str, required_ids: Iterable[str] = ()) -> GateVerdict:
    """Judge one rewritten fact. ``required_ids`` are the ids of its source observation (see
    ``explicit_ids``); for an observation split into several facts, check their joined text.
    Linear in the length of ``text`` (``bench/historian_cpu.py``)."""
    masked = mask(text)
    found = [GateProblem(kind, text[start:end], start, end) for start, end, kind in problems(Reading.of(text, masked))]
    found.extend(GateProblem(UNREADABLE, match.group(), match.start(), match.end()) for match in _unreadable(masked))
    found.extend(GateProblem(ID_DRIFT, wanted, -1, -1) for wanted in missing_ids(required_ids, text))
    return GateVerdict(tuple(found))


def _unreadable(masked: str) -> list[re.Match[str]]:
    """Words in a script the gate cannot read (kana, hangul, Cyrillic …): the first one, if any.
    A fact in such a language is not known to be absolute."""
    match = _OTHER_SCRIPT.search(masked)
    return [match] if match else []
