"""``cognition demo``: the plugin at work in the real Amrita chat flow, turn by turn.

A scripted conversation (``demo_conversation.json``: a group A, a group B and a private chat
over several simulated days) is sent as OneBot V11 events into NoneBot with the OneBot V11
adapter, the Amrita chat plugin and this plugin on embedded defaults (SQLite, embedded Chroma,
the bundled local embedder), all in a throw-away folder. Each event carries its simulated time,
which the plugin takes as the time of the turn, so memories are written on the simulated days.

For every turn the demo prints what the bot was asked, the ``<cognition_memory>`` block of the
system prompt the model received, every tool call with its arguments and JSON result (observed
through Amrita's ``agent.tool_call`` / ``agent.tool_return`` events), the reply the bot sent,
and the script's checks (scope isolation, forgetting, the memo and the pins) evaluated on what
actually happened. The model is a user's preset (``--preset``) or, by default, the built-in
replay model (``replay_model.py``); everything else is the real code.

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
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import click
from amrita_core import PreCompletionEvent, on_event, on_precompletion
from amrita_core.builtins.agent.events import StepToolCallEvent, StepToolReturnEvent

from .demo_script import WEEKDAYS, Check, DemoScript, ScriptError, Turn, load_script
from .loopback import chat_preset
from .replay_model import MEMORY_BLOCK, ReplayModel

REPLAY_PRESET = "cognition-demo-replay"
REPLAY_TURN_TIMEOUT = 60.0
MODEL_TURN_TIMEOUT = 300.0
#: Index work a turn scheduled (embedding, Chroma) must be done within this, or the turn says so.
BACKGROUND_TIMEOUT = 150.0
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


def preset_search_dirs() -> list[Path]:
    """Where preset names are looked up: the bot's Amrita model folder, when a bot is loaded."""
    try:
        from amrita.plugins.chat.config import ConfigManager
    except ImportError:  # no Amrita chat here: only paths can be used
        return []
    return [Path(ConfigManager.custom_models_dir)]


def resolve_preset(value: str, search_dirs: list[Path] | None = None) -> Path:
    """A preset JSON file from a path or from a preset name (file stem or ``name`` field)."""
    path = Path(value).expanduser()
    if path.is_file():
        return path.resolve()
    folders = preset_search_dirs() if search_dirs is None else search_dirs
    if path.suffix.lower() != ".json" and len(path.parts) == 1:
        for folder in folders:
            for candidate in sorted(folder.glob("*.json")):
                if candidate.stem == value:
                    return candidate.resolve()
                try:
                    name = json.loads(candidate.read_text(encoding="utf-8")).get("name")
                except (OSError, ValueError, AttributeError):
                    continue
                if name == value:
                    return candidate.resolve()
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


# ---------------------------------------------------------------------- the QQ side


def simulated_qq_adapter(script: DemoScript):  # type: ignore[no-untyped-def]
    """An OneBot V11 adapter whose API calls are answered by a simulated QQ client."""
    from nonebot.adapters import Bot
    from nonebot.adapters.onebot.v11 import Adapter, Message

    class SimulatedQQ(Adapter):
        """Answers the bot's API calls the way a OneBot implementation would: messages sent are
        recorded, member and friend look-ups are answered from the script's people."""

        def __init__(self, driver: Any) -> None:
            super().__init__(driver)
            self.sent: list[str] = []
            self._message_ids = itertools.count(70001)

        async def _call_api(self, bot: Bot, api: str, **data: Any) -> Any:
            if api in ("send_msg", "send_group_msg", "send_private_msg"):
                message = data.get("message")
                text = Message(message).extract_plain_text() if message is not None else ""
                self.sent.append(text.strip())
                return {"message_id": next(self._message_ids)}
            if api == "send_group_forward_msg" or api == "send_private_forward_msg":
                for node in data.get("messages") or []:
                    content = (node.get("data") or {}).get("content") if isinstance(node, dict) else None
                    self.sent.append(Message(content).extract_plain_text().strip() if content else "")
                return {"message_id": next(self._message_ids)}
            if api == "get_login_info":
                return {"user_id": script.bot_id, "nickname": script.bot_name}
            if api in ("get_group_member_info", "get_stranger_info"):
                person = script.people.get(int(data.get("user_id", 0)))
                nickname = person.nickname if person else str(data.get("user_id"))
                return {
                    "user_id": data.get("user_id"),
                    "group_id": data.get("group_id"),
                    "nickname": nickname,
                    "card": "",
                    "role": person.role if person else "member",
                }
            if api == "get_friend_list":
                return [{"user_id": person.user_id, "nickname": person.nickname} for person in script.people.values()]
            if api == "get_group_info":
                chat = next(
                    (c for c in script.chats.values() if c.kind == "group" and c.id == data.get("group_id")), None
                )
                return {"group_id": data.get("group_id"), "group_name": chat.label if chat else "", "member_count": 3}
            return {}

    return SimulatedQQ


def event_payload(script: DemoScript, turn: Turn, message_id: int) -> dict[str, Any]:
    """The OneBot V11 JSON a QQ client would send for this turn (group messages @ the bot)."""
    from nonebot.adapters.onebot.v11 import Message, MessageSegment

    text = script.said(turn)
    speaker = turn.speaker
    payload: dict[str, Any] = {
        "time": int(script.moment(turn).timestamp()),
        "self_id": script.bot_id,
        "post_type": "message",
        "message_id": message_id,
        "user_id": speaker.user_id,
        "font": 0,
    }
    if turn.chat.kind == "group":
        message = Message([MessageSegment.at(script.bot_id), MessageSegment.text(f" {text}")])
        payload.update(
            message_type="group",
            sub_type="normal",
            group_id=turn.chat.id,
            anonymous=None,
            sender={"user_id": speaker.user_id, "nickname": speaker.nickname, "card": "", "role": speaker.role},
        )
    else:
        message = Message(text)
        payload.update(
            message_type="private",
            sub_type="friend",
            sender={"user_id": speaker.user_id, "nickname": speaker.nickname},
        )
    payload["message"] = [{"type": segment.type, "data": dict(segment.data)} for segment in message]
    payload["raw_message"] = str(message)
    return payload


# ---------------------------------------------------------------------- observing a turn


@dataclass(slots=True)
class ToolTrace:
    call_id: str
    name: str
    arguments: str
    result: str | None = None


@dataclass(slots=True)
class TurnTrace:
    #: The system prompt the model got (None: the chat flow never reached the model).
    system_prompt: str | None = None
    tools: list[ToolTrace] = field(default_factory=list)

    @property
    def block(self) -> str:
        if self.system_prompt is None:
            return ""
        found = MEMORY_BLOCK.search(self.system_prompt)
        return found.group(0) if found else ""

    def results(self) -> list[dict[str, Any]]:
        parsed = []
        for tool in self.tools:
            try:
                value = json.loads(tool.result or "")
            except json.JSONDecodeError:
                value = {"ok": False, "error": tool.result}
            parsed.append(value if isinstance(value, dict) else {"ok": False, "error": tool.result})
        return parsed


class Recorder:
    """Watches the chat flow through Amrita's own hook events (no code is patched)."""

    def __init__(self) -> None:
        self.trace = TurnTrace()

    def begin(self) -> TurnTrace:
        self.trace = TurnTrace()
        return self.trace

    def install(self) -> None:
        # Handler annotations are resolved by Amrita's dependency injection against this
        # module's globals: the event classes are imported at module level for that.
        recorder = self

        # After every other pre-completion handler (the memory hook runs at 20): this is the
        # system prompt as it goes to the model.
        @on_precompletion(priority=10_000, block=False).handle()
        async def capture_prompt(event: PreCompletionEvent) -> None:
            if recorder.trace.system_prompt is None:
                content = event.message.train.content
                if isinstance(content, str):
                    recorder.trace.system_prompt = content
                else:
                    recorder.trace.system_prompt = "\n".join(
                        str(getattr(part, "text", "") or "") for part in content or []
                    )

        @on_event("agent.tool_call", priority=10_000, block=False).handle()
        async def capture_call(event: StepToolCallEvent) -> None:
            recorder.trace.tools.append(ToolTrace(event.tool_id, event.tool_name, event.arguments))

        @on_event("agent.tool_return", priority=10_000, block=False).handle()
        async def capture_return(event: StepToolReturnEvent) -> None:
            pending = [
                tool
                for tool in recorder.trace.tools
                if tool.result is None and (tool.call_id, tool.name) == (event.tool_id, event.tool_name)
            ]
            if pending:
                pending[-1].result = event.result
            else:
                recorder.trace.tools.append(ToolTrace(event.tool_id, event.tool_name, "{}", event.result))


# ---------------------------------------------------------------------- printing


def compact_json(text: str | None) -> str:
    if text is None:
        return "（没有返回）"
    try:
        return json.dumps(json.loads(text), ensure_ascii=False)
    except json.JSONDecodeError:
        return text


def block_lines(block: str) -> list[str]:
    """The block's lines, with the fixed framing sentence after the tag shortened."""
    lines = []
    for index, line in enumerate(block.splitlines()):
        if not line.strip():
            continue
        if index == 1 and "。" in line[:-1] and not line.startswith(("【", "- ")):
            line = line[: line.index("。") + 1] + "……（其余框定说明略）"
        lines.append(line)
    return lines


def evaluate(check: Check, trace: TurnTrace) -> bool:
    block = trace.block
    results = trace.results()
    if check.kind == "context_has":
        return trace.system_prompt is not None and check.text in block
    if check.kind == "context_lacks":
        return trace.system_prompt is not None and check.text not in block
    if check.kind == "results_lack":
        return bool(results) and all(check.text not in json.dumps(r, ensure_ascii=False) for r in results)
    if check.kind == "tools_ok":
        return bool(results) and all(result.get("ok") is True for result in results)
    if check.kind == "tool_refused":
        return any(result.get("ok") is False for result in results)
    raise ScriptError(f"未知的检查 {check.kind}")


def describe(check: Check) -> str:
    detail = {
        "context_has": f"记忆上下文包含「{check.text}」",
        "context_lacks": f"记忆上下文不含「{check.text}」",
        "results_lack": f"工具结果不含「{check.text}」",
        "tools_ok": "工具调用全部成功",
        "tool_refused": "写入被拒绝",
    }[check.kind]
    return f"{check.note}（{detail}）" if check.note else detail


@dataclass(slots=True)
class Outcome:
    passed: int = 0
    failed: int = 0
    unanswered: int = 0
    startup_seconds: float = 0.0
    conversation_seconds: float = 0.0


class Printer:
    def __init__(self, script: DemoScript) -> None:
        self.script = script
        self.day = 0

    def line(self, text: str = "") -> None:
        click.echo(text)

    def turn(
        self,
        turn: Turn,
        trace: TurnTrace,
        replies: list[str],
        error: str,
        outcome: Outcome,
        received: str | None = None,
    ) -> None:
        """Print one turn. ``received``: the memory block the replay model found in the request."""
        script = self.script
        if turn.day != self.day:
            self.day = turn.day
            day = script.day_date(turn)
            self.line()
            self.line(f"━━━━━━━━ 第 {turn.day} 天 · {day.isoformat()} 星期{WEEKDAYS[day.weekday()]} ━━━━━━━━")
        self.line()
        self.line(f"▶ 第 {turn.number} 轮 · {turn.clock.strftime('%H:%M')} · {turn.chat.title}")
        self.line(f"  {turn.speaker.title}问：{script.said(turn)}")
        if trace.system_prompt is None:
            self.line("  记忆上下文：（模型没有被调用）")
        elif not trace.block:
            self.line("  记忆上下文：（无，本轮没有可注入的记忆）")
        else:
            self.line("  记忆上下文（发给模型的系统提示中的 <cognition_memory>）：")
            for text in block_lines(trace.block):
                self.line(f"    │ {text}")
        if trace.tools:
            self.line("  工具调用：")
            for tool in trace.tools:
                self.line(f"    ● {tool.name} {compact_json(tool.arguments)}")
                self.line(f"      → {compact_json(tool.result)}")
        else:
            self.line("  工具调用：（无）")
        if replies:
            for index, reply in enumerate(replies):
                prefix = "  机器人回复：" if index == 0 else "              "
                self.line(prefix + reply.replace("\n", "\n" + " " * 14))
        else:
            self.line("  机器人回复：（没有回复）")
        if received is not None and received != trace.block:
            self.line("  注意：回放模型在请求里收到的记忆块与注入的不一致")
            outcome.failed += 1
        if error:
            self.line(f"  出错：{error}")
        for check in turn.checks:
            ok = evaluate(check, trace)
            outcome.passed += ok
            outcome.failed += not ok
            self.line(f"  检查 {'✓' if ok else '✗'} {describe(check)}")


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
            for turn in script.turns:
                event = Adapter.json_to_event(event_payload(script, turn, next(message_ids)))
                if not isinstance(event, MessageEvent):
                    raise DemoError(f"第 {turn.number} 轮：OneBot 事件解析失败")
                _report_stalls()
                trace = recorder.begin()
                sent_before = len(qq.sent)
                problem = ""
                try:
                    await asyncio.wait_for(bot.handle_event(event), timeout=timeout)
                except TimeoutError:
                    problem = f"本轮超过 {timeout:.0f} 秒没有完成"
                try:
                    await asyncio.wait_for(wait_for_background(), timeout=BACKGROUND_TIMEOUT)
                except TimeoutError:
                    problem = problem or f"本轮的后台索引超过 {BACKGROUND_TIMEOUT:.0f} 秒没有完成"
                if trace.system_prompt is None:
                    outcome.unanswered += 1
                received = choice.replay.received_blocks.get(turn.number) if choice.replay else None
                printer.turn(turn, trace, qq.sent[sent_before:], problem, outcome, received)
        finally:
            _report_stalls()
            qq.bot_disconnect(bot)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wait_for_background(engine), timeout=BACKGROUND_TIMEOUT)
        outcome.conversation_seconds = time.perf_counter() - started
        status = await engine.status()
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
        f"模拟 {script.days} 天（{script.day_date(first).isoformat()} 至 {script.day_date(last).isoformat()}）"
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
        printer = Printer(script)
        outcome = asyncio.run(run_turns(script, choice, printer))
        _report_stalls()  # stays armed until the process ends (see ``__main__._leave``)
        total = outcome.passed + outcome.failed
        click.echo(f"检查：{outcome.passed}/{total} 通过" + (f"，{outcome.failed} 项未通过" if outcome.failed else ""))
        requests = f"，回放模型收到请求 {choice.replay.requests} 次" if choice.replay else ""
        click.echo(f"用时：启动 {outcome.startup_seconds:.1f} 秒，对话 {outcome.conversation_seconds:.1f} 秒{requests}")
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
