"""The two bot projects of ``whole_bot.py`` and their ``ambot run`` processes.

Both are made from ``bench/_project.py``'s template, as ``bench/cli_latency.py`` makes one (a
``pyproject.toml`` with the OneBot V11 adapter and ``[tool.amrita]``, an ``.env``, migrated with
``ambot orm upgrade``), with Amrita's chat switched on and its model preset on the bench's fake
model (as ``scripts/project_smoke.sh`` does). The memory bot lists ``amrita_plugin_cognition`` and, after
it, the bench's measuring plugin (``[tool.amrita].plugins``); the other bot is the same project
without either (memory off: the plugin not loaded). Each runs as its own ``ambot run`` process
(this interpreter's ``ambot``, no ``uv run`` around it, so its process id is the bot's).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

from _common import clean_env, free_port, rss_mb
from _project import new_project

from amrita_plugin_cognition.cli.loopback import chat_preset

AMBOT = Path(sys.executable).with_name("ambot")
PROBE = Path(__file__).with_name("_whole_bot_probe.py")
PRESET = "whole-bot"

#: RATE_LIMIT: Amrita answers one message per chat per this many seconds (1 is its least; each
#: chat's next message waits for the reply anyway).
ENV_EXTRA = "RATE_LIMIT=1\n"


def make_project(folder: Path, memory: bool, model_url: str, cognition_toml: str, report: bool) -> None:
    """A bot project in ``folder``: with the plugin and the probe (``memory``), or without;
    ``report``: Amrita's content check (a model call before every turn's answer, its default)."""
    plugins = ["amrita_plugin_cognition", "whole_bot_probe"] if memory else []
    new_project(folder, "memorybot" if memory else "plainbot", plugins=plugins, env_extra=ENV_EXTRA, parents=True)
    chat = folder / "config" / "chat"
    (chat / "models").mkdir(parents=True)
    chat_toml = f'enable = true\npreset = "{PRESET}"\n'
    if not report:
        chat_toml += "[llm.tools]\nenable_report = false\n"
    (chat / "config.toml").write_text(chat_toml, encoding="utf-8")
    preset = chat_preset(PRESET, "whole-bot-model", model_url, "sk-bench", stream=False)
    (chat / "models" / f"{PRESET}.json").write_text(json.dumps(preset), encoding="utf-8")
    if memory:
        shutil.copyfile(PROBE, folder / "whole_bot_probe.py")
        plugin = folder / "config" / "amrita_plugin_cognition"
        plugin.mkdir(parents=True)
        (plugin / "config.toml").write_text(cognition_toml, encoding="utf-8")


def migrate(projects: list[Path]) -> None:
    """``ambot orm upgrade`` in each project, side by side (two processes at most)."""
    failures: list[str] = []

    def upgrade(project: Path) -> None:
        done = subprocess.run(
            [str(AMBOT), "orm", "upgrade"], cwd=project, env=clean_env(), capture_output=True, text=True, timeout=900
        )
        if done.returncode != 0:
            failures.append(f"{project.name}: ambot orm upgrade failed ({done.returncode}):\n{done.stderr[-3000:]}")

    threads = [threading.Thread(target=upgrade, args=(project,)) for project in projects]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise SystemExit("\n".join(failures))


class BotProcess:
    """One ``ambot run``: started on a free port, paused and resumed between phases, stopped."""

    def __init__(self, label: str, project: Path, **env: str) -> None:
        self.label = label
        self.project = project
        self.port = free_port()
        self.log_path = project / "bot.log"
        self.env = env  # more of the bot's environment (PYTHONTRACEMALLOC)
        self.process: subprocess.Popen[bytes] | None = None
        self.paused = False

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/onebot/v11/ws"

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def start(self) -> None:
        env = clean_env(PORT=str(self.port), HOST="127.0.0.1", **self.env)
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                [str(AMBOT), "run"],
                cwd=self.project,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def pause(self) -> None:
        """SIGSTOP: the bot gets no CPU while the other bot is measured (nor does its background work)."""
        if self.alive() and not self.paused:
            os.kill(self.pid, signal.SIGSTOP)
            self.paused = True

    def resume(self) -> None:
        if self.alive() and self.paused:
            os.kill(self.pid, signal.SIGCONT)
            self.paused = False

    def rss_mb(self) -> float | None:
        """VmRSS of the bot process, in MB (None once it is gone)."""
        try:
            value = rss_mb(self.pid)
        except AssertionError:
            return None
        return None if math.isnan(value) else value

    def cpu_seconds(self) -> float:
        """User + system CPU seconds of the bot process so far."""
        try:
            fields = Path(f"/proc/{self.pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()
        except OSError:
            return float("nan")
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.resume()
        os.killpg(self.pid, signal.SIGINT)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.pid, signal.SIGKILL)
            self.process.wait(timeout=30)

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"
