"""``ambot cognition …`` in a real AmritaBot project (entry point ``ambot.commands``, full load)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
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


def ambot(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("COGNITION_", "LOCALSTORE_"))}
    env["ANONYMIZED_TELEMETRY"] = "False"
    return subprocess.run([str(AMBOT), *args], cwd=project, capture_output=True, text=True, timeout=300, env=env)


@pytest.mark.skipif(shutil.which(str(AMBOT)) is None, reason="ambot-inlinectl is not installed")
def test_ambot_cognition_in_a_bot_project(tmp_path: Path) -> None:
    project = tmp_path / "bot"
    project.mkdir()
    (project / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (project / ".env").write_text(
        "ENVIRONMENT=prod\nDRIVER=~fastapi\nLOCALSTORE_USE_CWD=true\nWEBUI_ENABLE=false\nLOG_LEVEL=WARNING\n",
        encoding="utf-8",
    )
    listed = ambot(project, "--help")
    assert "cognition" in listed.stdout
    upgraded = ambot(project, "orm", "upgrade")
    assert upgraded.returncode == 0, upgraded.stderr[-2000:]
    status = ambot(project, "cognition", "status", "--json")
    assert status.returncode == 0, status.stderr[-2000:]
    report = json.loads(status.stdout.strip().splitlines()[-1])
    assert report["index"]["healthy"] and str(project) in report["index"]["backend"]
    evaluated = ambot(project, "cognition", "eval", "recall", str(DATA / "recall_small.jsonl"), "--json")
    assert evaluated.returncode == 0, evaluated.stderr[-2000:]
    assert json.loads(evaluated.stdout.strip().splitlines()[-1])["leaks"] == 0
    # the evaluation ran in a throw-away folder: the bot's own bank is untouched
    after = json.loads(ambot(project, "cognition", "status", "--json").stdout.strip().splitlines()[-1])
    assert after["active_total"] == 0
