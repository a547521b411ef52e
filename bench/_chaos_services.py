"""The services ``bench/chaos.py`` starts, kills and restarts: a Chroma server (``chroma run``) and a
throw-away PostgreSQL cluster of its own (``initdb`` + ``pg_ctl`` as the ``postgres`` user, in a temp
folder, on a free 127.0.0.1 port: the machine's shared server is never restarted)."""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

PG_BASE = os.environ.get("COGNITION_TEST_PG", "postgresql+asyncpg://postgres@127.0.0.1:5432")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ChromaServer:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        import httpx

        chroma = Path(sys.executable).with_name("chroma")
        log = open(self.folder.parent / "chroma.log", "ab")  # noqa: SIM115 - closed with the process
        self.process = subprocess.Popen(
            [str(chroma), "run", "--host", "127.0.0.1", "--port", str(self.port), "--path", str(self.folder)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/api/v2/heartbeat", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.process.poll() is not None:
                break
            time.sleep(0.3)
        raise RuntimeError(f"chroma server did not start; see {self.folder.parent / 'chroma.log'}")

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(30)


async def pg_admin(statement: str, base: str = PG_BASE) -> None:
    import asyncpg

    connection = await asyncpg.connect(base.replace("postgresql+asyncpg", "postgresql") + "/postgres")
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


def pg_tools() -> Path | None:
    """The folder of ``initdb``/``pg_ctl`` (Debian keeps them out of PATH), or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    if found:
        return Path(found[-1]).parent
    pg_ctl = shutil.which("pg_ctl")
    return Path(pg_ctl).parent if pg_ctl else None


class PgCluster:
    """A PostgreSQL cluster of this run only (trust auth on 127.0.0.1), which may be restarted at
    will. Run as the ``postgres`` user when this process is root (``initdb`` refuses root)."""

    def __init__(self, folder: Path) -> None:
        tools = pg_tools()
        if tools is None:
            raise RuntimeError("initdb/pg_ctl not found: PostgreSQL restarts need a local PostgreSQL install")
        self.tools = tools
        self.folder = folder
        self.data = folder / "data"
        self.port = free_port()
        self.url = f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}"

    def _run(self, *command: str) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        subprocess.run([*prefix, *command], check=True, capture_output=True, timeout=120)

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres")
            os.chmod(self.folder, 0o700)
        if not self.data.exists():
            self._run(str(self.tools / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync")
        self._pg_ctl("start")

    def _pg_ctl(self, action: str, *extra: str) -> None:
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=on"
        self._run(str(self.tools / "pg_ctl"), "-D", str(self.data), "-o", options, "-l", str(self.folder / "log"),
                  "-w", action, *extra)  # fmt: skip

    def restart(self) -> None:
        """A crash and a restart: ``-m immediate`` stops without a checkpoint (WAL recovery at start)."""
        self._pg_ctl("restart", "-m", "immediate")

    def stop(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self._pg_ctl("stop", "-m", "immediate")
