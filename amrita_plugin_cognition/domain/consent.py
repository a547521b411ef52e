"""Whether a chat reply agrees to a waiting deletion: yes, no, or anything else (no I/O).

A deletion from chat (forget one memory, delete everything of a user, a group or the bot) waits
for its user's answer; ``judge`` reads the answer's text. The model's say-so plays no part: the
plugin reads the user's own words.

The text is folded (full-width to ASCII, traditional cue characters to simplified, lower case) and
cut into clauses at punctuation, spaces and line breaks. Each clause is, in this order:

1. **no**: a negation whose scope holds a delete verb or a word of agreement (别删, 不要删了,
   先别给我删, 确定不删, 不确定, 别确认, 不同意, 不行, 不对), a cancel word (取消, 算了, 作罢, 留着,
   撤回, ``no``), or nothing but negation and fillers (不, 不不不, 先别, 还是别了吧). Idioms whose
   不/没 negates nothing of the request are not negations (不好意思, 不客气, 不错, 没事, 没问题,
   对不起). A negation wins even in a question (能不能别删 asks not to delete).
2. **question**: a question mark, 吗, an interrogative word (什么, 为什么, 怎么, 哪, 谁, 多少, 是否,
   你确定) or an A-not-A form (要不要删, 删不删, 是不是, 可不可以).
3. **yes**: a short answer made only of words of agreement (确认, 确定, 同意, 好, 行, 可以, 对, 是,
   没问题, ok), delete verbs (删, 删除, 删掉, 清空, 忘掉, 去掉), and the fillers, pronouns and
   objects an answer carries (吧, 了, 啊, 嗯, 就, 那就, 帮我, 把, 它, 这条, 全部, 谢谢), with at
   least one word of agreement or delete verb. A clause with any other word is not a yes: "我朋友
   把我删了" tells something, and "确认一下" means "check" (一下 only follows a delete verb).
4. **filler**: fillers only (嗯, 谢谢, 哈哈); 5. **other**: anything else.

The message is **no** when any clause is (a negation or a cancel word wins over a yes in the same
message: 算了，删吧 is no); else **other** when any clause asks (a reply that asks is not yet an
agreement: 删吧？, 删了能恢复吗, 确认一下是哪条); else **yes** when any clause is; else **other**.
``bare`` tells whether the message is nothing but its answer (every clause a yes, a no or a
filler): the chat side answers a bare reply itself and passes a longer one on to the chat.

A lone 嗯 or 谢谢 is no agreement (hesitation sounds the same), nor is a hesitation (等等, 再想想,
不一定): they keep the request waiting. A text longer than ``JUDGED_MAX_CHARS`` is no answer.
Every rule is linear in the text (the clause tokenizer is a dynamic programme over positions).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from .admission.normalise import fold
from .records import clean_text

#: A longer message is no answer to a yes-or-no question (and is not read further).
JUDGED_MAX_CHARS = 2000
#: A longer clause is not a short answer (the tokenizer reads at most this many characters).
_ANSWER_MAX_CHARS = 40


class Answer(str, Enum):
    YES = "yes"
    NO = "no"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class Verdict:
    answer: Answer
    #: The message is nothing but the answer (every clause a yes, a no or a filler).
    bare: bool
    #: Why, for logs: negation, cancel_word, refusal, question, agreement, nothing, too_long.
    reason: str


# --------------------------------------------------------------------------------- words

#: Words of agreement (what a yes answers with besides a delete verb).
AGREEMENT_WORDS = frozenset(
    {
        "确认", "确定", "同意", "答应", "批准", "允许", "准了", "执行", "照办", "就这样", "就这么办",
        "好", "好的", "好滴", "好嘞", "行", "可以", "可", "对", "是", "要", "当然", "没问题", "没错",
        "妥", "不介意", "ok", "okay", "okk", "yes", "yep", "yeah", "sure", "y",
    }
)  # fmt: skip
#: Delete verbs (a forget or a delete-all).
DELETE_VERBS = frozenset(
    {
        "删", "删除", "删掉", "删了", "删去", "删光", "删干净", "删一下", "删除一下", "全删",
        "清", "清空", "清除", "清掉", "清理", "清一下", "忘掉", "抹掉", "抹去", "去掉", "扔掉",
    }
)  # fmt: skip
#: What an answer carries besides its verb: particles, fillers, politeness, pronouns, objects.
FILLER_WORDS = frozenset(
    {
        "吧", "了", "啊", "呀", "啦", "哈", "呗", "嘛", "哦", "噢", "喔", "哟", "嗯", "恩", "唔", "额",
        "呃", "哎", "诶", "欸", "的", "滴", "就", "都", "全", "全部", "统统", "直接", "马上", "立刻",
        "赶紧", "快", "快点", "现在", "那", "那就", "那么", "这样", "先", "还是", "请", "麻烦", "麻烦你",
        "拜托", "拜托了", "帮我", "给我", "替我", "帮忙", "你", "我", "它", "把", "这条", "那条", "这个",
        "那个", "这些", "那些", "这一条", "那一条", "记忆", "这条记忆", "那条记忆", "谢谢", "谢谢你",
        "谢了", "多谢", "感谢", "辛苦", "辛苦了", "哈哈", "嘿嘿", "呵呵", "嘻嘻", "hh", "真的", "确实",
        "第", "条", "号", "编号", "thanks", "thx", "please", "pls",
    }
)  # fmt: skip
#: A clause of only these (and fillers) refuses: 不, 不不不, 先别, 还是别了吧, no.
REFUSAL_WORDS = frozenset(
    {"不", "别", "否", "没", "甭", "莫", "不要", "不用", "不了", "不必", "免了", "no", "n", "nope", "nah"}
)
#: Cancel words: the request is off wherever they stand.
_CANCEL = re.compile(
    r"取消|算了|作罢|罢了|拉倒|撤回|撤销|放弃|留着|保留|别动|cancel|(?<![a-z])(?:no|nope|nah|stop)(?![a-z])"
)

# Idioms whose 不/没/别 negates nothing of the request: masked before negations are looked for.
_NOT_NEGATIONS = re.compile(
    r"不好意思|不客气|不用谢|不谢|不错|不要紧|不介意|不然|不过|不但|不仅|不只|不久|不少|不管怎样|对不起|"
    r"了不起|说不定|差不多|不得不|没事|没关系|没问题|没错|没想到|别的|别人|特别|区别|分别|告别|级别|类别|性别|识别|差别|离别|辨别|鉴别|派别|道别"
)
# An A-not-A question (要不要, 删不删, 是不是, 有没有); 不不不 is an emphatic no, not one.
_A_NOT_A = re.compile(r"(\w)(?<!不)(?<!没)[不没]\1|可不可以")
# A negation whose scope holds a delete verb or a word of agreement, a few words apart at most.
_NEGATED_REQUEST = re.compile(
    r"(?:不|别|甭|勿|莫|没|未|无需|无须|休)[要用必想再先给帮我你它这那条个都全能会可得准许让把]{0,3}"
    r"(?:删|清|忘掉|抹|去掉|扔|确认|确定|同意|答应|要|用|行|好|对|是|可以|必|需|准|许|执行|动)"
)
_QUESTION = re.compile(
    r"吗|么$|什么|为什么|为何|为啥|怎么|怎样|咋|如何|哪(?!怕)|谁|多少|几条|几个|是否|能否|可否|你确定|你确认"
)
_CLAUSE_BREAK = re.compile(r"([?？]+|[\s，,。.！!；;、:：~～…()（）\[\]【】「」『』\"“”'‘’]+)")
_NOT_A_WORD = re.compile(r"\W+")
_NUMBER = re.compile(r"\d+")


# ------------------------------------------------------------------------------ clauses


class _Clause(str, Enum):
    YES = "yes"
    NO = "no"
    QUESTION = "question"
    FILLER = "filler"
    OTHER = "other"


def _clauses(text: str) -> list[tuple[str, bool]]:
    """Each clause (punctuation and symbols dropped) with whether a question mark ends it."""
    parts = _CLAUSE_BREAK.split(text)
    clauses: list[tuple[str, bool]] = []
    for index in range(0, len(parts), 2):
        words = _NOT_A_WORD.sub("", parts[index]).replace("_", "")
        if not words:
            continue
        ending = parts[index + 1] if index + 1 < len(parts) else ""
        clauses.append((words, "?" in ending or "？" in ending))
    return clauses


def _cover(clause: str, words: frozenset[str], marked: frozenset[str]) -> tuple[bool, bool]:
    """Whether ``clause`` is a sequence of ``words``, and whether one of them is in ``marked``:
    a dynamic programme over positions (no backtracking, linear in the clause)."""
    if len(clause) > _ANSWER_MAX_CHARS:
        return False, False
    longest = max(map(len, words))
    # reach[i]: None when position i cannot be reached, else whether a marked word was used to get there
    reach: list[bool | None] = [None] * (len(clause) + 1)
    reach[0] = False
    for start in range(len(clause)):
        if reach[start] is None:
            continue
        for end in range(start + 1, min(len(clause), start + longest) + 1):
            piece = clause[start:end]
            if piece in words:
                seen = bool(reach[start]) or piece in marked
                if reach[end] is None or (seen and not reach[end]):
                    reach[end] = seen
    return reach[-1] is not None, bool(reach[-1])


_ANSWER_WORDS = AGREEMENT_WORDS | DELETE_VERBS | FILLER_WORDS
_AGREES = AGREEMENT_WORDS | DELETE_VERBS
_REFUSAL_CLAUSE_WORDS = REFUSAL_WORDS | FILLER_WORDS


def _clause_kind(clause: str, question_mark: bool, own_number: frozenset[str]) -> tuple[_Clause, str]:
    masked = _NOT_NEGATIONS.sub("·", clause)
    asks = question_mark or _A_NOT_A.search(masked) is not None
    masked = _A_NOT_A.sub("·", masked)
    if _NEGATED_REQUEST.search(masked):
        return _Clause.NO, "negation"
    if _CANCEL.search(clause):
        return _Clause.NO, "cancel_word"
    covered, refuses = _cover(clause, _REFUSAL_CLAUSE_WORDS, REFUSAL_WORDS)
    if covered and refuses:
        return _Clause.NO, "refusal"
    if asks or _QUESTION.search(clause):
        return _Clause.QUESTION, "question"
    covered, agrees = _cover(clause, _ANSWER_WORDS | own_number, _AGREES)
    if covered:
        return (_Clause.YES, "agreement") if agrees else (_Clause.FILLER, "nothing")
    return _Clause.OTHER, "nothing"


def judge(text: str, number: str | None = None) -> Verdict:
    """Whether ``text``, a user's reply to "delete this?", agrees, refuses or neither. ``number``
    is the waiting request's own number (a forget's memory id): said in a yes, it is part of the
    answer (确认删除 #12); any other number names something else, and the reply is no yes."""
    folded = fold(clean_text(text)).lower().strip()
    if len(folded) > JUDGED_MAX_CHARS:
        return Verdict(Answer.OTHER, False, "too_long")
    own = frozenset({number}) if number else frozenset()
    kinds = [_clause_kind(clause, question_mark, own) for clause, question_mark in _clauses(folded)]
    found = {kind for kind, _ in kinds}
    bare = bool(found) and found <= {_Clause.YES, _Clause.NO, _Clause.FILLER} and found != {_Clause.FILLER}
    for wanted, answer in ((_Clause.NO, Answer.NO), (_Clause.QUESTION, Answer.OTHER)):
        if any(kind is wanted for kind, _ in kinds):
            return Verdict(answer, bare, next(reason for kind, reason in kinds if kind is wanted))
    if any(kind is _Clause.YES for kind, _ in kinds):
        if any(found_number not in own for found_number in _NUMBER.findall(folded)):
            return Verdict(Answer.OTHER, False, "other_number")
        return Verdict(Answer.YES, bare, "agreement")
    return Verdict(Answer.OTHER, False, "nothing")
