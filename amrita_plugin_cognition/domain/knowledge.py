"""The knowledge base's policy: what an entry may say, and what a suggestion may carry. Pure.

An entry is general knowledge of one bot account (a rule, an FAQ, a how-to) shown to anyone who
holds the read permission in any chat, so it may carry nothing that belongs to one person or one
private conversation. ``judge_entry`` refuses, with a Chinese reason, each class of content:

* ``private_source``: a source memory was said in a private chat (its content would reach
  every chat through the entry);
* ``person``: a person's details: a QQ number (one of a known user, in any writing the person
  matcher reads, or any 5–11 digit number next to a QQ cue), a known user's nickname, a mobile
  number or an e-mail address;
* ``secret``: what admission refuses or would redact (a credential; a request not to remember);
* ``too_long`` / ``empty``: a field over its limit, or a title or body with nothing in it.

A suggestion (a chat user's proposal for the next cycle) is bounded and passes admission whole
(``judge_suggestion``): nothing is stored with a secret in it, not even redacted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from ..errors import InvalidInput
from .records import clean_text

if TYPE_CHECKING:
    from .people import PersonMatcher

TITLE_MAX_CHARS = 60
SUMMARY_MAX_CHARS = 200
SUGGESTION_MAX_CHARS = 500
#: Entry states: shown, or waiting to be re-derived after a source was forgotten (hidden).
ACTIVE = "active"
STALE = "stale"
#: Suggestion states.
PENDING = "pending"
ACCEPTED = "accepted"
REJECTED = "rejected"
REVIEW_OUTCOMES = (ACCEPTED, REJECTED)

_QQ_CUE = re.compile(
    r"(?:qq|ＱＱ|q号|扣扣|企鹅号?)(?:号码?|账号|帐号)?[\s是为:：=（(]{0,4}(\d{5,11})(?!\d)",
    re.IGNORECASE,
)
_MOBILE = re.compile(r"(?<!\d)(?:\+?86[\s-]?)?1[3-9]\d(?:[\s-]?\d){8}(?!\d)")
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")


@dataclass(frozen=True, slots=True)
class KnowledgeDraft:
    """What a write of an entry carries: its text and the memory ids it was derived from."""

    title: str
    summary: str
    body: str
    source_ids: tuple[int, ...] = ()

    @property
    def text(self) -> str:
        return "\n".join(part for part in (self.title, self.summary, self.body) if part.strip())


@dataclass(frozen=True, slots=True)
class KnowledgeEntry:
    """One entry as stored (the current version, or a kept one: ``version``)."""

    id: int
    bot_id: str
    title: str
    summary: str
    body: str
    source_ids: tuple[int, ...]
    state: str
    version: int
    updated_at: datetime
    updated_by: str

    @property
    def shown(self) -> bool:
        """Whether chat users may read it (a stale entry waits to be re-derived)."""
        return self.state == ACTIVE

    def as_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "bot_id": self.bot_id,
            "title": self.title,
            "summary": self.summary,
            "body": self.body,
            "source_ids": list(self.source_ids),
            "state": self.state,
            "version": self.version,
            "updated_at": self.updated_at.isoformat(),
            "updated_by": self.updated_by,
        }


@dataclass(frozen=True, slots=True)
class KnowledgeVerdict:
    """``reason`` empty: the entry may be written as ``draft`` (cleaned); else ``message`` says why not."""

    draft: KnowledgeDraft
    reason: str = ""
    message: str = ""
    #: English detail for logs (never the text).
    detail: str = ""

    @property
    def allowed(self) -> bool:
        return not self.reason

    def check(self) -> KnowledgeDraft:
        """The cleaned draft, or ``InvalidInput`` with the Chinese reason."""
        if self.reason:
            raise InvalidInput(self.message, en=f"knowledge entry refused: {self.reason} {self.detail}".strip())
        return self.draft


@dataclass(frozen=True, slots=True)
class SourceFacts:
    """What the policy needs of an entry's sources: the scope kind of each id found."""

    scope_kinds: dict[int, str] = field(default_factory=dict)

    def private_ids(self) -> list[int]:
        return sorted(memory_id for memory_id, kind in self.scope_kinds.items() if kind == "private")

    def missing(self, wanted: Iterable[int]) -> list[int]:
        return sorted(set(wanted) - set(self.scope_kinds))


def _clean(text: str) -> str:
    return clean_text(text).strip()


def _one_line(text: str) -> str:
    return " ".join(_clean(text).split())


def person_detail(text: str, people: PersonMatcher | None) -> str:
    """Which kind of a person's detail ``text`` carries ("" when none)."""
    if _QQ_CUE.search(text):
        return "QQ号"
    if _MOBILE.search(text):
        return "手机号"
    if _EMAIL.search(text):
        return "邮箱地址"
    if people is not None and people.names(text):
        return "已知用户的QQ号或昵称"
    return ""


def judge_entry(
    title: str,
    summary: str,
    body: str,
    source_ids: Sequence[int],
    sources: SourceFacts,
    body_max_chars: int,
    people: PersonMatcher | None = None,
) -> KnowledgeVerdict:
    """Whether an entry may be written (see the module doc); the draft is cleaned either way."""
    draft = KnowledgeDraft(_one_line(title), _clean(summary), _clean(body), tuple(sorted(set(source_ids))))

    def refuse(reason: str, message: str, detail: str = "") -> KnowledgeVerdict:
        return KnowledgeVerdict(draft, reason, message, detail)

    if not draft.title or not draft.body:
        return refuse("empty", "知识条目的标题和正文都不能为空")
    for name, value, limit in (
        ("标题", draft.title, TITLE_MAX_CHARS),
        ("摘要", draft.summary, SUMMARY_MAX_CHARS),
        ("正文", draft.body, body_max_chars),
    ):
        if len(value) > limit:
            return refuse("too_long", f"知识条目的{name}最多 {limit} 字（现在 {len(value)} 字）", f"field={name}")
    missing = sources.missing(draft.source_ids)
    if missing:
        return refuse("unknown_source", f"来源记忆不存在或已删除：{', '.join(f'#{i}' for i in missing[:5])}")
    private = sources.private_ids()
    if private:
        return refuse(
            "private_source",
            f"知识库是公共的，不能收录私聊里的内容（来源 #{private[0]} 来自私聊）",
            f"private_sources={private[:5]}",
        )
    detail = person_detail(draft.text, people)
    if detail:
        return refuse("person", f"知识库只收录通用内容，不能包含个人信息（发现{detail}）", f"kind={detail}")
    from .admission import admit  # on use: the store imports this module for its constants

    verdict = admit(draft.text)
    if not verdict.stored_as_is:
        return refuse("secret", f"知识条目不能包含敏感内容：{verdict.message or '内容被准入规则拒绝'}", verdict.reason)
    return KnowledgeVerdict(draft)


@dataclass(frozen=True, slots=True)
class SuggestionVerdict:
    text: str
    reason: str = ""
    message: str = ""

    def check(self) -> str:
        if self.reason:
            raise InvalidInput(self.message, en=f"knowledge suggestion refused: {self.reason}")
        return self.text


def judge_suggestion(text: str, max_chars: int = SUGGESTION_MAX_CHARS) -> SuggestionVerdict:
    """A suggestion is stored only whole: non-empty, bounded, and admitted as it is (a secret is
    refused rather than redacted: nothing of it is stored)."""
    cleaned = _clean(text)
    if not cleaned:
        return SuggestionVerdict(cleaned, "empty", "建议内容不能为空")
    if len(cleaned) > max_chars:
        return SuggestionVerdict(cleaned, "too_long", f"建议最多 {max_chars} 字（现在 {len(cleaned)} 字）")
    from .admission import admit

    verdict = admit(cleaned)
    if not verdict.stored_as_is:
        reason = "do_not_remember" if verdict.reason == "do_not_remember" else "secret"
        return SuggestionVerdict(cleaned, reason, f"建议未保存：{verdict.message or '内容被准入规则拒绝'}")
    return SuggestionVerdict(cleaned)


def suggestion_allowed(filed_in_window: int, per_day: int) -> bool:
    """Whether a user who filed ``filed_in_window`` suggestions in the last 24 h may file another."""
    return per_day > 0 and filed_in_window < per_day
