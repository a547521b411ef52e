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
from amrita_plugin_cognition.cli import demo_cycle_model as cycle_model
from amrita_plugin_cognition.cli.commands import cognition
from amrita_plugin_cognition.cli.demo_card_model import PROFILE_TOOL
from amrita_plugin_cognition.cli.demo_script import (
    NIGHT_CHECK_KINDS,
    FollowedCard,
    ScriptError,
    load_script,
    parse_script,
)
from amrita_plugin_cognition.cli.loopback import chat_preset
from amrita_plugin_cognition.cli.replay_model import HISTORIAN_TOOL, ReplayModel
from amrita_plugin_cognition.domain.gate import check_fact
from amrita_plugin_cognition.domain.profiles import Card, CardLimits
from amrita_plugin_cognition.domain.timeresolve import anchor_hints
from amrita_plugin_cognition.engine import historian, profile_prompt
from amrita_plugin_cognition.llm.agent_types import REFUSED, STOP_TOOL
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
    assert script.night is not None
    return sum(len(turn.checks) for turn in script.turns) + len(script.night.checks)


def test_replay_demo_prints_each_turn_of_the_real_chat_flow(runs: Runs) -> None:
    run = runs.replay
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    lines = run.stdout.splitlines()
    assert re.fullmatch(r"未配置模型：使用内置回放模型（127\.0\.0\.1:\d+），除模型外均为真实代码", lines[0])
    assert "universal-sentence-encoder" in run.stdout and "embedded" in run.stdout
    turns = run.turns()
    assert len(turns) == 23
    # What the bot was asked, which tool ran with which arguments, and what it answered.
    assert "小明（10001）问：我3月10日要去杭州西湖拍日出，有人一起吗？" in turns[1]
    assert f'● cognition_memory_write {{"content": "{GROUP_A_FACT}"' in turns[1]
    assert '→ {"ok": true, "memory_id": 1}' in turns[1]
    # The fact written on day 1 reaches the model two simulated days later, in the same group,
    # stamped with the simulated time it was said, next to the group's pinned memo.
    recalled = Run.context(turns[12])
    assert f"│ - [记忆#1] 2026-03-02 20:05 小明：{GROUP_A_FACT}" in recalled
    assert "人民公园" in recalled
    # Group B never sees group A's fact, nor anyone's private one.
    group_b = [text for text in turns.values() if "群B·羽毛球" in text.splitlines()[0]]
    assert len(group_b) == 4
    for turn in group_b:
        assert "西湖" not in Run.context(turn) and PRIVATE_FACT not in Run.context(turn)
    assert "市体育馆" in Run.context(turns[8])
    # The private chat has its own fact and the pin; after the delete the fact is gone.
    assert PRIVATE_FACT in Run.context(turns[15]) and "交房租" in Run.context(turns[15])
    # forgetting asks first: the fact is still there until the user agrees in the next message
    assert '● cognition_memory_delete {"memory_id": 2}' in turns[16] and '"needs_confirmation": true' in turns[16]
    assert PRIVATE_FACT in Run.context(turns[17])
    assert '● cognition_memory_delete {"memory_id": 2, "confirmed": true}' in turns[17]
    assert '"deleted": 2' in turns[17]
    assert PRIVATE_FACT not in Run.context(turns[18]) and "交房租" in Run.context(turns[18])
    assert "不记得了" in turns[18]
    # The credential was refused, never stored.
    assert '"ok": false' in turns[10] and "Sunny2024abc" not in Run.context(turns[15])
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
    assert "● end {" in turns[13] and '"observations": 2' in turns[13]
    # Not a fact yet during day 3: the historian runs when the day is over.
    assert "雪景" not in Run.context(turns[15])
    section = _historian_section(run.stdout, 3)
    assert "观察改写 · 群A·摄影爱好者（群 20001） · 小明（10001）12:30 的一轮" in section
    assert "观察#1：QQ号10001（昵称小明）昨晚在西湖断桥拍到了雪景" in section
    assert f"时间换算：“昨晚” = {LAST_NIGHT}（周" in section
    assert f"时间换算：“下周六” = {NEXT_SATURDAY}（周六）" in section
    assert f"● [记忆#9] {SNOW_FACT}\n          发生日期 {LAST_NIGHT} · 绝对表述：是" in section
    assert f"● [记忆#10] {TRIP_FACT}\n          发生日期 {NEXT_SATURDAY} · 绝对表述：是" in section
    # Transcript turns that ended without ``end`` become extraction jobs, which the replay
    # model answers with no facts.
    assert "对话记录提取" in _historian_section(run.stdout, 1)
    # A day later, in the same group, the block carries the rewritten facts (the raw note of the
    # turn, with its 昨晚, sits in the notes); the reply quotes the dated one.
    context = Run.context(turns[19])
    assert re.search(rf"│ - \[记忆#9\] {LAST_NIGHT} 小明：{re.escape(SNOW_FACT)}$", context, re.MULTILINE)
    assert f"小明：{TRIP_FACT}" in context
    assert "【本会话最近的笔记】" in context and "小明分享了昨晚在断桥拍的雪景" in context
    assert f"我记得：「{SNOW_FACT}」" in turns[19]
    assert "检查 ✓ 史官把“昨晚”换算成了日期" in turns[19]


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
    assert "小明（10001）的画像（群A·摄影爱好者内可见） · 新事实：记忆#9、#10" in _historian_section(run.stdout, 3)
    # what he said in group B on day 2 grows group B's view of him, never group A's
    assert "小明（10001）的画像（群B·羽毛球内可见） · 新事实：记忆#7" in _historian_section(run.stdout, 2)
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
    assert "群A·摄影爱好者" in turns[20].splitlines()[0] and "小明（10001）问" in turns[20]
    assert "用户 10001 在群 20001 的画像（小明）" in Run.context(turns[20])
    assert "用富士相机拍照" in Run.context(turns[20]) and "羽毛球新手" not in Run.context(turns[20])
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


def _night(stdout: str) -> str:
    """The night's part of the transcript (after the last day, before the end)."""
    found = re.search(r"^━━━━━━━━ 夜间整理 · .*?(?=^━━━━━━━━ 结束)", stdout, re.MULTILINE | re.DOTALL)
    assert found, stdout[-3000:]
    return found.group(0)


#: The night's planted memories (``night`` in the script): the low plan of day 2, 小明's meeting
#: time written twice (one full stop apart), and one how-to said in two wordings by 小红 and 阿强.
AGED = "[记忆#6] 小红（QQ10002）计划 2026-03-03 22:00 在群里发几张夜景练习照。"
MEETING = "西湖拍日出的集合安排：2026-03-10 早上六点在断桥集合"
HOW_TO = "拍星空的做法：相机固定在三脚架上，ISO 3200，快门 15 秒"
#: The tools a careful agent calls in that night, in order (then the stop tool).
CYCLE_TOOLS = [
    "cycle_context",
    "cycle_clusters",
    "cycle_memory_merge",
    "cycle_card_read",
    "cycle_card_update",
    "cycle_knowledge_search",
    "cycle_knowledge_write",
]


def test_replay_demo_runs_one_night_of_consolidation(runs: Runs) -> None:
    """After the last day, at the planner's window for group A: the decay sweep retires the aged
    plan, the cycle's pre-pass merges the exact pair, the model merges the near pair, adds it to
    the group's card and writes it into the knowledge base; every step printed, every check passed."""
    run = runs.replay
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    night = _night(run.stdout)
    assert run.stdout.index("◇ 史官整理（第 4 天结束") < run.stdout.index("━━━━━━━━ 夜间整理")
    # On the simulated clock: the planner's window after the last message (day 4, 20:40, then the buffer).
    head = re.match(r"━━━━━━━━ 夜间整理 · (\d{4}-\d{2}-\d{2} \d{2}:\d{2}) ", night)
    assert head, night[:300]
    last_turn = datetime.fromisoformat(f"{date.fromisoformat(START) + timedelta(days=3)} 20:40")
    assert datetime.fromisoformat(head.group(1)) >= last_turn + timedelta(minutes=15)
    assert "群A·摄影爱好者（群 20001）的下一个空闲窗口（空闲窗口规划器" in night
    assert "由 7 天改为 1 天（中重要度随之为 9.5 天，高重要度 90 天不变）" in night
    # 1. the sweep retires the plan of day 2, and nothing else
    assert "过期 1 条" in night and f"    ● 过期 {AGED}（低重要度，03-03 21:30 写入，已过 1 天的寿命" in night
    assert night.count("● 过期 ") == 1 and "● 降级 " not in night
    # 2. the pre-pass merges the exact pair; each source stays reachable by lineage
    assert f"      ● 合并 [记忆#12]、[记忆#13] → [记忆#15] {MEETING}" in night
    assert "        合并链：#15 ← #12、#13" in night
    assert "相近的记忆 1 组，留给模型判断：#8、#11" in night
    # then the model, round by round, each call with its arguments and the answer it read
    calls = re.findall(r"^      ● (cycle_\w+) (.*)\n        → (.*)$", night, re.MULTILINE)
    assert [name for name, _, _ in calls] == [*CYCLE_TOOLS, STOP_TOOL]
    answers = {name: (arguments, answer) for name, arguments, answer in calls}
    assert "会话：群聊 20001" in answers["cycle_context"][1] and "待判断的近似重复 1 组" in answers["cycle_context"][1]
    assert json.loads(answers["cycle_memory_merge"][0])["ids"] == [8, 11]
    assert answers["cycle_memory_merge"][1].startswith("已合并 #8、#11 → #16")
    card_update = answers["cycle_card_update"][0]
    assert card_update.startswith('{"entity_type": "group", "entity_id": "20001", "expected_version": ')
    assert card_update.endswith("…")  # a long argument is shortened
    assert answers["cycle_card_update"][1].startswith("已更新群 20001")
    assert answers["cycle_knowledge_write"][1] == "已写入知识条目 #1（第 1 版）"
    assert f"      ● 模型合并 → [记忆#16] {HOW_TO}。" in night and "        合并链：#16 ← #8、#11" in night
    assert "模型完成并停止，8 轮" in night and "工具调用 8 次" in night
    assert "    改动：合并 1，画像 1，知识库 1" in night
    assert "    总结：合并相近记忆 #8、#11 → #16；群画像补充了合并后的事实；新建知识条目 #1「拍星空的做法」。" in night
    # the card's change and the entry
    assert f"▣ {GROUP_A_CARD} · 夜间整理：更新（正文 6 条）" in night and f"        ＋ {HOW_TO}" in night
    assert "▤ 知识库条目 #1「拍星空的做法」（第 1 版，公开，依据记忆 #16，由 consolidation:group:20001 写入）" in night
    assert "        - 相机固定在三脚架上\n        - ISO 3200\n        - 快门 15 秒" in night
    assert not any(word in night for word in PRIVATE_WORDS)
    # 3. the night's checks, evaluated on what happened
    script = load_script(ZoneInfo("Asia/Shanghai"), date.fromisoformat(START))
    assert script.night is not None
    assert night.count("  检查 ✓ ") == len(script.night.checks) == 5 and "✗" not in night
    assert "记忆库：有效记忆 10 条（群A·摄影爱好者 8 条，群B·羽毛球 2 条）" in run.stdout


def test_demo_with_a_preset_talks_to_that_model(runs: Runs) -> None:
    run = runs.preset
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    first = run.stdout.splitlines()[0]
    assert first.startswith("使用模型预设「local-test-model」（local-test @ http://127.0.0.1:")
    assert "内置回放模型" not in run.stdout
    assert runs.preset_model_requests > 20
    assert "✗" not in run.stdout and "cognition_memo_update" in run.stdout
    # The historian's calls go to that model too (the chat's preset is the historian's default).
    assert f"● [记忆#9] {SNOW_FACT}" in _historian_section(run.stdout, 3)
    # So do the card merges: the card grows there too.
    assert len(_card_views(run.stdout, MING_CARD)) == 4 and "千岛湖" in _card_views(run.stdout, MING_CARD)[4]
    # And the night: that model's judgement step, its calls shown as it made them.
    night = _night(run.stdout)
    assert "模型判断的工具调用（模型预设）：" in night and "      ● cycle_memory_merge " in night
    assert "内置回放模型" not in night and "  检查 ✓ " in night


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


def _cycle_run(model: ReplayModel, answers: dict[str, str], offered: list[str] | None = None) -> list[tuple[str, dict]]:
    """Drive the replay model through a cycle's rounds: each call it makes is answered from
    ``answers`` (by tool name, as the cycle's tools would), until it calls the stop tool."""
    tools = [{"type": "function", "function": {"name": name}} for name in offered or [*CYCLE_TOOLS, STOP_TOOL]]
    messages: list[dict] = [{"role": "system", "content": "整理员"}, {"role": "user", "content": "开始整理"}]
    made: list[tuple[str, dict]] = []
    for _ in range(12):
        answer = model.answer({"messages": messages, "tools": tools})
        call = answer["tool_calls"][0]
        name, arguments = call["function"]["name"], json.loads(call["function"]["arguments"])
        made.append((name, arguments))
        if name == STOP_TOOL:
            return made
        messages += [answer, {"role": "tool", "tool_call_id": call["id"], "content": answers[name]}]
    raise AssertionError(f"no stop after 12 rounds: {made}")


CONTEXT = "现在：2026-03-05 22:15 周四（Asia/Shanghai）\n会话：群聊 20001\n预整理：没有完全重复；待判断的近似重复 2 组"
CLUSTERS = "\n".join(
    [
        "组1：",
        "  #8 [中] 拍星空的做法：用三脚架固定相机，快门 15 秒。 (标签: 摄影、星空; 2026-03-04)",
        "  #11 [高] 拍星空的做法：相机固定在三脚架上，快门 15 秒。 (标签: 星空、夜景; 2026-03-05)",
        "组2：",
        "  #5 [中] 周四晚上八点打球 (2026-03-03)",
        "  #9 [中] 周四晚上九点打球 (2026-03-04)",
        "（共 2 组，本页第 1-2 组）",
    ]
)
CARD = "群 20001 的画像（版本 v7）\n标签：摄影\n评价：\n常聊摄影。\n正文：\n爱拍日出\n吐槽：\n没什么可吐槽的。"


def test_replay_model_merges_a_pair_doubted_only_for_its_wording_when_its_numbers_agree() -> None:
    """With no near group, only a wording pair in the context, the model still reads the groups and
    merges the pair (the pre-pass found every part the same; the numbers agree)."""
    model = ReplayModel(load_script(ZoneInfo("Asia/Shanghai"), date.fromisoformat(START)))
    wording_only = "待判断的近似重复 0 组，另有可能相同、措辞不同的 1 组（规则存疑）"
    context = CONTEXT.replace("待判断的近似重复 2 组", wording_only)
    clusters = "\n".join(
        [
            "组1（可能相同，措辞不同）：",
            "  #21 [中] 小明每周六在咖啡店兼职做咖啡师。 (2026-03-04)",
            "  #22 [中] 小明每周六在咖啡店打工做咖啡师。 (2026-03-05)",
            "（共 1 组，本页第 1-1 组）",
        ]
    )
    answers = {
        "cycle_context": context.replace("群聊 20001", "私聊 10001"),  # no group card to grow after the merge
        "cycle_clusters": clusters,
        "cycle_memory_merge": "已合并 #21、#22 → #23（来源均已被取代，可追溯）",
    }
    made = _cycle_run(model, answers)
    assert [name for name, _ in made] == ["cycle_context", "cycle_clusters", "cycle_memory_merge", STOP_TOOL]
    assert made[2][1]["ids"] == [21, 22]


def test_replay_model_works_a_cycle_from_the_tool_answers() -> None:
    """The replay model's judgement step is a function of the tool answers the request carries:
    the context, the groups read whole, a merge of the group whose numbers agree (not of the
    other), the card read and then updated with the version read, the how-to searched then
    written, and a stop that says what happened."""
    assert (cycle_model.STOP_TOOL, cycle_model.REFUSED) == (STOP_TOOL, REFUSED)
    model = ReplayModel(load_script(ZoneInfo("Asia/Shanghai"), date.fromisoformat(START)))
    answers = {
        "cycle_context": CONTEXT,
        "cycle_clusters": CLUSTERS,
        "cycle_memory_merge": "已合并 #8、#11 → #16（来源均已被取代，可追溯）",
        "cycle_card_read": CARD,
        "cycle_card_update": "已更新群 20001 的画像（新版本 v8）",
        "cycle_knowledge_search": "#3 夜景的做法 — 用三脚架",
        "cycle_knowledge_write": "已写入知识条目 #4（第 1 版）",
    }
    made = _cycle_run(model, answers)
    assert [name for name, _ in made] == [*CYCLE_TOOLS, STOP_TOOL]
    text = "拍星空的做法：相机固定在三脚架上，快门 15 秒。"
    # the longer wording, the higher importance, every tag; group 2 says 八点 / 九点: left alone
    assert made[2][1] == {"ids": [8, 11], "text": text, "importance": "high", "tags": ["摄影", "星空", "夜景"]}
    assert made[3][1] == {"entity_type": "group", "entity_id": "20001"}
    assert made[4][1] == {
        "entity_type": "group",
        "entity_id": "20001",
        "expected_version": "v7",
        "body": "爱拍日出\n拍星空的做法：相机固定在三脚架上，快门 15 秒",
        "tags": ["摄影", "星空", "夜景"],
        "source_ids": [16],
    }
    assert made[5][1] == {"query": "拍星空的做法", "top_k": 5}
    assert made[6][1] == {
        "title": "拍星空的做法",
        "summary": "相机固定在三脚架上，快门 15 秒。",
        "body": "- 相机固定在三脚架上\n- 快门 15 秒",
        "source_ids": [16],
    }
    assert (
        made[7][1]["summary"]
        == "合并相近记忆 #8、#11 → #16；群画像补充了合并后的事实；新建知识条目 #4「拍星空的做法」。"
    )
    # An entry with that title already: not written twice.
    found = _cycle_run(model, {**answers, "cycle_knowledge_search": "#3 拍星空的做法 — 三脚架"})
    assert "cycle_knowledge_write" not in [name for name, _ in found]
    # A refused merge is an answer: nothing built on it, the stop says so.
    refused = _cycle_run(model, {**answers, "cycle_memory_merge": "拒绝：涉及已选择不被记忆的用户，不能合并"})
    assert [name for name, _ in refused] == ["cycle_context", "cycle_clusters", "cycle_memory_merge", STOP_TOOL]
    assert "cycle_memory_merge 被拒绝（涉及已选择不被记忆的用户" in refused[-1][1]["summary"]
    # A fact that names someone is no general knowledge: the card, but no entry.
    about = CLUSTERS.replace("拍星空的做法：", "QQ号10001（昵称小明）拍星空的做法：")
    named = _cycle_run(model, {**answers, "cycle_clusters": about})
    assert [name for name, _ in named][-3:] == ["cycle_card_read", "cycle_card_update", STOP_TOOL]
    # Nothing near: the context, then the stop; winding down (only the stop offered): the stop at once.
    quiet = _cycle_run(model, {"cycle_context": CONTEXT.replace("近似重复 2 组", "近似重复 0 组")})
    assert [name for name, _ in quiet] == ["cycle_context", STOP_TOOL]
    assert quiet[-1][1]["summary"] == "检查了本会话的记忆，没有需要改动的。"
    assert _cycle_run(model, {}, offered=[STOP_TOOL])[0][0] == STOP_TOOL


def test_script_night_is_checked() -> None:
    script = load_script(ZoneInfo("Asia/Shanghai"), date.fromisoformat(START))
    assert script.night is not None and script.night.chat.key == "group_a" and script.night.short_term_days == 1
    assert [check.kind for check in script.night.checks] == list(NIGHT_CHECK_KINDS)
    data = json.loads((Path(demo.__file__).parent / "demo_conversation.json").read_text(encoding="utf-8"))
    for wrong, message in (
        ({**data["night"], "chat": "private_ming"}, "应为脚本里的群"),
        ({**data["night"], "short_term_days": 0}, "应大于 0"),
        ({**data["night"], "checks": [{"kind": "merged_exact"}]}, "缺少 text"),
        ({**data["night"], "checks": [{"kind": "guessed", "text": "x"}]}, "未知"),
    ):
        with pytest.raises(ScriptError, match=message):
            parse_script({**data, "night": wrong}, ZoneInfo("Asia/Shanghai"))
    assert parse_script({key: value for key, value in data.items() if key != "night"}, ZoneInfo("UTC")).night is None
