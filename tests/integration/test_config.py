"""Configuration errors and engine availability: unknown keys and unset ``${VAR}`` are refused
with the file, the key and the nearest valid key; a bad configuration leaves memory unavailable
(one warning a minute, ``/memory`` says why) until the file is fixed, without a restart."""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from chat_helpers import SELF_ID, attach, deliver, group_message, private_message
from log_capture import CognitionLog, capturing
from nonebug import App

from amrita_plugin_cognition.config import load_config
from amrita_plugin_cognition.errors import CognitionError, ConfigurationError, EngineUnavailable

# ---------------------------------------------------------------------------- loading


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cognition.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_an_unknown_key_names_the_file_the_key_and_the_nearest_key(tmp_path: Path) -> None:
    path = _write(tmp_path, 'scope_polcy = "open"\n')
    with pytest.raises(ConfigurationError) as caught:
        load_config(path, environ={})
    assert caught.value.zh == f"配置文件 {path}：未知配置项 scope_polcy（是不是 scope_policy？）"
    assert str(caught.value) == f"{path}: unknown config key scope_polcy (did you mean scope_policy?)"


def test_an_unknown_key_in_a_section_is_refused_with_its_dotted_name(tmp_path: Path) -> None:
    path = _write(tmp_path, '[embedder]\nprovdier = "openai"\n[recall]\ntop_k = 5\n')
    with pytest.raises(ConfigurationError) as caught:
        load_config(path, environ={})
    assert str(path) in caught.value.zh
    assert "embedder.provdier（是不是 embedder.provider？）" in caught.value.zh
    # a key written in the wrong section points at where it belongs
    path = _write(tmp_path, "top_k = 5\n")
    with pytest.raises(ConfigurationError, match=r"did you mean recall\.top_k"):
        load_config(path, environ={})
    # sections the plugin takes from elsewhere refuse unknown keys too
    path = _write(tmp_path, "[llm]\ntimeout = 5\n")
    with pytest.raises(ConfigurationError, match=r"llm\.timeout \(did you mean llm\.timeout_seconds\?\)"):
        load_config(path, environ={})


def test_an_unset_variable_reference_is_an_error_not_an_empty_string(tmp_path: Path) -> None:
    path = _write(tmp_path, '[embedder]\napi_key = "${COGNITION_TEST_UNSET_KEY}"\n')
    with pytest.raises(ConfigurationError) as caught:
        load_config(path, environ={})
    assert "embedder.api_key" in caught.value.zh and "COGNITION_TEST_UNSET_KEY" in caught.value.zh
    assert str(path) in str(caught.value)
    # set (even to an empty string) is fine
    assert load_config(path, environ={"COGNITION_TEST_UNSET_KEY": ""}).embedder.api_key == ""
    assert load_config(path, environ={"COGNITION_TEST_UNSET_KEY": "sk-1"}).embedder.api_key == "sk-1"


def test_env_overrides_keep_working_and_other_prefixed_variables_are_ignored(tmp_path: Path) -> None:
    path = _write(tmp_path, 'scope_policy = "open"\n')
    environ = {
        # variables of other parts of the project (and of the test harness)
        "COGNITION_CONFIG": str(path),
        "COGNITION_ENGINE_ONLY": "1",
        "COGNITION_TEST_BACKEND": "embedded",
        "COGNITION_TEST_PG": "postgresql+asyncpg://postgres@127.0.0.1:5432",
        "COGNITION_HOME": "/tmp/cognition-home",
        "COGNITION_STANDALONE_HOME": "/tmp/cognition-home",
        "COGNITION_LOG_LEVEL": "INFO",
        "COGNITION_DATABASE_URL": "sqlite+aiosqlite:///x.sqlite3",
        # overrides
        "COGNITION_TIMEZONE": "UTC",
        "COGNITION_RECALL__TOP_K": "12",
        "COGNITION_EMBEDDER__MODEL": "text-embedding-3-small",
        "COGNITION_CHROMA__HEADERS__X_TOKEN": "t",
    }
    config = load_config(None, environ=environ)
    assert config.scope_policy == "open" and config.timezone == "UTC" and config.recall.top_k == 12
    assert config.embedder.model == "text-embedding-3-small" and config.chroma.headers == {"x_token": "t"}
    # the same environment, with an unknown key in the file: still refused
    _write(tmp_path, 'scope_polcy = "open"\n')
    with pytest.raises(ConfigurationError, match="scope_polcy"):
        load_config(None, environ=environ)


def test_an_env_variable_with_an_unknown_key_in_a_section_is_refused() -> None:
    with pytest.raises(ConfigurationError) as caught:
        load_config(None, environ={"COGNITION_EMBEDDER__PROVDIER": "openai"})
    expected = "环境变量 COGNITION_EMBEDDER__PROVDIER：未知配置项 embedder.provdier（是不是 embedder.provider？）"
    assert caught.value.zh == expected


def test_an_invalid_value_names_where_it_came_from(tmp_path: Path) -> None:
    path = _write(tmp_path, "[recall]\ntop_k = 500\n")
    with pytest.raises(ConfigurationError) as caught:
        load_config(path, environ={})
    assert caught.value.zh.startswith(f"配置文件 {path}：配置项 recall.top_k 无效")
    with pytest.raises(ConfigurationError) as caught:
        load_config(path, environ={"COGNITION_RECALL__TOP_K": "60"})
    assert caught.value.zh.startswith("环境变量 COGNITION_RECALL__TOP_K：配置项 recall.top_k 无效")


# ---------------------------------------------------------------------------- availability


class _Records(CognitionLog):
    def warnings(self, text: str) -> list[logging.LogRecord]:
        return [r for r in self.records if r.levelno == logging.WARNING and text in r.getMessage()]

    def tracebacks(self) -> list[logging.LogRecord]:
        return [r for r in self.records if r.exc_info]


@pytest.fixture
def cognition_log() -> Iterator[_Records]:
    with capturing(_Records()) as handler:
        yield handler


_GLOBALS = ("_engine", "_pending", "_failure", "_start_task")


@pytest.fixture
async def isolated_runtime() -> AsyncIterator[Path]:
    """No engine in the process, for this test only: the session's engine, the config file (and
    its mtime) and the runtime's bookkeeping come back afterwards, so other tests see nothing."""
    from amrita_plugin_cognition import runtime

    path = runtime.config_file()
    text, stat = path.read_text(encoding="utf-8"), path.stat()
    saved = {name: getattr(runtime, name, None) for name in _GLOBALS}
    saved_state = dict(runtime._config_state)
    saved_warned = dict(getattr(runtime, "_last_warned", {}))
    saved_steps = list(getattr(runtime, "_startup_steps", []))
    for name in _GLOBALS:
        setattr(runtime, name, None)
    if hasattr(runtime, "_last_warned"):
        runtime._last_warned.clear()
    if hasattr(runtime, "_startup_steps"):
        runtime._startup_steps.clear()  # the bot's step would re-point the catch-up job
    try:
        yield path
    finally:
        built = runtime._engine
        if built is not None and built is not saved["_engine"]:
            await built.settle()
        path.write_text(text, encoding="utf-8")
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        for name, value in saved.items():
            setattr(runtime, name, value)
        runtime._config_state.clear()
        runtime._config_state.update(saved_state)
        if hasattr(runtime, "_last_warned"):
            runtime._last_warned.clear()
            runtime._last_warned.update(saved_warned)
        if hasattr(runtime, "_startup_steps"):
            runtime._startup_steps[:] = saved_steps


def _touch(path: Path, text: str) -> None:
    """Write ``text`` with an mtime that surely differs from the previous one."""
    previous = path.stat().st_mtime
    path.write_text(text, encoding="utf-8")
    stamp = max(previous, path.stat().st_mtime) + 5
    os.utime(path, (stamp, stamp))


async def test_a_bad_config_leaves_memory_unavailable_until_the_file_is_fixed(
    isolated_runtime: Path, cognition_log: _Records
) -> None:
    from amrita_plugin_cognition import runtime

    path = isolated_runtime
    original = path.read_text(encoding="utf-8")
    _touch(path, 'scope_polcy = "open"\n' + original)
    for _ in range(5):
        with pytest.raises(EngineUnavailable) as caught:
            await runtime.get_engine()
        assert caught.value.zh.startswith("记忆功能暂不可用：")
        assert "scope_polcy" in caught.value.zh and "scope_policy" in caught.value.zh
        assert runtime.current_engine() is None
    assert len(cognition_log.warnings("available=0")) == 1  # once, not once per call
    assert not cognition_log.tracebacks()  # an expected error: one line, no traceback

    _touch(path, original)
    engine = await runtime.get_engine()  # no restart
    assert runtime.current_engine() is engine and engine.generation >= 1
    assert await runtime.get_engine() is engine
    assert await engine.index.status()  # started: it answers from the database


class _FakeEngine:
    """Stands in for the engine where only the runtime's bookkeeping is under test."""

    def __init__(self, config) -> None:  # type: ignore[no-untyped-def]
        self.config = config
        self.starts = 0
        self.vectors = type("Vectors", (), {"description": "fake"})()

    async def start(self) -> None:
        self.starts += 1

    async def settle(self) -> None:
        return None


@pytest.fixture
def fake_engines(monkeypatch) -> list[_FakeEngine]:
    from amrita_plugin_cognition import runtime

    built: list[_FakeEngine] = []

    def build(config, data_dir, session_factory):  # type: ignore[no-untyped-def]
        built.append(_FakeEngine(config))
        return built[-1]

    monkeypatch.setattr(runtime, "build_engine", build)
    return built


async def test_a_refused_start_is_retried_with_the_same_engine(
    isolated_runtime: Path, fake_engines: list[_FakeEngine], monkeypatch
) -> None:
    from amrita_plugin_cognition import runtime

    monkeypatch.setattr(runtime, "RETRY_SECONDS", 0.0)
    seen = []

    async def refuse_twice(engine) -> None:  # type: ignore[no-untyped-def]
        seen.append(engine)
        if len(seen) == 1:
            raise CognitionError("向量索引需要重建")
        if len(seen) == 2:  # the fingerprint check refuses this way: not "不可用：不可用：…"
            raise EngineUnavailable("向量索引需要重建")

    runtime.add_startup_step(refuse_twice)
    for _ in range(2):
        with pytest.raises(EngineUnavailable) as caught:
            await runtime.get_engine()
        assert caught.value.zh == "记忆功能暂不可用：向量索引需要重建"
    engine = await runtime.get_engine()
    assert fake_engines == [engine] and engine.starts == 3  # built once, started and checked on each try
    assert seen == [engine, engine, engine]
    assert runtime.unavailable_reason() is None


async def test_without_a_change_a_failed_start_waits_before_trying_again(
    isolated_runtime: Path, fake_engines: list[_FakeEngine], monkeypatch
) -> None:
    from amrita_plugin_cognition import runtime

    attempts = []

    async def refuse(engine) -> None:  # type: ignore[no-untyped-def]
        attempts.append(engine)
        raise CognitionError("不行")

    runtime.add_startup_step(refuse)
    for _ in range(3):
        with pytest.raises(EngineUnavailable):
            await runtime.get_engine()
    assert len(attempts) == 1
    assert runtime.unavailable_reason() == "不行"
    monkeypatch.setattr(runtime, "RETRY_SECONDS", 0.0)  # the retry period passed
    with pytest.raises(EngineUnavailable):
        await runtime.get_engine()
    assert len(attempts) == 2
    original = isolated_runtime.read_text(encoding="utf-8")
    _touch(isolated_runtime, 'scope_policy = "open"\n' + original)  # a hot key: the same engine, new settings
    with pytest.raises(EngineUnavailable):
        await runtime.get_engine()
    assert len(fake_engines) == 1 and fake_engines[0].config.scope_policy == "open"
    _touch(isolated_runtime, "[recall]\ntop_k = 3\n")  # restart keys changed: built anew for them
    with pytest.raises(EngineUnavailable):
        await runtime.get_engine()
    assert len(fake_engines) == 2 and fake_engines[1].config.outbox_interval_seconds == 30


def test_warnings_are_rate_limited_per_reason(cognition_log: _Records, monkeypatch) -> None:
    from amrita_plugin_cognition import runtime

    monkeypatch.setattr(runtime, "_last_warned", {})
    logged = [runtime.warn_limited("reason-a", "[cognition] stage=test reason=a") for _ in range(5)]
    logged.append(runtime.warn_limited("reason-b", "[cognition] stage=test reason=b"))
    assert logged == [True, False, False, False, False, True]
    assert len(cognition_log.warnings("stage=test")) == 2
    runtime._last_warned["reason-a"] -= runtime.WARN_EVERY_SECONDS + 1  # a minute later
    assert runtime.warn_limited("reason-a", "[cognition] stage=test reason=a")
    assert len(cognition_log.warnings("stage=test")) == 3


# ---------------------------------------------------------------------------- the bot


async def test_the_startup_confirmation_asks_off_the_event_loop_and_only_on_a_terminal(monkeypatch) -> None:
    import builtins

    from amrita_plugin_cognition import bot

    class Terminal:
        def __init__(self, tty: bool) -> None:
            self.tty = tty

        def isatty(self) -> bool:
            return self.tty

    asked: list[threading.Thread] = []

    def fake_input(prompt: str = "") -> str:
        asked.append(threading.current_thread())
        return "y"

    monkeypatch.setattr(builtins, "input", fake_input)
    monkeypatch.setattr(bot, "_starting", True)
    monkeypatch.setattr(sys, "stdin", Terminal(tty=False))
    assert await bot._confirm_on_terminal("fingerprint changed") is False
    assert not asked
    monkeypatch.setattr(sys, "stdin", Terminal(tty=True))
    assert await bot._confirm_on_terminal("fingerprint changed") is True
    assert asked and asked[0] is not threading.main_thread()
    monkeypatch.setattr(bot, "_starting", False)  # a start retried later never waits for a person
    assert await bot._confirm_on_terminal("fingerprint changed") is False
    assert len(asked) == 1


@pytest.mark.chatflow
async def test_memory_command_says_why_memory_is_unavailable_and_recovers(
    app: App, fake_openai, monkeypatch, isolated_runtime: Path, cognition_log: _Records
) -> None:
    from nonebot.adapters.onebot.v11 import Adapter, Bot

    path = isolated_runtime
    original = path.read_text(encoding="utf-8")
    _touch(path, 'scope_polcy = "open"\n' + original)
    async with app.test_api() as ctx:
        bot = ctx.create_bot(base=Bot, adapter=ctx.create_adapter(base=Adapter), self_id=str(SELF_ID))
        qq = attach(bot, monkeypatch)
        await deliver(bot, private_message("/memory memo", 10071, "阿明"))
        assert qq.sent[-1].startswith("记忆功能暂不可用：")
        assert "scope_polcy" in qq.sent[-1] and "scope_policy" in qq.sent[-1]
        for text in ("在吗", "今天天气怎么样", "晚安"):  # the replies go on without memory
            await deliver(bot, group_message(text, 30071, 10071, "阿明"))
        assert len(fake_openai.chat_requests) >= 3
        assert len(cognition_log.warnings("available=0")) == 1  # not one per turn
        assert not cognition_log.tracebacks()

        _touch(path, original)
        await deliver(bot, private_message("/memory memo", 10071, "阿明"))
        assert qq.sent[-1] == "本会话还没有备忘录"
