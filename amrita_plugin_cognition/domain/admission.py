"""Admission: what must never be stored. Rule based, runs on every write path.

Two reasons to refuse an observation: it carries a credential (passwords, tokens, keys, card
and identity numbers, verification codes), or the speaker asked not to remember it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CREDENTIAL_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        # "密码是 hunter2", "password: x", "口令", "支付密码", "PIN 码"
        r"(密码|口令|passw(or)?d|passcode|pin\s*码|pin\s*code)\s*(是|为|:|：|=|is)?\s*\S{3,}",
        r"(验证码|校验码|动态码|verification\s*code|otp)\s*(是|为|:|：|=|is)?\s*[A-Za-z0-9]{4,8}",
        # API keys and tokens
        r"\b(sk|pk|rk|ghp|gho|github_pat|xox[abpr]|AKIA)[-_A-Za-z0-9]{12,}",
        r"(api[\s_-]?key|secret[\s_-]?key|access[\s_-]?token|token|密钥|私钥|秘钥)\s*(是|为|:|：|=|is)?\s*[A-Za-z0-9_\-./+]{12,}",
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----",
        r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.",  # JWT
        # Chinese resident identity number, bank cards (16-19 digits), CVV
        r"(?<!\d)\d{17}[\dXx](?!\d)",
        r"(银行卡|信用卡|卡号|card\s*number)\D{0,6}\d{12,19}",
        r"(?<!\d)(\d{4}[ -]){3}\d{4}(?:\d{0,3})(?!\d)",
        r"\b(cvv|cvc|安全码)\s*(是|为|:|：|=|is)?\s*\d{3,4}\b",
        # seed phrases / wallet
        r"(助记词|seed\s*phrase|mnemonic)",
    )
)

_DO_NOT_REMEMBER_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"(别|不要|不许|不准|勿|千万别|请勿|不用|不必)(帮我)?(记|记住|记下|记录|存|保存|写下)",
        r"(忘掉|忘了吧|忘记这|删掉这|当我没说)",
        r"(这个|这件事|这事|以下|下面)(是)?(秘密|保密)",
        r"(don'?t|do not|never)\s+(remember|record|save|store|memori[sz]e|note)",
        r"(forget (this|that|it)|off the record|keep (this|it) secret)",
    )
)


@dataclass(frozen=True, slots=True)
class AdmissionVerdict:
    admit: bool
    reason: str = ""  # "credential" | "do_not_remember"

    @property
    def message(self) -> str:
        if self.reason == "credential":
            return "内容疑似包含密码、密钥、验证码或证件/卡号等敏感凭据，按规定不予记忆"
        if self.reason == "do_not_remember":
            return "对方要求不要记住这件事，已遵从不予记忆"
        return ""


def admit(text: str) -> AdmissionVerdict:
    """Judge one observation."""
    for pattern in _DO_NOT_REMEMBER_PATTERNS:
        if pattern.search(text):
            return AdmissionVerdict(False, "do_not_remember")
    for pattern in _CREDENTIAL_PATTERNS:
        if pattern.search(text):
            return AdmissionVerdict(False, "credential")
    return AdmissionVerdict(True)
