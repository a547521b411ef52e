"""A real AmritaBot project for the end-to-end tests of ``ambot cognition …``: a project folder on
its embedded defaults, this package's ``ambot.commands`` entry points as ``pyproject.toml``
declares them, and ``ambot`` run in it."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import tomli

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from _project import new_project, pyproject, seed_script  # noqa: E402  (the bench's bot-project template)

__all__ = [
    "AMBOT",
    "ROOT",
    "ambot",
    "declared_entry_points",
    "new_project",
    "one_line_error",
    "pyproject",
    "seed_script",
    "tree_digest",
]

AMBOT = Path(sys.executable).with_name("ambot")


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
