"""What a rule may ask about the text around a match: tense of the clause, habits, compound-word clashes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime

from . import dates, festival_talk
from .clause_words import (
    BOOKED,
    BOOKED_WITH_OBJECT,
    CLAUSE_BREAKS,
    COMPARED,
    CUSTOM_ACTS,
    CUSTOM_ASKED_OF_SOMEONE,
    CUSTOM_WORDS,
    DEFINED_AS_A_FESTIVAL,
    FUTURE_MARKERS,
    GENERAL_STATEMENT,
    HABIT_AFTER,
    HABIT_BEFORE,
    HABIT_BEFORE_WORDS,
    HABIT_CLAUSE_WORDS,
    INVITATION_WORDS,
    LEFT_PARTNERS,
    NEAREST_MARKERS,
    NOT_FUTURE_BEFORE,
    NOT_PAST_LE_BEFORE,
    ORIGIN_WORDS,
    PAST_GUO_AFTER_VERB,
    PAST_GUO_BEFORE,
    PAST_MARKERS,
    PAST_NEGATION,
    PAST_VERBS_BEFORE_DE,
    QUESTION_ENDINGS,
    REPORTED_BEFORE_YAO,
    RESCHEDULED,
    RIGHT_PARTNERS,
    STRONG_LEFT_PARTNERS,
    WEAK_PAST_MARKERS,
)
from .lexicon import PARTS_OF_DAY

#: The mention names when something was done, right before it is said (周五借你的…, 冬至包的饺子).
_DONE_VERBS = "|".join(sorted(PAST_VERBS_BEFORE_DE, key=len, reverse=True))
_DONE_RIGHT_AFTER = re.compile(
    rf"(?:{'|'.join(PARTS_OF_DAY)})?(?:{_DONE_VERBS})(?:了|过)?(?:[给在到][^，。！？\s]{{0,6}}?|[你我他她它]们?)?的(?!话|时候)"
)
_SENTENCE_END = re.compile(r"[。！？!?\n]")
#: How far a sentence is read around a mention, each way.
SENTENCE_REACH = 120
#: How far before a festival another one may stand whose definition it is (七夕是中国的情人节).
_DEFINITION_REACH = 24
_MONTHLY = re.compile(r"每个?月")
_PERFECTIVE = re.compile(r"(?<![除为])了")
_WEEKDAY_RANGE = re.compile(
    r"(?:周|星期|礼拜)[一二三四五六日天]\s*(?:到|至|-|~|～)\s*(?:周|星期|礼拜)?[一二三四五六日天]"
)
_WEEKLY = re.compile(r"每(?:个)?(?:周|星期|礼拜)")
_NOT_FUTURE_AFTER = {"会": "议员场所长计话面谈客馆费儿", "要": "求点素闻害", "约": "会"}  # 约会: a date


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
        """The clause around a span, as (text before the span, text after it). A space next to a
        Chinese character ends a clause too: chat messages use it as a comma (1号给你回复 别催了)."""
        left = start
        while left > 0 and not self._breaks(left - 1):
            left -= 1
        right = end
        while right < len(self.text) and not self._breaks(right):
            right += 1
        return self.text[left:start], self.text[end:right]

    def _breaks(self, index: int) -> bool:
        char = self.text[index]
        if char in CLAUSE_BREAKS:
            return True
        if not char.isspace() or index == 0 or index + 1 >= len(self.text):
            return False
        return not (self.text[index - 1].isascii() and self.text[index + 1].isascii())

    # --- tense ---------------------------------------------------------------------------------------------

    def is_past(self, start: int, end: int) -> bool:
        """Whether the clause narrates something that already happened (周五去了 / 那天 / 去的)."""
        return self.tense(start, end) != ""

    def tense(self, start: int, end: int) -> str:
        """ "past" (周五去了, 去的, 那会儿), "weak" (only 那天 / 来着 point back, in a statement) or "".

        An explicit future marker (要, 打算, 记得 ...) wins over any past marker; with neither the clause is
        read as not-past, which for a recurring date means the upcoming occurrence.
        """
        head, tail = self.clause(start, end)
        clause = head + "\u3000" + tail  # the mention itself is left out
        if _DONE_RIGHT_AFTER.match(tail):
            return "past"  # 周五借你的充电宝记得还我: what was done that day, whatever follows
        if _has_future(clause) or RESCHEDULED.search(clause):
            return ""
        if _has_past(clause) or PAST_NEGATION.search(clause):
            return "past"
        if not any(marker in clause for marker in WEAK_PAST_MARKERS):
            return ""
        closing = self.text[end + len(tail) : end + len(tail) + 1]
        question = clause.endswith(QUESTION_ENDINGS) or closing in ("?", "？")
        if question or any(word in clause for word in INVITATION_WORDS):
            return ""
        strong = any(marker in clause for marker in WEAK_PAST_MARKERS if marker not in NEAREST_MARKERS)
        return "past" if strong else "weak"

    def occurrence(
        self, candidates: list[date], start: int, end: int, grace: int = 0, purpose: bool = False, yearly: bool = False
    ) -> date | None:
        """The occurrence of a recurring date (a festival, 3号, 12月3号) the clause means: the latest one
        not after today in a past clause; the nearer of the last and the next when only 那天 points back
        (腊八那天去领粥 two days before it is the coming one, 28号那天下大雨 on the 30th the past one);
        otherwise the upcoming one, ``grace`` days after it included. ``purpose``: the date is what
        something was done for (父亲节给我爸买了个按摩仪), so a past clause only points back weakly.
        ``yearly`` (festivals): a past clause still means the coming one when it is weeks ahead and the
        last one most of a year ago."""
        tense = self.tense(start, end)
        if purpose and tense == "past":
            tense = "weak"
        if not tense:
            return dates.pick_occurrence(candidates, self.today, False, grace)
        last = dates.pick_occurrence(candidates, self.today, True)
        upcoming = dates.pick_occurrence(candidates, self.today, False)
        if last is None or upcoming is None:
            return last if tense == "past" else last or upcoming
        if tense == "past":  # 五一的酒店已经涨价了 a month before 五一: the coming one, not last year's
            return upcoming if yearly and (upcoming - self.today) * 4 < self.today - last else last
        return last if self.today - last <= upcoming - self.today else upcoming

    # --- habits and compounds ------------------------------------------------------------------------------

    def is_habit(self, start: int, end: int) -> bool:
        """每周五 / 每个月15号 / 逢年过节 / 周末都在加班 / 平时周五...: a recurring habit, not a point in time."""
        if HABIT_BEFORE.search(self.before(start, 6)):
            return True
        if self.text.startswith(HABIT_AFTER, end):
            return True
        head, tail = self.clause(start, end)
        if any(word in head or word in tail for word in HABIT_CLAUSE_WORDS):
            return True  # 平时周五… and 中秋月饼一般什么馅最好吃
        if any(word in head for word in HABIT_BEFORE_WORDS):
            return True  # 以前过年能收好多压岁钱
        # a list after a habit in the same sentence: 每个月15号发工资，20号交房租
        sentence = _SENTENCE_END.split(self.text[:start])[-1]
        mention = self.text[start:end]
        if mention.endswith(("号", "日")) and _MONTHLY.search(sentence):
            return True
        weekly = _WEEKLY.search(sentence) or _WEEKDAY_RANGE.search(sentence)  # 食堂周一到周五七点开门 周末八点
        return mention.startswith(("周", "星期", "礼拜")) and bool(weekly)

    def sentence(self, start: int, end: int) -> tuple[str, str]:
        """The sentence around a span, as (text before the span, text after it), each at most
        ``SENTENCE_REACH`` characters: a long text costs each mention the same."""
        head = self.text[max(0, start - SENTENCE_REACH) : start]
        tail = self.text[end : end + SENTENCE_REACH]
        return _SENTENCE_END.split(head)[-1], _SENTENCE_END.split(tail, maxsplit=1)[0]

    def custom_talk(self, start: int, end: int) -> bool:
        """Whether the sentence asks about or explains a festival's custom (为什么端午节要吃粽子, 冬至吃饺子
        的由来, 端午吃粽子是为了纪念屈原): every year's, no date."""
        head, tail = self.sentence(start, end)
        sentence = head + "\u3000" + tail
        if CUSTOM_ASKED_OF_SOMEONE.search(sentence) or any(marker in sentence for marker in WEAK_PAST_MARKERS):
            return False  # 你为什么冬至不回家吃饺子, 冬至那天为什么没回家: one person's one day
        if ORIGIN_WORDS.search(sentence):
            return True  # 万圣节的南瓜灯是怎么来的
        return bool(CUSTOM_WORDS.search(sentence) and CUSTOM_ACTS.search(sentence))

    def said_of_every_year(self, start: int, end: int, others: re.Pattern[str]) -> bool:
        """Whether a festival's clause says what it is every year: defined as a festival (七夕是中国的情人节
        吗), compared with another (``others``: 圣诞节在国外比春节还热闹), or spoken of in general (过年回家最
        怕亲戚问工资), or its custom asked about (``custom_talk``)."""
        if DEFINED_AS_A_FESTIVAL.match(self.text, end) or self.custom_talk(start, end):
            return True
        text = self.text
        if festival_talk.lore(text, end) or festival_talk.always_has(text, start, end):
            return True  # 七夕的牛郎织女故事, 过年必吃的菜
        if festival_talk.relation(text, start, end):
            return True  # 清明和寒食有什么关系
        head, tail = self.clause(start, end)
        head, tail = head[-SENTENCE_REACH:], tail[:SENTENCE_REACH]
        near = head[-_DEFINITION_REACH:]
        for other in others.finditer(near):  # the festival another is defined as (七夕是中国的情人节)
            definition = DEFINED_AS_A_FESTIVAL.match(self.text, start - len(near) + other.end())
            if definition and definition.end() >= end:
                return True
        if GENERAL_STATEMENT.search(head + "\u3000" + tail):
            return True
        before, after = self.sentence(start, end)
        sentence = before + "\u3000" + after
        if festival_talk.observed(sentence) or festival_talk.saying(sentence):
            return True  # 外国人也过春节吗, 万圣节在中国没什么人过, 冬至大如年（老话）
        if festival_talk.customary_list(sentence) and not _PERFECTIVE.search(sentence):
            return True  # 端午除了粽子还有什么吃的 (not 中秋除了月饼公司还发了什么)
        return COMPARED.search(sentence) is not None and others.search(sentence) is not None

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
            noun = noun or (marker == "要" and clause[:index].endswith(REPORTED_BEFORE_YAO))
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
            if any(clause.startswith(word, index - word.index("了")) for word in BOOKED):
                continue  # 情人节订了家日料: booked for a day still ahead
            if BOOKED_WITH_OBJECT.search(clause, 0, index):
                continue  # 春节抢到票了吗
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
