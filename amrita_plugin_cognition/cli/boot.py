"""What a command loads before it runs, loaded only by the commands that need it.

``--help``, usage errors and the pure commands (``eval time|gate|admission``) load nothing.
The commands that act on memory need the engine:

* under ``ambot cognition …`` the bot project is loaded first, as ambot does for a ``full_load``
  entry point (``amrita.init()`` + ``amrita.load_plugins()``, with ambot's own function when it
  is installed), announced on stderr;
* under ``python -m amrita_plugin_cognition …`` (``COGNITION_STANDALONE_HOME`` set by
  ``__main__``) NoneBot is initialised without a driver on the standalone folder (``--home``);
* in a process where NoneBot is already up (a test, or an older ambot entry point that loaded the
  bot before the command), nothing is loaded again.

Stdout carries only the command's answer (``--json`` must stay one JSON document): the log
sinks of NoneBot and Amrita are routed to stderr here, without tracebacks unless ``--debug``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import click

from .failures import fail
from .runtime import STANDALONE_ENV, standalone_home

PACKAGE = __name__.split(".")[0]
ENGINE_ONLY_ENV = "COGNITION_ENGINE_ONLY"
LOG_LEVEL_ENV = "COGNITION_LOG_LEVEL"
#: Set to 1: the read commands load what the other commands load (the whole bot under ambot, the
#: upgraded standalone folder), and start the engine, as before the light start existed.
FULL_BOOT_ENV = "COGNITION_CLI_FULL_BOOT"
#: Key in the root click context's ``meta``: ``cognition --debug`` was given.
DEBUG_KEY = "amrita_plugin_cognition.debug"


def say(message: str) -> None:
    """A progress note for the person waiting (stderr, so that stdout stays the answer)."""
    click.echo(message, err=True)


def debug_enabled() -> bool:
    context = click.get_current_context(silent=True)
    return bool(context is not None and context.find_root().meta.get(DEBUG_KEY))


def standalone() -> bool:
    """True under ``python -m amrita_plugin_cognition`` (not inside a bot project)."""
    return standalone_home() is not None


def nonebot_ready() -> bool:
    """NoneBot is initialised in this process (without importing it when it is not loaded)."""
    if "nonebot" not in sys.modules:
        return False
    import nonebot

    try:
        nonebot.get_driver()
    except ValueError:
        return False
    return True


# ---------------------------------------------------------------------------- the log sinks


def _log_format(debug: bool) -> Any:
    """NoneBot's line format; the traceback of a logged exception only under ``--debug`` (it is
    in the bot's log file either way)."""
    from nonebot import log

    line = log.default_format.rstrip("\n") + "\n"
    template = line + "{exception}" if debug else line

    def render(_record: Any) -> str:
        return template

    return render


def route_logs_to_stderr(level: str | int = 0, *, amrita_logs: bool = True) -> None:
    """Replace NoneBot's console sink (stdout by default, and Amrita's after ``amrita.init``) by
    one on stderr; AmritaCore's own logger follows it, as under ``ambot run``. Besides ``level``,
    NoneBot's ``log_level`` filters (once NoneBot is initialised). ``amrita_logs=False`` leaves
    AmritaCore's logger alone unless Amrita is loaded already: routing it imports the ``amrita``
    package (about 0.16 s of a read command's 1.36 s start), and the read commands call no model."""
    from nonebot import log

    with contextlib.suppress(ValueError):
        log.logger.remove(log.logger_id)
    log.logger_id = log.logger.add(
        sys.stderr,
        level=level,
        diagnose=False,
        backtrace=False,
        filter=log.default_filter,
        format=_log_format(debug_enabled()),
    )
    if not amrita_logs and "amrita" not in sys.modules:
        return
    try:
        from amrita.utils.logging import takeover_amrita_sense_logger
    except ImportError:  # Amrita without AmritaSense: nothing else to route
        return
    with contextlib.suppress(Exception):
        takeover_amrita_sense_logger(log.logger, log.logger_id)


def cli_log_level() -> str:
    """The console log level of a command: ``COGNITION_LOG_LEVEL``, else WARNING (INFO with
    ``--debug``). The bot's own log file, under ambot, keeps its own level."""
    return os.environ.get(LOG_LEVEL_ENV, "INFO" if debug_enabled() else "WARNING").upper()


class _LevelFilter:
    """A text stream for a loguru sink that drops records below ``level`` (loguru hands a sink
    a ``str`` that carries its record); other text passes through to ``target``."""

    def __init__(self, target: Any, level: str) -> None:
        from nonebot import log

        self.target = target
        self.level_no = log.logger.level(level).no

    def write(self, text: str) -> int:
        record = getattr(text, "record", None)
        if record is not None and record["level"].no < self.level_no:
            return len(text)
        return int(self.target.write(text) or 0)

    def flush(self) -> None:
        self.target.flush()

    def isatty(self) -> bool:
        return bool(self.target.isatty())

    def __getattr__(self, name: str) -> Any:
        return getattr(self.target, name)


# ---------------------------------------------------------------------------- under ambot


def _ambot_bootstrap() -> None:
    """ambot's own loading for ``full_load`` entry points when installed; the same steps otherwise."""
    try:
        from ambot_inlinectl.registry import _bootstrap
    except ImportError:
        os.environ.setdefault("AMBOT_COMMAND_CONTEXT", "1")
        import amrita

        amrita.init()
        amrita.load_plugins()
    else:
        _bootstrap()


def load_bot_project() -> None:
    """Load the bot project of the working directory (NoneBot, Amrita, every plugin, this one
    among them) unless NoneBot is already up in this process. Its console log goes to stderr."""
    if nonebot_ready():
        return
    from amrita.utils.pyproject_io import find_pyproject

    if find_pyproject() is None:
        raise fail(
            "当前目录不在机器人项目中（向上找不到 pyproject.toml）：请在机器人项目目录中运行 ambot cognition，"
            "或用 python -m amrita_plugin_cognition --home 目录 独立运行"
        )
    say("正在加载机器人项目…")
    from ..standalone import forget_early_import

    # ambot imported this package (for the command) before NoneBot was initialised, so it
    # declared no plugin: drop that import, or loading it as a plugin would fail.
    forget_early_import()
    level = cli_log_level()
    route_logs_to_stderr(level)  # NoneBot's own console sink writes to stdout
    # amrita.init() adds its console sink on sys.stdout (everything, from level 0): give it
    # stderr, with the level of the command line, until it is replaced below.
    with contextlib.redirect_stdout(_LevelFilter(sys.stderr, level)):
        _ambot_bootstrap()
    route_logs_to_stderr(level)
    _check_plugin_loaded()


def _check_plugin_loaded() -> None:
    import nonebot

    if nonebot.get_plugin_by_module_name(PACKAGE) is not None:
        return
    reason = None
    with contextlib.suppress(ImportError):
        from amrita.utils.plugins import get_load_failures

        reason = get_load_failures().get(PACKAGE)
    if reason:
        raise fail(f"机器人项目加载 {PACKAGE} 失败：{reason.splitlines()[0][:300]}（详见机器人日志）")
    raise fail(
        f"机器人项目没有启用 {PACKAGE}：请把它加入 pyproject.toml 的 [tool.amrita] plugins"
        f"（ambot plugin add {PACKAGE}）"
    )


# ---------------------------------------------------------------------------- standalone


def start_engine_only(home: Path, *, amrita_logs: bool = True) -> None:
    """NoneBot without a driver on ``home`` (SQLite and localstore folders there, unless
    ``COGNITION_DATABASE_URL``), this package loaded as a plugin without the chat adapter.
    ``amrita_logs``: as ``route_logs_to_stderr``'s."""
    home = home.resolve()
    os.environ[STANDALONE_ENV] = str(home)
    os.environ[ENGINE_ONLY_ENV] = "1"
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    level = _standalone_log_level()
    route_logs_to_stderr(level, amrita_logs=amrita_logs)
    home.mkdir(parents=True, exist_ok=True)
    from ..standalone import init_engine_only

    init_engine_only(home, level, os.environ.get("COGNITION_DATABASE_URL") or None)


def _standalone_log_level() -> str:
    return cli_log_level()


def prepare_engine(home: Path | None, *, reading: bool = False) -> None:
    """Make ``runtime.get_engine()`` usable: the bot project under ambot, the standalone folder
    (migrated to the current schema) under ``python -m``. ``reading``: the light start of the read
    commands instead (``prepare_reading``)."""
    if not standalone():
        if home is not None:
            raise click.UsageError(
                "--home 只用于独立运行（python -m amrita_plugin_cognition）；在机器人项目中命令作用于机器人自己的数据"
            )
        if not reading:
            load_bot_project()
        elif not nonebot_ready():
            try:
                _start_light(_project_plugins())
            except _NeedsFullBoot as why:
                say(f"{why}：改为加载整个机器人项目")
                load_bot_project()
        return
    if home is not None:
        os.environ[STANDALONE_ENV] = str(home.resolve())
    folder = standalone_home()
    assert folder is not None
    if nonebot_ready():
        return
    say(f"正在打开数据目录 {folder}…")
    start_engine_only(folder, amrita_logs=not reading)
    from .runtime import database_current, upgrade_database

    if reading:
        if database_current():
            return
        say("数据目录的数据库需要建立或升级到本版本，正在迁移…")
    upgrade_database()


# ---------------------------------------------------------------------------- read commands


class _NeedsFullBoot(Exception):
    """The light start cannot stand in for the bot's own (the reason, in Chinese)."""


def full_boot_forced() -> bool:
    """``COGNITION_CLI_FULL_BOOT=1``: the read commands take the path of the other commands."""
    return os.environ.get(FULL_BOOT_ENV, "").lower() in ("1", "true", "yes")


def prepare_reading(home: Path | None) -> None:
    """What a read command (``status``, ``inspect``, ``jobs list``, ``profile list|show``) loads:
    NoneBot without a driver and this package alone, on the configuration the bot itself would
    read, instead of the whole bot. The command then opens the engine with
    ``runtime.open_for_reading`` (nothing written, no migration run).

    Under ambot, NoneBot reads the project's own configuration sources (``.env``,
    ``.env.{ENVIRONMENT}``, the environment), as ``amrita.init()`` makes it do, and
    nonebot-plugin-orm, nonebot-plugin-localstore and this package's configuration resolve the
    database, the data folder and the vector index from them with their own code. When the
    project does not list this plugin, or the light start fails, the whole bot is loaded as
    before (``load_bot_project``), said on stderr. Standalone (``python -m``), the folder is
    upgraded only when its database is behind this version (``prepare_engine`` always ran the
    upgrade). ``COGNITION_CLI_FULL_BOOT=1`` takes ``prepare_engine`` instead."""
    prepare_engine(home, reading=not full_boot_forced())


def _project_plugins() -> list[str]:
    """The plugins the bot project lists (``[tool.nonebot] plugins`` and ``[tool.amrita]
    plugins`` of its pyproject.toml, as ``amrita.load_plugins`` reads them)."""
    from amrita.utils.pyproject_io import find_pyproject

    pyproject = find_pyproject()
    if pyproject is None:  # the full load says what is wrong, as it always did
        raise _NeedsFullBoot("当前目录不在机器人项目中")
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        tool = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("tool", {})
    except (OSError, ValueError) as error:
        raise _NeedsFullBoot(f"无法读取 {pyproject}（{error}）") from error
    listed = [*tool.get("nonebot", {}).get("plugins", []), *tool.get("amrita", {}).get("plugins", [])]
    return [name for name in listed if isinstance(name, str)]


def _start_light(plugins: list[str]) -> None:
    """NoneBot without a driver on the project's configuration, this package loaded alone
    (without its chat adapter). ``_NeedsFullBoot`` when it cannot stand in for the bot's start."""
    if PACKAGE not in plugins:
        raise _NeedsFullBoot(f"机器人项目的 pyproject.toml 没有列出 {PACKAGE}")
    import nonebot

    from ..standalone import forget_early_import

    level = cli_log_level()
    route_logs_to_stderr(level)
    os.environ[ENGINE_ONLY_ENV] = "1"
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    forget_early_import()  # ambot imported this package before NoneBot was up: load it as a plugin
    try:
        nonebot.init(driver="~none", log_level=level)
        nonebot.load_plugin(PACKAGE)
    except Exception as error:  # anything the project's configuration makes of a bare start
        raise _NeedsFullBoot(f"无法单独加载 {PACKAGE}（{type(error).__name__}: {error}）") from error
    if nonebot.get_plugin_by_module_name(PACKAGE) is None:
        raise _NeedsFullBoot(f"无法单独加载 {PACKAGE}")


@contextlib.contextmanager
def throwaway_engine_only(prefix: str, keep: bool) -> Any:
    """A temporary folder with NoneBot (no driver) on it for the duration; removed afterwards,
    whatever happened, unless ``keep``."""
    base = Path(tempfile.mkdtemp(prefix=prefix)).resolve()
    try:
        say(f"正在临时目录 {base} 中启动存储引擎…")
        start_engine_only(base)
        from .runtime import upgrade_database

        upgrade_database()
        yield base
    finally:
        if keep:
            say(f"数据目录已保留: {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)


# ---------------------------------------------------------------------------- the demo


def start_demo_bot() -> Path:
    """The whole bot for ``demo`` in a fresh folder, which also becomes the working directory
    (no ``.env`` of a bot project applies): NoneBot with the FastAPI driver and the OneBot V11
    adapter, the Amrita chat plugin and this plugin, on the embedded defaults (the plugin's
    ``COGNITION_*`` settings are ignored). Returns the folder; ``demo`` removes it."""
    for name in [name for name in os.environ if name.startswith("COGNITION_") and name != LOG_LEVEL_ENV]:
        del os.environ[name]
    home = Path(tempfile.mkdtemp(prefix="cognition-demo-")).resolve()
    os.environ[STANDALONE_ENV] = str(home)
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    try:
        route_logs_to_stderr(_standalone_log_level())
        _init_demo_bot(home)
    except BaseException:
        os.chdir(tempfile.gettempdir())
        shutil.rmtree(home, ignore_errors=True)
        raise
    return home


def _init_demo_bot(home: Path) -> None:
    import nonebot
    from nonebot.adapters.onebot.v11 import Adapter

    from ..standalone import forget_early_import

    forget_early_import()
    os.chdir(home)
    level = _standalone_log_level()
    nonebot.init(
        driver="~fastapi",
        sqlalchemy_database_url=f"sqlite+aiosqlite:///{home / 'cognition.sqlite3'}",
        localstore_data_dir=str(home / "data"),
        localstore_config_dir=str(home / "config"),
        localstore_cache_dir=str(home / "cache"),
        alembic_startup_check=False,
        webui_enable=False,
        superusers=set(),
        nickname=set(),
        command_start={"/"},
        log_level=level,
    )
    nonebot.get_driver().register_adapter(Adapter)
    from amrita.utils.logging import takeover_amrita_sense_logger
    from nonebot import log

    # AmritaCore logs through a logger of its own: route it to NoneBot's (stderr), as ambot does.
    takeover_amrita_sense_logger(log.logger, log.logger_id)
    nonebot.require("amrita.plugins.chat")
    nonebot.load_plugin(PACKAGE)
