"""``ambot cognition …`` in a real AmritaBot project (entry point ``ambot.commands``).

The entry point is the one ``pyproject.toml`` declares (put in front of the installed metadata,
which may predate it): ``--help`` answers without loading the bot; the commands that act on
memory load the bot project themselves, and keep stdout for their answer."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import tomli

# A bot project on its own embedded defaults: the server run skips it.
pytestmark = pytest.mark.embedded_only

ROOT = Path(__file__).parents[2]
DATA = Path(__file__).parents[1] / "data"
AMBOT = Path(sys.executable).with_name("ambot")

PYPROJECT = """
[project]
name = "testbot"
version = "0.1.0"
requires-python = ">=3.11"
dependencies = []

[tool.nonebot]
plugins = []
adapters = [{ name = "OneBot V11", module_name = "nonebot.adapters.onebot.v11" }]

[tool.amrita]
plugins = ["amrita_plugin_cognition"]
"""


def declared_entry_points(folder: Path) -> Path:
    """A metadata folder with this package's ``ambot.commands`` entry points as pyproject.toml
    declares them; first on ``PYTHONPATH`` it shadows the installed metadata of the package."""
    project = tomli.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    commands = project["entry-points"]["ambot.commands"]
    info = folder / f"{project['name']}-{project['version']}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n", encoding="utf-8"
    )
    lines = "".join(f"{name} = {target}\n" for name, target in commands.items())
    (info / "entry_points.txt").write_text(f"[ambot.commands]\n{lines}", encoding="utf-8")
    return folder


def ambot(
    project: Path, overlay: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    extra = env or {}
    env = {key: value for key, value in os.environ.items() if not key.startswith(("COGNITION_", "LOCALSTORE_"))}
    env.update(extra)
    env["ANONYMIZED_TELEMETRY"] = "False"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(overlay), env.get("PYTHONPATH")]))
    return subprocess.run([str(AMBOT), *args], cwd=project, capture_output=True, text=True, timeout=300, env=env)


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.stdout.strip() == "", result.stdout[-2000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    errors = [line for line in result.stderr.splitlines() if line.startswith("错误:")]
    assert len(errors) == 1 and result.stderr.strip().splitlines()[-1] == errors[0], result.stderr[-3000:]
    return errors[0]


def tree_digest(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def new_project(project: Path) -> Path:
    """A bot project on its embedded defaults: the plugin listed, data under the project."""
    project.mkdir()
    (project / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (project / ".env").write_text(
        "ENVIRONMENT=prod\nDRIVER=~fastapi\nLOCALSTORE_USE_CWD=true\nWEBUI_ENABLE=false\nLOG_LEVEL=WARNING\n",
        encoding="utf-8",
    )
    return project


@pytest.mark.skipif(shutil.which(str(AMBOT)) is None, reason="ambot-inlinectl is not installed")
def test_ambot_cognition_in_a_bot_project(tmp_path: Path) -> None:
    overlay = declared_entry_points(tmp_path / "metadata")
    project = new_project(tmp_path / "bot")
    listed = ambot(project, overlay, "--help")
    assert "cognition" in listed.stdout
    # help, usage errors and the pure evaluations: answered without loading the bot
    helped = ambot(project, overlay, "cognition", "--help")
    assert helped.returncode == 0 and "status" in helped.stdout and "eval" in helped.stdout, helped.stderr[-2000:]
    assert helped.stderr.strip() == ""
    empty = tmp_path / "empty.jsonl"
    empty.write_text("# nothing\n", encoding="utf-8")
    refused = ambot(project, overlay, "cognition", "eval", "gate", str(empty))
    assert refused.returncode == 2 and "没有可评测" in one_line_error(refused)
    assert not (project / "data").exists()  # nothing of the bot was loaded

    upgraded = ambot(project, overlay, "orm", "upgrade")
    assert upgraded.returncode == 0, upgraded.stderr[-2000:]
    status = ambot(project, overlay, "cognition", "status", "--json")
    assert status.returncode == 0, status.stderr[-2000:]
    report = json.loads(status.stdout)  # one JSON document alone on stdout, the bot's log on stderr
    assert report["index"]["healthy"] and str(project) in report["index"]["backend"]
    # a read command starts light: the plugin alone on the project's configuration, not the bot
    assert "正在加载机器人项目" not in status.stderr

    before = tree_digest(project / "data")
    evaluated = ambot(project, overlay, "cognition", "eval", "recall", str(DATA / "recall_small.jsonl"), "--json")
    assert evaluated.returncode == 0, evaluated.stderr[-2000:]
    recall = json.loads(evaluated.stdout)
    assert recall["leaks"] == 0 and recall["by_category"]["isolation"]["recall@5"] is None
    # the evaluation ran in a throw-away folder, without the bot: the bot's data is untouched
    assert tree_digest(project / "data") == before
    assert "正在加载机器人项目" not in evaluated.stderr

    config = project / "config" / "amrita_plugin_cognition" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[embedder\nprovider = 1\n", encoding="utf-8")
    failed = ambot(project, overlay, "cognition", "backup", "create")
    assert failed.returncode == 1
    assert str(config) in one_line_error(failed)
    assert "正在加载机器人项目" in failed.stderr  # a command that writes loads the whole bot
    failed = ambot(project, overlay, "cognition", "status")
    assert failed.returncode == 1 and str(config) in one_line_error(failed)


SEED_PROJECT = """
import asyncio, os
from datetime import datetime, timedelta, timezone
os.environ["COGNITION_ENGINE_ONLY"] = "1"
import nonebot
nonebot.init(driver="~none", log_level="WARNING")  # the project's own .env, as the bot reads it
nonebot.load_plugin("amrita_plugin_cognition")
from amrita_plugin_cognition import runtime

async def main() -> None:
    engine = await runtime.get_engine()
{body}
    await engine.close()

asyncio.run(main())
"""


@pytest.mark.skipif(shutil.which(str(AMBOT)) is None, reason="ambot-inlinectl is not installed")
def test_read_commands_in_a_bot_project_start_light_and_answer_as_the_full_load(tmp_path: Path) -> None:
    import textwrap

    from processes import READ_COMMANDS, READABLE_DATA

    from amrita_plugin_cognition.store.revision import package_revisions

    overlay = declared_entry_points(tmp_path / "metadata")
    project = new_project(tmp_path / "bot")
    # the project's own environment file moves the database: the light start must find it there
    (project / ".env.prod").write_text(f"SQLALCHEMY_DATABASE_URL=sqlite+aiosqlite:///{project / 'bot.db'}\n")
    assert ambot(project, overlay, "orm", "upgrade").returncode == 0
    body = textwrap.indent(textwrap.dedent(READABLE_DATA).strip("\n"), "    ")
    seeded = subprocess.run(
        [sys.executable, "-c", SEED_PROJECT.format(body=body)],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    assert seeded.returncode == 0, seeded.stderr[-3000:]
    database = project / "bot.db"
    before = hashlib.sha256(database.read_bytes()).hexdigest()
    for command in READ_COMMANDS:
        light = ambot(project, overlay, "cognition", *command, "--json")
        full = ambot(project, overlay, "cognition", *command, "--json", env={"COGNITION_CLI_FULL_BOOT": "1"})
        assert light.returncode == full.returncode == 0, (light.stderr[-2000:], full.stderr[-2000:])
        assert light.stdout == full.stdout and json.loads(light.stdout)
        assert "正在加载机器人项目" not in light.stderr and "正在加载机器人项目" in full.stderr
    report = json.loads(ambot(project, overlay, "cognition", "status", "--json").stdout)
    assert report["active_total"] == 3 and report["jobs"]["pending"] == 1
    assert hashlib.sha256(database.read_bytes()).hexdigest() == before  # the light reads wrote nothing

    # the plugin's migrations behind this version: named, with the command that upgrades; not run
    (head,) = package_revisions().heads
    parent = next(  # the head's parent, as its migration file names it
        line.split('"')[1]
        for path in (ROOT / "amrita_plugin_cognition" / "migrations").glob(f"{head}_*.py")
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.startswith("down_revision")
    )
    with sqlite3.connect(database) as connection:
        connection.execute("UPDATE alembic_version SET version_num = ? WHERE version_num = ?", (parent, head))
    before = hashlib.sha256(database.read_bytes()).hexdigest()
    behind = ambot(project, overlay, "cognition", "jobs", "list", "--json")
    assert behind.returncode == 1
    error = one_line_error(behind)
    assert "不是最新版本" in error and "ambot orm upgrade" in error and head in error
    assert hashlib.sha256(database.read_bytes()).hexdigest() == before

    # a project that does not list the plugin: the whole bot is loaded, which says what is wrong
    (project / "pyproject.toml").write_text(PYPROJECT.replace('"amrita_plugin_cognition"', ""), encoding="utf-8")
    unlisted = ambot(project, overlay, "cognition", "status")
    assert unlisted.returncode == 1 and "改为加载整个机器人项目" in unlisted.stderr
    assert "ambot plugin add" in one_line_error(unlisted)
