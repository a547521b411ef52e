"""Model calls of the profile merge per 100 observation-bearing turns of a busy group.

A group of ``SPEAKERS`` members where every turn ends with one observation (an ``end`` job):
the historian rewrites it (one call per job, the fake model echoes it), and the merge step
updates the cards it touches (the group's card and the speaker's part that group sees: under the
default ``scope_policy = "strict"`` their part in that group, under ``open`` their cross-group
part), coalesced per card part within ``profiles.merge_window_seconds`` (the default unless
``--window``). The clock is simulated: after each turn the queue runs until idle at that turn's
time, so the merges fall due as they would in a running bot. The fake model is an
OpenAI-compatible server on 127.0.0.1 (``cli/loopback.py``) that answers every merge with a valid
``update_profile``; calls are counted at the server. Reported: merge calls per 100
observation-bearing turns (target < 50), historian calls for reference, at the busy pace (a turn
every 6 s) and at a slower one; then the same members busy in two groups at once (turns
alternate between the groups), under each scope policy: a strict group's view of a member is a
card part of its own, so each member costs one merge per group and window instead of one.

    uv run python bench/profile_merges.py [--quick] [--window SECONDS]
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from datetime import datetime, timedelta
from typing import Any

from _common import (
    init_engine_only,
    machine_line,
    open_engine,
    parse_args,
    quiet_cognition_logs,
    register_loopback_preset,
    remove_home,
    throwaway_home,
)

from amrita_plugin_cognition.api import UTC

PRESET = "cognition-bench-merge"
SPEAKERS = 8
TARGET = 50.0
START = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
_OBSERVATION = re.compile(r"\[观察#(\d+)\] [^：\n]*：(.+)")
_ENTITY = re.compile(r"entity_type=(\w+)，entity_id=(\d+)")


class FakeModel:
    """Counts calls per tool; the historian echoes each observation, a merge writes a small card."""

    def __init__(self) -> None:
        from amrita_plugin_cognition.cli.loopback import LoopbackServer, completion, tool_call_message
        from amrita_plugin_cognition.engine.historian import TOOL_NAME as HISTORIAN_TOOL
        from amrita_plugin_cognition.engine.profile_prompt import TOOL_NAME as MERGE_TOOL

        self._completion = completion
        self._tool_call = tool_call_message
        self.historian_tool = HISTORIAN_TOOL
        self.merge_tool = MERGE_TOOL
        self.calls: dict[str, int] = {}
        self._lock = threading.Lock()
        self.server = LoopbackServer(self.answer, name="bench-model")
        self.server.start()

    def answer(self, method: str, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        tool = next((item["function"]["name"] for item in body.get("tools", [])), "")
        with self._lock:
            self.calls[tool] = self.calls.get(tool, 0) + 1
        prompt = "\n".join(
            str(message.get("content")) for message in body.get("messages", []) if message["role"] == "user"
        )
        if tool == self.historian_tool:
            facts = [{"text": text.strip(), "sources": [int(number)]} for number, text in _OBSERVATION.findall(prompt)]
            message = self._tool_call(tool, {"facts": facts})
        elif tool == self.merge_tool:
            found = _ENTITY.search(prompt)
            entity_type, entity_id = found.groups() if found else ("", "")
            new = [line[2:] for line in prompt.split("【新的观察】", 1)[-1].splitlines() if line.startswith("- ")]
            arguments = {
                "action": "update_profile",
                "entity_type": entity_type,
                "entity_id": entity_id,
                "evaluation": "活跃的群友" if entity_type == "user" else "热闹的群",
                "body": "\n".join(new[-5:])[:700],
                "roast": "话多",
            }
            message = self._tool_call(tool, arguments)
        else:
            message = {"role": "assistant", "content": "好的"}
        return 200, self._completion(message, "bench-model")

    def stop(self) -> None:
        self.server.stop()


async def run_group(
    model: FakeModel,
    turns: int,
    every_seconds: float,
    bot_id: str,
    window: float,
    groups: int = 1,
    policy: str = "strict",
) -> dict[str, int]:
    from amrita_plugin_cognition.api import ChatContext, InputMessage, Scope

    engine = await open_engine(
        HOME,
        scope_policy=policy,
        llm={"preset": PRESET, "timeout_seconds": 5.0, "max_retries": 0},
        historian={"capture": "end", "max_concurrency": 4},
        profiles={"merge": True, "merge_window_seconds": window},
    )
    before = dict(model.calls)
    moment = START
    try:
        for number in range(turns):
            speaker = str(10001 + number % SPEAKERS)
            group_id = str(30001 + (number // SPEAKERS) % groups)  # each member speaks in every group
            chat = ChatContext(bot_id, Scope("group", group_id), speaker, f"群友{speaker}")
            text = f"QQ号{speaker}（昵称群友{speaker}）在2026-11-30说自己第{number + 1}次尝试做的菜是红烧肉。"
            batch = [InputMessage(f"m{number}", speaker, f"群友{speaker}", text, moment)]
            await engine.turns.end(chat, "", [text], batch=batch, now=moment)
            await engine.jobs.run_until_idle(moment)
            moment += timedelta(seconds=every_seconds)
        await engine.jobs.run_until_idle(moment + timedelta(seconds=window + 1))  # the last window closes
    finally:
        await engine.settle()
        await engine.close()
    return {tool: count - before.get(tool, 0) for tool, count in model.calls.items()}


async def main() -> None:
    from amrita_plugin_cognition.api import ProfileSettings

    args = parse_args(
        __doc__ or "",
        lambda parser: parser.add_argument("--window", type=float, default=None, help="merge window in seconds"),
    )
    window = ProfileSettings().merge_window_seconds if args.window is None else args.window
    turns = 40 if args.quick else 100
    init_engine_only(HOME)
    quiet_cognition_logs()
    model = FakeModel()
    register_loopback_preset(PRESET, model.server.base_url)
    print(f"profile merges — {machine_line()}")
    print(f"{SPEAKERS} speakers in one group, {turns} observation-bearing turns, merge window {window:g} s")
    try:
        for label, every in (("busy (a turn every 6 s)", 6.0), ("slower (a turn every 30 s)", 30.0)):
            calls = await run_group(model, turns, every, f"bench{int(every)}", window)
            merges = calls.get(model.merge_tool, 0) * 100 / turns
            historian = calls.get(model.historian_tool, 0) * 100 / turns
            line = f"{label}: merge calls per 100 turns {merges:.1f}, historian calls per 100 turns {historian:.1f}"
            if every == 6.0:
                line += f": {'OK' if merges < TARGET else 'OVER'} (target < {TARGET:g})"
            print(line)
        print(f"the same {SPEAKERS} members busy in two groups (a turn every 6 s, alternating groups):")
        for policy in ("strict", "open"):
            calls = await run_group(model, turns, 6.0, f"bench2{policy}", window, groups=2, policy=policy)
            merges = calls.get(model.merge_tool, 0) * 100 / turns
            print(f"  {policy}: merge calls per 100 turns {merges:.1f}: {'OK' if merges < TARGET else 'OVER'}")
    finally:
        model.stop()
    print(json.dumps({"turns": turns, "window_seconds": window, "speakers": SPEAKERS}))


HOME = throwaway_home("merges")

if __name__ == "__main__":
    try:
        asyncio.run(main())
    finally:
        remove_home(HOME)
