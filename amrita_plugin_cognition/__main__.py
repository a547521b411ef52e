"""``python -m amrita_plugin_cognition …``: the CLI outside a bot, on a standalone folder.

NoneBot is initialised here without a driver (engine only: SQLite, embedded Chroma, the local
embedder under one folder), then this package is loaded again as a NoneBot plugin so that
nonebot-plugin-orm finds its models and migrations. ``eval`` uses a throw-away folder;
other commands use ``--home`` (default ``$COGNITION_HOME`` or ``./cognition-home``).

``demo`` needs the whole bot instead: NoneBot with the FastAPI driver and the OneBot V11
adapter, the Amrita chat plugin and this plugin with its chat adapter, in a throw-away folder
that is also the working directory (no ``.env`` of a bot project applies), on the embedded
defaults (the plugin's ``COGNITION_*`` settings are ignored).
"""

import os
import sys
import tempfile
from pathlib import Path


def _home_from_argv(argv: list[str]) -> Path:
    for index, arg in enumerate(argv):
        if arg == "--home" and index + 1 < len(argv):
            return Path(argv[index + 1])
        if arg.startswith("--home="):
            return Path(arg.split("=", 1)[1])
    if argv and argv[0] in ("eval", "demo"):
        return Path(tempfile.mkdtemp(prefix=f"cognition-{argv[0]}-"))
    return Path(os.environ.get("COGNITION_HOME", "cognition-home"))


def _launch() -> None:
    argv = sys.argv[1:]
    if not argv or argv[0] in ("--help", "-h") or (argv[0] == "demo" and "--help" in argv):
        from .cli.commands import cognition  # library mode: only for the help text

        cognition(args=argv or ["--help"], prog_name="python -m amrita_plugin_cognition")
        return
    demo = argv[0] == "demo"
    if demo:
        argv = _absolute_preset_path(argv)
        sys.argv[1:] = argv
        for name in [name for name in os.environ if name.startswith("COGNITION_") and name != "COGNITION_LOG_LEVEL"]:
            del os.environ[name]
    home = _home_from_argv(argv).resolve()
    os.environ["COGNITION_STANDALONE_HOME"] = str(home)
    if not demo:
        os.environ["COGNITION_ENGINE_ONLY"] = "1"
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    from nonebot import log

    # stdout carries the command's answer (JSON reports); NoneBot's log goes to stderr.
    log.logger.remove(log.logger_id)
    log.logger_id = log.logger.add(
        sys.stderr,
        level=os.environ.get("COGNITION_LOG_LEVEL", "WARNING"),
        diagnose=False,
        filter=log.default_filter,
        format=log.default_format,
    )
    home.mkdir(parents=True, exist_ok=True)
    if demo:
        _init_demo_bot(home)
    else:
        _init_engine_only(home)
    from amrita_plugin_cognition.cli.commands import main

    try:
        main()
    except SystemExit as finished:
        _leave(finished.code)
    _leave(0)


def _leave(code: object) -> None:
    """End the process once the command is done, without the interpreter's shutdown.

    Everything the command wrote is committed by then, and its output is flushed here. What the
    shutdown would add is joining every non-daemon thread and dropping native runtimes (embedded
    Chroma's Rust runtime waits for its own threads): the demo hung in CI after printing its
    last line, with all its work done."""
    if isinstance(code, str):
        print(code, file=sys.stderr)
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code if isinstance(code, int) else 0 if code is None else 1)


def _absolute_preset_path(argv: list[str]) -> list[str]:
    """``demo`` changes the working directory: make a relative ``--preset`` file path absolute."""
    result = list(argv)
    for index, arg in enumerate(result):
        if arg == "--preset" and index + 1 < len(result) and Path(result[index + 1]).is_file():
            result[index + 1] = str(Path(result[index + 1]).resolve())
        elif arg.startswith("--preset=") and Path(arg.split("=", 1)[1]).is_file():
            result[index] = f"--preset={Path(arg.split('=', 1)[1]).resolve()}"
    return result


def _init_demo_bot(home: Path) -> None:
    import nonebot
    from nonebot.adapters.onebot.v11 import Adapter

    from amrita_plugin_cognition.standalone import forget_early_import

    forget_early_import()

    os.chdir(home)
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
        log_level=os.environ.get("COGNITION_LOG_LEVEL", "WARNING"),
    )
    nonebot.get_driver().register_adapter(Adapter)
    from amrita.utils.logging import takeover_amrita_sense_logger
    from nonebot import log

    # AmritaCore logs through a logger of its own: route it to NoneBot's (stderr), as ambot does.
    takeover_amrita_sense_logger(log.logger, log.logger_id)
    nonebot.require("amrita.plugins.chat")
    nonebot.load_plugin("amrita_plugin_cognition")


def _init_engine_only(home: Path) -> None:
    from amrita_plugin_cognition.standalone import init_engine_only

    init_engine_only(
        home, os.environ.get("COGNITION_LOG_LEVEL", "WARNING"), os.environ.get("COGNITION_DATABASE_URL") or None
    )


_launch()
