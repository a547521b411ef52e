"""The replay model's answers to a consolidation cycle's judgement step (a request that offers
``cycle_stop``), by rule from the conversation the request carries: the tool calls made so far
and what the tools answered. Nothing here knows the demo's script: what the engine's tools show
is all it goes by, so a memory the tools did not show cannot be merged, a card it did not read
cannot be updated, and a refusal is taken as the answer (never tried again in other words).

The rule, as a careful agent would work through the night in short, one call per round:

1. ``cycle_context`` first.
2. Near-duplicate groups in the context, and the pairs the rules doubted only for their wording:
   read them whole (``cycle_clusters``); merge each group whose members state the same numbers
   (dates, amounts, QQ numbers; the pre-pass compared the other parts) with the longest member's
   text (it says the most), the highest importance and every member's tags
   (``cycle_memory_merge``); leave the others.
3. In a group chat, after a merge: read the group's card (``cycle_card_read``) and add each merged
   fact its body does not carry yet, with the fact's tags and the merged memories as its sources
   (``cycle_card_update``, the version read).
4. A merged fact that is a how-to or a rule (``标题：内容`` with 做法 / 规矩 / 方法 / 技巧 / 注意事项
   in the title) and names nobody (no QQ number, no 昵称): look its title up in the knowledge base
   (``cycle_knowledge_search``) and, when no entry has that title, write it
   (``cycle_knowledge_write``: the title, the content as the summary, its clauses as the points).
5. ``cycle_stop`` with what was done and what was refused. A request that offers only
   ``cycle_stop`` (the budget winds down) gets that at once.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from .loopback import message_text

#: The driver's stop tool (``llm.agent_types.STOP_TOOL``; not imported from there: this module
#: also runs in a bare model server, outside NoneBot).
STOP_TOOL = "cycle_stop"
CONTEXT_TOOL = "cycle_context"
#: How a tool's refusal begins (``llm.agent_types.REFUSED``).
REFUSED = "拒绝："
#: ``#12 [中] text (标签: a、b; 2026-03-04)`` (``engine/cycle_tools/common.memory_line``).
MEMBER = re.compile(r"^\s*#(\d+) \[([高中低])\] (.*) \((?:标签: (.*?); )?\d{4}-\d{2}-\d{2}(?:; [^()]*)?\)$")
NEAR = re.compile(r"待判断的近似重复 (\d+) 组")
#: The pairs the rules doubted only for their wording, in the context line (``组N（可能相同，措辞不同）：``).
WORDING = re.compile(r"可能相同、措辞不同的 (\d+) 组")
GROUP_CHAT = re.compile(r"^会话：群聊 (\d+)$", re.MULTILINE)
MERGED = re.compile(r"^已合并 (#\d+(?:、#\d+)*) → #(\d+)")
VERSION = re.compile(r"（版本 ([^）]+)）")
ENTRY_WRITTEN = re.compile(r"^已写入知识条目 #(\d+)")
ENTRY_TITLE = re.compile(r"^#\d+ (.+?)(?: — .*)?$")
#: Numbers in digits or in Chinese numerals (a numeral inside a word, 三脚架, counts too: only
#: the same on both sides passes, so a doubt leaves the memories apart).
NUMBERS = re.compile(r"\d+(?:\.\d+)?|[〇零一二两三四五六七八九十百千万亿]+")
PERSON = re.compile(r"QQ|昵称")
HOW_TO_WORDS = ("做法", "规矩", "方法", "技巧", "注意事项")
IMPORTANCE = {"高": "high", "中": "medium", "低": "low"}
RANK = {"low": 0, "medium": 1, "high": 2}
#: Card sections that end the body in ``cycle_card_read``'s answer.
AFTER_BODY = ("吐槽：", "来源记忆：", "评价：")
TAGS_MAX = 10
CARD_TAGS_MAX = 16


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call of the run so far: what the model sent and what it read back (None: no answer yet)."""

    name: str
    arguments: dict[str, Any]
    answer: str | None

    @property
    def refused(self) -> bool:
        return self.answer is not None and self.answer.startswith(REFUSED)


@dataclass(frozen=True, slots=True)
class Member:
    id: int
    importance: str
    text: str
    tags: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Merged:
    """A merge the run made: the new memory and what it says."""

    memory_id: int
    source_ids: tuple[int, ...]
    text: str
    tags: tuple[str, ...]


@dataclass(slots=True)
class CardView:
    version: str = ""
    body: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw or "{}")
    except (TypeError, json.JSONDecodeError):
        return {}
    return value if isinstance(value, dict) else {}


def conversation(messages: list[dict[str, Any]]) -> list[Call]:
    """The run's tool calls in order, each with its answer (paired by call id, else by order)."""
    tool_messages = [message for message in messages if message.get("role") == "tool"]
    by_id = {str(message.get("tool_call_id")): message_text(message) for message in tool_messages}
    calls: list[Call] = []
    for message in messages:
        if message.get("role") != "assistant":
            continue
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            answer = by_id.get(str(call.get("id")))
            if answer is None and len(calls) < len(tool_messages):
                answer = message_text(tool_messages[len(calls)])
            calls.append(Call(str(function.get("name", "")), _arguments(function.get("arguments")), answer))
    return calls


def _answer(calls: list[Call], name: str) -> str | None:
    """The answer of the first call of ``name`` (None when there was none)."""
    return next((call.answer for call in calls if call.name == name), None)


def parse_clusters(answer: str) -> list[list[Member]]:
    """The groups of ``cycle_clusters`` (or ``cycle_context``): ``组N：`` (or ``组N（可能相同，措辞不同）：``,
    a pair the rules doubted only for its wording) and one member per line."""
    groups: list[list[Member]] = []
    for line in answer.splitlines():
        if re.match(r"^组\d+(?:（[^）]*）)?：", line):
            groups.append([])
            continue
        found = MEMBER.match(line)
        if found is not None and groups:
            tags = tuple(tag for tag in (found.group(4) or "").split("、") if tag)
            groups[-1].append(Member(int(found.group(1)), IMPORTANCE[found.group(2)], found.group(3), tags))
    return [group for group in groups if len(group) >= 2]


def same_fact(group: list[Member]) -> bool:
    """Whether the members state the same numbers (dates, times, amounts, QQ numbers, in digits or
    Chinese numerals: nothing in the place of another); the pre-pass compared the other parts."""
    numbers = {tuple(sorted(NUMBERS.findall(member.text))) for member in group}
    return len(numbers) == 1


def merge_arguments(group: list[Member]) -> dict[str, Any]:
    longest = max(group, key=lambda member: (len(member.text), member.id))
    importance = max((member.importance for member in group), key=RANK.__getitem__)
    tags = list(dict.fromkeys(tag for member in group for tag in member.tags))[:TAGS_MAX]
    return {"ids": [member.id for member in group], "text": longest.text, "importance": importance, "tags": tags}


def merges(calls: list[Call]) -> list[Merged]:
    """The merges the run made (those the tool answered as done)."""
    done = []
    for call in calls:
        found = MERGED.match(call.answer or "") if call.name == "cycle_memory_merge" else None
        if found is not None:
            sources = tuple(int(item) for item in re.findall(r"\d+", found.group(1)))
            tags = tuple(str(tag) for tag in call.arguments.get("tags") or [])
            done.append(Merged(int(found.group(2)), sources, str(call.arguments.get("text", "")), tags))
    return done


def parse_card(answer: str) -> CardView | None:
    """The version, body lines and tags of the card ``cycle_card_read`` showed (None: no version given)."""
    version = VERSION.search(answer)
    if version is None:
        return None
    card = CardView(version=version.group(1))
    in_body = False
    for line in answer.splitlines():
        stripped = line.strip()
        if stripped.startswith("标签："):
            card.tags = [tag for tag in stripped[len("标签：") :].split("、") if tag]
        elif stripped == "正文：":
            in_body = True
        elif in_body and (not stripped or stripped.startswith(AFTER_BODY)):
            in_body = False
        elif in_body:
            card.body.append(stripped)
    return card


def how_to(text: str) -> tuple[str, str, list[str]] | None:
    """A general how-to or rule (title, summary, points), or None (not one, or it names someone)."""
    title, colon, content = text.partition("：")
    if not colon or not any(word in title for word in HOW_TO_WORDS) or PERSON.search(text):
        return None
    points = [point.strip() for point in re.split(r"[，；。]", content) if point.strip()]
    return title.strip(), content.strip(), points


def _card_call(calls: list[Call], done: list[Merged], chat: str) -> tuple[str, dict[str, Any]] | None:
    """Read the group's card, then add the merged facts it lacks (once each)."""
    read = _answer(calls, "cycle_card_read")
    if read is None:
        return "cycle_card_read", {"entity_type": "group", "entity_id": chat}
    card = parse_card(read) if not read.startswith(REFUSED) else None
    if card is None or any(call.name == "cycle_card_update" for call in calls):
        return None
    lines = [item.text.strip().rstrip("。") for item in done]
    added = [line for line in dict.fromkeys(lines) if line and line not in card.body]
    if not added:
        return None
    tags = list(dict.fromkeys([*card.tags, *(tag for item in done for tag in item.tags)]))[:CARD_TAGS_MAX]
    arguments: dict[str, Any] = {
        "entity_type": "group",
        "entity_id": chat,
        "expected_version": card.version,
        "body": "\n".join([*card.body, *added]),
        "source_ids": [item.memory_id for item in done],
    }
    if tags != card.tags:
        arguments["tags"] = tags
    return "cycle_card_update", arguments


def _knowledge_call(calls: list[Call], done: list[Merged]) -> tuple[str, dict[str, Any]] | None:
    """For each merged how-to: search its title, then write it when no entry has that title."""
    for item in done:
        found = how_to(item.text)
        if found is None:
            continue
        title, summary, points = found
        searched = next(
            (call for call in calls if call.name == "cycle_knowledge_search" and call.arguments.get("query") == title),
            None,
        )
        if searched is None:
            return "cycle_knowledge_search", {"query": title, "top_k": 5}
        if searched.answer is None or searched.refused:
            continue
        titles = [match.group(1) for line in searched.answer.splitlines() if (match := ENTRY_TITLE.match(line))]
        written = any(call.name == "cycle_knowledge_write" and call.arguments.get("title") == title for call in calls)
        if title in titles or written:
            continue
        body = "\n".join(f"- {point}" for point in points) or summary
        arguments = {"title": title, "summary": summary, "body": body, "source_ids": [item.memory_id]}
        return "cycle_knowledge_write", arguments
    return None


def summary(calls: list[Call]) -> str:
    """What the run did, in a sentence or two (≤ 500 characters)."""
    parts = []
    for item in merges(calls):
        parts.append(f"合并相近记忆 {'、'.join(f'#{source}' for source in item.source_ids)} → #{item.memory_id}")
    for call in calls:
        answer = call.answer or ""
        entry = ENTRY_WRITTEN.match(answer) if call.name == "cycle_knowledge_write" else None
        if call.name == "cycle_card_update" and answer.startswith("已更新"):
            parts.append("群画像补充了合并后的事实")
        elif entry is not None:
            parts.append(f"新建知识条目 #{entry.group(1)}「{call.arguments.get('title', '')}」")
        elif call.refused:
            parts.append(f"{call.name} 被拒绝（{answer[len(REFUSED) :][:60]}）")
    return ("；".join(parts) + "。" if parts else "检查了本会话的记忆，没有需要改动的。")[:500]


def cycle_answer(messages: list[dict[str, Any]], offered: list[str]) -> tuple[str, dict[str, Any]]:
    """The next tool call (name, arguments) of the judgement step, for this request."""
    calls = conversation(messages)
    if CONTEXT_TOOL not in offered:  # winding down: only the stop tool is offered
        return STOP_TOOL, {"summary": summary(calls)}
    context = _answer(calls, CONTEXT_TOOL)
    if context is None:
        return CONTEXT_TOOL, {}
    groups = sum(int(found.group(1)) for found in (NEAR.search(context), WORDING.search(context)) if found)
    if groups > 0 and _answer(calls, "cycle_clusters") is None:
        return "cycle_clusters", {"offset": 0, "limit": 5}
    tried = {member for call in calls if call.name == "cycle_memory_merge" for member in call.arguments.get("ids", [])}
    for group in parse_clusters(_answer(calls, "cycle_clusters") or ""):
        if same_fact(group) and not tried & {member.id for member in group}:
            return "cycle_memory_merge", merge_arguments(group)
    done = merges(calls)
    chat = GROUP_CHAT.search(context)
    if done and chat is not None:
        for step in (_card_call(calls, done, chat.group(1)), _knowledge_call(calls, done)):
            if step is not None:
                return step
    return STOP_TOOL, {"summary": summary(calls)}
