"""The CLI's read commands (``status``, ``inspect``, ``jobs list``, ``profile list|show``) start
light on a standalone home (``cli/boot.prepare_reading``): no migration when the folder is
current, no engine start, nothing written; and they answer exactly what the full start
(``COGNITION_CLI_FULL_BOOT=1``: the path of every other command) answers on the same data.
The same comparison in a bot project under ``ambot`` is in ``test_ambot.py``."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from processes import READ_COMMANDS, READABLE_DATA, one_line_error, run_cli, seed_home

FULL = {"COGNITION_CLI_FULL_BOOT": "1"}
#: A standalone home on SQLite and embedded Chroma, whatever the backend under test: the server run
#: would repeat this file as it is.
pytestmark = pytest.mark.embedded_only


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("read") / "home"
    home.mkdir()
    seed_home(home, READABLE_DATA)
    return home


#: Every read command as JSON (the data), and the tables of two of them: the tables are drawn by
#: the same renderers from the same data on both starts, so two tables (the status report and a
#: card with its revisions, the largest) cover the renderers' inputs without 14 more processes.
COMPARED = [(command, "--json") for command in READ_COMMANDS] + [
    (["status"], "--table"),
    (["profile", "show", "90001", "user", "10001", "--revisions"], "--table"),
]


@pytest.mark.parametrize(
    ("command", "output"), COMPARED, ids=lambda value: " ".join(value) if isinstance(value, list) else value
)
def test_the_light_start_answers_as_the_full_start(seeded: Path, command: list[str], output: str) -> None:
    light = run_cli(*command, "--home", str(seeded), output)
    full = run_cli(*command, "--home", str(seeded), output, env=FULL)
    assert light.returncode == full.returncode == 0, (light.stderr[-2000:], full.stderr[-2000:])
    assert light.stdout == full.stdout
    assert light.stdout.strip()
    if output == "--json":
        json.loads(light.stdout)
    # the folder is current: the light start runs no migration (the full one always does)
    assert "运行迁移" not in light.stderr and "正在迁移" not in light.stderr
    assert "运行迁移" in full.stderr


def test_the_data_shows_in_the_answers(seeded: Path) -> None:
    status = json.loads(run_cli("status", "--home", str(seeded), "--json").stdout)
    assert status["active_total"] == 3 and status["jobs"]["pending"] == 1
    jobs = json.loads(run_cli("jobs", "list", "--home", str(seeded), "--json").stdout)
    assert [job["state"] for job in jobs] == ["pending"]
    shown = json.loads(run_cli("profile", "show", "90001", "user", "10001", "--home", str(seeded), "--json").stdout)
    assert "成都" in shown["cards"][0]["document"]
    revisions = run_cli("profile", "show", "90001", "user", "10001", "--revisions", "--home", str(seeded), "--json")
    assert len(json.loads(revisions.stdout)["revisions"]) == 1


def test_read_commands_write_nothing(seeded: Path) -> None:
    database = seeded / "cognition.sqlite3"
    before = digest(database)
    for command in READ_COMMANDS:
        result = run_cli(*command, "--home", str(seeded), "--json")
        assert result.returncode == 0, result.stderr[-2000:]
    assert digest(database) == before


def test_a_missing_card_is_one_line_as_before(seeded: Path) -> None:
    light = run_cli("profile", "show", "90001", "user", "10009", "--home", str(seeded))
    full = run_cli("profile", "show", "90001", "user", "10009", "--home", str(seeded), env=FULL)
    assert light.returncode == full.returncode == 1
    assert one_line_error(light) == one_line_error(full) and "不存在" in one_line_error(light)


def test_a_new_home_is_migrated_first(tmp_path: Path) -> None:
    """Standalone, the folder is the plugin's own: a read command creates or migrates its database
    when it is not current (as every command always did), and then answers; the next one does not."""
    home = tmp_path / "home"
    first = run_cli("jobs", "list", "--home", str(home), "--json")
    assert first.returncode == 0, first.stderr[-2000:]
    assert "正在迁移" in first.stderr and json.loads(first.stdout) == []
    again = run_cli("jobs", "list", "--home", str(home), "--json")
    assert again.returncode == 0 and "正在迁移" not in again.stderr and "运行迁移" not in again.stderr


def _amrita_modules_loaded(home: Path, env: dict[str, str]) -> set[str]:
    """The Amrita packages (``amrita``, ``amrita_core``, ``amrita_sense``) a fresh interpreter
    imported while answering ``status`` (``-X importtime``: not through the suite's preloaded
    zygote, which has them already)."""
    import os
    import subprocess
    import sys

    environment = {key: value for key, value in os.environ.items() if not key.startswith("COGNITION_")}
    command = [sys.executable, "-X", "importtime", "-m", "amrita_plugin_cognition", "status", "--home", str(home)]
    result = subprocess.run(
        [*command, "--json"], capture_output=True, text=True, timeout=300,
        env={**environment, "ANONYMIZED_TELEMETRY": "False", **env},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    names = {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}
    return {name.split(".")[0] for name in names} & {"amrita", "amrita_core", "amrita_sense"}


def test_the_light_start_leaves_amrita_unloaded(seeded: Path) -> None:
    """A read command calls no model: routing AmritaCore's logger would import the ``amrita``
    package, about a sixth of the command's start. The full start (every other command) loads it:
    the check sees it when it is there."""
    assert _amrita_modules_loaded(seeded, {}) == set()
    assert "amrita" in _amrita_modules_loaded(seeded, FULL)
