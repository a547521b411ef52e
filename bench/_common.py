"""Shared helpers of the benchmark scripts: a throw-away engine-only NoneBot, timing statistics.

Every script runs standalone (``uv run python bench/NAME.py [--quick]``). NoneBot is initialised
the way ``python -m amrita_plugin_cognition`` does it: no driver (``~none``), engine only,
SQLite and embedded Chroma under one folder, the migrations applied with ``orm upgrade``.
Nothing here opens a network connection but ``pg_admin``'s, to the PostgreSQL of ``PG_BASE``
(127.0.0.1 unless ``COGNITION_TEST_PG`` says otherwise), for the scripts that run on PostgreSQL.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from amrita_plugin_cognition.api import UTC

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

_INITIALISED: Path | None = None

#: The PostgreSQL server the PostgreSQL runs make their throw-away databases on.
PG_BASE = os.environ.get("COGNITION_TEST_PG", "postgresql+asyncpg://postgres@127.0.0.1:5432")


@contextlib.asynccontextmanager
async def pg_server(base: str = PG_BASE) -> AsyncIterator[Any]:
    """An asyncpg connection to the server's ``postgres`` database, closed after."""
    import asyncpg

    connection = await asyncpg.connect(base.replace("postgresql+asyncpg", "postgresql") + "/postgres")
    try:
        yield connection
    finally:
        await connection.close()


async def pg_admin(statement: str, base: str = PG_BASE) -> None:
    """One statement on the server's ``postgres`` database (``CREATE`` / ``DROP DATABASE``)."""
    async with pg_server(base) as connection:
        await connection.execute(statement)


def parse_args(description: str, extra: Callable[[argparse.ArgumentParser], None] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="small scale (< 60 s), used by the smoke test")
    if extra:
        extra(parser)
    return parser.parse_args()


def free_port() -> int:
    """A free TCP port on 127.0.0.1 (for a server of the bench's own)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def clean_env(**extra: str) -> dict[str, str]:
    """This environment for a child process (a bot, the CLI) without the plugin's own variables:
    the child reads its configuration from its project or home, not from whoever started the bench."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("COGNITION_", "LOCALSTORE_"))}
    env["ANONYMIZED_TELEMETRY"] = "False"
    env.update(extra)
    return env


def child_json(script: str, *arguments: str, env: dict[str, str] | None = None) -> Any:
    """Run ``script`` again in a fresh process with ``arguments`` (and ``env``, else this one's
    environment); its last line of output, as JSON (a run per process: each starts from the same
    memory and caches)."""
    done = subprocess.run([sys.executable, script, *arguments], check=True, capture_output=True, text=True, env=env)
    return json.loads(done.stdout.strip().splitlines()[-1])


def throwaway_home(prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=f"cognition-bench-{prefix}-"))


def remove_home(home: Path) -> None:
    shutil.rmtree(home, ignore_errors=True)


def init_engine_only(home: Path, log_level: str = "WARNING", database_url: str | None = None) -> None:
    """NoneBot without a driver on ``home`` (engine only), then ``orm upgrade``. Once per process.
    ``database_url``: another database than the SQLite file in ``home`` (PostgreSQL)."""
    global _INITIALISED
    if _INITIALISED is not None:
        if home != _INITIALISED:
            raise RuntimeError(f"NoneBot already initialised on {_INITIALISED}")
        return
    os.environ["COGNITION_STANDALONE_HOME"] = str(home)
    os.environ["COGNITION_ENGINE_ONLY"] = "1"
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    from amrita_plugin_cognition.standalone import init_engine_only as boot

    home.mkdir(parents=True, exist_ok=True)
    boot(home, log_level, database_url)
    from amrita_plugin_cognition.cli.runtime import upgrade_database

    # ``orm upgrade`` runs its own event loop: give it a thread, so callers may be inside one.
    failure: list[BaseException] = []

    def upgrade() -> None:
        try:
            upgrade_database()
        except BaseException as error:  # re-raised in the caller's thread below
            failure.append(error)

    worker = threading.Thread(target=upgrade, name="orm-upgrade")
    worker.start()
    worker.join()
    if failure:
        raise failure[0]
    _INITIALISED = home


def engine_data_dir(home: Path) -> Path:
    from amrita_plugin_cognition.cli.runtime import plugin_data_dir

    return plugin_data_dir(home)


async def open_engine(home: Path, embedder: Any = None, **overrides: Any) -> Any:
    """A started engine on ``home`` (defaults, embedded Chroma; ``overrides`` go to the config)."""
    from nonebot_plugin_orm import get_session

    from amrita_plugin_cognition.api import CognitionConfig, build_engine

    config = CognitionConfig.model_validate({"chroma": {"mode": "embedded"}, **overrides})
    engine = build_engine(config, engine_data_dir(home), get_session, embedder=embedder)
    await engine.start()
    return engine


def quiet_cognition_logs() -> None:
    """The engine logs one INFO line per call; keep benchmark output readable (and untimed I/O out)."""
    import logging

    logging.getLogger("cognition").setLevel(logging.WARNING)


def rss_mb(pid: int | str = "self") -> float:
    """Resident set (``VmRSS``) of a process of this machine, in MiB (NaN once it has exited)."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return float("nan")
    for line in lines:
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def percentile(values: Sequence[float], share: float) -> float:
    """Nearest-rank percentile (``share`` in [0, 1])."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))
    return ordered[index]


def p50_p95(values_ms: Sequence[float]) -> tuple[float, float]:
    return percentile(values_ms, 0.5), percentile(values_ms, 0.95)


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0


def code_version() -> str:
    """The commit measured, with ``+dirty`` when the engine's working tree differs from it."""
    import subprocess

    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "amrita_plugin_cognition"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head}{'+dirty' if dirty else ''}"


def machine_line() -> str:
    return (
        f"{datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}, {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}, code {code_version()}"
    )


def verdict(value: float, limit: float) -> str:
    return f"{'OK' if value <= limit else 'OVER'} (target <= {limit:g}; ratio to target {value / limit:.2f})"


def register_loopback_preset(name: str, base_url: str, model: str = "bench-model") -> None:
    """An Amrita model preset ``name`` for a loopback model server (``cli/loopback.py``), not streamed."""
    from amrita_core import ModelPreset, PresetManager

    from amrita_plugin_cognition.cli.loopback import chat_preset

    manager = PresetManager()
    if name not in {known.name for known in manager.get_all_presets()}:
        manager.add_preset(ModelPreset.model_validate(chat_preset(name, model, base_url, "sk", stream=False)))


class FlatEmbedder:
    """For benchmarks that do not measure vectors: every text gets the same unit vector, at once."""

    def __init__(self) -> None:
        from amrita_plugin_cognition.index.embedders import Fingerprint

        self.fingerprint = Fingerprint("bench", "flat", "", 8)

    async def embed(self, texts: Any) -> np.ndarray:
        vectors = np.zeros((len(texts), 8), dtype=np.float32)
        vectors[:, 0] = 1.0
        return vectors


async def drop_outbox(engine: Any, memory_ids: Sequence[int] | None = None) -> None:
    """Empty the outbox (benches that seed facts without vectors: no drain should embed them), or
    take out the rows of ``memory_ids`` only (a bulk load that wrote their vectors itself)."""
    from sqlalchemy import delete

    from amrita_plugin_cognition.store.models import OutboxRow

    statement = delete(OutboxRow)
    if memory_ids is not None:
        statement = statement.where(OutboxRow.memory_id.in_(memory_ids))
    async with engine.unit_of_work() as uow:
        await uow.session.execute(statement)
        await uow.commit()
