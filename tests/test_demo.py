"""``cognition demo`` as a user runs it: a fresh process, the real chat flow, its transcript.

Both runs (the built-in replay model, and ``--preset`` pointing at a model on 127.0.0.1) start
together in a module fixture, so the suite waits for them once.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from click.testing import CliRunner

from amrita_plugin_cognition.cli import demo
from amrita_plugin_cognition.cli.commands import cognition
from amrita_plugin_cognition.cli.demo_script import load_script
from amrita_plugin_cognition.cli.loopback import chat_preset
from amrita_plugin_cognition.cli.replay_model import HISTORIAN_TOOL, ReplayModel
from amrita_plugin_cognition.domain.gate import check_fact
from amrita_plugin_cognition.domain.timeresolve import anchor_hints
from amrita_plugin_cognition.engine import historian
from amrita_plugin_cognition.llm.prompts import default_templates

# The demo is the chat flow on the embedded defaults; the server backend run skips it.
pytestmark = pytest.mark.chatflow

START = "2026-03-02"
GROUP_A_FACT = "小明（QQ10001）计划 2026-03-10 去杭州西湖拍日出。"
PRIVATE_FACT = "跳槽去字节跳动"
#: Day 3 (START + 2 days) in group A: 小明 says 昨晚 (START + 1) and 下周六 (the Saturday of the
#: week after day 3's); the historian rewrites both at the end of day 3.
DAY_3 = date.fromisoformat(START) + timedelta(days=2)
LAST_NIGHT = (DAY_3 - timedelta(days=1)).isoformat()
NEXT_SATURDAY = (DAY_3 + timedelta(days=7 - DAY_3.weekday() + 5)).isoformat()
SNOW_FACT = f"QQ号10001（昵称小明）{LAST_NIGHT}晚上在西湖断桥拍到了雪景"
TRIP_FACT = f"QQ号10001（昵称小明）约群友{NEXT_SATURDAY}去千岛湖拍星空"


def _environment() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("COGNITION_")}
    return {**env, "ANONYMIZED_TELEMETRY": "False", "PYTHONIOENCODING": "utf-8"}


def _start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "amrita_plugin_cognition", "demo", "--start", START, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        env=_environment(),
    )


class Run:
    def __init__(self, process: subprocess.Popen[str]) -> None:
        try:
            self.stdout, self.stderr = process.communicate(timeout=600)  # ~25 s idle; generous for loaded CI
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
            # The demo prints every thread's stack after 90 s without progress: show where it stuck.
            pytest.fail(f"demo still running after 600 s\n--- stdout\n{stdout[-4000:]}\n--- stderr\n{stderr[-12000:]}")
        self.returncode = process.returncode

    def turns(self) -> dict[int, str]:
        """Turn number -> that turn's part of the transcript."""
        parts = re.split(r"^▶ 第 (\d+) 轮", self.stdout, flags=re.MULTILINE)
        return {int(number): text for number, text in zip(parts[1::2], parts[2::2], strict=True)}

    @staticmethod
    def context(turn: str) -> str:
        return "\n".join(line for line in turn.splitlines() if line.strip().startswith("│"))


@dataclass
class Runs:
    replay: Run
    preset: Run
    #: Requests the "user's model" of the --preset run received.
    preset_model_requests: int


#: "The user's model" for --preset, in a process of its own as a real one would be: nothing the
#: test process holds (threads and indexes of earlier tests) can slow its answers. It prints its
#: base URL, serves until its stdin closes, then prints how many requests it answered.
USER_MODEL = """
import sys
from datetime import date
from zoneinfo import ZoneInfo
from amrita_plugin_cognition.cli.demo_script import load_script
from amrita_plugin_cognition.cli.replay_model import ReplayModel
model = ReplayModel(load_script(ZoneInfo("Asia/Shanghai"), date.fromisoformat(sys.argv[1]))).start()
print(model.base_url, flush=True)
sys.stdin.read()
model.stop()
print(model.requests, flush=True)
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    model = subprocess.Popen(
        [sys.executable, "-c", USER_MODEL, START], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert model.stdin is not None and model.stdout is not None
    try:
        base_url = model.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:"), base_url
        preset = tmp_path_factory.mktemp("preset") / "local-model.json"
        preset.write_text(
            json.dumps(chat_preset("local-test-model", "local-test", base_url, "sk-local", stream=True)),
            encoding="utf-8",
        )
        # One demo at a time: two at once on a 2-core machine made both slow enough to time out once.
        results: dict[str, Run] = {}
        for name, args in (("replay", ()), ("preset", ("--preset", str(preset)))):
            process = _start(*args)
            try:
                results[name] = Run(process)
            finally:
                if process.poll() is None:
                    process.kill()
        model.stdin.close()
        requests = int(model.stdout.readline() or 0)
        yield Runs(results["replay"], results["preset"], requests)
    finally:
        if model.poll() is None:
            model.kill()


def _historian_section(stdout: str, day: int) -> str:
    """The historian's part of the transcript at the end of simulated day ``day``."""
    found = re.search(rf"^  ◇ 史官整理（第 {day} 天结束.*?(?=^━━━━━━━━ )", stdout, re.MULTILINE | re.DOTALL)
    assert found, stdout[-3000:]
    return found.group(0)


def _check_count() -> int:
    script = load_script(ZoneInfo("Asia/Shanghai"), date.fromisoformat(START))
    return sum(len(turn.checks) for turn in script.turns)


def test_replay_demo_prints_each_turn_of_the_real_chat_flow(runs: Runs) -> None:
    run = runs.replay
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    lines = run.stdout.splitlines()
    assert re.fullmatch(r"未配置模型：使用内置回放模型（127\.0\.0\.1:\d+），除模型外均为真实代码", lines[0])
    assert "universal-sentence-encoder" in run.stdout and "embedded" in run.stdout
    turns = run.turns()
    assert len(turns) == 15
    # What the bot was asked, which tool ran with which arguments, and what it answered.
    assert "小明（10001）问：我3月10日要去杭州西湖拍日出，有人一起吗？" in turns[1]
    assert f'● cognition_memory_write {{"content": "{GROUP_A_FACT}"' in turns[1]
    assert '→ {"ok": true, "memory_id": 1}' in turns[1]
    # The fact written on day 1 reaches the model two simulated days later, in the same group,
    # stamped with the simulated time it was said, next to the group's pinned memo.
    recalled = Run.context(turns[9])
    assert f"│ - [记忆#1] 2026-03-02 20:05 小明：{GROUP_A_FACT}" in recalled
    assert "人民公园" in recalled
    # Group B never sees group A's fact, nor anyone's private one.
    group_b = [text for text in turns.values() if "群B·羽毛球" in text.splitlines()[0]]
    assert len(group_b) == 3
    for turn in group_b:
        assert "西湖" not in Run.context(turn) and PRIVATE_FACT not in Run.context(turn)
    assert "市体育馆" in Run.context(turns[7])
    # The private chat has its own fact and the pin; after the delete the fact is gone.
    assert PRIVATE_FACT in Run.context(turns[11]) and "交房租" in Run.context(turns[11])
    # forgetting asks first: the fact is still there until the user agrees in the next message
    assert '● cognition_memory_delete {"memory_id": 2}' in turns[12] and '"needs_confirmation": true' in turns[12]
    assert PRIVATE_FACT in Run.context(turns[13])
    assert '● cognition_memory_delete {"memory_id": 2, "confirmed": true}' in turns[13]
    assert '"deleted": 2' in turns[13]
    assert PRIVATE_FACT not in Run.context(turns[14]) and "交房租" in Run.context(turns[14])
    assert "不记得了" in turns[14]
    # The credential was refused, never stored.
    assert '"ok": false' in turns[8] and "Sunny2024abc" not in Run.context(turns[11])
    total = _check_count()
    assert "✗" not in run.stdout and f"检查：{total}/{total} 通过" in run.stdout
    home = re.search(r"^数据目录：(\S+?)（", run.stdout, re.MULTILINE)
    assert home and not Path(home.group(1)).exists()  # the throw-away folder is gone


def test_replay_demo_shows_the_historian_rewriting_observations(runs: Runs) -> None:
    """Day 3: the model hands observations with 昨晚 / 下周六 to ``end``; at the end of the day
    the historian rewrites them into facts with dates; on day 4 the group's block has them."""
    run = runs.replay
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    turns = run.turns()
    assert "● end {" in turns[10] and '"observations": 2' in turns[10]
    # Not a fact yet during day 3: the historian runs when the day is over.
    assert "雪景" not in Run.context(turns[11])
    section = _historian_section(run.stdout, 3)
    assert "观察改写 · 群A·摄影爱好者（群 20001） · 小明（10001）12:30 的一轮" in section
    assert "观察#1：QQ号10001（昵称小明）昨晚在西湖断桥拍到了雪景" in section
    assert f"时间换算：“昨晚” = {LAST_NIGHT}（周" in section
    assert f"时间换算：“下周六” = {NEXT_SATURDAY}（周六）" in section
    assert f"● [记忆#4] {SNOW_FACT}\n          发生日期 {LAST_NIGHT} · 绝对表述：是" in section
    assert f"● [记忆#5] {TRIP_FACT}\n          发生日期 {NEXT_SATURDAY} · 绝对表述：是" in section
    # Transcript turns that ended without ``end`` become extraction jobs, which the replay
    # model answers with no facts.
    assert "对话记录提取" in _historian_section(run.stdout, 1)
    # A day later, in the same group, the block carries the rewritten facts (the raw note of the
    # turn, with its 昨晚, sits in the notes); the reply quotes the dated one.
    context = Run.context(turns[15])
    assert re.search(rf"│ - \[记忆#4\] {LAST_NIGHT} 小明：{re.escape(SNOW_FACT)}$", context, re.MULTILINE)
    assert f"小明：{TRIP_FACT}" in context
    assert "【本会话最近的笔记】" in context and "小明分享了昨晚在断桥拍的雪景" in context
    assert f"我记得：「{SNOW_FACT}」" in turns[15]
    assert "检查 ✓ 史官把“昨晚”换算成了日期" in turns[15]


def test_demo_with_a_preset_talks_to_that_model(runs: Runs) -> None:
    run = runs.preset
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    first = run.stdout.splitlines()[0]
    assert first.startswith("使用模型预设「local-test-model」（local-test @ http://127.0.0.1:")
    assert "内置回放模型" not in run.stdout
    assert runs.preset_model_requests > 20
    assert "✗" not in run.stdout and "cognition_memo_update" in run.stdout
    # The historian's calls go to that model too (the chat's preset is the historian's default).
    assert f"● [记忆#4] {SNOW_FACT}" in _historian_section(run.stdout, 3)


def test_demo_under_a_bot_runs_in_a_process_of_its_own(monkeypatch: pytest.MonkeyPatch, tmp_root: Path) -> None:
    """Under ambot (NoneBot already up on the bot's database) the demo is a subprocess; a preset
    name is resolved against the bot's Amrita model folder first."""
    calls: list[list[str]] = []
    monkeypatch.setattr(demo.subprocess, "call", lambda args: calls.append(args) or 0)
    runner = CliRunner()
    result = runner.invoke(cognition, ["demo", "--preset", "fake", "--start", START, "--keep"])
    assert result.exit_code == 0, result.output
    preset = tmp_root / "config" / "chat" / "models" / "fake.json"
    demo_args = ["demo", "--preset", str(preset.resolve()), "--start", START, "--keep"]
    assert calls == [[sys.executable, "-m", "amrita_plugin_cognition", *demo_args]]
    result = runner.invoke(cognition, ["demo", "--preset", "no-such-preset"])
    assert result.exit_code == 1 and "找不到预设 no-such-preset" in result.output
    assert len(calls) == 1


def test_replay_model_answers_from_what_the_request_carries() -> None:
    """The replay model is a function of the request: the turn from the last user message, the
    step from the tool results after it, memory-dependent answers from the block and results."""
    script = load_script(ZoneInfo("Asia/Shanghai"), date.fromisoformat(START))
    model = ReplayModel(script)  # answered in-process, never started
    delete_turn = next(turn for turn in script.turns if turn.steps and turn.steps[-1].tool == "cognition_memory_delete")
    user = {"role": "user", "content": f"[普通成员][时间][小明（10001）]说:{script.said(delete_turn)}"}
    system = {"role": "system", "content": "人设……"}
    tools = [{"type": "function", "function": {"name": "cognition_memory_read"}}]
    first = model.answer({"messages": [system, user], "tools": tools})
    assert first["tool_calls"][0]["function"]["name"] == "cognition_memory_read"
    found = {"ok": True, "memories": [{"memory_id": 7, "content": "小明（QQ10001）正在准备跳槽去字节跳动。"}]}
    call = {"role": "assistant", "content": None, "tool_calls": first["tool_calls"]}
    result = {"role": "tool", "content": json.dumps(found, ensure_ascii=False)}
    second = model.answer({"messages": [system, user, call, result], "tools": tools})
    assert json.loads(second["tool_calls"][0]["function"]["arguments"]) == {"memory_id": 7}
    # Nothing to delete in what the model received: it says so instead of inventing an id.
    empty = {"role": "tool", "content": json.dumps({"ok": True, "memories": []})}
    assert "没有含“跳槽”" in model.answer({"messages": [system, user, call, empty], "tools": tools})["content"]
    # The question after the delete: the reply follows the memory the request carries.
    ask = next(turn for turn in script.turns if turn.reply.if_memory == "字节跳动")
    question = {"role": "user", "content": script.said(ask)}
    memory = "- [记忆#7] 2026-03-02 22:30 小明：小明（QQ10001）正在准备跳槽去字节跳动。"
    block = f"<cognition_memory>\n{memory}\n</cognition_memory>"
    remembered = model.answer({"messages": [{"role": "system", "content": block}, question]})
    assert "字节跳动" in remembered["content"]
    assert "不记得了" in model.answer({"messages": [system, question]})["content"]
    assert "脚本里没有这句话" in model.answer({"messages": [{"role": "user", "content": "随便聊聊"}]})["content"]


def test_replay_model_rewrites_observations_for_the_historian() -> None:
    """A request offering the historian's function gets one fact per observation: relative
    times replaced by the prompt's anchors, 我/我们 by the speaker; extraction gets none."""
    assert HISTORIAN_TOOL == historian.TOOL_NAME
    script = load_script(ZoneInfo("Asia/Shanghai"), date.fromisoformat(START))
    model = ReplayModel(script)
    said = datetime(2026, 3, 4, 12, 30, tzinfo=ZoneInfo("Asia/Shanghai"))
    texts = ["QQ号10001（昵称小明）昨晚在西湖边拍到了日出", "下周六我们去千岛湖", "QQ号10002（昵称小红）喜欢拍星空"]
    observations = [
        {
            "id": number,
            "when": "2026-03-04 12:30 星期三",
            "speaker": "QQ号10001（昵称小明）",
            "text": text,
            "hints": anchor_hints(text, said),
            "ids": [],
        }
        for number, text in enumerate(texts, start=1)
    ]
    context = {
        "tool_name": historian.TOOL_NAME,
        "now": "2026-03-04 21:00 星期三 (Asia/Shanghai)",
        "chat": "QQ群20001",
        "perspective": "",
        "messages": [{"when": "2026-03-04 12:30 星期三", "speaker": "QQ号10001（昵称小明）", "text": "随便聊聊"}],
        "feedback": [],
        "previous": [],
        "observations": observations,
    }
    prompt = default_templates().render(historian.REWRITE_TEMPLATE, context)
    tools = [{"type": "function", "function": {"name": historian.TOOL_NAME}}]
    messages = [{"role": "system", "content": prompt.system}, {"role": "user", "content": prompt.user}]
    answer = model.answer({"messages": messages, "tools": tools})
    call = answer["tool_calls"][0]["function"]
    assert call["name"] == historian.TOOL_NAME
    facts = historian.RewriteAnswer.model_validate_json(call["arguments"]).facts
    assert [(fact.text, fact.sources, fact.happened_on, fact.kind) for fact in facts] == [
        ("QQ号10001（昵称小明）2026-03-03晚上在西湖边拍到了日出", [1], "2026-03-03", "event"),
        ("2026-03-14QQ号10001（昵称小明）等人去千岛湖", [2], "2026-03-14", "plan"),
        ("QQ号10002（昵称小红）喜欢拍星空", [3], "", "fact"),
    ]
    assert [fact.subject_id for fact in facts] == ["10001", "10001", "10002"]
    assert all(check_fact(fact.text).ok for fact in facts)
    extraction = default_templates().render(
        historian.EXTRACT_TEMPLATE,
        {**context, "bot": "机器人", "turns": [{**observations[0], "reply": "好"}], "observations": []},
    )
    user = {"role": "user", "content": extraction.user}
    answer = model.answer({"messages": [user], "tools": tools})
    assert json.loads(answer["tool_calls"][0]["function"]["arguments"]) == {"facts": []}
