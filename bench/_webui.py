"""The memory page's harness: a seeded standalone home, the WebUI bot serving it on 127.0.0.1
(``_webui_server.py``, another process), and a logged-in httpx client."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from _common import clean_env, free_port

__all__ = ["PASSWORD", "free_port", "login", "start_server", "stop_server"]

SERVER = Path(__file__).with_name("_webui_server.py")
PASSWORD = "page-test-password-7f3a"


def start_server(home: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    """The WebUI bot on ``home``, up once its login answers (else its log is raised)."""
    env = clean_env()
    with open(log, "wb") as output:
        process = subprocess.Popen(
            [sys.executable, str(SERVER), str(home), str(port), PASSWORD],
            stdout=output,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=home,
        )
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/auth/me", timeout=2).status_code in (401, 423):
                return process
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    process.kill()
    raise RuntimeError(f"the WebUI bot did not start:\n{log.read_text(encoding='utf-8', errors='replace')[-4000:]}")


def stop_server(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=30)


@contextmanager
def login(base: str) -> Iterator[httpx.Client]:
    """An httpx client logged in to the WebUI (its cookie kept), closed after."""
    with httpx.Client(base_url=base, timeout=30) as client:
        answer = client.post("/api/auth/login", json={"username": "admin", "password": PASSWORD})
        answer.raise_for_status()
        yield client
