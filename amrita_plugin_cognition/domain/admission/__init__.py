"""Admission: what must never be stored. Rule based, runs on every write path.

Two reasons to refuse an observation: it carries a credential (a password, key, token, cookie,
connection string, one-time code, security answer, recovery code, card or identity number), or the
speaker asked not to remember it (the historian's model adds its flags as a second opinion,
``opinion.py``; ``judge`` is where the rules and the flags meet). Both are judged by what is
there, not by a keyword: a secret is a value of the right shape next to its cue (``credentials``),
a request is an intent about the memory itself (``intent``). Where the rules name nothing, a
learned model has the last word on both (``learned``): on a request in words no rule knows, and
on a value of a secret's shape that no rule explains (its candidate spans are then the secrets).

A secret inside a sentence that says something else worth keeping does not cost the sentence: the
verdict admits it with the secret replaced by ``[已隐去]`` (``redacted``; callers store ``text``).
A secret alone, or with little else, is refused. A request not to remember refuses the whole
observation. ``redact`` hides secrets for logs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..regex_start import compile_guarded
from ..windows import windows
from .candidates import names_security_question, value_candidates
from .credentials import Secret, find_secrets
from .intent import asks_not_to_remember, enough_chinese
from .learned import VALUE_END, VALUE_START, credential_model
from .normalise import clauses, fold
from .opinion import (
    FLAGGED_ABOUT_SOMEONE_ELSE,
    FLAGGED_DO_NOT_REMEMBER,
    FLAGGED_REASONS,
    FLAGGED_SECRET,
    NO_OPINION,
    SecondOpinion,
)

__all__ = [
    "FLAGGED_REASONS",
    "NO_OPINION",
    "PLACEHOLDER",
    "WINDOW_CHARS",
    "AdmissionVerdict",
    "SecondOpinion",
    "admit",
    "find_secrets",
    "judge",
    "redact",
]

#: A longer text is judged window by window (``_by_window``): four times a default fact or chat
#: message, so those are judged whole as before.
WINDOW_CHARS = 2000
PLACEHOLDER = "[已隐去]"
CREDENTIAL_MODEL_MIN_CJK = 2
_ENGLISH_SECRET_WORD = compile_guarded(
    r"(?<![a-z])(?:codes?|pins?|pass\w*|pwd|pw|(?:app|api|access|client|private|secret)?(?:keys?|tokens?|secrets?)"
    r"|seed|mnemonic|login|auth\w*|otp|2fa|cvv|cvc"
    r"|cards?|acct|account|credentials?|wallet|backup|recovery|verif\w*)(?![a-z])",
    re.IGNORECASE,
)
_ENGLISH_WORD = compile_guarded(r"(?<![A-Za-z0-9])[A-Za-z]{2,}(?![A-Za-z0-9])")

# A redacted sentence is kept when its clauses without a secret carry at least this much content
# (CJK characters and ASCII words, after the boilerplate below is removed).
MIN_REST_UNITS = 6

_BOILERPLATE = compile_guarded(
    r"【[^】]*】|\[[^\]]*\]"
    r"|(?:千万|请|请你|记得)?(?:别|不要|切勿|请勿|勿)(?:告诉|外传|泄露|泄漏|转发|说出去|给)(?:给)?(?:别人|任何人|其他人|他人|外人)?"
    r"|保密|(?:[\d一二三四五六七八九十两]+\s*分钟)?(?:内)?有效(?:期)?|请尽快\S{0,4}|如非本人操作\S*|请忽略|用于\S{0,4}"
    r"|(?:帮我|你|请)?(?:记|存)(?:一下|住|好|着|下)|收好|记得保存|存好|别忘了"
    r"|谢谢|多谢|好的|收到|ok|我的|你的|他的|她的|就是|这是|这个|那个|给你|发你|贴给你|帮我|一下|发过来|刚收到"
    r"|验证码|校验码|动态码|短信|取件码|提取码|授权码|密码|口令|账号|帐号|用户名|卡号|身份证号?|证件号|银行卡|信用卡|密保|问题"
    r"|答案|恢复码|备用码|密钥|秘钥|私钥|令牌|连接串|连接字符串",
    re.IGNORECASE,
)
_FILLER_CHARS = compile_guarded(r"[的了吧啊呀哦嗯呢吗么哈嘛啦咯噢哇是为我你他她它这那个]")
_UNITS = compile_guarded(r"[\u4e00-\u9fff]|[A-Za-z]{2,}|\d+")

_MESSAGES = {
    "credential": "内容疑似包含密码、密钥、验证码或证件/卡号等敏感凭据，按规定不予记忆",
    "do_not_remember": "对方要求不要记住这件事，已遵从不予记忆",
    FLAGGED_SECRET: "模型判断内容含有密码、密钥、验证码或证件/卡号等敏感信息，不予记忆",
    FLAGGED_DO_NOT_REMEMBER: "模型判断对方要求不要记住这件事，不予记忆",
    FLAGGED_ABOUT_SOMEONE_ELSE: "模型判断这是不在场的他人的私事（健康、钱财、感情、官司或私下告知的事），不予记忆",
}
_REDACTED_MESSAGE = "内容中的密码、密钥、验证码或证件/卡号等敏感凭据已隐去，其余内容照常记忆"


@dataclass(frozen=True, slots=True)
class AdmissionVerdict:
    """``admit``: store ``text``. ``reason``: "credential" | "do_not_remember" | "" (the rules), or
    one of ``FLAGGED_REASONS`` (the model's flags, ``judge``).

    ``text`` is what to store: the text as said, or with secrets replaced by ``[已隐去]``
    (``redacted``, reason "credential"); empty when refused.
    """

    admit: bool
    reason: str = ""
    text: str = ""
    redacted: bool = False

    @property
    def stored_as_is(self) -> bool:
        return self.admit and not self.redacted

    @property
    def message(self) -> str:
        if self.redacted:
            return _REDACTED_MESSAGE
        return _MESSAGES.get(self.reason, "")


def admit(text: str) -> AdmissionVerdict:
    """Judge one observation (a long one window by window, ``_by_window``)."""
    folded = fold(text)
    if any(asks_not_to_remember(window) for _, window in windows(folded, WINDOW_CHARS)):
        return AdmissionVerdict(False, "do_not_remember")
    secrets = _by_window(folded)
    if secrets is None:
        return AdmissionVerdict(False, "credential")
    if not secrets:
        return AdmissionVerdict(True, "", text)
    if _rest_units(folded, secrets) < MIN_REST_UNITS:
        return AdmissionVerdict(False, "credential")
    return AdmissionVerdict(True, "credential", _replace(text, secrets), redacted=True)


def judge(text: str, opinion: SecondOpinion = NO_OPINION) -> AdmissionVerdict:
    """Admission with the model's second opinion (``opinion``): the rules first (``admit``: their
    refusal and their redaction stand as they are), then the model's flags, any of which refuses
    what the rules let through, redacted or not (the model names no span to hide). The one place
    where the rules and the flags meet: every historian fact is judged here."""
    verdict = admit(text)
    if not verdict.admit or not opinion:
        return verdict
    return AdmissionVerdict(False, opinion.reason)


def requests_not_to_remember(text: str) -> bool:
    """Whether a message asks the bot not to keep what it says (``admit``'s first question, without
    the search for secrets): what the end of a turn asks of each message it answers."""
    return asks_not_to_remember(fold(text))


def credential_view(folded: str, candidates: list[Secret] | None = None) -> str:
    """What the credential model reads: ``folded`` with each candidate value between marks, so
    that the words right before and after a value are features of their own."""
    if candidates is None:
        candidates = _model_candidates(folded) or []
    parts: list[str] = []
    position = 0
    for candidate in sorted(candidates, key=lambda found: found.start):
        if candidate.start < position:
            continue
        parts += [folded[position : candidate.start], VALUE_START, folded[candidate.start : candidate.end], VALUE_END]
        position = candidate.end
    parts.append(folded[position:])
    return "".join(parts)


def unmarked(view: str) -> str:
    """The folded text a ``credential_view`` was made from."""
    return view.replace(VALUE_START, "").replace(VALUE_END, "")


def credential_model_consulted(folded: str) -> bool:
    """Whether the learned model is asked about ``folded``: it holds a value of a secret's shape
    that no rule explained, or it speaks of a security question."""
    return _model_candidates(folded) is not None


def _model_candidates(folded: str) -> list[Secret] | None:
    """The values the learned model would judge in ``folded`` (empty for a security answer, which
    has no shape); ``None`` when the model is not asked."""
    candidates = [Secret(start, end, "learned") for start, end in value_candidates(folded)]
    # The model learned from Chinese chat, where a code may come with two words ("给你 053721 快").
    # Without Chinese it is asked only when a secret is named or values are all there is
    # ("zhangfan_1993 / Fa!9k2LmQe", "zgsBH!5qWgn"), not about an English sentence with a name in it.
    english = not enough_chinese(folded, CREDENTIAL_MODEL_MIN_CJK) and not _ENGLISH_SECRET_WORD.search(folded)
    if english and (not candidates or len(_ENGLISH_WORD.findall(_replace(folded, candidates))) > 1):
        return None
    return candidates if candidates or names_security_question(folded) else None


def _secrets(folded: str) -> list[Secret] | None:
    """The secrets in ``folded``: the rules' or, when they name none, the candidate values the
    learned model says give a secret away; ``None`` (refuse it whole) when the model says so but
    no value has a shape (a security answer)."""
    found = find_secrets(folded)
    if found:
        return found
    candidates = _model_candidates(folded)
    if candidates is None or not credential_model().says_yes(credential_view(folded, candidates)):
        return []
    return candidates or None


def _by_window(folded: str) -> list[Secret] | None:
    """``_secrets`` of a text read whole, or of a long one window by window (cut at sentence ends,
    ``domain/windows.py``), so that the rules' looks around each value stay within a window and
    admission stays linear in the text's length. A window refused whole refuses the text."""
    found: dict[tuple[int, int], Secret] = {}
    for offset, window in windows(folded, WINDOW_CHARS):
        secrets = _secrets(window)
        if secrets is None:
            return None
        for secret in secrets:
            moved = Secret(secret.start + offset, secret.end + offset, secret.kind) if offset else secret
            found.setdefault((moved.start, moved.end), moved)
    return list(found.values())


def redact(text: str) -> str:
    """``text`` with every secret replaced by ``[已隐去]``: safe to log (all of it hidden when a
    secret without a shape is in it)."""
    secrets = _by_window(fold(text))
    return PLACEHOLDER if secrets is None else _replace(text, secrets)


def _replace(text: str, secrets: list[Secret]) -> str:
    parts: list[str] = []
    position = 0
    for secret in sorted(secrets, key=lambda found: (found.start, -found.end)):
        if secret.end <= position:  # inside one already hidden
            continue
        if secret.start > position or not parts:
            parts.append(text[position : secret.start])
            parts.append(PLACEHOLDER)
        position = max(position, secret.end)
    parts.append(text[position:])
    return "".join(parts)


def _rest_units(text: str, secrets: list[Secret]) -> int:
    """Content left in the clauses that hold no secret (one sweep over both, in order)."""
    total = 0
    spans = sorted((secret.start, secret.end) for secret in secrets)
    index = 0
    for start, end in clauses(text):
        while index < len(spans) and spans[index][1] <= start:
            index += 1  # secrets wholly before this clause touch no later one either
        if index < len(spans) and spans[index][0] < end:
            continue
        rest = _FILLER_CHARS.sub("", _BOILERPLATE.sub(" ", text[start:end]))
        total += len(_UNITS.findall(rest))
    return total
