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
    """``chroma run`` on ``folder``; with ``log``, its output is appended there (else dropped)."""

    def __init__(self, folder: Path, log: Path | None = None) -> None:
        self.folder = folder
        self.log = log
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        chroma = Path(sys.executable).with_name("chroma")
        output = open(self.log, "ab") if self.log is not None else subprocess.DEVNULL  # noqa: SIM115 - the child keeps it
        self.process = subprocess.Popen(
            [str(chroma), "run", "--host", "127.0.0.1", "--port", str(self.port), "--path", str(self.folder)],
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
