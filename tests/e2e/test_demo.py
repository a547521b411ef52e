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
from amrita_plugin_cognition.cli.demo_card_model import PROFILE_TOOL
from amrita_plugin_cognition.cli.demo_script import FollowedCard, ScriptError, load_script, parse_script
from amrita_plugin_cognition.cli.loopback import chat_preset
from amrita_plugin_cognition.cli.replay_model import HISTORIAN_TOOL, ReplayModel
from amrita_plugin_cognition.domain.gate import check_fact
from amrita_plugin_cognition.domain.profiles import Card, CardLimits
from amrita_plugin_cognition.domain.timeresolve import anchor_hints
from amrita_plugin_cognition.engine import historian, profile_prompt
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
from amrita_plugin_cognition.cli.demo_card_model import PROFILE_TOOL
from amrita_plugin_cognition.cli.demo_script import FollowedCard, ScriptError, load_script, parse_script
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


MING_CARD = "小明（10001）在群A·摄影爱好者的画像"
GROUP_A_CARD = "群A·摄影爱好者（群 20001）的画像"
#: What 小明 said only in his private chat (or had refused): never on a card shown in groups.
PRIVATE_WORDS = ("跳槽", "字节跳动", "交房租", "Sunny2024abc")


def _card_views(stdout: str, title: str) -> dict[int, str]:
    """Simulated day -> the card's view printed after that day's merges (its header and lines)."""
    views: dict[int, str] = {}
    lines = stdout.splitlines()
    for index, line in enumerate(lines):
        head = re.fullmatch(rf"  ▣ {re.escape(title)} · 第 (\d+) 天：.*", line)
        if head is None:
            continue
        block = [line]
        for following in lines[index + 1 :]:
            if not following.startswith("      "):
                break
            block.append(following)
        views[int(head.group(1))] = "\n".join(block)
    return views


def _body(view: str) -> list[str]:
    """The body lines of a card view (＋ new today, · kept)."""
    return re.findall(r"^        [＋·] (.+)$", view, re.MULTILINE)


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
    assert len(turns) == 18
    # What the bot was asked, which tool ran with which arguments, and what it answered.
    assert "小明（10001）问：我3月10日要去杭州西湖拍日出，有人一起吗？" in turns[1]
    assert f'● cognition_memory_write {{"content": "{GROUP_A_FACT}"' in turns[1]
    assert '→ {"ok": true, "memory_id": 1}' in turns[1]
    # The fact written on day 1 reaches the model two simulated days later, in the same group,
    # stamped with the simulated time it was said, next to the group's pinned memo.
    recalled = Run.context(turns[11])
    assert f"│ - [记忆#1] 2026-03-02 20:05 小明：{GROUP_A_FACT}" in recalled
    assert "人民公园" in recalled
    # Group B never sees group A's fact, nor anyone's private one.
    group_b = [text for text in turns.values() if "群B·羽毛球" in text.splitlines()[0]]
    assert len(group_b) == 4
    for turn in group_b:
        assert "西湖" not in Run.context(turn) and PRIVATE_FACT not in Run.context(turn)
    assert "市体育馆" in Run.context(turns[8])
    # The private chat has its own fact and the pin; after the delete the fact is gone.
    assert PRIVATE_FACT in Run.context(turns[13]) and "交房租" in Run.context(turns[13])
    # forgetting asks first: the fact is still there until the user agrees in the next message
    assert '● cognition_memory_delete {"memory_id": 2}' in turns[14] and '"needs_confirmation": true' in turns[14]
    assert PRIVATE_FACT in Run.context(turns[15])
    assert '● cognition_memory_delete {"memory_id": 2, "confirmed": true}' in turns[15]
    assert '"deleted": 2' in turns[15]
    assert PRIVATE_FACT not in Run.context(turns[16]) and "交房租" in Run.context(turns[16])
    assert "不记得了" in turns[16]
    # The credential was refused, never stored.
    assert '"ok": false' in turns[10] and "Sunny2024abc" not in Run.context(turns[13])
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
    assert "● end {" in turns[12] and '"observations": 2' in turns[12]
    # Not a fact yet during day 3: the historian runs when the day is over.
    assert "雪景" not in Run.context(turns[13])
    section = _historian_section(run.stdout, 3)
    assert "观察改写 · 群A·摄影爱好者（群 20001） · 小明（10001）12:30 的一轮" in section
    assert "观察#1：QQ号10001（昵称小明）昨晚在西湖断桥拍到了雪景" in section
    assert f"时间换算：“昨晚” = {LAST_NIGHT}（周" in section
    assert f"时间换算：“下周六” = {NEXT_SATURDAY}（周六）" in section
    assert f"● [记忆#7] {SNOW_FACT}\n          发生日期 {LAST_NIGHT} · 绝对表述：是" in section
    assert f"● [记忆#8] {TRIP_FACT}\n          发生日期 {NEXT_SATURDAY} · 绝对表述：是" in section
    # Transcript turns that ended without ``end`` become extraction jobs, which the replay
    # model answers with no facts.
    assert "对话记录提取" in _historian_section(run.stdout, 1)
    # A day later, in the same group, the block carries the rewritten facts (the raw note of the
    # turn, with its 昨晚, sits in the notes); the reply quotes the dated one.
    context = Run.context(turns[17])
    assert re.search(rf"│ - \[记忆#7\] {LAST_NIGHT} 小明：{re.escape(SNOW_FACT)}$", context, re.MULTILINE)
    assert f"小明：{TRIP_FACT}" in context
    assert "【本会话最近的笔记】" in context and "小明分享了昨晚在断桥拍的雪景" in context
    assert f"我记得：「{SNOW_FACT}」" in turns[17]
    assert "检查 ✓ 史官把“昨晚”换算成了日期" in turns[17]


def test_replay_demo_shows_a_card_growing_day_by_day(runs: Runs) -> None:
    """After each simulated day the facts the historian wrote are merged into 小明's card (and
    the group's) by the real merge at the end of the coalescing window, in simulated time; the
    card printed then grows, new lines marked, and names what later days taught."""
    run = runs.replay
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    # The window (600 s) is run out on the simulated clock: day 1's historian ran at 22:33.
    day_1 = _historian_section(run.stdout, 1)
    assert "合并窗口 600 秒，模拟时间 2026-03-02 22:43 到期后运行，共 2 个合并任务" in day_1
    assert "◆ 合并任务" in day_1 and "小明（10001）的画像（群A·摄影爱好者内可见） · 新事实：记忆#3、#4" in day_1
    assert "群A·摄影爱好者（群 20001）的画像 · 新事实：记忆#3、#4" in day_1
    # Day 3's two observations of one turn make one merge per card, not one per fact.
    assert "小明（10001）的画像（群A·摄影爱好者内可见） · 新事实：记忆#7、#8" in _historian_section(run.stdout, 3)
    # what he said in group B on day 2 grows group B's view of him, never group A's
    assert "小明（10001）的画像（群B·羽毛球内可见） · 新事实：记忆#6" in _historian_section(run.stdout, 2)
    cards = _card_views(run.stdout, MING_CARD)
    assert sorted(cards) == [1, 2, 3, 4], run.stdout[-3000:]
    assert "第 1 天：新建" in cards[1] and "第 2 天：没有变化" in cards[2]
    assert all("：更新" in cards[day] for day in (3, 4))
    bodies = {day: _body(view) for day, view in cards.items() if day != 2}  # day 2: no change, no lines
    assert bodies[1] == ["是风光摄影爱好者，最爱拍日出", "用富士相机拍照"]
    assert [len(bodies[day]) for day in (1, 3, 4)] == [2, 4, 5] and "（正文 2 条）" in cards[2]
    for day, before in ((3, 1), (4, 3)):  # every update keeps what the card said, and adds its own lines
        assert bodies[day][: len(bodies[before])] == bodies[before]
    assert not any("羽毛球" in view for view in cards.values())  # said in group B on day 2
    assert f"        ＋ 约群友{NEXT_SATURDAY}去千岛湖拍星空" in cards[3]
    assert "        ＋ 有两支三脚架，可以借给去千岛湖拍星空的群友" in cards[4]
    assert "        · 用富士相机拍照" in cards[4]
    assert "千岛湖" not in cards[1] and "三脚架" in cards[4]
    assert "评价：小明，常聊摄影。" in cards[1] and "（更新）" in cards[4]
    assert "标签：摄影、出游" in cards[4]
    # The group's card grows only on the days its own chat taught something.
    group = _card_views(run.stdout, GROUP_A_CARD)
    assert "第 1 天：新建（正文 2 条）" in group[1] and "第 2 天：没有变化（正文 2 条）" in group[2]
    assert "        ＋ 小明有两支三脚架，可以借给去千岛湖拍星空的群友" in group[4]
    assert "羽毛球" not in group[4]  # group B's facts stay out of group A's card
    # The card is injected where it belongs (strict, the default: a group sees only what its own
    # facts built): group A's view of 小明 in group A, never in group B (on day 2 group B has no
    # card of him yet), never when someone else speaks.
    turns = run.turns()
    assert "群B·羽毛球" in turns[8].splitlines()[0] and "小明（10001）问" in turns[8]
    assert "用户 10001" not in Run.context(turns[8]) and "风光摄影" not in Run.context(turns[8])
    assert "群A·摄影爱好者" in turns[18].splitlines()[0] and "小明（10001）问" in turns[18]
    assert "用户 10001 在群 20001 的画像（小明）" in Run.context(turns[18])
    assert "用富士相机拍照" in Run.context(turns[18]) and "羽毛球新手" not in Run.context(turns[18])
    assert "用户 10001" not in Run.context(turns[7])  # 阿强 speaks: not 小明's card


def test_replay_demo_cards_never_show_private_facts(runs: Runs) -> None:
    """The private chat's fact (and the refused credential, and the private pin) never reach a
    card shown in groups: not in any printed view, not among its source memories, not in a
    group's block that carries 小明's card."""
    run = runs.replay
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    views = [*_card_views(run.stdout, MING_CARD).values(), *_card_views(run.stdout, GROUP_A_CARD).values()]
    assert len(views) == 8
    for view in views:
        assert not any(word in view for word in PRIVATE_WORDS), view
        sources = re.search(r"依据记忆 (.+)$", view, re.MULTILINE)
        assert sources is None or "#2、" not in sources.group(1) + "、"  # memory #2: the private fact
    for turn in run.turns().values():
        if "群" in turn.splitlines()[0] and "用户 10001 在群" in Run.context(turn):
            assert not any(word in Run.context(turn) for word in PRIVATE_WORDS)


def test_demo_with_a_preset_talks_to_that_model(runs: Runs) -> None:
    run = runs.preset
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    first = run.stdout.splitlines()[0]
    assert first.startswith("使用模型预设「local-test-model」（local-test @ http://127.0.0.1:")
    assert "内置回放模型" not in run.stdout
    assert runs.preset_model_requests > 20
    assert "✗" not in run.stdout and "cognition_memo_update" in run.stdout
    # The historian's calls go to that model too (the chat's preset is the historian's default).
    assert f"● [记忆#7] {SNOW_FACT}" in _historian_section(run.stdout, 3)
    # So do the card merges: the card grows there too.
    assert len(_card_views(run.stdout, MING_CARD)) == 4 and "千岛湖" in _card_views(run.stdout, MING_CARD)[4]


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


def _merge_request(card: dict[str, object] | None, observations: list[str], facts: list[str]) -> dict[str, object]:
    """A card merge's request as the engine sends it (the real template)."""
    context = {
        "tool_name": profile_prompt.TOOL_NAME,
        "now": "2026-03-04 21:10 星期三 (Asia/Shanghai)",
        "entity_type": "user",
        "entity_id": "10001",
        "who": profile_prompt.who("user", "10001"),
        "part": "group",
        "visibility": "这部分卡片会在群聊中展示，只能写该用户在群里表现出来的内容。",
        "card": card,
        "observations": observations,
        "facts": [
            {"id": number, "when": "2026-03-02 20:05 星期一", "text": text} for number, text in enumerate(facts, 1)
        ],
        "limits": {"evaluation": 200, "body": 800, "roast": 80},
        "feedback": [],
        "rebuild": False,
    }
    prompt = default_templates().render(profile_prompt.TEMPLATE, context)
    return {
        "messages": [{"role": "system", "content": prompt.system}, {"role": "user", "content": prompt.user}],
        "tools": [{"type": "function", "function": {"name": profile_prompt.TOOL_NAME}}],
    }


def test_replay_model_writes_cards_from_what_the_merge_sends() -> None:
    """The replay model's card is a function of the merge's request: the current card's lines
    kept, one line per new observation added, nothing the request does not carry."""
    assert PROFILE_TOOL == profile_prompt.TOOL_NAME
    model = ReplayModel(load_script(ZoneInfo("Asia/Shanghai"), date.fromisoformat(START)))
    hobby = "QQ号10001（昵称小明）是风光摄影爱好者，最爱拍日出"
    first = model.answer(_merge_request(None, [hobby], ["小明（QQ10001）计划去西湖拍日出。"]))
    call = first["tool_calls"][0]["function"]
    assert call["name"] == profile_prompt.TOOL_NAME
    answer = profile_prompt.ProfileAnswer.model_validate_json(call["arguments"])
    assert (answer.action, answer.entity_type, answer.entity_id) == ("update_profile", "user", "10001")
    assert answer.name == "小明"
    assert answer.body == "是风光摄影爱好者，最爱拍日出"
    assert "西湖" not in answer.body  # a past fact is context, not news
    base = Card("900001", "user", "10001", "group")
    card, problems = profile_prompt.candidate(answer, base, CardLimits())
    assert card is not None and not problems
    current = {
        "name": card.name,
        "tags": card.tags,
        "evaluation": card.evaluation,
        "body": card.body,
        "roast": card.roast,
        "updated_at": "2026-03-02 22:43 星期一",
    }
    # Different observations, a different card: the answer follows the request.
    grown = model.answer(_merge_request(current, ["QQ号10001（昵称小明）是羽毛球新手，想跟群友一起打球"], []))
    second = profile_prompt.ProfileAnswer.model_validate_json(grown["tool_calls"][0]["function"]["arguments"])
    assert second.body.splitlines() == ["是风光摄影爱好者，最爱拍日出", "是羽毛球新手，想跟群友一起打球"]
    assert second.tags == ["摄影", "羽毛球"] and "羽毛球" in second.evaluation and second.roast != answer.roast
    # Nothing new: skip.
    again = model.answer(_merge_request(current, [hobby], []))
    assert json.loads(again["tool_calls"][0]["function"]["arguments"])["action"] == "skip"


def test_script_names_the_cards_the_demo_follows() -> None:
    script = load_script(ZoneInfo("Asia/Shanghai"), date.fromisoformat(START))
    assert [(card.entity_type, card.entity_id, card.chat_id, card.title) for card in script.cards] == [
        ("user", "10001", "20001", MING_CARD),
        ("group", "20001", "", GROUP_A_CARD),
    ]
    assert isinstance(script.cards[0], FollowedCard) and script.cards[0].note
    data = json.loads((Path(demo.__file__).parent / "demo_conversation.json").read_text(encoding="utf-8"))
    for wrong, message in (
        ({"user": 99999}, "未定义的用户"),
        ({"user": 10001}, "在哪个群里看"),
        ({"user": 10001, "chat": "private_ming"}, "在哪个群里看"),
        ({"chat": "private_ming"}, "不是脚本里的群"),
        ({}, "需要"),
    ):
        with pytest.raises(ScriptError, match=message):
            parse_script({**data, "cards": [wrong]}, ZoneInfo("Asia/Shanghai"))
