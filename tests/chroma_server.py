"""A Chroma server of a test's or a bench's own (``chroma run`` on a free 127.0.0.1 port and its
own folder), which can be stopped, killed and started again on the same port and folder."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class ChromaServer:
    """``chroma run`` on ``folder``; with ``log``, its output is appended there (else dropped).

    ``index_cache``: how many collections' HNSW indexes the server keeps in memory (its
    ``segment_manager.hnsw_index_pool_cache_config``, given in a configuration file beside
    ``folder``). By default it keeps up to 65,536, each about 2.8 MB for 100 vectors of 512
    dimensions, loaded and never evicted: a bank of 10,000 chats would need some 28 GB."""

    def __init__(self, folder: Path, log: Path | None = None, index_cache: int | None = None) -> None:
        self.folder = folder
        self.log = log
        self.index_cache = index_cache
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    def _argv(self) -> list[str]:
        chroma = str(Path(sys.executable).with_name("chroma"))
        if self.index_cache is None:
            return [chroma, "run", "--host", "127.0.0.1", "--port", str(self.port), "--path", str(self.folder)]
        # ``chroma run`` takes either its flags or a configuration file, not both
        config = self.folder.with_name(f"{self.folder.name}.yaml")
        config.write_text(
            f'port: {self.port}\nlisten_address: "127.0.0.1"\npersist_path: "{self.folder}"\n'
            f"segment_manager:\n  hnsw_index_pool_cache_config:\n    memory:\n      capacity: {self.index_cache}\n",
            encoding="utf-8",
        )
        return [chroma, "run", str(config)]

    def start(self) -> None:
        output = open(self.log, "ab") if self.log is not None else subprocess.DEVNULL  # noqa: SIM115 - the child keeps it
        self.process = subprocess.Popen(
            self._argv(),
            stdout=output,
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
        where = f"; see {self.log}" if self.log is not None else ""
        raise RuntimeError(f"the Chroma server did not start{where}")

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self) -> None:
        """Terminate it (a clean shutdown) and wait."""
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=30)
            self.process = None

    def kill(self) -> None:
        """SIGKILL it (a crash) and wait."""
        if self.running:
            assert self.process is not None
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(30)
