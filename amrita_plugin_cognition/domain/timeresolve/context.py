"""What a rule may ask about the text around a match: tense of the clause, habits, compound-word clashes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from .lexicon import (
    CLAUSE_BREAKS,
    FUTURE_MARKERS,
    HABIT_AFTER,
    HABIT_BEFORE,
    HABIT_CLAUSE_WORDS,
    INVITATION_WORDS,
    LEFT_PARTNERS,
    NOT_FUTURE_BEFORE,
    NOT_PAST_LE_BEFORE,
    PAST_GUO_AFTER_VERB,
    PAST_GUO_BEFORE,
    PAST_MARKERS,
    PAST_VERBS_BEFORE_DE,
    QUESTION_ENDINGS,
    RIGHT_PARTNERS,
    STRONG_LEFT_PARTNERS,
    WEAK_PAST_MARKERS,
)

_NOT_FUTURE_AFTER = {"会": "议员场所长计话面谈客馆费儿", "要": "求点素闻害"}


@dataclass(frozen=True, slots=True)
class Scan:
    """The text being scanned and the moment it was written (local to its own UTC offset)."""

    text: str
    now: datetime

    @property
    def today(self) -> date:
        return self.now.date()

    def before(self, start: int, size: int = 1) -> str:
        return self.text[max(0, start - size) : start]

    def after(self, end: int, size: int = 1) -> str:
        return self.text[end : end + size]

    def next_in(self, end: int, chars: str) -> bool:
        """Whether the character right after ``end`` exists and is one of ``chars``."""
        return end < len(self.text) and self.text[end] in chars

    def previous_in(self, start: int, chars: str) -> bool:
        """Whether the character right before ``start`` exists and is one of ``chars``."""
        return start > 0 and self.text[start - 1] in chars

    def clause(self, start: int, end: int) -> tuple[str, str]:
        """The clause around a span, as (text before the span, text after it)."""
        left = start
        while left > 0 and self.text[left - 1] not in CLAUSE_BREAKS:
            left -= 1
        right = end
        while right < len(self.text) and self.text[right] not in CLAUSE_BREAKS:
            right += 1
        return self.text[left:start], self.text[end:right]

    # --- tense ---------------------------------------------------------------------------------------------

    def is_past(self, start: int, end: int) -> bool:
        """Whether the clause narrates something that already happened (周五去了 / 那天 / 去的).

        An explicit future marker (要, 打算, 记得 ...) wins over any past marker; with neither the clause is
        read as not-past, which for a recurring date means the upcoming occurrence.
        """
        head, tail = self.clause(start, end)
        clause = head + "\u3000" + tail  # the mention itself is left out
        if _has_future(clause):
            return False
        if _has_past(clause):
            return True
        if not any(marker in clause for marker in WEAK_PAST_MARKERS):
            return False
        closing = self.text[end + len(tail) : end + len(tail) + 1]
        question = clause.endswith(QUESTION_ENDINGS) or closing in ("?", "？")
        return not question and not any(word in clause for word in INVITATION_WORDS)

    # --- habits and compounds ------------------------------------------------------------------------------

    def is_habit(self, start: int, end: int) -> bool:
        """每周五 / 每个月15号 / 逢年过节 / 周末都在加班 / 平时周五...: a recurring habit, not a point in time."""
        if HABIT_BEFORE.search(self.before(start, 6)):
            return True
        if self.text.startswith(HABIT_AFTER, end):
            return True
        head, _ = self.clause(start, end)
        return any(word in head for word in HABIT_CLAUSE_WORDS)

    def compound_clash(self, start: int, end: int) -> bool:
        """Whether the span's edges belong to neighbouring words (以前|天真, 如今|年轻, 日本|月饼, 这周|边)."""
        text = self.text
        if start == end:
            return False
        first, last = text[start], text[end - 1]
        previous = text[start - 1] if start > 0 else ""
        following = text[end] if end < len(text) else ""
        left_match = bool(previous) and previous in LEFT_PARTNERS.get(first, "")
        if left_match and previous in STRONG_LEFT_PARTNERS.get(first, ""):
            return True
        right_match = right_partner(text, end, last)
        if last == "周" and right_match:
            return True  # 这周边 / 上周目: 周 is the head of another word whatever stands on the left
        return left_match and right_match and following != ""


def right_partner(text: str, end: int, last: str) -> bool:
    """Whether the character after ``end`` forms a word with ``last`` (天|气, 年|轻, 月|饼)."""
    if end >= len(text):
        return False
    following = text[end]
    if last == "天" and following in "上下":
        return text[end + 1 : end + 2] != "午"
    return following in RIGHT_PARTNERS.get(last, "")


def _has_future(clause: str) -> bool:
    for marker in FUTURE_MARKERS:
        index = clause.find(marker)
        while index >= 0:
            before = clause[index - 1] if index > 0 else ""
            after = clause[index + len(marker) : index + len(marker) + 1]
            blocked_before = NOT_FUTURE_BEFORE.get(marker, "")
            blocked_after = _NOT_FUTURE_AFTER.get(marker, "")
            noun = (bool(before) and before in blocked_before) or (bool(after) and after in blocked_after)
            if not noun and not (marker == "约" and before == "大"):
                return True
            index = clause.find(marker, index + 1)
    return False


def _has_past(clause: str) -> bool:
    for marker in PAST_MARKERS:
        index = clause.find(marker)
        while index >= 0:
            after = clause[index + len(marker) : index + len(marker) + 1]
            if not (marker == "刚" and after == "好"):
                return True
            index = clause.find(marker, index + 1)
    for index, char in enumerate(clause):
        before = clause[index - 1] if index > 0 else ""
        after = clause[index + 1 : index + 2]
        if char == "了":
            if before in NOT_PAST_LE_BEFORE and before:
                continue
            if after in ("解", "结", "却", "然"):
                continue
            return True
        if char == "过":
            rest = clause[index + 1 :]
            if before == "不" or after in ("得", "来", "去", "年", "节"):
                continue
            if (before and before in PAST_GUO_AFTER_VERB) or rest.startswith(PAST_GUO_BEFORE):
                return True
    for verb in PAST_VERBS_BEFORE_DE:
        index = clause.find(verb + "的")
        while index >= 0:
            rest = clause[index + len(verb) + 1 :]
            if not rest.startswith(("时候", "话")):
                return True
            index = clause.find(verb + "的", index + 1)
    return False
