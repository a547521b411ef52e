"""Other processes, as a user or an operator starts them: the CLI (``python -m
amrita_plugin_cognition …``) and a process holding an embedded Chroma folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    for key in [key for key in base if key.startswith("COGNITION_")]:
        base.pop(key)
    return subprocess.run(
        [sys.executable, "-m", "amrita_plugin_cognition", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**base, **(env or {})},
        cwd=cwd,
    )


def only_json(output: str) -> dict:  # type: ignore[type-arg]
    """``--json`` output is one JSON document and nothing else (migration messages go to stderr)."""
    return json.loads(output)


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    """A failed command ends with one ``错误:`` line on stderr, no traceback, nothing on stdout."""
    assert result.stdout.strip() == "", result.stdout
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    errors = [line for line in result.stderr.splitlines() if line.startswith("错误:")]
    assert len(errors) == 1 and result.stderr.strip().splitlines()[-1] == errors[0], result.stderr[-3000:]
    return errors[0]


HOLDER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {repo!r})
    from pathlib import Path
    import numpy as np
    from amrita_plugin_cognition.config import ChromaSettings
    from amrita_plugin_cognition.domain.records import Scope
    from amrita_plugin_cognition.index.vector import ChromaVectorIndex

    folder = Path({folder!r})
    index = ChromaVectorIndex(ChromaSettings(mode="embedded", path=str(folder)), folder)
    vectors = np.eye(3, 8, dtype=np.float32)
    index.upsert(1, "b1", Scope("group", "20001"), [1, 2, 3], vectors, [{{"kind": "fact"}}] * 3)
    print("holding", flush=True)
    sys.stdin.readline()  # until the test says so
    """
)


def start_index_holder(folder: Path) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER.format(repo=str(REPO), folder=str(folder))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    assert process.stdout is not None
    line = process.stdout.readline()  # blocks until the holder wrote its vectors
    if line.strip() != "holding":
        process.kill()
        pytest.fail(f"the holder process did not start (exit {process.wait(30)})")
    return process


def seed_home(home: Path, body: str) -> str:
    """Run ``body`` in another process on a standalone home (``bench/_common``: NoneBot engine-only,
    migrations run), with ``engine`` open, ``datetime``/``timedelta``/``timezone`` imported; the
    engine is closed after it. Returns what it printed."""
    script = (
        "import asyncio, sys\n"
        "from datetime import datetime, timedelta, timezone\n"
        "from pathlib import Path\n"
        f"sys.path.insert(0, {str(REPO / 'bench')!r})\n"
        "from _common import init_engine_only, open_engine\n\n"
        "async def main() -> None:\n"
        f"    home = Path({str(home)!r})\n"
        "    init_engine_only(home)\n"
        "    engine = await open_engine(home)\n"
        + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ")
        + "\n    await engine.close()\n\nasyncio.run(main())\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=home.parent)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout
