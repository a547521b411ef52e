"""Two chat turns against a real ``ambot run`` of the bot project in the current directory.

Run by ``scripts/project_smoke.sh`` with the project's own interpreter (``uv run python …``),
after the plugin was installed, registered and migrated the way the README says. Everything
stays on 127.0.0.1:

- a fake OpenAI-compatible model (the plugin's loopback server) that Amrita's chat uses through
  a model preset ``config/chat/models/smoke.json`` (the chat's ``config.toml`` names it);
- ``uv run ambot run`` with ``PORT`` set to a free port: the bot as its owner starts it;
- a fake QQ client (OneBot V11 reverse WebSocket, ``/onebot/v11/ws``) that sends two private
  messages and answers every API call the bot makes.

Turn 1: the model calls ``cognition_memory_write`` and the plugin writes the fact into the bot's
own database. Turn 2: the request the model receives must carry the memory block
(``<cognition_memory>`` with the fact) in its system message. Turn 3: the user, a superuser here,
sends ``/memory dmn``: the chat's consolidation cycle runs in the bot, its judgement step asks the
model with the cycle's own tools (never the chat's), the model reads ``cycle_context`` and stops
with a summary, and the reply tells the rounds and the summary. Then the memory page in the
bot's own WebUI (on, with a user and password given by the environment): its routes refuse a visit
without the WebUI's login, and after the WebUI's login its first screen lists the bot account and
the fact of turn 1 (Chromium drives the page itself in tests/e2e/test_memory_page_browser.py).
Exit 0 on success; else the bot's log tail and exit 1.
"""

from __future__ import annotations

import http.cookiejar
import itertools
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from amrita_plugin_cognition.cli.loopback import LoopbackServer, chat_preset, completion, tool_call_message

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))  # the fake QQ client's answers
from _onebot import SELF_ID, info_answer

USER_ID = 10001
FACT = "小明（QQ10001）最喜欢的水果是芒果。"
FIRST = "记住：我最喜欢的水果是芒果。"
SECOND = "我最喜欢什么水果来着？"
REPLY = "好的，记住了。"
DMN = "/memory dmn"
CYCLE_SUMMARY = "检查了本会话的记忆，没有需要合并的内容。"
CYCLE_USAGE = {"prompt_tokens": 1500, "completion_tokens": 40, "total_tokens": 1540}
BOOT_TIMEOUT = float(os.environ.get("SMOKE_BOOT_TIMEOUT", "240"))
TURN_TIMEOUT = 120.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class FakeModel:
    """Scripted: a tool call that writes ``FACT`` for the first message, text answers otherwise."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.wrote = False
        self.cycle_requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.server = LoopbackServer(lambda method, path, body: self.answer(path, body), name="smoke-model")

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if not path.endswith("/chat/completions"):
            return 404, {"error": {"message": f"no such endpoint: {path}"}}
        with self._lock:
            self.requests.append(body)
            messages = body.get("messages") or []
            asked = json.dumps([m for m in messages if m.get("role") == "user"], ensure_ascii=False)
            if not self.wrote and FIRST in asked and "cognition_memory_write" in tool_names(body):
                self.wrote = True
                call = {"content": FACT, "scope": "user", "importance": "high"}
                return 200, completion(tool_call_message("cognition_memory_write", call), "smoke-model")
            if "cycle_context" in tool_names(body):  # the consolidation cycle's agent: read, then stop
                self.cycle_requests.append(body)
                read = any(m.get("role") == "tool" for m in messages)
                call = ("cycle_stop", {"summary": CYCLE_SUMMARY}) if read else ("cycle_context", {})
                answer = completion(tool_call_message(*call, call_id=f"call_{len(messages)}"), "smoke-model")
                answer["usage"] = dict(CYCLE_USAGE)  # the provider's count, which the cycle's budget reads
                return 200, answer
        return 200, completion({"role": "assistant", "content": REPLY}, "smoke-model")


class FakeQQ:
    """A OneBot V11 implementation's side of the reverse WebSocket: events out, API calls answered."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.sent: list[str] = []
        self.actions: list[str] = []
        self._ids = itertools.count(5000)
        self._ws: ClientConnection | None = None
        self._changed = threading.Condition()

    def connect(self, deadline: float, bot: subprocess.Popen[bytes]) -> None:
        headers = {"X-Self-ID": str(SELF_ID), "X-Client-Role": "Universal"}
        while True:
            if bot.poll() is not None:
                raise RuntimeError(f"the bot exited with {bot.returncode} before it accepted the connection")
            try:
                self._ws = connect(self.url, additional_headers=headers, open_timeout=5)
                break
            except (OSError, TimeoutError, ConnectionClosed) as error:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the bot did not accept {self.url}: {error}") from error
                time.sleep(1)
        threading.Thread(target=self._serve, name="fake-qq", daemon=True).start()

    def _serve(self) -> None:
        assert self._ws is not None
        try:
            for raw in self._ws:
                request = json.loads(raw)
                if "action" not in request:
                    continue
                data = self._answer(request["action"], request.get("params") or {})
                reply = {"status": "ok", "retcode": 0, "data": data, "echo": request.get("echo")}
                self._ws.send(json.dumps(reply, ensure_ascii=False))
        except ConnectionClosed:
            pass

    def _answer(self, action: str, params: dict[str, Any]) -> Any:
        with self._changed:
            self.actions.append(action)
            if action in ("send_msg", "send_private_msg", "send_group_msg"):
                self.sent.append(message_text(params.get("message")))
                self._changed.notify_all()
                return {"message_id": next(self._ids)}
        return info_answer(action, params, lambda _user_id: "小明")

    def message(self, text: str) -> None:
        assert self._ws is not None
        event = {
            "time": int(time.time()),
            "self_id": SELF_ID,
            "post_type": "message",
            "message_type": "private",
            "sub_type": "friend",
            "message_id": next(self._ids),
            "user_id": USER_ID,
            "message": [{"type": "text", "data": {"text": text}}],
            "raw_message": text,
            "font": 0,
            "sender": {"user_id": USER_ID, "nickname": "小明", "sex": "unknown", "age": 0},
        }
        self._ws.send(json.dumps(event, ensure_ascii=False))

    def wait_for_reply(self, already: int, timeout: float) -> str:
        with self._changed:
            if not self._changed.wait_for(lambda: len(self.sent) > already, timeout=timeout):
                raise RuntimeError(f"no reply within {timeout:.0f}s (the bot called: {self.actions})")
            return self.sent[already]

    def close(self) -> None:
        if self._ws is not None:
            self._ws.close()


def message_text(message: Any) -> str:
    if isinstance(message, str):
        return message
    if isinstance(message, list):
        return "".join(str(seg.get("data", {}).get("text", "")) for seg in message if isinstance(seg, dict))
    return str(message)


def system_text(body: dict[str, Any]) -> str:
    parts = []
    for message in body.get("messages") or []:
        if message.get("role") == "system":
            content = message.get("content")
            parts.append(content if isinstance(content, str) else json.dumps(content, ensure_ascii=False))
    return "\n".join(parts)


def tool_names(body: dict[str, Any]) -> set[str]:
    return {tool.get("function", {}).get("name") for tool in body.get("tools") or []}


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in body.get("messages") or [] if m.get("role") == "tool"]


def check_memory_page(base: str, password: str) -> str:
    """The memory page's routes in the running bot's WebUI: refused without its login, and its
    first screen after it (the bot account, the fact of turn 1). Returns what it saw."""
    try:
        urllib.request.urlopen(f"{base}/api/cognition/start", timeout=30)
        raise AssertionError("the memory page answered without the WebUI's login")
    except urllib.error.HTTPError as refused:
        check(refused.code in (401, 403), f"a visit without login got {refused.code}, not 401/403")
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    login = urllib.request.Request(
        f"{base}/api/auth/login",
        data=json.dumps({"username": "admin", "password": password}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with browser.open(login, timeout=30) as answer:
        check(answer.status == 200, f"the WebUI's login answered {answer.status}")
    with browser.open(f"{base}/api/cognition/start", timeout=30) as answer:
        start = json.loads(answer.read())["data"]
    accounts = {bot["bot_id"]: bot["memories"] for bot in start["bots"]}
    check(accounts.get(str(SELF_ID), 0) >= 1, f"the page's first screen lacks bot {SELF_ID}: {start['bots']}")
    shown = [item["text"] for item in (start["first"]["page"] or {}).get("items", [])]
    check(FACT in shown, f"the page's first screen lacks the fact of turn 1: {shown}")
    with browser.open(f"{base}/api/cognition/assets/memory.js", timeout=30) as answer:
        check("javascript" in answer.headers.get("Content-Type", ""), "the page's module is not served as JavaScript")
    return f"bot {SELF_ID} with {accounts[str(SELF_ID)]} memory, the fact on the first screen"


def check(condition: bool, what: str) -> None:
    if not condition:
        raise AssertionError(what)


def main() -> int:
    project = Path.cwd()
    chat_config = project / "config" / "chat"
    check((chat_config / "config.toml").is_file(), f"{chat_config / 'config.toml'} is missing (enable = true)")
    model = FakeModel()
    model.server.start()
    (chat_config / "models").mkdir(parents=True, exist_ok=True)
    preset = chat_preset("smoke", "smoke-model", model.server.base_url, "sk-smoke", stream=False)
    (chat_config / "models" / "smoke.json").write_text(json.dumps(preset), encoding="utf-8")

    port = free_port()
    log_path = project / "smoke-bot.log"
    password = secrets.token_urlsafe(12)
    # the user is the bot's superuser, who may run /memory dmn; the WebUI on with a user of the
    # smoke's own (the environment outranks the project's .env)
    env = {
        **os.environ,
        "PORT": str(port),
        "HOST": "127.0.0.1",
        "ANONYMIZED_TELEMETRY": "False",
        "SUPERUSERS": json.dumps([str(USER_ID)]),
        "WEBUI_ENABLE": "true",
        "WEBUI_USER_NAME": "admin",
        "WEBUI_PASSWORD": password,
    }
    with log_path.open("wb") as log:
        # its own session: stopped below by its process group id (uv run and the bot under it)
        bot = subprocess.Popen(
            ["uv", "run", "--no-sync", "ambot", "run"],
            cwd=project,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    qq = FakeQQ(f"ws://127.0.0.1:{port}/onebot/v11/ws")
    started = time.monotonic()
    try:
        qq.connect(started + BOOT_TIMEOUT, bot)
        print(f"bot up and connected in {time.monotonic() - started:.1f}s", flush=True)
        time.sleep(2)  # the bot's startup hooks finish after the server accepts connections

        qq.message(FIRST)
        first = qq.wait_for_reply(0, TURN_TIMEOUT)
        check(model.wrote, "turn 1: the model was never offered cognition_memory_write")
        results = [result for body in model.requests for result in tool_results(body)]
        written = [result for result in results if result.get("ok") is True and result.get("memory_id")]
        check(bool(written), f"turn 1: the memory write failed: {results}")
        print(f"turn 1: memory #{written[0]['memory_id']} written; bot replied {first!r}", flush=True)

        # Amrita answers one message per user per RATE_LIMIT seconds (.env: RATE_LIMIT=5)
        time.sleep(float(os.environ.get("SMOKE_RATE_LIMIT_WAIT", "6")))
        before = len(model.requests)
        qq.message(SECOND)
        second = qq.wait_for_reply(1, TURN_TIMEOUT)
        # the chat completions of the turn: those that offer the plugin's tools (Amrita's content
        # check before them offers only its `report` tool and carries no memory block)
        asked = [body for body in model.requests[before:] if "cognition_memory_read" in tool_names(body)]
        check(bool(asked), "turn 2: the model received no chat request offering the plugin's tools")
        for body in asked:
            system = system_text(body)
            check("<cognition_memory id=" in system, f"turn 2: no <cognition_memory> in the system message:\n{system}")
            check(FACT in system, f"turn 2: the memory block lacks the written fact:\n{system}")
        print(
            f"turn 2: {len(asked)} chat request(s), each with <cognition_memory> and the fact; bot replied {second!r}",
            flush=True,
        )

        time.sleep(float(os.environ.get("SMOKE_RATE_LIMIT_WAIT", "6")))
        qq.message(DMN)
        third = qq.wait_for_reply(2, TURN_TIMEOUT)
        check(len(model.cycle_requests) == 2, f"turn 3: the cycle asked the model {len(model.cycle_requests)} times")
        for body in model.cycle_requests:
            names = tool_names(body)
            check(not any(name.startswith("cognition_") for name in names), f"turn 3: chat tools offered: {names}")
        spent = "2 轮，输入 3000 / 输出 80 tokens"
        check(CYCLE_SUMMARY in third and spent in third, f"turn 3: /memory dmn answered {third!r}")
        print(f"turn 3: /memory dmn ran the cycle's judgement step in 2 rounds; bot replied {third!r}", flush=True)

        seen = check_memory_page(f"http://127.0.0.1:{port}", password)
        print(f"the memory page in the bot's WebUI: refused without login; after it, {seen}", flush=True)
        return 0
    except (AssertionError, RuntimeError) as error:
        print(f"FAILED: {error}", file=sys.stderr)
        tail = log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-80:]
        print("--- bot log (last lines) ---", *tail, sep="\n", file=sys.stderr)
        return 1
    finally:
        (project / "smoke-model-requests.json").write_text(
            json.dumps(model.requests, ensure_ascii=False, indent=1), encoding="utf-8"
        )
        qq.close()
        if bot.poll() is None:
            os.killpg(bot.pid, signal.SIGINT)
            try:
                bot.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(bot.pid, signal.SIGKILL)
                bot.wait(timeout=30)
        model.server.stop()


if __name__ == "__main__":
    sys.exit(main())
