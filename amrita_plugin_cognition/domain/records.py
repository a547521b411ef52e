"""Records and scopes: the vocabulary every layer shares. Pure data, no I/O."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Literal

from .invisible import drop_invisible

ScopeKind = Literal["group", "private"]


class StrEnum(str, Enum):
    """``enum.StrEnum`` (Python 3.11+) for 3.10 too: members are their values as text."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return str(self.value).__format__(spec)


class Importance(StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


#: An importance as a tool's argument names it (the values of :class:`Importance`). One spelling for
#: every tool model: typing caches a ``Literal`` by its set of values, so a second spelling in
#: another order would reorder the enum of whichever model loads later.
ImportanceLevel = Literal["low", "medium", "high"]


class Provenance(StrEnum):
    USER_STATED = "user_stated"
    INFERRED = "inferred"
    CONSOLIDATED = "consolidated"
    IMPORTED = "imported"


class MemoryStatus(StrEnum):
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    FORGOTTEN = "forgotten"
    #: Retired by the decay sweep (``domain/decay.py``): out of both indices, never recalled or
    #: listed as active; restorable until it is purged ``consolidation.expired_keep_days`` later.
    EXPIRED = "expired"


class MemoryKind(StrEnum):
    FACT = "fact"
    EVENT = "event"
    PREFERENCE = "preference"
    PLAN = "plan"
    DECISION = "decision"
    #: A raw conversation line kept verbatim ("小明：…"), as chat-log importers store them.
    TURN = "turn"


#: Neighbouring turns of one chat closer than this form each other's context window.
TURN_WINDOW_SECONDS = 3600


def is_conversation_turn(text: str, speaker_name: str) -> bool:
    """A line that starts with its speaker's name and a colon is a raw turn, not a fact."""
    name = speaker_name.strip()
    if not name:
        return False
    stripped = text.lstrip()
    return any(stripped.startswith(f"{name}{colon}") for colon in (":", "："))


def strip_speaker(text: str) -> str:
    """The utterance of a turn without its "name:" prefix."""
    for colon in (":", "："):
        head, found, rest = text.partition(colon)
        if found and 0 < len(head) <= 32:
            return rest.strip()
    return text


#: A QQ number (a user's, a group's, a bot account's) as an operator types it: 5 to 20 ASCII
#: digits without a leading zero (QQ numbers start at 10000; 20 digits fit every id column).
QQ_NUMBER = re.compile(r"[1-9][0-9]{4,19}")


def is_qq_number(text: str) -> bool:
    return QQ_NUMBER.fullmatch(text) is not None


def parse_chat_key(key: str) -> Scope:
    """A chat key an operator typed (``group:20001``, ``private:10001``) as a ``Scope``; a
    ``ValueError`` when the kind is neither or the id is no QQ number."""
    kind, _, number = key.strip().partition(":")
    if kind not in ("group", "private") or not is_qq_number(number.strip()):
        raise ValueError(f"not a chat key (group:<QQ number> or private:<QQ number>): {key!r}")
    return Scope(kind, number.strip())  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class Scope:
    """Where a record was learned: one group chat, or one user's private chat."""

    kind: ScopeKind
    id: str

    def __post_init__(self) -> None:
        if self.kind not in ("group", "private"):
            raise ValueError(f"unknown scope kind: {self.kind!r}")
        if not self.id or not str(self.id).strip():
            raise ValueError("scope id must not be empty")

    @property
    def key(self) -> str:
        """Stable text key, e.g. ``group:20001`` or ``private:10001``."""
        return f"{self.kind}:{self.id}"

    @classmethod
    def parse(cls, key: str) -> Scope:
        kind, _, scope_id = key.partition(":")
        if kind not in ("group", "private"):
            raise ValueError(f"unknown scope kind in {key!r}")
        return cls(kind, scope_id)  # type: ignore[arg-type]

    @property
    def is_group(self) -> bool:
        return self.kind == "group"


@dataclass(frozen=True, slots=True)
class ChatContext:
    """Who is talking where, resolved from the incoming event (never from the LLM)."""

    bot_id: str
    scope: Scope
    user_id: str
    user_name: str = ""
    #: "owner" / "admin" / "member" for group chats, "" for private chats.
    group_role: str = ""
    is_bot_admin: bool = False

    @property
    def can_moderate_group(self) -> bool:
        return self.is_bot_admin or self.group_role in ("owner", "admin")


@dataclass(slots=True)
class MemoryDraft:
    """A fact about to be written: everything but the ids the store assigns."""

    text: str
    scope: Scope
    speaker_id: str = ""
    speaker_name: str = ""
    subject_id: str = ""
    subject_name: str = ""
    kind: MemoryKind = MemoryKind.FACT
    tags: list[str] = field(default_factory=list)
    importance: Importance = Importance.MEDIUM
    provenance: Provenance = Provenance.USER_STATED
    source: dict[str, object] = field(default_factory=dict)
    happened_at: datetime | None = None


@dataclass(slots=True)
class MemoryRecord:
    """One stored fact, as read back from the authority store."""

    id: int
    bot_id: str
    scope: Scope
    text: str
    speaker_id: str
    speaker_name: str
    subject_id: str
    subject_name: str
    kind: str
    tags: list[str]
    importance: Importance
    provenance: str
    source: dict[str, object]
    happened_at: datetime | None
    recorded_at: datetime
    updated_at: datetime
    status: MemoryStatus
    superseded_by: int | None
    invalid_at: datetime | None
    content_hash: str
    #: The user asked to keep it: the decay sweep never demotes or retires it.
    keep: bool = False

    @property
    def when(self) -> datetime:
        """The time a fact is anchored to: when it happened, else when it was recorded."""
        return self.happened_at or self.recorded_at


#: C0 control characters other than tab and newline: no meaning in chat text, and PostgreSQL
#: refuses NUL in text columns (SQLite would store it, so both databases would differ).
_CONTROL_CHARACTERS = re.compile("[\x00-\x08\x0b-\x1f]")
_SURROGATES = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """Text that any store and any embedder accepts, with its lines kept: valid UTF-8 (a lone
    surrogate becomes U+FFFD, a split surrogate pair is joined), no C0 control character other
    than tab and newline (``\\r\\n`` and a lone ``\\r`` become ``\\n``, NUL and the rest are dropped)
    and no invisible character (``invisible.drop_invisible``: zero-width and format characters,
    variation selectors, fillers; an emoji keeps its own)."""
    if _SURROGATES.search(text):
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return drop_invisible(_CONTROL_CHARACTERS.sub("", text))


def normalise_text(text: str) -> str:
    """The stored form: ``clean_text``, then surrounding and repeated whitespace collapsed; every
    other character kept as said (full-width punctuation, names and numbers stay byte-identical)."""
    return " ".join(clean_text(text).split())


def origin_hashes(bot_id: str, source: Mapping[str, object]) -> list[str]:
    """Barrier keys of where a historian fact came from: one per source (observation or transcript
    turn) of its job. A forgotten fact leaves them, so a replay of that job (a retried or restored
    job, the same turns extracted again) cannot bring it back in other words."""
    job = source.get("job")
    numbers = source.get("sources")
    if not job or not isinstance(numbers, list):
        return []
    return [
        hashlib.sha256(f"{bot_id}\x1fjob:{job}\x1fsource:{number}".encode()).hexdigest()
        for number in numbers
        if isinstance(number, int)
    ]


def content_hash(bot_id: str, scope: Scope, text: str) -> str:
    """Hash that identifies a fact's content within one bot's scope (dedupe, forget barriers).
    NFKC folding makes width variants of the same sentence one fact."""
    folded = unicodedata.normalize("NFKC", normalise_text(text))
    digest = hashlib.sha256(f"{bot_id}\x1f{scope.key}\x1f{folded}".encode())
    return digest.hexdigest()
