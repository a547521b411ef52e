"""``ambot cognition …`` in a real AmritaBot project (entry point ``ambot.commands``).

The entry point is the one ``pyproject.toml`` declares (put in front of the installed metadata,
which may predate it): ``--help`` answers without loading the bot; the commands that act on
memory load the bot project themselves, and keep stdout for their answer. The read commands'
light start in a bot project is ``test_ambot_read.py`` (a file of its own: ``--dist loadfile``
gives the two slow tests two workers)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from ambot_project import AMBOT, ambot, declared_entry_points, new_project, one_line_error, tree_digest

# A bot project on its own embedded defaults: the server run skips it.
pytestmark = pytest.mark.embedded_only

DATA = Path(__file__).parents[1] / "data"


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
