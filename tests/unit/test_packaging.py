"""Publishing metadata and the README's install section stay true to the package.

The slow checks run in CI scripts: ``scripts/dist_check.sh`` (``uv build``, ``twine check``) and
``scripts/project_smoke.sh`` (the install section, step by step, in a fresh bot project)."""

from __future__ import annotations

import re
from pathlib import Path

from packaging.specifiers import SpecifierSet

from amrita_plugin_cognition.config import tomllib

ROOT = Path(__file__).parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def install_section() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("## 安装到机器人\n")
    return readme[start : readme.index("\n## ", start + 1)]


def migration_head() -> str:
    revisions: set[str] = set()
    downs: set[str] = set()
    for path in (ROOT / "amrita_plugin_cognition" / "migrations").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        revision = re.search(r'^revision[^=]*=\s*"(\w+)"', text, re.MULTILINE)
        down = re.search(r"^down_revision[^=]*=(.*)$", text, re.MULTILINE)
        if revision:
            revisions.add(revision.group(1))
        if down:
            downs.update(re.findall(r'"(\w+)"', down.group(1)))
    heads = revisions - downs
    assert len(heads) == 1, f"the plugin's migrations have {len(heads)} heads: {heads}"
    return heads.pop()


def test_python_classifiers_match_requires_python() -> None:
    requires = SpecifierSet(PROJECT["requires-python"])
    admitted = {f"3.{minor}" for minor in range(6, 20) if f"3.{minor}.0" in requires}
    classifiers = PROJECT["classifiers"]
    declared = {c.rsplit(" :: ", 1)[1] for c in classifiers if c.startswith("Programming Language :: Python :: 3.")}
    assert admitted == declared == {"3.10", "3.11", "3.12", "3.13"}


def test_publishing_metadata() -> None:
    classifiers = PROJECT["classifiers"]
    assert any(c.startswith("Framework :: ") for c in classifiers)
    # PEP 639: the SPDX expression is the license; a License classifier next to it is an error
    assert PROJECT["license"] == "MIT"
    assert not [c for c in classifiers if c.startswith("License ::")]
    assert {"nonebot", "amritabot", "memory"} <= set(PROJECT["keywords"])
    assert PROJECT["readme"] == {"file": "README.md", "content-type": "text/markdown"}


def test_install_section_states_the_migration_head() -> None:
    head = migration_head()
    section = install_section()
    assert f"`{head}`" in section, f"README 安装到机器人 must name the head revision {head}"
    assert f"{head} (head)" in section


def test_install_section_has_the_steps_the_smoke_runs() -> None:
    section = install_section()
    for step in (
        "uv add /path/to/amrita_plugin_cognition ",
        "uv add /path/to/amrita_plugin_cognition-",
        "uv add git+https://",
        "uv run ambot plugin add amrita_plugin_cognition",
        "uv run ambot orm upgrade",
        "uv run ambot orm current",
        "uv run ambot run",
        "enable = true",
        "[tool.amrita]",
    ):
        assert step in section, step
    smoke = ROOT / "scripts" / "project_smoke.sh"
    if smoke.exists():  # not in the sdist
        script = smoke.read_text(encoding="utf-8")
        for command in ("uv add ", "ambot plugin add amrita_plugin_cognition", "ambot orm upgrade", "orm current"):
            assert command in script, command
