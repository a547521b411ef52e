"""``python -m amrita_plugin_cognition …``: the CLI outside a bot, on a standalone folder.

NoneBot is initialised here without a driver (engine only: SQLite, embedded Chroma, the local
embedder under one folder), then this package is loaded again as a NoneBot plugin so that
nonebot-plugin-orm finds its models and migrations. ``eval`` uses a throw-away folder;
other commands use ``--home`` (default ``$COGNITION_HOME`` or ``./cognition-home``).
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
    if not argv or argv[0] in ("--help", "-h"):
        from .cli.commands import cognition  # library mode: only for the help text

        cognition(args=["--help"], prog_name="python -m amrita_plugin_cognition")
        return
    home = _home_from_argv(argv).resolve()
    os.environ["COGNITION_STANDALONE_HOME"] = str(home)
    os.environ["COGNITION_ENGINE_ONLY"] = "1"
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    for name in [name for name in sys.modules if name.split(".")[0] == "amrita_plugin_cognition"]:
        if name != __name__:
            del sys.modules[name]
    import nonebot
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
    nonebot.init(
        driver="~none",
        sqlalchemy_database_url=os.environ.get("COGNITION_DATABASE_URL")
        or f"sqlite+aiosqlite:///{home / 'cognition.sqlite3'}",
        localstore_data_dir=str(home / "data"),
        localstore_config_dir=str(home / "config"),
        localstore_cache_dir=str(home / "cache"),
        alembic_startup_check=False,
        log_level=os.environ.get("COGNITION_LOG_LEVEL", "WARNING"),
    )
    nonebot.load_plugin("amrita_plugin_cognition")
    from amrita_plugin_cognition.cli.commands import main

    main()


_launch()
