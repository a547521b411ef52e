"""A fake model for the consolidation cycle's agent (``bench/cycle_tokens.py``): an
OpenAI-compatible loopback server (``cli/loopback.py``, 127.0.0.1) that plays a sensible agent
by reading the tool answers in each request's messages, and knows the planted truth (a perfect
judge: it merges a planted duplicate pair when it sees both members, never anything else).

Every request it receives is measured from its body with the project's estimator
(``estimate_tokens``: one token per CJK or full-width character, one per four others): the tool
schemas (``tools`` JSON) and each message (its JSON), attributed to the system prompt, the
first user message, the driver's notes, the model's own earlier calls, or the answer of the tool
that produced it. Its answer is measured the same way, and both are reported back as the
response's ``usage``, so the driver's token budget sees what a provider would report.

Two agents:

* ``ours``: ``cycle_context``, then ``cycle_clusters`` page by page after the clusters the context
  showed (the near clusters, then the wording ones, "可能相同，措辞不同");
  each response merges every planted pair of the clusters seen so far (one call each,
  side by side with the next page), then ``cycle_stop``.
* ``seed``: the seed's way, ``list_memories`` page by page to the end, then every planted pair it
  saw merged in one response, then the stop tool.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from amrita_plugin_cognition.api import AGENT_STOP_TOOL, estimate_tokens

_CLUSTER = re.compile(r"^组(\d+)(?:（[^）]*）)?：")  # a wording cluster is labelled: 组N（可能相同，措辞不同…）：
_MEMBER = re.compile(r"^\s+#(\d+) ")
_LINE_ID = re.compile(r"^#(\d+) ", re.M)
_NEAR_TOTAL = re.compile(r"待判断的近似重复 (\d+) 组")
_WORDING_TOTAL = re.compile(r"另有可能相同、措辞不同的 (\d+) 组")
_NEXT_OFFSET = re.compile(r"下一页 offset=(\d+)")
_NEXT_CURSOR = re.compile(r"下一页 cursor=(\d+)")
CLUSTER_PAGE = 20


def tokens_of(value: Any) -> int:
    return estimate_tokens(json.dumps(value, ensure_ascii=False))


@dataclass(slots=True)
class Request:
    """One request the server received: its prompt by part, and the answer's size."""

    parts: Counter[str] = field(default_factory=Counter)
    completion: int = 0
    calls: tuple[str, ...] = ()

    @property
    def prompt(self) -> int:
        return sum(self.parts.values())


@dataclass(slots=True)
class Truth:
    """What the judge knows of the chat: the planted duplicate pairs and the text to merge into."""

    pairs: list[tuple[int, int]]
    texts: dict[int, str]
    tags: dict[int, list[str]]


class FakeAgent:
    """The server and its two agents; ``begin`` before a run, ``end`` after it."""

    def __init__(self) -> None:
        from amrita_plugin_cognition.cli.loopback import LoopbackServer, completion

        self._completion = completion
        self._lock = threading.Lock()
        self.mode = ""
        self.page = 40
        self.truth = Truth([], {}, {})
        self.requests: list[Request] = []
        self.server = LoopbackServer(self.answer, name="bench-agent")
        self.server.start()

    def begin(self, mode: str, truth: Truth, page: int = 40) -> None:
        with self._lock:
            self.mode, self.truth, self.page, self.requests = mode, truth, page, []

    def end(self) -> list[Request]:
        with self._lock:
            done, self.requests = self.requests, []
            return done

    def stop(self) -> None:
        self.server.stop()

    # ------------------------------------------------------------------ the server's side

    def answer(self, method: str, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if method != "POST" or not path.endswith("/chat/completions"):
            return 404, {"error": {"message": "not found"}}
        messages: list[dict[str, Any]] = body.get("messages") or []
        offered = [tool["function"]["name"] for tool in body.get("tools") or []]
        request = Request()
        request.parts["tool schemas"] = tokens_of(body.get("tools") or [])
        names = _call_names(messages)
        first_user = True
        for message in messages:
            role = message.get("role")
            if role == "system":
                part = "system prompt"
            elif role == "user":
                part = "kickoff" if first_user else "driver notes"
                first_user = False
            elif role == "assistant":
                part = "the model's calls"
            else:
                part = f"answers: {names.get(message.get('tool_call_id', ''), '?')}"
            request.parts[part] += tokens_of(message)
        with self._lock:
            calls = self._decide(messages, offered)
            round_number = len(self.requests)
        reply: dict[str, Any] = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{round_number}_{number}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
                }
                for number, (name, arguments) in enumerate(calls)
            ],
        }
        request.completion = tokens_of(reply)
        request.calls = tuple(name for name, _ in calls)
        with self._lock:
            self.requests.append(request)
        payload = self._completion(reply, "bench-model")
        payload["usage"] = {
            "prompt_tokens": request.prompt,
            "completion_tokens": request.completion,
            "total_tokens": request.prompt + request.completion,
        }
        return 200, payload

    # ------------------------------------------------------------------ the agents

    def _decide(self, messages: list[dict[str, Any]], offered: list[str]) -> list[tuple[str, dict]]:
        answers = _answers(messages)
        made = _calls(messages)
        calls = self._ours(answers, made) if self.mode == "ours" else self._seed(answers, made)
        if offered == [AGENT_STOP_TOOL] and calls[0][0] != AGENT_STOP_TOOL:  # the driver winds down
            return [self._stop("预算将尽：还有没看完或没合并的相近记忆，留到下次整理。")]
        return calls

    def _merge(self, pair: tuple[int, int], name: str) -> tuple[str, dict[str, Any]]:
        original, copy = pair
        tags = list(dict.fromkeys(self.truth.tags.get(original, []) + self.truth.tags.get(copy, [])))
        arguments: dict[str, Any] = {"ids": [original, copy], "text": self.truth.texts[original]}
        if name == "cycle_memory_merge":
            arguments.update(importance="medium", tags=tags)
        return name, arguments

    def _stop(self, summary: str) -> tuple[str, dict[str, Any]]:
        return AGENT_STOP_TOOL, {"summary": summary}

    def _todo(self, groups: list[set[int]], made: list[tuple[str, dict]], tool: str) -> list[tuple[int, int]]:
        asked = {frozenset(arguments.get("ids", [])) for name, arguments in made if name == tool}
        return [
            pair
            for pair in self.truth.pairs
            if frozenset(pair) not in asked and any(pair[0] in group and pair[1] in group for group in groups)
        ]

    def _ours(self, answers: list[tuple[str, str]], made: list[tuple[str, dict]]) -> list[tuple[str, dict]]:
        if not made:
            return [("cycle_context", {})]
        groups: list[set[int]] = []
        next_page: int | None = None
        for name, text in answers:
            if name not in ("cycle_context", "cycle_clusters"):
                continue
            shown = _clusters(text)
            groups += shown
            if name == "cycle_context":
                counts = (_NEAR_TOTAL.search(text), _WORDING_TOTAL.search(text))
                total = sum(int(found.group(1)) for found in counts if found)
                next_page = len(shown) if total > len(shown) else None
            else:
                found = _NEXT_OFFSET.search(text)
                next_page = int(found.group(1)) if found else None
        pages = {arguments.get("offset") for name, arguments in made if name == "cycle_clusters"}
        calls = [self._merge(pair, "cycle_memory_merge") for pair in self._todo(groups, made, "cycle_memory_merge")]
        if next_page is not None and next_page not in pages:
            calls.append(("cycle_clusters", {"offset": next_page, "limit": CLUSTER_PAGE}))
        if not calls:
            merged = sum(1 for name, _ in made if name == "cycle_memory_merge")
            return [self._stop(f"判断了预整理找到的相近记忆分组，合并了 {merged} 组说同一件事的记忆，其余保留。")]
        return calls

    def _seed(self, answers: list[tuple[str, str]], made: list[tuple[str, dict]]) -> list[tuple[str, dict]]:
        pages = [text for name, text in answers if name == "list_memories"]
        if not pages:
            return [("list_memories", {"cursor": "0", "limit": self.page})]
        found = _NEXT_CURSOR.search(pages[-1])
        if found:
            return [("list_memories", {"cursor": found.group(1), "limit": self.page})]
        seen = {int(number) for text in pages for number in _LINE_ID.findall(text)}
        todo = self._todo([seen], made, "merge")
        if todo:
            return [self._merge(pair, "merge") for pair in todo]
        merged = sum(1 for name, _ in made if name == "merge")
        return [self._stop(f"读完了全部记忆，合并了 {merged} 组重复。")]


def _call_names(messages: list[dict[str, Any]]) -> dict[str, str]:
    return {
        call["id"]: call["function"]["name"]
        for message in messages
        if message.get("role") == "assistant"
        for call in message.get("tool_calls") or []
    }


def _calls(messages: list[dict[str, Any]]) -> list[tuple[str, dict]]:
    made = []
    for message in messages:
        for call in message.get("tool_calls") or [] if message.get("role") == "assistant" else []:
            try:
                arguments = json.loads(call["function"].get("arguments") or "{}")
            except json.JSONDecodeError:
                arguments = {}
            made.append((call["function"]["name"], arguments))
    return made


def _answers(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    names = _call_names(messages)
    return [
        (names.get(message.get("tool_call_id", ""), "?"), str(message.get("content") or ""))
        for message in messages
        if message.get("role") == "tool"
    ]


def _clusters(text: str) -> list[set[int]]:
    """The clusters of a ``cycle_context`` or ``cycle_clusters`` answer, by member id."""
    groups: list[set[int]] = []
    for line in text.splitlines():
        if _CLUSTER.match(line):
            groups.append(set())
        elif groups and (member := _MEMBER.match(line)):
            groups[-1].add(int(member.group(1)))
    return groups
