"""A fresh AmritaBot project on its embedded defaults (this plugin listed, data under the project)
and a script that seeds its memory bank through the plugin: for ``cli_latency.py`` and the
end-to-end tests of ``ambot cognition`` (``tests/ambot_project.py``)."""

from __future__ import annotations

import textwrap
from pathlib import Path

PYPROJECT = """
[project]
name = "{name}"
version = "0.1.0"
requires-python = ">=3.10"
dependencies = []

[tool.nonebot]
plugins = []
adapters = [{{ name = "OneBot V11", module_name = "nonebot.adapters.onebot.v11" }}]

[tool.amrita]
plugins = [{plugins}]
"""
ENV_FILE = "ENVIRONMENT=prod\nDRIVER=~fastapi\nLOCALSTORE_USE_CWD=true\nWEBUI_ENABLE=false\nLOG_LEVEL=WARNING\n"
#: NoneBot initialised on the project's own ``.env``, as the bot reads it.
PROJECT_INIT = 'nonebot.init(driver="~none", log_level="WARNING")'

SEED_PROLOGUE = """
import asyncio, os
from datetime import datetime, timedelta, timezone
os.environ["COGNITION_ENGINE_ONLY"] = "1"
import nonebot
{init}
if nonebot.get_plugin_by_module_name("amrita_plugin_cognition") is None:
    nonebot.load_plugin("amrita_plugin_cognition")
from amrita_plugin_cognition import runtime

async def main() -> None:
    engine = await runtime.get_engine()
{body}
    await engine.close()

asyncio.run(main())
"""


def pyproject(name: str, *, listed: bool = True, plugins: list[str] | None = None) -> str:
    """The project's pyproject.toml; ``listed=False``: this plugin is not in its plugins;
    ``plugins``: exactly these in ``[tool.amrita].plugins``."""
    names = plugins if plugins is not None else ["amrita_plugin_cognition"] if listed else []
    return PYPROJECT.format(name=name, plugins=", ".join(f'"{plugin}"' for plugin in names))


def new_project(
    folder: Path, name: str = "testbot", *, plugins: list[str] | None = None, env_extra: str = "", parents: bool = False
) -> Path:
    """A bot project in ``folder`` (made here) on its embedded defaults; ``plugins`` as in
    ``pyproject``, ``env_extra`` lines added to its ``.env``."""
    folder.mkdir(parents=parents)
    (folder / "pyproject.toml").write_text(pyproject(name, plugins=plugins), encoding="utf-8")
    (folder / ".env").write_text(ENV_FILE + env_extra, encoding="utf-8")
    return folder


def seed_script(body: str, init: str = PROJECT_INIT) -> str:
    """A script that starts the plugin's engine (after ``init`` of NoneBot), runs ``body`` (with
    ``engine``, ``datetime``, ``timedelta``, ``timezone``) and closes it."""
    return SEED_PROLOGUE.format(init=init, body=textwrap.indent(textwrap.dedent(body).strip("\n"), "    "))
