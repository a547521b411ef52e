"""The demo's scripted conversation: who says what, where and on which simulated day, what the
built-in replay model answers, and what each turn should show.

The script is data (``demo_conversation.json``, shipped inside the package). Dates in it are
relative to the day of the turn, so the conversation reads naturally whatever the start date:
``{date+N}`` is ``YYYY-MM-DD``, ``{md+N}`` is ``M月D日`` and ``{weekday+N}`` is ``星期X`` of the
turn's day plus N days (in what is said, in tool arguments, in replies and in the text of
checks). Nothing here touches NoneBot or the engine.

Checks (``demo_recording.evaluate``): ``context_has`` / ``context_lacks`` (the memory block),
``memory_has`` (one of the block's recalled memories, not its notes or memo), ``results_lack``
(the tool results), ``tools_ok``, ``tool_refused``, ``ended`` (the turn called ``end`` and its
observations went to the historian).

``cards`` names the card parts the demo prints after each day's merges (a user's group-visible
part, a group's card), with what changed since the day before.

``night`` is the night after the last day (``demo_night``): the decay sweep and one chat's
consolidation cycle at that chat's idle window, with the low tier's lifetime the demo sets
(``short_term_days``: the simulated span is days, not weeks) and its checks (``NIGHT_CHECK_KINDS``,
each ``text`` a keyword of the planted memories, of the card or the knowledge search's query).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from importlib import resources
from pathlib import Path
from typing import Any, Literal
from zoneinfo import ZoneInfo

SCRIPT_RESOURCE = "demo_conversation.json"
CHECK_KINDS = ("context_has", "context_lacks", "memory_has", "results_lack", "tools_ok", "tool_refused", "ended")
NIGHT_CHECK_KINDS = ("retired", "merged_exact", "merged_by_model", "card_has", "knowledge_found")
WEEKDAYS = "一二三四五六日"
_PLACEHOLDER = re.compile(r"\{(date|md|weekday)([+-]\d+)?\}")


class ScriptError(ValueError):
    """The demo script is malformed; the message names the turn and the field."""


@dataclass(frozen=True, slots=True)
class Chat:
    key: str
    kind: Literal["group", "private"]
    id: int
    label: str

    @property
    def title(self) -> str:
        return f"{self.label}（{'群' if self.kind == 'group' else 'QQ'} {self.id}）"


@dataclass(frozen=True, slots=True)
class Person:
    user_id: int
    nickname: str
    #: Group role ("owner" / "admin" / "member") in the groups of the script.
    role: str = "member"

    @property
    def title(self) -> str:
        return f"{self.nickname}（{self.user_id}）"


@dataclass(frozen=True, slots=True)
class ModelStep:
    """One tool call the replay model makes. A string argument ``$memory_id:KEYWORD`` stands for
    the id of the memory containing KEYWORD in a tool result the model received this turn."""

    tool: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Reply:
    """The replay model's final text. With ``if_memory``, ``found`` is said when the memory the
    model received (context block or tool results) mentions that keyword, else ``missing``.
    ``{memory}`` is the matching memory's text, ``{memories}`` every memory of the context."""

    text: str = ""
    if_memory: str = ""
    found: str = ""
    missing: str = ""


@dataclass(frozen=True, slots=True)
class Check:
    kind: str
    text: str = ""
    note: str = ""


@dataclass(frozen=True, slots=True)
class Turn:
    number: int
    day: int
    clock: time
    chat: Chat
    speaker: Person
    text: str
    steps: tuple[ModelStep, ...] = ()
    reply: Reply = field(default_factory=Reply)
    checks: tuple[Check, ...] = ()


@dataclass(frozen=True, slots=True)
class FollowedCard:
    """A card part the demo prints after each simulated day's merges (``cards`` in the script):
    a user's card as one group sees it (``chat_id``: the part the scope policy gives that group,
    ``profile_policy.group_part``), or a group's card."""

    entity_type: Literal["user", "group"]
    entity_id: str
    title: str
    note: str = ""
    #: For a user's card: the group whose view of it is followed.
    chat_id: str = ""


@dataclass(frozen=True, slots=True)
class Night:
    """The night after the last simulated day (``night`` in the script): the decay sweep, then
    ``chat``'s consolidation cycle at its idle window; ``short_term_days`` the low tier's lifetime
    the demo sets; ``checks`` of ``NIGHT_CHECK_KINDS``."""

    chat: Chat
    short_term_days: float
    checks: tuple[Check, ...] = ()


@dataclass(slots=True)
class DemoScript:
    bot_id: int
    bot_name: str
    chats: dict[str, Chat]
    people: dict[int, Person]
    turns: list[Turn]
    start: date
    zone: ZoneInfo
    cards: list[FollowedCard] = field(default_factory=list)
    night: Night | None = None

    @property
    def days(self) -> int:
        return max(turn.day for turn in self.turns)

    def day_date(self, turn: Turn, offset: int = 0) -> date:
        return self.start + timedelta(days=turn.day - 1 + offset)

    def moment(self, turn: Turn) -> datetime:
        """The simulated time of a turn, in the configured time zone."""
        return datetime.combine(self.day_date(turn), turn.clock, tzinfo=self.zone)

    def render(self, turn: Turn, text: str) -> str:
        """Fill the date placeholders of ``text`` relative to the turn's day."""

        def replace(match: re.Match[str]) -> str:
            day = self.day_date(turn, int(match.group(2) or 0))
            if match.group(1) == "date":
                return day.isoformat()
            if match.group(1) == "md":
                return f"{day.month}月{day.day}日"
            return f"星期{WEEKDAYS[day.weekday()]}"

        return _PLACEHOLDER.sub(replace, text)

    def render_value(self, turn: Turn, value: Any) -> Any:
        if isinstance(value, str):
            return self.render(turn, value)
        if isinstance(value, list):
            return [self.render_value(turn, item) for item in value]
        if isinstance(value, dict):
            return {key: self.render_value(turn, item) for key, item in value.items()}
        return value

    def said(self, turn: Turn) -> str:
        """What the speaker types in this turn (dates filled in)."""
        return self.render(turn, turn.text)

    def turn_for_input(self, user_input: str) -> Turn | None:
        """The turn whose message the given model input carries (the longest match wins)."""
        found = [turn for turn in self.turns if self.said(turn) in user_input]
        return max(found, key=lambda turn: len(self.said(turn))) if found else None


def default_start(days: int, zone: ZoneInfo, today: date | None = None) -> date:
    """The first simulated day, chosen so that the last one is today."""
    today = today or datetime.now(zone).date()
    return today - timedelta(days=days - 1)


def _require(data: dict[str, Any], key: str, where: str) -> Any:
    if key not in data:
        raise ScriptError(f"{where}: 缺少字段 {key}")
    return data[key]


def _parse_turn(number: int, data: dict[str, Any], chats: dict[str, Chat], people: dict[int, Person]) -> Turn:
    where = f"第 {number} 轮"
    chat_key = _require(data, "chat", where)
    if chat_key not in chats:
        raise ScriptError(f"{where}: 未定义的会话 {chat_key}")
    user = int(_require(data, "user", where))
    if user not in people:
        raise ScriptError(f"{where}: 未定义的用户 {user}")
    try:
        clock = time.fromisoformat(_require(data, "time", where))
    except ValueError as error:
        raise ScriptError(f"{where}: 时间格式应为 HH:MM") from error
    model = data.get("model") or {}
    steps = tuple(
        ModelStep(tool=_require(step, "tool", where), arguments=dict(step.get("arguments") or {}))
        for step in model.get("steps") or []
    )
    reply_data = _require(model, "reply", where)
    reply = Reply(text=reply_data) if isinstance(reply_data, str) else Reply(**reply_data)
    if not reply.text and not (reply.if_memory and reply.found and reply.missing):
        raise ScriptError(f"{where}: reply 需要 text，或 if_memory + found + missing")
    checks = tuple(Check(**check) for check in data.get("checks") or [])
    for check in checks:
        if check.kind not in CHECK_KINDS:
            raise ScriptError(f"{where}: 未知的检查 {check.kind}")
    day = int(_require(data, "day", where))
    if day < 1:
        raise ScriptError(f"{where}: day 从 1 开始")
    return Turn(number, day, clock, chats[chat_key], people[user], _require(data, "text", where), steps, reply, checks)


def _parse_cards(data: list[Any], chats: dict[str, Chat], people: dict[int, Person]) -> list[FollowedCard]:
    cards = []
    for number, item in enumerate(data, start=1):
        where = f"cards 第 {number} 项"
        if not isinstance(item, dict):
            raise ScriptError(f"{where}: 应为对象")
        note = str(item.get("note", ""))
        if "user" in item:
            person = people.get(int(item["user"]))
            if person is None:
                raise ScriptError(f"{where}: 未定义的用户 {item['user']}")
            chat = chats.get(str(item.get("chat")))
            if chat is None or chat.kind != "group":
                raise ScriptError(f"{where}: 用户的画像要写明在哪个群里看（chat）")
            title = f"{person.title}在{chat.label}的画像"
            cards.append(FollowedCard("user", str(person.user_id), title, note, str(chat.id)))
        elif "chat" in item:
            chat = chats.get(str(item["chat"]))
            if chat is None or chat.kind != "group":
                raise ScriptError(f"{where}: {item['chat']} 不是脚本里的群")
            cards.append(FollowedCard("group", str(chat.id), f"{chat.title}的画像", note))
        else:
            raise ScriptError(f"{where}: 需要 user 或 chat")
    return cards


def _parse_night(data: Any, chats: dict[str, Chat]) -> Night | None:
    if data is None:
        return None
    where = "night"
    if not isinstance(data, dict):
        raise ScriptError(f"{where}: 应为对象")
    chat = chats.get(str(_require(data, "chat", where)))
    if chat is None or chat.kind != "group":
        raise ScriptError(f"{where}: chat 应为脚本里的群")
    try:
        days = float(_require(data, "short_term_days", where))
    except (TypeError, ValueError) as error:
        raise ScriptError(f"{where}: short_term_days 应为天数") from error
    if days <= 0:
        raise ScriptError(f"{where}: short_term_days 应大于 0")
    checks = tuple(Check(**check) for check in data.get("checks") or [])
    for check in checks:
        if check.kind not in NIGHT_CHECK_KINDS or not check.text:
            raise ScriptError(f"{where}: 检查 {check.kind} 未知或缺少 text")
    return Night(chat, days, checks)


def parse_script(data: dict[str, Any], zone: ZoneInfo, start: date | None = None) -> DemoScript:
    chats = {
        key: Chat(key=key, kind=value["kind"], id=int(value["id"]), label=value["label"])
        for key, value in _require(data, "chats", "脚本").items()
    }
    for chat in chats.values():
        if chat.kind not in ("group", "private"):
            raise ScriptError(f"会话 {chat.key}: kind 只能是 group 或 private")
    people = {
        int(user_id): Person(int(user_id), value["nickname"], value.get("role", "member"))
        for user_id, value in _require(data, "people", "脚本").items()
    }
    turns = [
        _parse_turn(number, turn, chats, people) for number, turn in enumerate(_require(data, "turns", "脚本"), start=1)
    ]
    if not turns:
        raise ScriptError("脚本没有任何对话")
    bot = _require(data, "bot", "脚本")
    script = DemoScript(
        bot_id=int(bot["self_id"]),
        bot_name=bot.get("nickname", "Amrita"),
        chats=chats,
        people=people,
        turns=turns,
        start=date.today(),
        zone=zone,
        cards=_parse_cards(data.get("cards") or [], chats, people),
        night=_parse_night(data.get("night"), chats),
    )
    script.start = start or default_start(script.days, zone)
    said = [script.said(turn) for turn in turns]
    for index, text in enumerate(said):
        if any(index != other and text in said[other] for other in range(len(said))):
            raise ScriptError(f"第 {index + 1} 轮: 这句话也出现在另一轮里，回放模型无法区分")
    return script


def load_script(zone: ZoneInfo, start: date | None = None, path: Path | None = None) -> DemoScript:
    """The shipped conversation (or the one at ``path``)."""
    if path is None:
        source = resources.files("amrita_plugin_cognition.cli").joinpath(SCRIPT_RESOURCE).read_text(encoding="utf-8")
    else:
        source = path.read_text(encoding="utf-8")
    try:
        data = json.loads(source)
    except json.JSONDecodeError as error:
        raise ScriptError(f"脚本不是有效的 JSON：{error}") from error
    return parse_script(data, zone, start)
