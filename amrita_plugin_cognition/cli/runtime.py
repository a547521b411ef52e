"""Helpers for the engine outside a live bot (see ``amrita_plugin_cognition/__main__.py``)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from pathlib import Path

STANDALONE_ENV = "COGNITION_STANDALONE_HOME"


def standalone_home() -> Path | None:
    """The standalone folder when the CLI runs as ``python -m amrita_plugin_cognition`` (set by
    ``__main__`` before the command line is parsed; ``--home`` replaces it); None under ambot."""
    value = os.environ.get(STANDALONE_ENV)
    return Path(value) if value else None


def upgrade_database() -> None:
    """Apply the migrations (``orm upgrade``); a no-op on an up-to-date database. Its messages go
    to stderr: stdout is the command's own output (``--json`` must stay parseable)."""
    from nonebot_plugin_orm.__main__ import main

    with contextlib.redirect_stdout(sys.stderr):
        main(["upgrade"], prog_name="orm", standalone_mode=False)


def database_current() -> bool:
    """The database of the standalone folder records this version's migrations (read only)."""
    from .. import runtime

    return asyncio.run(runtime.database_current())


async def upgrade_database_async() -> None:
    await asyncio.to_thread(upgrade_database)


def plugin_data_dir(home: Path) -> Path:
    return home / "data" / "amrita_plugin_cognition"
