"""Booting the test session: NoneBot + OneBot V11 + the Amrita chat flow + this plugin, on real
storage, once per process (each xdist worker is a process of its own: its own database, data folder,
fake model and Chroma server, so runs and workers never share state).

Default: SQLite (temp file) and embedded Chroma (temp folder). With
``COGNITION_TEST_BACKEND=server``: a fresh PostgreSQL database (``COGNITION_TEST_PG``, default
``postgresql+asyncpg://postgres@127.0.0.1:5432``) and a Chroma server started here with
``chroma run`` on a free 127.0.0.1 port. The LLM and API embedders are a fake
OpenAI-compatible server on 127.0.0.1. ``tests/integration`` and ``tests/e2e`` boot in their
``conftest.py`` (before their test modules are imported, so that tests may import the plugin
package directly); ``tests/unit`` boots nothing.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI, chat_preset
from nonebug import NONEBOT_INIT_KWARGS

BACKEND = os.environ.get("COGNITION_TEST_BACKEND", "embedded")
PG_BASE = os.environ.get("COGNITION_TEST_PG", "postgresql+asyncpg://postgres@127.0.0.1:5432")
FAKE = FakeOpenAI()
TMP = Path(tempfile.mkdtemp(prefix=f"cognition-test-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}-"))
STATE: dict[str, object] = {}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def _pg_admin(statement: str) -> None:
    import asyncpg

    connection = await asyncpg.connect(PG_BASE.replace("postgresql+asyncpg", "postgresql") + "/postgres")
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


def _start_chroma_server() -> int:
    port = _free_port()
    chroma = Path(sys.executable).with_name("chroma")
    log = open(TMP / "chroma-server.log", "w")  # noqa: SIM115 - closed with the process
    process = subprocess.Popen(
        [str(chroma), "run", "--host", "127.0.0.1", "--port", str(port), "--path", str(TMP / "chroma-server")],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    STATE["chroma_process"] = process
    deadline = time.monotonic() + 60
    import httpx

    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=1).status_code == 200:
                return port
        except httpx.HTTPError:
            pass
        if process.poll() is not None:
            break
        time.sleep(0.3)
    raise RuntimeError(f"chroma server did not start; see {TMP / 'chroma-server.log'}")


def _write_configs(config_dir: Path, chroma_port: int | None) -> None:
    chat = config_dir / "chat"
    (chat / "models").mkdir(parents=True, exist_ok=True)
    (chat / "config.toml").write_text(
        'enable = true\npreset = "fake"\n[llm.tools]\nenable_report = false\n'
        "[core.llm]\nmax_retries = 0\nmax_fallbacks = 1\nllm_timeout = 20\n"
        # Amrita's "natural" style waits 1–3 s after each part of a reply, like a person typing:
        # two thirds of every chat-flow test's time, and nothing these tests look at
        "[function]\nnature_chat_style = false\n",
        encoding="utf-8",
    )
    preset = chat_preset("fake", "fake-model", FAKE.base_url, "sk-test", stream=False)
    (chat / "models" / "fake.json").write_text(json.dumps(preset), encoding="utf-8")
    cognition = config_dir / "amrita_plugin_cognition"
    cognition.mkdir(parents=True, exist_ok=True)
    lines = ["outbox_interval_seconds = 3600"]
    if chroma_port:
        lines += ["[chroma]", 'mode = "server"', 'host = "127.0.0.1"', f"port = {chroma_port}"]
    # chat-flow tests run the historian by hand (engine.historian.run_until_idle), never by timer
    lines += ["[historian]", "poll_interval_seconds = 3600", "transcript_batch_turns = 100"]
    (cognition / "config.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def pytest_configure(config: pytest.Config) -> None:
    boot(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    shut_down()


def boot(config: pytest.Config) -> None:
    """Start the fake model (and the Chroma server), make the database, boot NoneBot with Amrita's chat
    and this plugin, and upgrade the schema: once per process, whichever conftest asks first."""
    if STATE.get("booted") or _xdist_controller(config):
        return
    STATE["booted"] = True
    os.environ["ANONYMIZED_TELEMETRY"] = "False"
    FAKE.start()
    config_dir, data_dir, cache_dir = TMP / "config", TMP / "data", TMP / "cache"
    for folder in (config_dir, data_dir, cache_dir):
        folder.mkdir(parents=True, exist_ok=True)
    chroma_port = None
    if BACKEND == "server":
        database = f"cognition_test_{uuid.uuid4().hex[:8]}"
        asyncio.run(_pg_admin(f'CREATE DATABASE "{database}"'))
        STATE["pg_database"] = database
        database_url = f"{PG_BASE}/{database}"
        chroma_port = _start_chroma_server()
    else:
        database_url = f"sqlite+aiosqlite:///{TMP / 'bot.sqlite3'}"
    STATE["database_url"] = database_url
    STATE["chroma_port"] = chroma_port
    _write_configs(config_dir, chroma_port)
    kwargs = {
        "driver": "~fastapi",
        "localstore_config_dir": str(config_dir),
        "localstore_data_dir": str(data_dir),
        "localstore_cache_dir": str(cache_dir),
        "sqlalchemy_database_url": database_url,
        "alembic_startup_check": True,
        "webui_enable": False,
        "superusers": {"90001"},
        "command_start": {"/"},
        "log_level": "WARNING",
        # The plugin's periodic jobs (activity flush, cycle and sweep checks, the queue poll) are
        # registered but never fire on their own: a test calls the one it means (bot/jobs.py). A
        # flush firing mid-test planned cycle jobs into the worker's shared queue (a test that
        # expected it empty failed on CI).
        "apscheduler_autostart": False,
    }
    config.stash[NONEBOT_INIT_KWARGS] = kwargs

    import nonebot
    from nonebot.adapters.onebot.v11 import Adapter

    if BACKEND == "server":
        # Storage and recall only: Amrita's own chat migrations do not apply on PostgreSQL
        # (its suggarchat foreign keys), so the chat flow is tested on SQLite.
        os.environ["COGNITION_ENGINE_ONLY"] = "1"
    # fake_openai imported the package's loopback server before NoneBot existed, so the package
    # declared no plugin then: forget that import, the plugin load below imports it for real
    from amrita_plugin_cognition.standalone import forget_early_import

    forget_early_import()
    nonebot.init(**kwargs)
    nonebot.get_driver().register_adapter(Adapter)
    if BACKEND != "server":
        nonebot.require("amrita.plugins.chat")
    nonebot.load_plugin("amrita_plugin_cognition")
    from nonebot_plugin_orm.__main__ import main as orm_main

    orm_main(["upgrade"], prog_name="orm", standalone_mode=False)
    asyncio.run(_mark_vector_copy_complete(database_url))


async def _mark_vector_copy_complete(database_url: str) -> None:
    """A bot's first start marks a new bank's copy of the vectors complete (``check_fingerprint``),
    and recall then searches small chats in it. The test database is made once per process and
    shared by every test's engine, so it is marked where it is made: every test searches the way a
    bot does, whatever ran before it (a test of the index path sets ``exact_search_max_vectors = 0``)."""
    from sqlalchemy import text
    from sqlalchemy.ext.asyncio import create_async_engine

    from amrita_plugin_cognition.store.vector_copy import complete_key

    engine = create_async_engine(database_url)
    async with engine.begin() as connection:
        await connection.execute(
            text("INSERT INTO cognition_meta (key, value) VALUES (:key, '1')"), {"key": complete_key(1)}
        )
    await engine.dispose()


def _xdist_controller(config: pytest.Config) -> bool:
    """Under pytest-xdist the controller only hands tests to the workers: it boots nothing."""
    return "PYTEST_XDIST_WORKER" not in os.environ and config.getoption("dist", "no") != "no"


def discard_unused_folder() -> None:
    """A process that booted nothing (unit tests alone, the xdist controller) leaves no folder."""
    if not STATE.get("booted"):
        shutil.rmtree(TMP, ignore_errors=True)


def shut_down() -> None:
    if not STATE.pop("booted", False):
        return
    FAKE.stop()
    process = STATE.get("chroma_process")
    if isinstance(process, subprocess.Popen):
        process.terminate()
        process.wait(timeout=30)
    if STATE.get("pg_database"):
        asyncio.run(_pg_admin(f'DROP DATABASE IF EXISTS "{STATE["pg_database"]}" WITH (FORCE)'))
    shutil.rmtree(TMP, ignore_errors=True)


# ---------------------------------------------------------------- fixtures (imported by the conftests
# of the folders that boot)


@pytest.fixture(autouse=True)
async def _settle_engines():  # type: ignore[no-untyped-def]
    """After each test, wait for the background work of the engines it built, and close them
    (a unit test's process booted nothing, and built none)."""
    if not STATE.get("booted"):
        yield
        return
    from engine_helpers import OPEN, close_engines_from, settle_engines

    first = len(OPEN)
    yield
    await settle_engines()
    await close_engines_from(first)


@pytest.fixture
async def clean_job_queue():  # type: ignore[no-untyped-def]
    """The job queue and the transcript are one table each for every bot: a test of them starts
    and ends with both empty (``pytestmark = pytest.mark.usefixtures("clean_job_queue")``)."""
    from engine_helpers import empty_job_queue

    await empty_job_queue()
    yield
    await empty_job_queue()


@pytest.fixture
def model(request: pytest.FixtureRequest, fake_openai: FakeOpenAI) -> FakeOpenAI:
    """The fake model, known to amrita_core as the test module's ``PRESET`` (the preset its
    engines' historian calls)."""
    from engine_helpers import register_preset

    register_preset(request.module.PRESET, fake_openai.base_url)
    return fake_openai


@pytest.fixture
def fake_openai() -> FakeOpenAI:
    FAKE.reset()
    return FAKE


@pytest.fixture
def tmp_root() -> Path:
    return TMP


@pytest.fixture
def backend() -> str:
    return BACKEND


@pytest.fixture
def chroma_port() -> int | None:
    port = STATE.get("chroma_port")
    return int(port) if isinstance(port, int) else None
