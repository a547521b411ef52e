"""The read commands (``status``, ``inspect``, ``jobs list``, ``profile list|show``) in a real
AmritaBot project: they start light (the plugin alone, on the project's own configuration, not
the bot), write nothing, say when the plugin's migrations are behind, and load the whole bot when
the project does not list the plugin. That the light start answers exactly as the full load does
is compared for every read command and both outputs in ``test_cli_read_path.py``; here, in a bot
project, for ``status`` (the one that touches every store)."""

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
from ambot_project import AMBOT, ROOT, ambot, declared_entry_points, new_project, one_line_error, pyproject, seed_script

# A bot project on its own embedded defaults: the server run skips it.
pytestmark = pytest.mark.embedded_only


@pytest.mark.skipif(shutil.which(str(AMBOT)) is None, reason="ambot-inlinectl is not installed")
def test_read_commands_in_a_bot_project_start_light_and_answer_as_the_full_load(tmp_path: Path) -> None:
    from processes import READABLE_DATA

    from amrita_plugin_cognition.store.revision import package_revisions

    overlay = declared_entry_points(tmp_path / "metadata")
    project = new_project(tmp_path / "bot")
    # the project's own environment file moves the database: the light start must find it there
    (project / ".env.prod").write_text(f"SQLALCHEMY_DATABASE_URL=sqlite+aiosqlite:///{project / 'bot.db'}\n")
    assert ambot(project, overlay, "orm", "upgrade").returncode == 0
    seeded = subprocess.run(
        [sys.executable, "-c", seed_script(READABLE_DATA)],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    assert seeded.returncode == 0, seeded.stderr[-3000:]
    database = project / "bot.db"
    before = hashlib.sha256(database.read_bytes()).hexdigest()
    # each command the issue names once (the light start is the same for all; their variants are
    # compared light against full in test_cli_read_path.py)
    for command in (["inspect"], ["jobs", "list"], ["profile", "show", "90001", "user", "10001"]):
        light = ambot(project, overlay, "cognition", *command, "--json")
        assert light.returncode == 0 and json.loads(light.stdout), light.stderr[-2000:]
        assert "正在加载机器人项目" not in light.stderr
    light = ambot(project, overlay, "cognition", "status", "--json")
    full = ambot(project, overlay, "cognition", "status", "--json", env={"COGNITION_CLI_FULL_BOOT": "1"})
    assert light.returncode == full.returncode == 0, (light.stderr[-2000:], full.stderr[-2000:])
    assert light.stdout == full.stdout and "正在加载机器人项目" in full.stderr
    report = json.loads(light.stdout)
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
    (project / "pyproject.toml").write_text(pyproject("testbot", listed=False), encoding="utf-8")
    unlisted = ambot(project, overlay, "cognition", "status")
    assert unlisted.returncode == 1 and "改为加载整个机器人项目" in unlisted.stderr
    assert "ambot plugin add" in one_line_error(unlisted)
