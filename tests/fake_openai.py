"""A fake OpenAI-compatible server on 127.0.0.1 for the LLM and the API embedders.

Chat completions follow a script: each request pops the next scripted reply if there is one
(a tool call or a text), else answers with ``FINAL_TEXT``; a request that offers tools but has
no scripted reply answers with no tool call. ``/v1/embeddings`` and Ollama's ``/api/embed``
return deterministic vectors derived from the text (or fail while ``embeddings_down`` is set).
Every request body is recorded.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

FINAL_TEXT = "好的，我记住了。"


def fake_vector(text: str, dimension: int) -> list[float]:
    """Bag of character bigrams hashed into ``dimension`` buckets: similar texts, similar vectors."""
    vector = np.zeros(dimension, dtype=np.float32)
    grams = [text[i : i + 2] for i in range(max(1, len(text) - 1))]
    for gram in grams:
        bucket = int(hashlib.md5(gram.encode()).hexdigest()[:8], 16) % dimension
        vector[bucket] += 1.0
    norm = float(np.linalg.norm(vector)) or 1.0
    return (vector / norm).tolist()


def _completion(message: dict[str, Any], finish: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": "fake-model",
        "choices": [{"index": 0, "finish_reason": finish, "message": message}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def tool_call(name: str, arguments: dict[str, Any], call_id: str = "call_1") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
            }
        ],
    }


class FakeOpenAI:
    def __init__(self, dimension: int = 64) -> None:
        self.dimension = dimension
        self.chat_requests: list[dict[str, Any]] = []
        self.embedding_requests: list[dict[str, Any]] = []
        self.script: deque[dict[str, Any]] = deque()
        self.embeddings_down = False
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                status, answer = outer.answer(self.path, body)
                data = json.dumps(answer, ensure_ascii=False).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.root_url = f"http://127.0.0.1:{self.port}"

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
                return 200, _completion(message, "tool_calls" if message.get("tool_calls") else "stop")
            if body.get("tools"):
                return 200, _completion({"role": "assistant", "content": "无需工具"}, "stop")
            return 200, _completion({"role": "assistant", "content": FINAL_TEXT}, "stop")

    def reset(self) -> None:
        with self._lock:
            self.chat_requests.clear()
            self.embedding_requests.clear()
            self.script.clear()
            self.embeddings_down = False

    def start(self) -> None:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
