"""Other processes, as a user or an operator starts them: the CLI (``python -m
amrita_plugin_cognition …``) and a process holding an embedded Chroma folder."""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from cli_zygote import Zygote

REPO = Path(__file__).resolve().parents[1]

#: The CLI's processes are forked from one that has its libraries imported (``cli_zygote``).
_ZYGOTE = Zygote()
atexit.register(_ZYGOTE.close)


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m amrita_plugin_cognition ARGS`` in a process of its own, on the test's
    environment without its ``COGNITION_*`` settings (plus ``env``)."""
    base = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    for key in [key for key in base if key.startswith("COGNITION_")]:
        base.pop(key)
    environment = {**base, **(env or {})}
    if not hasattr(os, "fork"):  # no fork on this system: a fresh interpreter each time
        command = [sys.executable, "-m", "amrita_plugin_cognition", *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=300, env=environment, cwd=cwd)
    return _ZYGOTE.run(list(args), env=environment, cwd=cwd, timeout=300)


def bench_env() -> dict[str, str]:
    """The environment of a bench script started by a test: none of the suite's ``COGNITION_*``
    settings but the PostgreSQL server it was given (``COGNITION_TEST_PG``), telemetry off."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("COGNITION_")}
    env["ANONYMIZED_TELEMETRY"] = "False"
    if "COGNITION_TEST_PG" in os.environ:
        env["COGNITION_TEST_PG"] = os.environ["COGNITION_TEST_PG"]
    return env


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


#: A body for ``seed_home`` (or any script with ``engine`` open) that leaves something for every
#: read command of the CLI to show: facts in a group and a private chat, a pending historian job,
#: a user's card with a kept revision.
READABLE_DATA = """
from amrita_plugin_cognition.api import Card, ChatContext, InputMessage, MemoryDraft, Scope

now = datetime(2026, 3, 2, 9, 30, tzinfo=timezone.utc)
group, private = Scope("group", "20001"), Scope("private", "10001")
await engine.memories.remember("90001", [
    MemoryDraft(text="小明喜欢吃火锅", scope=group, speaker_id="10001", speaker_name="小明"),
    MemoryDraft(text="小明下个月去成都出差", scope=group, speaker_id="10001", speaker_name="小明"),
], now=now)
await engine.memories.remember("90001", [
    MemoryDraft(text="小明的猫叫年糕", scope=private, speaker_id="10001", speaker_name="小明"),
], now=now)
chat = ChatContext("90001", group, "10002", "阿杰")
await engine.turns.end(chat, "聊了周末的安排", ["阿杰周末要去爬山"],
                       batch=[InputMessage("m1", "10002", "阿杰", "我周末去爬山", now)], now=now)
card = Card("90001", "user", "10001", "group", name="小明", tags=["吃货"], body="喜欢火锅。", updated_at=now)
await engine.profiles.save(card, now=now)
await engine.profiles.save(Card("90001", "user", "10001", "group", name="小明", tags=["吃货"],
                                body="喜欢火锅，下个月去成都。", updated_at=now + timedelta(hours=1)),
                           now=now + timedelta(hours=1))
"""

#: The read commands of the CLI (started light: ``cli/boot.prepare_reading``), with arguments
#: that reach the data of ``READABLE_DATA``.
READ_COMMANDS = [
    ["status"],
    ["inspect"],
    ["inspect", "--user", "10001", "--status", "active"],
    ["jobs", "list"],
    ["profile", "list"],
    ["profile", "show", "90001", "user", "10001"],
    ["profile", "show", "90001", "user", "10001", "--revisions"],
]
