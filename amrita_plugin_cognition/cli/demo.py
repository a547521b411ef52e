"""``cognition demo``: the plugin at work in the real Amrita chat flow, turn by turn.

A scripted conversation (``demo_conversation.json``: a group A, a group B and a private chat
over several simulated days) is sent as OneBot V11 events into NoneBot with the OneBot V11
adapter, the Amrita chat plugin and this plugin on embedded defaults (SQLite, embedded Chroma,
the bundled local embedder), all in a throw-away folder. Each event carries its simulated time,
which the plugin takes as the time of the turn, so memories are written on the simulated days.

For every turn the demo prints what the bot was asked, the ``<cognition_memory>`` block of the
system prompt the model received, every tool call with its arguments and JSON result (observed
through Amrita's ``agent.tool_call`` / ``agent.tool_return`` events), the reply the bot sent,
and the script's checks (scope isolation, forgetting, the memo and the pins, facts the
historian wrote) evaluated on what actually happened. After each simulated day the historian
runs at that day's time and its jobs are printed: the observations a turn handed to the ``end``
tool with the time resolver's anchors, and the absolute facts written from them. The card
merges those facts queued then run at the end of their coalescing window (the simulated clock
moves on by ``profiles.merge_window_seconds``; nothing sleeps), and the cards the script follows
(a user's group-visible part, a group's card) are printed with what changed that day. After the
last day comes the night (``demo_night``): at the idle-window planner's window for one group, the
decay sweep, then that group's consolidation cycle (the model-free pre-pass, then the model's
judgement step over the cycle's tools: merges, the group's card, a knowledge entry), each step
printed with the night's own checks. The model is a user's preset (``--preset``) or, by default,
the built-in replay model (``replay_model.py``); everything else is the real code.

The pieces: ``demo_script`` (the scripted conversation), ``demo_adapter`` (the simulated QQ
client and its events), ``demo_recording`` (what a turn showed, and the checks),
``demo_historian`` (the historian driven by hand), ``demo_cards`` (the card merges driven by the
simulated clock), ``demo_night`` (the night's consolidation and its checks), ``demo_printing`` and
``demo_night_printing`` (the transcript), and this module (the model, the run). The replay model's
answers to card merges are ``demo_card_model``'s, to the cycle's rounds ``demo_cycle_model``'s.

Run it as ``python -m amrita_plugin_cognition demo`` (``__main__`` boots NoneBot for it) or as
``ambot cognition demo`` (which starts the former in a subprocess).
"""

from __future__ import annotations

import asyncio
import contextlib
import faulthandler
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from zoneinfo import ZoneInfo

import click

from ..errors import TIMEOUTS
from .demo_adapter import event_payload, simulated_qq_adapter
from .demo_cards import run_merges
from .demo_historian import pause_scheduled_runs, run_historian
from .demo_night import hold_the_night, run_night
from .demo_night_printing import print_night
from .demo_printing import Printer
from .demo_recording import Outcome, Recorder
from .demo_script import DemoScript, ScriptError, load_script
from .loopback import chat_preset
from .model_presets import find_preset_file, preset_search_dirs
from .replay_model import ReplayModel

if TYPE_CHECKING:
    from ..api import CognitionEngine

REPLAY_PRESET = "cognition-demo-replay"
REPLAY_TURN_TIMEOUT = 60.0
MODEL_TURN_TIMEOUT = 300.0
#: Index work a turn scheduled (embedding, Chroma) must be done within this, or the turn says so.
BACKGROUND_TIMEOUT = 150.0
#: The historian's work of one simulated day (every job, its model calls and retries).
HISTORIAN_TIMEOUT = 120.0
MODEL_HISTORIAN_TIMEOUT = 900.0
#: A turn (or the start-up, or the shutdown) that makes no progress for this long prints the
#: stack of every thread to stderr, again every as long, so a stuck run says where it is stuck.
STALL_REPORT_SECONDS = 90.0


class DemoError(RuntimeError):
    """The demo cannot run; the message says why (in Chinese, for the user)."""


# ---------------------------------------------------------------------- the model preset


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """The preset the demo's Amrita uses: the replay model's, or a copy of the user's."""

    name: str
    data: dict[str, Any]
    replay: ReplayModel | None = None

    @property
    def description(self) -> str:
        return f"{self.data.get('model') or '?'} @ {self.data.get('base_url') or '?'}"


def resolve_preset(value: str, search_dirs: list[Path] | None = None) -> Path:
    """A preset JSON file from a path or from a preset name (file stem or ``name`` field)."""
    folders = preset_search_dirs() if search_dirs is None else search_dirs
    found = find_preset_file(value, folders)
    if found is not None:
        return found
    if not folders:
        raise DemoError(
            f"找不到预设 {value}：独立运行时请传入预设 JSON 文件的路径，"
            "或在机器人项目中运行 `ambot cognition demo --preset 预设名`"
        )
    where = "、".join(str(folder) for folder in folders)
    raise DemoError(f"找不到预设 {value}（按文件路径，以及在 {where} 中按名称查找）")


def user_preset(path: Path) -> ModelChoice:
    from amrita_core import ModelPreset

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        ModelPreset.model_validate(data)
    except (OSError, ValueError) as error:
        raise DemoError(f"预设文件 {path} 无法使用：{str(error).splitlines()[0]}") from error
    if not isinstance(data, dict) or not data.get("name"):
        raise DemoError(f"预设文件 {path} 缺少 name 字段")
    return ModelChoice(name=str(data["name"]), data=data)


def replay_preset(script: DemoScript) -> ModelChoice:
    replay = ReplayModel(script).start()
    data = chat_preset(REPLAY_PRESET, REPLAY_PRESET, replay.base_url, "cognition-demo", stream=False)
    return ModelChoice(name=REPLAY_PRESET, data=data, replay=replay)


def write_chat_config(config_dir: Path, choice: ModelChoice) -> None:
    """Amrita's chat configuration for the demo: chat on, the chosen preset, no artificial
    pauses between sentences, no content-review model calls."""
    models = config_dir / "models"
    models.mkdir(parents=True, exist_ok=True)
    (models / f"{choice.name}.json").write_text(json.dumps(choice.data, ensure_ascii=False, indent=2), "utf-8")
    timeout = 20 if choice.replay else 120
    (config_dir / "config.toml").write_text(
        "\n".join(
            [
                "enable = true",
                f"preset = {json.dumps(choice.name, ensure_ascii=False)}",
                "[function]",
                "nature_chat_style = false",
                "[llm.tools]",
                "enable_report = false",
                "[core.llm]",
                "max_retries = 0",
                "max_fallbacks = 1",
                f"llm_timeout = {timeout}",
                "",
            ]
        ),
        encoding="utf-8",
    )


# ---------------------------------------------------------------------- running


async def run_turns(script: DemoScript, choice: ModelChoice, printer: Printer) -> Outcome:
    import nonebot
    from nonebot.adapters.onebot.v11 import Adapter, Bot, MessageEvent

    from .. import runtime
    from ..bot.jobs import wait_for_background

    driver = nonebot.get_driver()
    recorder = Recorder()
    recorder.install()
    outcome = Outcome()
    started = time.perf_counter()
    _report_stalls()
    with contextlib.redirect_stdout(sys.stderr):  # start-up banners of other plugins
        await driver._lifespan.startup()
    try:
        try:
            engine = await runtime.get_engine()
        except runtime.EngineUnavailable as error:
            raise DemoError(f"记忆引擎启动失败：{error}") from error
        pause_scheduled_runs(engine)
        configured_short_term_days = hold_the_night(engine, script.night)
        await engine.jobs.settle()  # the wake-up of the bot's start, if one is still going
        printer.line(
            f"存储：SQLite；向量索引：{engine.vectors.description}；嵌入模型：{engine.embedder.fingerprint.model}"
        )
        qq = simulated_qq_adapter(script)(driver)
        bot = Bot(qq, str(script.bot_id))
        qq.bot_connect(bot)
        timeout = REPLAY_TURN_TIMEOUT if choice.replay else MODEL_TURN_TIMEOUT
        message_ids = itertools.count(50001)
        outcome.startup_seconds = time.perf_counter() - started
        started = time.perf_counter()
        try:
            for index, turn in enumerate(script.turns):
                event = Adapter.json_to_event(event_payload(script, turn, next(message_ids)))
                if not isinstance(event, MessageEvent):
                    raise DemoError(f"第 {turn.number} 轮：OneBot 事件解析失败")
                _report_stalls()
                trace = recorder.begin()
                sent_before = len(qq.sent)
                problem = ""
                try:
                    await asyncio.wait_for(bot.handle_event(event), timeout=timeout)
                except TIMEOUTS:
                    problem = f"本轮超过 {timeout:.0f} 秒没有完成"
                background = await _background_done(wait_for_background(), "本轮的后台索引")
                problem = problem or background
                if trace.system_prompt is None:
                    outcome.unanswered += 1
                received = choice.replay.received_blocks.get(turn.number) if choice.replay else None
                printer.turn(turn, trace, qq.sent[sent_before:], problem, outcome, received)
                following = script.turns[index + 1] if index + 1 < len(script.turns) else None
                if following is None or following.day != turn.day:
                    await _end_of_day(engine, script.moment(turn), printer, outcome, choice)
        finally:
            _report_stalls()
            qq.bot_disconnect(bot)
            with contextlib.suppress(*TIMEOUTS):
                await asyncio.wait_for(wait_for_background(engine), timeout=BACKGROUND_TIMEOUT)
        outcome.conversation_seconds = time.perf_counter() - started
        if script.night is not None:
            started = time.perf_counter()
            timeout = HISTORIAN_TIMEOUT if choice.replay else MODEL_HISTORIAN_TIMEOUT
            night = run_night(engine, script, configured_short_term_days)
            done = await _day_step(printer, outcome, night, timeout, "夜间整理超过 {:.0f} 秒没有完成")
            if done is not None:
                print_night(printer, done, outcome)
            outcome.night_seconds = time.perf_counter() - started
        status = await engine.index.status()
        labels = {f"{chat.kind}:{chat.id}": chat.label for chat in script.chats.values()}
        scopes = "，".join(
            f"{labels.get(scope['scope'], scope['scope'])} {scope['active']} 条" for scope in status["top_scopes"]
        )
        printer.line()
        printer.line("━━━━━━━━ 结束 ━━━━━━━━")
        printer.line(f"记忆库：有效记忆 {status['active_total']} 条" + (f"（{scopes}）" if scopes else ""))
    finally:
        _report_stalls()
        with contextlib.redirect_stdout(sys.stderr):
            await driver._lifespan.shutdown()
    return outcome


async def _background_done(waiting: Awaitable[None], what: str) -> str:
    """'' when the index work finished within ``BACKGROUND_TIMEOUT``, else what did not."""
    try:
        await asyncio.wait_for(waiting, timeout=BACKGROUND_TIMEOUT)
    except TIMEOUTS:
        return f"{what}超过 {BACKGROUND_TIMEOUT:.0f} 秒没有完成"
    return ""


async def _end_of_day(
    engine: CognitionEngine, now: datetime, printer: Printer, outcome: Outcome, choice: ModelChoice
) -> None:
    """The historian at the end of a simulated day, at that day's last turn's time; its facts
    are indexed before the next day begins. Then the card merges its facts queued, at the end of
    their coalescing window in simulated time (``demo_cards``), and the followed cards."""
    from ..bot.jobs import wait_for_background

    timeout = HISTORIAN_TIMEOUT if choice.replay else MODEL_HISTORIAN_TIMEOUT
    run = await _day_step(printer, outcome, run_historian(engine, now), timeout, "史官超过 {:.0f} 秒没有完成当天的任务")
    if run is None:
        return
    printer.historian(run, outcome)
    await _background_step(printer, outcome, wait_for_background(engine), "史官写入的记忆的后台索引")
    merges = run_merges(engine, str(printer.script.bot_id), now, printer.script.cards)
    cards = await _day_step(printer, outcome, merges, timeout, "画像合并超过 {:.0f} 秒没有完成")
    if cards is None:
        return
    printer.cards(cards, outcome)
    await _background_step(printer, outcome, wait_for_background(engine), "画像合并后的后台工作")


T = TypeVar("T")


async def _day_step(printer: Printer, outcome: Outcome, step: Awaitable[T], timeout: float, late: str) -> T | None:
    """One end-of-day step within ``timeout`` (the stall timer restarted first); ``None``, with
    the failure printed and counted, when it does not finish."""
    _report_stalls()
    try:
        return await asyncio.wait_for(step, timeout=timeout)
    except TIMEOUTS:
        printer.line()
        printer.line("  出错：" + late.format(timeout))
        outcome.failed += 1
        return None


async def _background_step(printer: Printer, outcome: Outcome, work: Awaitable[None], what: str) -> None:
    problem = await _background_done(work, what)
    if problem:
        printer.line(f"  出错：{problem}")
        outcome.failed += 1


def _report_stalls() -> None:
    """(Re)start the stall timer: progress pushes it back; a stall dumps every thread's stack."""
    faulthandler.dump_traceback_later(STALL_REPORT_SECONDS, repeat=True, file=sys.stderr)


def _banner(script: DemoScript, choice: ModelChoice, home: Path, keep: bool) -> None:
    if choice.replay is not None:
        click.echo(f"未配置模型：使用内置回放模型（127.0.0.1:{choice.replay.port}），除模型外均为真实代码")
    else:
        click.echo(
            f"使用模型预设「{choice.name}」（{choice.description}）：真实模型不一定按脚本调用记忆工具，检查结果仅供参考"
        )
    first, last = script.turns[0], script.turns[-1]
    click.echo(
        "运行中：NoneBot + OneBot V11 适配器 + Amrita 聊天流程 + 本插件；"
        f"对话由脚本以 OneBot V11 事件送入，共 {len(script.turns)} 轮，"
        f"模拟 {script.days} 天（{script.day_date(first).isoformat()} 至 {script.day_date(last).isoformat()}），"
        "每天结束时按当天的模拟时间运行史官，合并窗口到期后合并画像"
        + (f"；最后一天之后的夜里，在{script.night.chat.label}的空闲窗口做一次夜间整理" if script.night else "")
    )
    click.echo(f"数据目录：{home}" + ("（运行后保留）" if keep else "（运行结束后删除，--keep 可保留）"))


def run_standalone(preset: str | None, start: date | None, keep: bool) -> int:
    """The demo in this process: NoneBot was booted for it by ``__main__`` (driver ~fastapi)."""
    from .. import runtime
    from .runtime import standalone_home, upgrade_database

    home = standalone_home()
    if home is None:
        raise DemoError("demo 需要在独立进程中运行：python -m amrita_plugin_cognition demo")
    zone = ZoneInfo(runtime.plugin_config().timezone)
    choice: ModelChoice | None = None
    try:
        script = load_script(zone, start)
        # Names were resolved by the bot process that started this one; here only paths count
        # (this process's own Amrita model folder is the throw-away one).
        choice = replay_preset(script) if preset is None else user_preset(resolve_preset(preset, search_dirs=[]))
        from amrita.plugins.chat.config import ConfigManager

        write_chat_config(Path(ConfigManager.config_dir), choice)
        _banner(script, choice, home, keep)
        upgrade_database()
        printer = Printer(script, replay=choice.replay is not None)
        outcome = asyncio.run(run_turns(script, choice, printer))
        _report_stalls()  # stays armed until the process ends (see ``__main__._leave``)
        total = outcome.passed + outcome.failed
        click.echo(f"检查：{outcome.passed}/{total} 通过" + (f"，{outcome.failed} 项未通过" if outcome.failed else ""))
        requests = f"，回放模型收到请求 {choice.replay.requests} 次" if choice.replay else ""
        night = f"，夜间整理 {outcome.night_seconds:.1f} 秒" if script.night else ""
        click.echo(
            f"用时：启动 {outcome.startup_seconds:.1f} 秒，对话 {outcome.conversation_seconds:.1f} 秒{night}{requests}"
        )
    finally:
        if choice is not None and choice.replay is not None:
            choice.replay.stop()
        if not keep:
            os.chdir(tempfile.gettempdir())
            shutil.rmtree(home, ignore_errors=True)
    if outcome.unanswered:
        click.echo(f"错误: {outcome.unanswered} 轮没有到达模型", err=True)
        return 1
    if outcome.failed and choice.replay is not None:
        return 1
    return 0


def run_in_subprocess(preset: str | None, start: date | None, keep: bool) -> int:
    """Under ``ambot``: the bot's NoneBot is already initialised, so the demo gets a process of
    its own (a preset name is resolved here, against the bot's Amrita model folder)."""
    args = [sys.executable, "-m", "amrita_plugin_cognition", "demo"]
    if preset is not None:
        args += ["--preset", str(resolve_preset(preset))]
    if start is not None:
        args += ["--start", start.isoformat()]
    if keep:
        args.append("--keep")
    return subprocess.call(args)


def main(preset: str | None, start: date | None, keep: bool) -> int:
    try:
        return run_standalone(preset, start, keep)
    except (DemoError, ScriptError) as error:
        click.echo(f"错误: {error}", err=True)
        return 1
