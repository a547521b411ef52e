"""A small OpenAI-shaped JSON server on 127.0.0.1: the demo's replay model serves through it,
and so does the tests' fake model and embedder.

The owner answers ``(method, path, body)`` with ``(status, payload)``. A request that asks for
``stream`` and is answered with a ``chat.completion`` is sent as server-sent chunks of the same
answer, the way an OpenAI-compatible endpoint streams.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Responder = Callable[[str, str, dict[str, Any]], tuple[int, dict[str, Any]]]


def chat_preset(name: str, model: str, base_url: str, api_key: str, stream: bool) -> dict[str, Any]:
    """An Amrita chat model preset (``models/<name>.json``) for an OpenAI-compatible endpoint."""
    return {
        "name": name,
        "model": model,
        "base_url": base_url,
        "api_key": api_key,
        "protocol": "__main__",
        "config": {"stream": stream},
    }


def completion(message: dict[str, Any], model: str, completion_id: str = "chatcmpl-cognition") -> dict[str, Any]:
    """A non-streamed chat completion carrying ``message``."""
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {"index": 0, "finish_reason": "tool_calls" if message.get("tool_calls") else "stop", "message": message}
        ],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }


def tool_call_message(name: str, arguments: dict[str, Any], call_id: str = "call_1") -> dict[str, Any]:
    """An assistant message that calls one tool."""
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


def message_text(message: dict[str, Any]) -> str:
    """A request message's text (its content, or the text parts of a multi-part content)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def stream_chunks(answer: dict[str, Any]) -> list[dict[str, Any]]:
    """A chat completion as the chunks of a stream: the message, the finish reason, the usage."""
    message = answer["choices"][0]["message"]
    delta: dict[str, Any] = {"role": "assistant"}
    if message.get("tool_calls"):
        delta["tool_calls"] = [{"index": index, **call} for index, call in enumerate(message["tool_calls"])]
    else:
        delta["content"] = message.get("content") or ""
    base = {"id": answer["id"], "object": "chat.completion.chunk", "created": 0, "model": answer["model"]}
    return [
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": answer["choices"][0]["finish_reason"]}]},
        {**base, "choices": [], "usage": answer.get("usage") or {}},
    ]


class _QuietServer(ThreadingHTTPServer):
    """A client that went away before its answer was written (it timed out, or its process
    ended) is no error of the server's: ``socketserver`` would print a traceback to the process's
    stderr, which is a command's output (``--json``) in the CLI and in tests."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


class LoopbackServer:
    """Binds ``host`` (127.0.0.1) on a free port at construction; ``start()`` serves in a thread."""

    def __init__(
        self, respond: Responder, host: str = "127.0.0.1", port: int = 0, name: str = "cognition-http"
    ) -> None:
        self._name = name

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                self._reply(*respond("GET", self.path, {}), stream=False)

            def do_POST(self) -> None:
                try:
                    length = int(self.headers.get("content-length") or 0)
                    body = json.loads(self.rfile.read(length) or b"{}")
                except (ValueError, json.JSONDecodeError) as error:
                    self._reply(400, {"error": {"message": f"bad request: {error}"}}, stream=False)
                    return
                self._reply(*respond("POST", self.path, body), stream=bool(body.get("stream")))

            def _reply(self, status: int, payload: dict[str, Any], stream: bool) -> None:
                if stream and status == 200 and payload.get("object") == "chat.completion":
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.end_headers()
                    for chunk in stream_chunks(payload):
                        self.wfile.write(f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode())
                    self.wfile.write(b"data: [DONE]\n\n")
                    return
                data = json.dumps(payload, ensure_ascii=False).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = _QuietServer((host, port), Handler)
        self.port = int(self._server.server_address[1])
        self.root_url = f"http://{host}:{self.port}"
        self.base_url = f"{self.root_url}/v1"

    def start(self) -> None:
        threading.Thread(target=self._server.serve_forever, name=self._name, daemon=True).start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
