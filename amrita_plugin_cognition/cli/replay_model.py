"""The demo's built-in replay model: an OpenAI-compatible ``/v1/chat/completions`` endpoint on
127.0.0.1 that answers from the demo script instead of thinking.

It is a pure function of the request it receives, the way a model is: the last user message
names the turn of the script; the tool results after it say how far the turn has come. While
the request offers tools, it makes the turn's next scripted tool call, then answers without
one; the request without tools gets the turn's reply. Where the script depends on memory (the
id of a memory to delete, whether a fact is known), the answer is read from what the request
actually carries: the ``<cognition_memory>`` block of the system prompt and the tool results.

The historian's requests (they offer the one function ``cognition_record_facts``) are answered
by rule instead (``historian_facts``): every observation becomes one fact, its relative time
expressions replaced by the anchors the request's 时间换算 lines give, 我/我们 by the speaker.
Transcript extraction requests get no facts: the scripted turns store what matters through the
memory tools themselves. The card merge's requests (the one function ``cognition_update_profile``)
are answered by rule from the card and the new observations the request carries
(``demo_card_model``), a consolidation cycle's (they offer ``cycle_stop``) from the tool calls and
answers the request carries (``demo_cycle_model``).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from .demo_card_model import PROFILE_TOOL, card_answer
from .demo_cycle_model import STOP_TOOL as CYCLE_STOP_TOOL
from .demo_cycle_model import cycle_answer
from .demo_script import DemoScript, Reply, Turn
from .loopback import LoopbackServer, completion, message_text, tool_call_message

MODEL_NAME = "cognition-demo-replay"
NO_TOOL_TEXT = "无需调用工具。"
#: The block between its opening and closing tag, both with the same per-turn id (when there is one).
MEMORY_BLOCK = re.compile(r'<cognition_memory(?P<id>(?: id="[0-9a-f]+")?)>.*?</cognition_memory(?P=id)>', re.DOTALL)
#: "- [记忆#N] <date> [<time>] <speaker>：<text>" (the time is absent when only the day is known)
MEMORY_LINE = re.compile(r"^- \[记忆#(\d+)\] \S+(?: \d\d:\d\d)? .*?：(.*)$", re.MULTILINE)
MEMORY_ID_REF = re.compile(r"^\$memory_id:(.+)$")
#: The function the historian makes the model call (``engine.historian.TOOL_NAME``; not imported
#: from there: this module also runs as a bare model server, outside NoneBot).
HISTORIAN_TOOL = "cognition_record_facts"
#: ``- [观察#N] YYYY-MM-DD HH:MM 星期X <speaker>：<text>`` of the historian's rewrite prompt.
OBSERVATION_LINE = re.compile(r"^- \[观察#(\d+)\] (\d{4}-\d{2}-\d{2}) \S+ \S+ (.*?)：(.*)$")
#: ``  时间换算：“昨晚” = 2026-03-01（周日）晚上`` under an observation.
ANCHOR_LINE = re.compile(r"^\s+时间换算：“(.+?)” = (.+)$")
PERSON = re.compile(r"QQ号(\d+)（昵称[^）]*）")
ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
WEEKDAY_NOTE = re.compile(r"（周.）")
#: First person words and what replaces them (``{speaker}``: the speaker as ``QQ号…（昵称…）``).
FIRST_PERSON = (("我们", "{speaker}等人"), ("咱们", "{speaker}等人"), ("我", "{speaker}"))


def memory_block(messages: list[dict[str, Any]]) -> str:
    """The ``<cognition_memory>`` block of the system prompt ('' when there is none)."""
    for message in messages:
        if message.get("role") == "system":
            found = MEMORY_BLOCK.search(message_text(message))
            if found:
                return found.group(0)
    return ""


def block_memories(block: str) -> list[tuple[int, str]]:
    """(id, text) of every memory line of a rendered block."""
    return [(int(found.group(1)), found.group(2).strip()) for found in MEMORY_LINE.finditer(block)]


def result_memories(results: list[dict[str, Any]]) -> list[tuple[int, str]]:
    """(id, text) of the memories in tool results (``cognition_memory_read`` / ``_list``)."""
    found: list[tuple[int, str]] = []
    for result in results:
        for item in result.get("memories") or []:
            if isinstance(item, dict) and "memory_id" in item:
                found.append((int(item["memory_id"]), str(item.get("content", ""))))
    return found


class ReplayError(RuntimeError):
    """The request cannot be answered from the script (the reply says why)."""


class ReplayModel:
    """The server. ``start()`` binds 127.0.0.1 on a free port; ``base_url`` is then known."""

    def __init__(self, script: DemoScript, host: str = "127.0.0.1", port: int = 0) -> None:
        self.script = script
        self.requests = 0
        #: Turn number -> the memory block of the first request of that turn, as received.
        self.received_blocks: dict[int, str] = {}
        self._lock = threading.Lock()
        self._http = LoopbackServer(self._respond, host, port, name="cognition-replay")
        self.port = self._http.port
        self.base_url = self._http.base_url

    def start(self) -> ReplayModel:
        self._http.start()
        return self

    def stop(self) -> None:
        self._http.stop()

    def _respond(self, method: str, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        route = path.rstrip("/")
        if method == "GET" and route.endswith("/models"):
            return 200, {"object": "list", "data": [{"id": MODEL_NAME, "object": "model"}]}
        if method == "POST" and route.endswith("/chat/completions"):
            return 200, completion(self.answer(body), MODEL_NAME, "chatcmpl-cognition-demo")
        return 404, {"error": {"message": f"only /v1/chat/completions and /v1/models are served, not {path}"}}

    # ------------------------------------------------------------------ answering

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """The assistant message for one request."""
        with self._lock:
            self.requests += 1
            serial = self.requests
        messages: list[dict[str, Any]] = list(body.get("messages") or [])
        offered = offered_tools(body)
        if HISTORIAN_TOOL in offered or PROFILE_TOOL in offered:
            user = "\n".join(message_text(message) for message in messages if message.get("role") == "user")
            if HISTORIAN_TOOL in offered:
                return tool_call_message(HISTORIAN_TOOL, {"facts": historian_facts(user)}, f"call_historian_{serial}")
            system = "\n".join(message_text(message) for message in messages if message.get("role") == "system")
            return tool_call_message(PROFILE_TOOL, card_answer(system, user), f"call_profile_{serial}")
        if CYCLE_STOP_TOOL in offered:  # a consolidation cycle's judgement step
            name, arguments = cycle_answer(messages, offered)
            return tool_call_message(name, arguments, f"call_cycle_{serial}")
        try:
            last_user = max(index for index, message in enumerate(messages) if message.get("role") == "user")
        except ValueError:
            return text_message("（回放模型：请求里没有用户消息）")
        turn = self.script.turn_for_input(message_text(messages[last_user]))
        if turn is None:
            return text_message("（回放模型：脚本里没有这句话，无法回答）")
        with self._lock:
            self.received_blocks.setdefault(turn.number, memory_block(messages))
        results = [parse_result(message) for message in messages[last_user + 1 :] if message.get("role") == "tool"]
        if body.get("tools"):
            if len(results) < len(turn.steps):
                step = turn.steps[len(results)]
                try:
                    arguments = self._arguments(turn, step.arguments, messages, results)
                except ReplayError as error:
                    return text_message(f"（回放模型：{error}）")
                return tool_call_message(step.tool, arguments, f"call_{turn.number}_{len(results) + 1}_{serial}")
            return text_message(NO_TOOL_TEXT)
        return text_message(self._reply(turn, turn.reply, memory_block(messages), results))

    def _arguments(
        self, turn: Turn, arguments: dict[str, Any], messages: list[dict[str, Any]], results: list[dict[str, Any]]
    ) -> dict[str, Any]:
        filled: dict[str, Any] = {}
        for key, value in self.script.render_value(turn, arguments).items():
            reference = MEMORY_ID_REF.match(value) if isinstance(value, str) else None
            if reference is None:
                filled[key] = value
                continue
            keyword = reference.group(1)
            candidates = result_memories(results[::-1]) + block_memories(memory_block(messages))
            matching = [memory_id for memory_id, text in candidates if keyword in text]
            if not matching:
                raise ReplayError(f"本轮收到的记忆里没有含“{keyword}”的一条，无法决定要操作哪条记忆")
            filled[key] = matching[0]
        return filled

    def _reply(self, turn: Turn, reply: Reply, block: str, results: list[dict[str, Any]]) -> str:
        if not reply.if_memory:
            return self.script.render(turn, reply.text)
        known = block_memories(block) + result_memories(results)
        matching = [text for _, text in known if reply.if_memory in text]
        template = reply.found if matching else reply.missing
        everything = "；".join(dict.fromkeys(text for _, text in block_memories(block)))
        text = self.script.render(turn, template)
        return text.replace("{memory}", matching[0] if matching else "").replace("{memories}", everything)


def offered_tools(body: dict[str, Any]) -> list[str]:
    """Names of the functions a request offers."""
    names = []
    for tool in body.get("tools") or []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and function.get("name"):
            names.append(str(function["name"]))
    return names


@dataclass(slots=True)
class _Observation:
    number: int
    said_on: str
    speaker: str
    text: str
    anchors: list[tuple[str, str]] = field(default_factory=list)


def _observations(prompt: str) -> list[_Observation]:
    """The numbered observations of a historian rewrite prompt, each with its anchored times."""
    found: list[_Observation] = []
    for line in prompt.splitlines():
        observation = OBSERVATION_LINE.match(line)
        if observation is not None:
            number, said_on, speaker, text = observation.groups()
            found.append(_Observation(int(number), said_on, speaker.strip(), text.strip()))
            continue
        anchor = ANCHOR_LINE.match(line)
        if anchor is not None and found:
            found[-1].anchors.append((anchor.group(1), anchor.group(2).strip()))
    return found


def _first_person(text: str, speaker: str) -> str:
    """我/我们/咱们 outside any named person replaced by the speaker (when the speaker is named)."""
    if PERSON.fullmatch(speaker) is None:
        return text
    pieces = []
    last = 0
    for person in PERSON.finditer(text):
        pieces.append(text[last : person.start()])
        pieces.append(person.group(0))
        last = person.end()
    pieces.append(text[last:])
    for index in range(0, len(pieces), 2):  # even pieces lie between named persons
        for word, replacement in FIRST_PERSON:
            pieces[index] = pieces[index].replace(word, replacement.format(speaker=speaker))
    return "".join(pieces)


def historian_facts(prompt: str) -> list[dict[str, Any]]:
    """The historian's answer to a rewrite prompt, by rule: one fact per observation, each
    relative time replaced by its anchor (without the weekday note: “昨晚” → 2026-03-01晚上),
    first person words by the speaker; ``happened_on`` the first anchored date. A prompt with
    no observations (transcript extraction) gets no facts."""
    facts = []
    for observation in _observations(prompt):
        text = _first_person(observation.text, observation.speaker)
        happened_on = ""
        for expression, anchor in sorted(observation.anchors, key=lambda item: -len(item[0])):
            text = text.replace(expression, WEEKDAY_NOTE.sub("", anchor))
        for expression, anchor in observation.anchors:
            day = ISO_DATE.search(anchor)
            if day is not None and expression in observation.text:
                happened_on = day.group(0)
                break
        if not happened_on:
            kind = "fact"
        elif happened_on > observation.said_on:
            kind = "plan"
        else:
            kind = "event" if happened_on < observation.said_on else "fact"
        people = PERSON.findall(text) or PERSON.findall(observation.speaker)
        facts.append(
            {
                "text": text,
                "sources": [observation.number],
                "kind": kind,
                "happened_on": happened_on,
                "subject_id": people[0] if people else "",
            }
        )
    return facts


def parse_result(message: dict[str, Any]) -> dict[str, Any]:
    try:
        value = json.loads(message_text(message))
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def text_message(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}
