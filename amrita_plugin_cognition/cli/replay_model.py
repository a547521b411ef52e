"""The demo's built-in replay model: an OpenAI-compatible ``/v1/chat/completions`` endpoint on
127.0.0.1 that answers from the demo script instead of thinking.

It is a pure function of the request it receives, the way a model is: the last user message
names the turn of the script; the tool results after it say how far the turn has come. While
the request offers tools, it makes the turn's next scripted tool call, then answers without
one; the request without tools gets the turn's reply. Where the script depends on memory (the
id of a memory to delete, whether a fact is known), the answer is read from what the request
actually carries: the ``<cognition_memory>`` block of the system prompt and the tool results.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any

from .demo_script import DemoScript, Reply, Turn
from .loopback import LoopbackServer, completion, tool_call_message

MODEL_NAME = "cognition-demo-replay"
NO_TOOL_TEXT = "无需调用工具。"
MEMORY_BLOCK = re.compile(r"<cognition_memory>.*?</cognition_memory>", re.DOTALL)
MEMORY_LINE = re.compile(r"^- \[记忆#(\d+)\] \S+ \S+ .*?：(.*)$", re.MULTILINE)
MEMORY_ID_REF = re.compile(r"^\$memory_id:(.+)$")


def message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


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


def parse_result(message: dict[str, Any]) -> dict[str, Any]:
    try:
        value = json.loads(message_text(message))
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def text_message(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}
