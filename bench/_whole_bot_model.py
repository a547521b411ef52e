"""The fake OpenAI-compatible model of ``whole_bot.py``: one server on 127.0.0.1 for both bots,
every chat completion answered after the same fixed delay (the issue's "answering in 1 s").

What it answers, by what the request offers (the way the chat-flow tests script the model):

- the chat's turn (it offers the plugin's ``end`` tool): a user message that says ``记住：`` is
  answered with an ``end`` call whose one observation is the message's fact, then, once the
  tool's result is in, with a short text; any other message gets the text at once (its turn
  goes to the transcript and reaches the historian in a transcript batch);
- the historian's structured call (``cognition_record_facts``): an observation job by the demo's
  replay rules (one fact per observation); a transcript job with one fact per user turn that
  carries a ``（记号…）`` marker (the transcript probes), in the same shape;
- a card merge and the consolidation cycle's judgement by the demo's rules;
- anything else (Amrita's own calls, the bot without the plugin) a short text.

The delay is slept outside every lock (a thread per request), so a thousand turns in flight
wait side by side as they would on a remote model.
"""

from __future__ import annotations

import re
import threading
import time
from typing import Any

from amrita_plugin_cognition.cli.demo_card_model import PROFILE_TOOL, card_answer
from amrita_plugin_cognition.cli.demo_cycle_model import STOP_TOOL, cycle_answer
from amrita_plugin_cognition.cli.loopback import LoopbackServer, completion, message_text, tool_call_message
from amrita_plugin_cognition.cli.replay_model import HISTORIAN_TOOL, historian_facts, offered_tools

MODEL = "whole-bot-model"
REPLY = "好的，知道了。"
END_TOOL = "end"
#: What a user says to be remembered through the ``end`` tool: ``记住：<fact>``.
REMEMBER = re.compile(r"记住：([^\n]*?（记号[\w-]+）)")
#: A transcript turn of the historian's extraction prompt (``prompt/historian_extract.jinja``).
TRANSCRIPT_LINE = re.compile(r"^- \[对话#(\d+)\] \S+ \S+ \S+ (QQ号(\d+)（昵称[^）]*）)：(.*（记号[\w-]+）.*)$")


def transcript_facts(prompt: str) -> list[dict[str, Any]]:
    """One fact per transcript turn that carries a marker, its speaker named as the gate wants."""
    facts = []
    for line in prompt.splitlines():
        found = TRANSCRIPT_LINE.match(line.strip())
        if found is None:
            continue
        number, speaker, person_id, text = found.groups()
        fact = text.removeprefix("跟你说一下：")
        facts.append({"text": f"{speaker}{fact}", "sources": [int(number)], "kind": "fact", "subject_id": person_id})
    return facts


def _after_last_user(messages: list[dict[str, Any]]) -> tuple[str, bool]:
    """The last user message's text, and whether a tool result follows it (the turn's second round)."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].get("role") == "user":
            answered = any(m.get("role") == "tool" for m in messages[index + 1 :])
            return message_text(messages[index]), answered
    return "", False


class WholeBotModel:
    """The loopback server with a fixed answer time; counts the calls of each kind."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.calls: dict[str, int] = {}
        #: marker → wall time the model's ``end`` call for it left the server (the turn's first answer)
        self.ended: dict[str, float] = {}
        #: The chat turns' requests: the largest system message (characters) and the most memory
        #: blocks one of them carried (one per turn is right; more would be blocks piling up).
        self.largest_system = 0
        self.most_blocks = 0
        self._lock = threading.Lock()
        self.server = LoopbackServer(self._respond, name="whole-bot-model")
        # a bot stopped or killed mid-request leaves a broken pipe: expected, not a traceback
        self.server._server.handle_error = lambda request, address: None  # type: ignore[method-assign]
        self.base_url = self.server.base_url

    def start(self) -> None:
        self.server.start()

    def stop(self) -> None:
        self.server.stop()

    def _count(self, kind: str) -> None:
        with self._lock:
            self.calls[kind] = self.calls.get(kind, 0) + 1

    def _respond(self, method: str, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if not path.endswith("/chat/completions"):
            return 404, {"error": {"message": f"no such endpoint: {path}"}}
        kind, message = self.answer(body)
        self._count(kind)
        time.sleep(self.seconds)
        return 200, completion(message, MODEL)

    def answer(self, body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """(kind of call, the assistant message) for one chat completion request."""
        messages = list(body.get("messages") or [])
        offered = offered_tools(body)
        if HISTORIAN_TOOL in offered:
            user = "\n".join(message_text(m) for m in messages if m.get("role") == "user")
            facts = historian_facts(user) or transcript_facts(user)
            kind = "historian" if "[观察#" in user else "transcript"
            return kind, tool_call_message(HISTORIAN_TOOL, {"facts": facts}, "call_historian")
        if PROFILE_TOOL in offered:
            user = "\n".join(message_text(m) for m in messages if m.get("role") == "user")
            system = "\n".join(message_text(m) for m in messages if m.get("role") == "system")
            return "merge", tool_call_message(PROFILE_TOOL, card_answer(system, user), "call_profile")
        if STOP_TOOL in offered:
            name, arguments = cycle_answer(messages, offered)
            return "cycle", tool_call_message(name, arguments, "call_cycle")
        if END_TOOL in offered:
            system = "\n".join(message_text(m) for m in messages if m.get("role") == "system")
            with self._lock:
                self.largest_system = max(self.largest_system, len(system))
                self.most_blocks = max(self.most_blocks, system.count("<cognition_memory"))
            text, answered = _after_last_user(messages)
            remembered = REMEMBER.search(text)
            if remembered is not None and not answered:
                fact = remembered.group(1)
                marker = fact.rsplit("（记号", 1)[1].rstrip("）")
                with self._lock:
                    self.ended.setdefault(marker, time.time() + self.seconds)
                arguments = {"memo": f"对方让我记住：{fact}"[:60], "observations": [fact]}
                return "turn_end", tool_call_message(END_TOOL, arguments, "call_end")
            return "turn", {"role": "assistant", "content": REPLY}
        return "other", {"role": "assistant", "content": REPLY}
