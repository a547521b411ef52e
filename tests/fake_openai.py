"""A fake OpenAI-compatible server on 127.0.0.1 for the LLM and the API embedders.

Chat completions follow a script: each request pops the next scripted reply if there is one
(a tool call or a text; ``{"__status__": 500}`` answers that HTTP error), else answers with
``FINAL_TEXT``; a request that offers tools but has
no scripted reply answers with no tool call. ``chat_delays`` holds each following chat request
for that many seconds before it answers (one entry per request: timeouts); ``chat_usage``, when
set, is the token usage every chat completion reports, and a scripted reply's own ``"__usage__"``
(taken out of the message) is the usage of that one answer. ``/v1/embeddings`` and Ollama's ``/api/embed``
return deterministic vectors derived from the text (or fail while ``embeddings_down`` is set;
each answers ``embeddings_delay`` seconds late, 0 by default). Every request body is recorded.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import deque
from typing import Any

import numpy as np

from amrita_plugin_cognition.cli.loopback import LoopbackServer, chat_preset, completion
from amrita_plugin_cognition.cli.loopback import tool_call_message as tool_call

__all__ = ["FINAL_TEXT", "FakeOpenAI", "chat_preset", "fake_vector", "tool_call"]

FINAL_TEXT = "好的，我记住了。"
MODEL = "fake-model"


def fake_vector(text: str, dimension: int) -> list[float]:
    """Bag of character bigrams hashed into ``dimension`` buckets: similar texts, similar vectors."""
    vector = np.zeros(dimension, dtype=np.float32)
    grams = [text[i : i + 2] for i in range(max(1, len(text) - 1))]
    for gram in grams:
        bucket = int(hashlib.md5(gram.encode()).hexdigest()[:8], 16) % dimension
        vector[bucket] += 1.0
    norm = float(np.linalg.norm(vector)) or 1.0
    return (vector / norm).tolist()


class FakeOpenAI:
    def __init__(self, dimension: int = 64) -> None:
        self.dimension = dimension
        self.chat_requests: list[dict[str, Any]] = []
        self.embedding_requests: list[dict[str, Any]] = []
        self.script: deque[dict[str, Any]] = deque()
        self.embeddings_down = False
        #: The HTTP status a request answers while ``embeddings_down`` is set.
        self.embeddings_down_status = 503
        self.chat_delays: deque[float] = deque()
        self.chat_usage: dict[str, int] | None = None
        #: Seconds every embeddings request waits before it answers (a slow embedder).
        self.embeddings_delay = 0.0
        #: Answers chat requests the script does not cover: ``responder(body)`` returns an
        #: assistant message, or None for the default answer.
        self.responder: Any = None
        self._resets = 0
        self._lock = threading.Lock()
        self.server = LoopbackServer(lambda method, path, body: self.answer(path, body), name="fake-openai")
        self.port = self.server.port
        self.base_url = self.server.base_url
        self.root_url = self.server.root_url

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if self.embeddings_delay and self._is_embedding(path):
            resets = self._resets
            time.sleep(self.embeddings_delay)  # outside the lock: other requests are answered meanwhile
            if resets != self._resets:  # the test that was slowed down is over: leave no trace in the next
                return 503, {"error": {"message": "stale delayed request"}}
        with self._lock:
            delay = self.chat_delays.popleft() if self.chat_delays and not self._is_embedding(path) else 0.0
            reply = self._reply(path, body)
        if delay:
            time.sleep(delay)
        return reply

    @staticmethod
    def _is_embedding(path: str) -> bool:
        return path.endswith("/embeddings") or path.endswith("/api/embed")

    def _reply(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if self._is_embedding(path):
            self.embedding_requests.append(body)
            if self.embeddings_down:
                return self.embeddings_down_status, {"error": {"message": "embeddings down"}}
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            vectors = [fake_vector(text, body.get("dimensions") or self.dimension) for text in texts]
            if path.endswith("/api/embed"):
                return 200, {"model": body.get("model"), "embeddings": vectors}
            return 200, {
                "object": "list",
                "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)],
                "model": body.get("model"),
            }
        self.chat_requests.append(body)
        if self.script and "__status__" in self.script[0]:  # a scripted HTTP error
            failure = self.script.popleft()
            return int(failure["__status__"]), {"error": {"message": failure.get("message", "scripted failure")}}
        usage = self.chat_usage
        if self.script:
            message = dict(self.script.popleft())
            usage = message.pop("__usage__", usage)
        elif self.responder is not None and (answered := self.responder(body)) is not None:
            message = answered
        elif body.get("tools"):
            message = {"role": "assistant", "content": "无需工具"}
        else:
            message = {"role": "assistant", "content": FINAL_TEXT}
        answer = completion(message, MODEL)
        if usage is not None:
            answer["usage"] = dict(usage)
        return 200, answer

    def reset(self) -> None:
        with self._lock:
            self.chat_requests.clear()
            self.embedding_requests.clear()
            self.script.clear()
            self.embeddings_down = False
            self.embeddings_down_status = 503
            self.embeddings_delay = 0.0
            self._resets += 1
            self.chat_delays.clear()
            self.chat_usage = None
            self.responder = None

    def start(self) -> None:
        self.server.start()

    def stop(self) -> None:
        self.server.stop()
