"""The services ``bench/chaos.py`` starts, kills and restarts: a Chroma server (``chroma run``,
``tests/chroma_server.py``) and a
throw-away PostgreSQL cluster of its own (``initdb`` + ``pg_ctl`` as the ``postgres`` user, in a temp
folder, on a free 127.0.0.1 port: the machine's shared server is never restarted)."""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import subprocess
from pathlib import Path

from chroma_server import free_port  # tests/ (on the path of bench/chaos.py)


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
