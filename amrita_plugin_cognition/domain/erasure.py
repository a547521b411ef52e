"""What a delete-all covers (pure policy; the SQL is ``store/erasure.py``).

Three targets, each within one bot account:

* a **chat**: everything learned in it (facts and their older versions, memo and its history,
  pins, short-term notes, the transcript, queued historian jobs, its activity counts and its
  consolidation cycles' runs with their summaries and messages);
* a **user**: everything of theirs and everything that names them (``domain/people.py``: their QQ
  number in any writing, the nicknames they were seen with) in every chat of the bot account:
  facts they said, that are about them or that name them (and the versions those replaced); their
  notes and transcript turns and everyone else's that name them (a turn holds the bot's reply:
  it goes with the turn); their private chat entirely; in queued jobs their messages, the
  messages and observations naming them and the bot's replies to those (a job of theirs, or with
  nothing left, is dropped); in a group's memo (and its kept versions) the lines naming them, the
  pins they wrote or that name them; who wrote a memo version, a card version or a barrier's
  reason when that was them; the cycle runs' summaries and messages naming them (blanked);
* the **bot** account: everything it holds.

Profile cards: a chat takes the group's card (a private chat: its user's private part, and of the
user's queued merge job only that part: ``merge_job_without_part``); a user takes
every part of their card (cross-group, private, one per group under ``strict``), and from every
other card of the bot the sentences (and tags, names) that name them; a card left with nothing is
deleted, a kept version naming them too; the cards built from an erased fact are rebuilt from the
facts that are left. The bot takes all.

Kept by design (``KEPT_BY_DESIGN``, said in every answer): the audit records, and the user's own
choices (opt-out, their private chat's switch). Amrita's own chat history is not the plugin's
(``AMRITA_HISTORY``: what it keeps and how to clear it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .people import REASONS_ZH, KeptName, PersonMatcher, without_messages
from .records import Scope

ErasureKind = Literal["chat", "user", "bot"]


@dataclass(frozen=True, slots=True)
class ErasureTarget:
    kind: ErasureKind
    bot_id: str
    scope: Scope | None = None
    user_id: str = ""

    def __post_init__(self) -> None:
        if not self.bot_id:
            raise ValueError("an erasure needs the bot account")
        if self.kind == "chat" and self.scope is None:
            raise ValueError("a chat erasure needs the chat")
        if self.kind == "user" and not self.user_id:
            raise ValueError("a user erasure needs the user")

    @classmethod
    def chat(cls, bot_id: str, scope: Scope) -> ErasureTarget:
        return cls("chat", bot_id, scope=scope)

    @classmethod
    def user(cls, bot_id: str, user_id: str) -> ErasureTarget:
        return cls("user", bot_id, user_id=str(user_id))

    @classmethod
    def bot(cls, bot_id: str) -> ErasureTarget:
        return cls("bot", bot_id)

    @classmethod
    def from_audit(cls, bot_id: str, action: str, label: str) -> ErasureTarget | None:
        """The target of a delete-all from its audit record (``action`` and ``label`` as written
        by ``delete_all``); None for any other record or a label that names no target."""
        kind = action.removeprefix("delete_all_")
        if kind == action or not bot_id:
            return None
        if kind == "bot":
            return cls.bot(bot_id) if label == "bot" else None
        if kind == "user":
            user_id = label.removeprefix("user:")
            return cls.user(bot_id, user_id) if label.startswith("user:") and user_id else None
        if kind == "chat":
            try:
                return cls.chat(bot_id, Scope.parse(label))
            except ValueError:
                return None
        return None

    @property
    def label(self) -> str:
        """What the audit record names as the target: ``group:123``, ``user:456`` or ``bot``."""
        if self.kind == "chat":
            assert self.scope is not None
            return self.scope.key
        return f"user:{self.user_id}" if self.kind == "user" else "bot"

    @property
    def private_chat(self) -> Scope | None:
        """The chat erased whole: the chat itself, or a user's private chat."""
        if self.kind == "chat":
            return self.scope
        return Scope("private", self.user_id) if self.kind == "user" else None

    @property
    def action(self) -> str:
        return f"delete_all_{self.kind}"


def _without_messages(items: list[Any], user_id: str, names: Callable[[str], bool]) -> list[Any]:
    """Context messages without the user's own, those naming them, and the bot's reply right
    after any of these (a reply to an erased message goes with it)."""

    def drops(item: dict[str, Any]) -> bool:
        said = " ".join(str(item.get(key, "")) for key in ("text", "input", "reply"))
        return str(item.get("speaker_id", "")) == user_id or names(said)

    return without_messages(items, drops)


def scrub_job(payload: dict[str, Any], user_id: str, matcher: PersonMatcher | None = None) -> dict[str, Any] | None:
    """A queued historian job without this user: ``None`` when the job is theirs or nothing of it
    is left (their observations, only their turns), else the payload without their messages and
    turns, the messages and observations naming them, and the bot's replies to those (the same
    object when nothing named them)."""
    matcher = matcher or PersonMatcher.numbers_only([user_id])

    def names(text: str) -> bool:
        return matcher.names(text, user_id)

    speaker = payload.get("speaker")
    if isinstance(speaker, dict) and str(speaker.get("id", "")) == user_id:
        return None
    scrubbed = dict(payload)
    observations = payload.get("observations")
    if isinstance(observations, list):
        kept = [text for text in observations if not names(str(text))]
        if observations and not kept:
            return None
        scrubbed["observations"] = kept
    for key in ("memo", "perspective"):
        if key in payload and names(str(payload[key])):
            scrubbed[key] = ""
    for key in ("turns", "batch", "recent"):
        items = payload.get(key)
        if isinstance(items, list):
            scrubbed[key] = _without_messages(items, user_id, names)
    if payload.get("turns") and not scrubbed.get("turns"):
        return None
    return scrubbed if scrubbed != payload else payload


def merge_job_without_part(payload: dict[str, Any], part: str) -> dict[str, Any] | None:
    """A card's queued merge job (``profile_queue``: new fact ids per part, the parts to rebuild)
    without ``part``, which an erasure deleted: ``None`` when it names no other part. A user's
    merge job lives in their private chat's scope, yet a delete-all of that chat takes only the
    card's private part: the job stays for the others, above all their rebuild after a forget,
    which alone takes a forgotten fact off the text they still show."""
    parts = payload.get("parts")
    kept_parts = {name: ids for name, ids in parts.items() if name != part} if isinstance(parts, dict) else {}
    rebuild = payload.get("rebuild")
    kept_rebuild = [name for name in rebuild if name != part] if isinstance(rebuild, list) else []
    if not kept_parts and not kept_rebuild:
        return None
    return {**payload, "parts": kept_parts, "rebuild": kept_rebuild}


#: What a delete-all of a user leaves by design, and how to remove it (chat and CLI answers).
KEPT_BY_DESIGN = (
    "审计记录（只有谁、何时、对象和条数，其中有该用户的 QQ 号）：证明删除做过，本插件不删；机器人管理员可在数据库表 "
    "cognition_audit 中删除",
    "用户自己的选择（/memory optout、私聊的 /memory off）：保留才能继续生效，本人用 /memory optin、/memory on 撤销",
)
#: Amrita's own chat history is not this plugin's (``nonebot_plugin_amrita`` / ``amrita.plugins.chat``).
AMRITA_HISTORY = (
    "注意：Amrita 自己的聊天记录不归本插件管，这次没有删除，里面仍有该用户的原始消息（包括发过的密码等）："
    "每个会话的当前上下文与历史归档，以及群里未@机器人的消息记录。Amrita 没有按用户删除的接口：私聊里本人可以发送 "
    "/session forget 清空当前上下文、/session clear 清空历史归档；群里只能由群管理员用这两个命令清空整个群的记录；"
    "群里未@机器人的消息按 Amrita 的设置过期（默认 72 小时），机器人管理员也可以在数据库表 "
    "amrita_chat_context_record 里按 user_id 删除。"
)


def kept_names_line(kept: Sequence[KeptName]) -> str:
    """The nicknames an erasure did not look for by themselves (``domain/people.py``), in Chinese."""
    if not kept:
        return ""
    listed = "、".join(f"「{item.name}」（{REASONS_ZH.get(item.reason, item.reason)}）" for item in kept)
    return (
        f"这些昵称没有单独查找（规则：至少两个汉字或三个字母、不是常用词、别人没用过）：{listed}；"
        "只写了这些昵称、没写 QQ 号的内容可能还在，可以用 /memory … search 找到后删除"
    )
