"""A fake OpenAI-compatible server on 127.0.0.1 for the LLM and the API embedders.

Chat completions follow a script: each request pops the next scripted reply if there is one
(a tool call or a text), else answers with ``FINAL_TEXT``; a request that offers tools but has
no scripted reply answers with no tool call. ``/v1/embeddings`` and Ollama's ``/api/embed``
return deterministic vectors derived from the text (or fail while ``embeddings_down`` is set).
Every request body is recorded.
"""

from __future__ import annotations

import hashlib
import threading
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
        self._lock = threading.Lock()
        self.server = LoopbackServer(lambda method, path, body: self.answer(path, body), name="fake-openai")
        self.port = self.server.port
        self.base_url = self.server.base_url
        self.root_url = self.server.root_url

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            if path.endswith("/embeddings") or path.endswith("/api/embed"):
                self.embedding_requests.append(body)
                if self.embeddings_down:
                    return 503, {"error": {"message": "embeddings down"}}
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
            if self.script:
                message = self.script.popleft()
                return 200, completion(message, MODEL)
            if body.get("tools"):
                return 200, completion({"role": "assistant", "content": "无需工具"}, MODEL)
            return 200, completion({"role": "assistant", "content": FINAL_TEXT}, MODEL)

    def reset(self) -> None:
        with self._lock:
            self.chat_requests.clear()
            self.embedding_requests.clear()
            self.script.clear()
            self.embeddings_down = False

    def start(self) -> None:
        self.server.start()

    def stop(self) -> None:
        self.server.stop()
