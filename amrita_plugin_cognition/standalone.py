"""NoneBot outside a bot project: ``python -m amrita_plugin_cognition``, the benchmarks, the tests.

Imported before NoneBot is initialised, this package declares no plugin (``__init__``). Whoever
boots NoneBot itself therefore drops that early import (``forget_early_import``) before NoneBot
loads the package as a plugin, so that nonebot-plugin-orm finds its models and migrations.
"""

from __future__ import annotations

import sys
from pathlib import Path

PACKAGE = __name__.split(".")[0]


def forget_early_import() -> None:
    """Drop every module of this package from ``sys.modules`` (callers keep what they hold)."""
    for name in [name for name in sys.modules if name.split(".")[0] == PACKAGE]:
        del sys.modules[name]


def init_engine_only(home: Path, log_level: str, database_url: str | None = None) -> None:
    """NoneBot without a driver on ``home`` (SQLite there unless ``database_url``; localstore
    folders there), then this package loaded as a plugin. The caller sets
    ``COGNITION_ENGINE_ONLY=1`` so that the Amrita chat adapter stays out."""
    import nonebot

    forget_early_import()
    nonebot.init(
        driver="~none",
        sqlalchemy_database_url=database_url or f"sqlite+aiosqlite:///{home / 'cognition.sqlite3'}",
        localstore_data_dir=str(home / "data"),
        localstore_config_dir=str(home / "config"),
        localstore_cache_dir=str(home / "cache"),
        alembic_startup_check=False,
        log_level=log_level,
    )
    nonebot.load_plugin(PACKAGE)
