"""The plugin's process-wide engine: paths from nonebot-plugin-localstore, sessions from
nonebot-plugin-orm. Shared by the bot adapter and the CLI run under ``ambot``.

The engine is built on first use. When that fails (a configuration error, a refused startup
step), memory is unavailable: ``get_engine`` raises ``EngineUnavailable`` with the reason, and
tries again as soon as the configuration file changes, or every ``RETRY_SECONDS`` otherwise;
the first attempt that succeeds clears the reason, without a restart.

A changed configuration file reaches the running engine through ``reload_config``: called by
the bot's file watcher (``bot/settings.py``) and each time the engine is handed out, it applies
each change once (keys that need a restart keep their running value, and the log names them).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .config import CognitionConfig, load_config
from .config_location import PLUGIN_NAME, config_path
from .config_restart import keep_restart_values, restart_changes
from .engine.factory import build_engine
from .engine.service import CognitionEngine
from .errors import CognitionError, ConfigurationError, EngineUnavailable

logger = logging.getLogger("cognition")

#: Without a change of the configuration file, a failed start is tried again after this long.
RETRY_SECONDS = 60.0
#: The same warning is logged at most once in this many seconds (see ``warn_limited``).
WARN_EVERY_SECONDS = 60.0

#: Work the adapter does on a freshly started engine before it is handed out (the embedding
#: fingerprint check, scheduling the catch-up job). A step that raises keeps memory unavailable.
StartupStep = Callable[[CognitionEngine], Awaitable[None]]


@dataclass(frozen=True)
class _Failure:
    #: Short, Chinese: shown to chat users after "记忆功能暂不可用：".
    reason: str
    #: The configuration file's mtime when the attempt read it (a change means: try again).
    config_mtime: float | None
    #: ``time.monotonic()`` of the attempt.
    at: float


_engine: CognitionEngine | None = None
#: Built and started, but a startup step refused it; reused by the next attempt while the
#: restart keys stay the same (so that retries do not pile up embedders and index clients).
_pending: CognitionEngine | None = None
_failure: _Failure | None = None
#: A read command's engine (``open_for_reading``): built, checked, never started.
_reader: CognitionEngine | None = None
_start_task: asyncio.Task[None] | None = None
_startup_steps: list[StartupStep] = []
_config_state: dict[str, float | None] = {"mtime": None}
_last_warned: dict[str, float] = {}


def config_file() -> Path:
    """The configuration file (see ``config_location.config_path``)."""
    return config_path()


def plugin_config() -> CognitionConfig:
    return load_config(config_file())


def data_dir(config: CognitionConfig) -> Path:
    if config.data_dir:
        return Path(config.data_dir)
    from nonebot_plugin_localstore import get_data_dir

    return get_data_dir(PLUGIN_NAME)


def current_engine() -> CognitionEngine | None:
    """The engine if one was started in this process (never builds one)."""
    return _engine


def unavailable_reason() -> str | None:
    """Why the last start attempt failed (Chinese), while no engine is up."""
    return None if _engine is not None or _failure is None else _failure.reason


def add_startup_step(step: StartupStep) -> None:
    """Run ``step`` on every freshly started engine before it is handed out (once per step)."""
    if step not in _startup_steps:
        _startup_steps.append(step)


def warn_limited(key: str, message: str, *args: Any, exc_info: BaseException | None = None) -> bool:
    """Log a warning at most once per ``WARN_EVERY_SECONDS`` for the same ``key``; True if logged."""
    now = time.monotonic()
    last = _last_warned.get(key)
    if last is not None and now - last < WARN_EVERY_SECONDS:
        return False
    if len(_last_warned) > 256:  # reasons are few; never let the table grow without bound
        _last_warned.clear()
    _last_warned[key] = now
    logger.warning(message, *args, exc_info=exc_info)
    return True


async def get_engine() -> CognitionEngine:
    """The started engine of this process (built on first use).

    Raises ``EngineUnavailable`` while it cannot start; a later call starts it once the cause is
    gone (the configuration file changed, or ``RETRY_SECONDS`` passed). Callers that must not
    wait for a start may bound the wait: the start goes on after they give up.
    """
    global _start_task
    if _engine is not None:
        reload_config()
        return _engine
    task = _start_task
    if task is None or task.done() or task.get_loop() is not asyncio.get_running_loop():
        if _failure is not None and not _retry_due(_failure):
            raise EngineUnavailable(_failure.reason)
        task = _start_task = asyncio.get_running_loop().create_task(_attempt_start())
    await asyncio.shield(task)
    if _engine is None:
        raise EngineUnavailable(_failure.reason if _failure is not None else "正在启动")
    return _engine


async def open_for_reading() -> CognitionEngine:
    """An engine for a read command (``status``, ``inspect``, ``jobs list``, ``profile show``):
    the running one when this process has it, else one built like ``get_engine`` builds it but
    not started (``CognitionEngine.open_for_reading``: nothing written, no migration run, no
    background work). ``close_reader`` lets it go."""
    global _reader
    if _engine is not None:
        return _engine
    if _reader is None:
        config = plugin_config()
        from nonebot_plugin_orm import get_session

        _reader = build_engine(config, data_dir(config), get_session)
    await _reader.open_for_reading()
    return _reader


async def database_current() -> bool:
    """The database records this version's migrations of the plugin (read only; the standalone
    CLI skips its upgrade then)."""
    from nonebot_plugin_orm import get_session

    from .store.models import MemoryRow
    from .store.revision import applied

    async with get_session() as session:
        current = (await applied(session)).current
        engine = (await session.connection(bind_arguments={"mapper": MemoryRow})).engine
    # The CLI asks this in a loop of its own (``asyncio.run``) before the command's loop: a pooled
    # asyncpg connection stays tied to the loop it was made in, and the command would get it.
    await engine.dispose()
    return current


async def close_reader() -> None:
    """Close the engine ``open_for_reading`` built, if any (the vector index is released)."""
    global _reader
    reader, _reader = _reader, None
    if reader is not None:
        await reader.close()


def _retry_due(failure: _Failure) -> bool:
    return _config_mtime() != failure.config_mtime or time.monotonic() - failure.at >= RETRY_SECONDS


async def _attempt_start() -> None:
    """One try to build, start and hand out the engine; records the failure (never raises)."""
    global _engine, _pending, _failure
    started = time.perf_counter()
    mtime = _config_mtime()
    _config_state["mtime"] = mtime
    try:
        config = plugin_config()
        engine = _pending
        if engine is not None and restart_changes(engine.config, config):
            engine = None  # the refused engine was built for other settings: build anew
        if engine is None:
            from nonebot_plugin_orm import get_session

            engine = _pending = build_engine(config, data_dir(config), get_session)
        else:
            engine.config = config
        await engine.start()
        for step in list(_startup_steps):
            await step(engine)
    except Exception as error:  # recorded, logged, and raised to callers as EngineUnavailable
        if isinstance(error, EngineUnavailable):  # a refusal that carries its own reason
            reason = error.reason
        elif isinstance(error, CognitionError):
            reason = error.zh
        else:
            reason = f"启动出错（{type(error).__name__}），详见日志"
        _failure = _Failure(reason, mtime, time.monotonic())
        expected = isinstance(error, CognitionError)
        warn_limited(
            reason,
            "[cognition] stage=engine_start available=0 error=%s retry=on_config_change_or_after_%ds",
            error,
            int(RETRY_SECONDS),
            exc_info=None if expected else error,
        )
        return
    _engine, _pending, _failure = engine, None, None
    _last_warned.clear()
    logger.info(
        "[cognition] stage=engine_start available=1 elapsed_ms=%.1f index=%s",
        (time.perf_counter() - started) * 1000,
        engine.vectors.description,
    )


def _config_mtime() -> float | None:
    try:
        return config_file().stat().st_mtime
    except OSError:
        return None


def reload_config() -> None:
    """Hot reload: a changed configuration file applies to the running engine now, except the
    keys that need a restart (``config_restart``), which keep their running value until then.

    A file that cannot be used is refused with one error line naming the key; the running
    configuration stays. Each change (file mtime) is applied once, whoever notices it first.
    """
    engine = _engine
    if engine is None:  # nothing runs: the next start reads the file
        return
    mtime = _config_mtime()
    if mtime == _config_state["mtime"]:
        return
    _config_state["mtime"] = mtime
    try:
        fresh = plugin_config()
    except ConfigurationError as error:
        logger.error(
            "[cognition] stage=config_reload applied=0 error=%s 配置有误，继续使用当前配置：%s", error, error.zh
        )
        return
    except OSError as error:  # unreadable (permissions, a folder in its place): like a bad file
        logger.error("[cognition] stage=config_reload applied=0 error=%s 配置文件无法读取，继续使用当前配置", error)
        return
    pending = restart_changes(engine.config, fresh)
    engine.config = keep_restart_values(engine.config, fresh)
    if pending:
        logger.warning(
            "[cognition] stage=config_reload applied=1 restart_needed=%s 以下配置项需要重启才能生效：%s",
            ",".join(pending),
            "、".join(pending),
        )
    else:
        logger.info("[cognition] stage=config_reload applied=1 restart_needed=-")
