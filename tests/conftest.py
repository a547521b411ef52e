"""The test suite's three folders:

- ``unit``: pure functions (the domain's policies, rules and documents): nothing is booted.
- ``integration``: stores, engine, recall, the chat flow driven by nonebug; NoneBot, Amrita's chat,
  the fake model and the database are booted once per process (``booting.py``).
- ``e2e``: subprocesses (``ambot``, the CLI, other processes on one database), the demo, the
  benchmarks' smoke runs and the packaging; marked ``slow``, outside the default run (``uv run
  pytest -m slow`` runs them; CI runs both). A test of an integration file that starts another
  process (the CLI beside a bot, a killed worker) is marked ``slow`` where it stands.

With pytest-xdist each worker is its own process: its own database, data folder, fake model and
Chroma server (``booting.py``), so workers and parallel runs on one machine never share state.
"""

from __future__ import annotations

import compileall
import os
import sys
from pathlib import Path

import pytest

# numpy's OpenBLAS starts a thread per core that spins after each product: one spinning thread per
# xdist worker took 40–55 s of CPU of a 3-minute run on 2 cores. One worker per core needs no BLAS
# threads (set before numpy is first imported; subprocesses inherit it).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))  # the helper modules beside this file
BACKEND = os.environ.get("COGNITION_TEST_BACKEND", "embedded")

# The fixtures of the booted folders (integration, e2e); unit tests use none of them.
from booting import (  # noqa: E402
    _settle_engines,
    backend,
    chroma_port,
    clean_job_queue,
    discard_unused_folder,
    fake_openai,
    model,
    tmp_root,
)

__all__ = ["_settle_engines", "backend", "chroma_port", "clean_job_queue", "fake_openai", "model", "tmp_root"]


def pytest_configure(config: pytest.Config) -> None:
    """The project's own modules as bytecode, once per run (in the controller, before the workers
    start). uv compiles what it installs, not the project's source, and with
    ``PYTHONDONTWRITEBYTECODE`` (set on these machines) every process the tests start (the CLI,
    bench scripts, seeding scripts) compiled the package's 300 modules again: 0.3 s each."""
    if not hasattr(config, "workerinput"):
        for folder in ("amrita_plugin_cognition", "bench"):
            compileall.compile_dir(HERE.parent / folder, quiet=1)


def pytest_unconfigure(config: pytest.Config) -> None:
    discard_unused_folder()


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (pyproject's addopts): one worker more than the cores. A worker waits on its
    embedder, Chroma and subprocess threads for part of each test; a third worker on 2 cores fills
    those waits (ten of the heaviest integration files: 93 s with 2 workers, 79–83 s with 3, two runs
    each). Each worker peaks at about 3 GB."""
    return (os.cpu_count() or 1) + 1


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """e2e tests are ``slow``. The chat-flow tests need the Amrita chat plugin, which the server
    backend does not load; tests that do not touch the storage backend (unit tests, benchmark
    smoke) run once, on the embedded one."""
    unit, e2e = HERE / "unit", HERE / "e2e"
    for item in items:
        if e2e in Path(item.path).parents:
            item.add_marker(pytest.mark.slow)
    if BACKEND != "server":
        return
    skip = pytest.mark.skip(reason="runs on the embedded backend only")
    for item in items:
        if "chatflow" in item.keywords or "embedded_only" in item.keywords or unit in Path(item.path).parents:
            item.add_marker(skip)
