"""A process that has imported the CLI's libraries once and forks a child for each command.

Every ``python -m amrita_plugin_cognition`` call of the tests spent 2–3 s of CPU importing NoneBot,
SQLAlchemy, alembic, Chroma and numpy before doing its work, and the slow tests make about a
hundred such calls. This process imports those libraries (not this package's plugin, nothing
initialised, no thread started) and then, for each command, forks: the child is a process of its
own, as the operator's would be (own NoneBot, own database connections, own exit code, own
stdout and stderr), and runs ``python -m amrita_plugin_cognition`` the way the interpreter
would (``runpy`` as ``__main__``, the working directory first on ``sys.path``), with the
environment the test gave. What the child does not repeat is reading those libraries from disk.

Protocol (one command at a time): one JSON line on stdin ``{"argv", "env", "cwd", "stdout",
"stderr"}`` (the last two: files the child writes); two JSON lines back, ``{"pid"}`` when the
child is started and ``{"code"}`` when it ended. A test that is about the interpreter's own start
(what a command imports, how long it takes) runs ``python -m`` itself.

``Zygote`` is the tests' side: ``run`` has the signature and the result of ``subprocess.run``."""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import json
import os
import runpy
import select
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

#: Imported here once; each is something every command's start reads from disk again.
PRELOAD = (
    "click",
    "rich.console",
    "pydantic",
    "numpy",
    "sqlalchemy",
    "sqlalchemy.ext.asyncio",
    "aiosqlite",
    "asyncpg",
    "alembic.command",
    "alembic.runtime.environment",
    "alembic.runtime.migration",
    "alembic.autogenerate",
    "nonebot",
    "nonebot.adapters",
    "nonebot.drivers",
    "chromadb",
    "httpx",
    "tenacity",
    "cachetools",
)


def _child(request: dict) -> None:  # type: ignore[type-arg]
    """In the forked child: become the command's process, then run it (never returns)."""
    code = 1
    try:
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        tempfile.tempdir = None  # found again from this environment's TMPDIR, as a new process would
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
            target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(target, fd)
            os.close(target)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the process's own descriptors
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.argv = ["amrita_plugin_cognition", *request["argv"]]
        sys.path[0] = os.getcwd()  # as ``python -m`` puts it
        runpy.run_module("amrita_plugin_cognition", run_name="__main__", alter_sys=True)  # ends with os._exit
        code = 0
    except SystemExit as finished:
        code = finished.code if isinstance(finished.code, int) else 1
    except BaseException:  # the child reports whatever it was, then leaves
        import traceback

        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def serve() -> None:
    for name in PRELOAD:
        with contextlib.suppress(ImportError):  # an optional one not installed: the child imports what it needs
            __import__(name)
    # nonebot-plugin-orm maps every installed distribution to its top-level modules when it is
    # imported (half a second of reading metadata files); nothing is installed between commands.
    importlib.metadata.packages_distributions = functools.cache(importlib.metadata.packages_distributions)
    importlib.metadata.packages_distributions()
    # Nothing of the plugin's own: ``__main__`` imports the package before NoneBot is up and drops
    # it again (``standalone.forget_early_import``); a preloaded copy would only be dropped too.
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request)
        print(json.dumps({"pid": pid}), flush=True)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"code": os.waitstatus_to_exitcode(status)}), flush=True)


class Zygote:
    """The tests' side: one zygote per test process, started on first use, ended at exit."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()

    def run(
        self, args: list[str], *, env: dict[str, str], cwd: Path | None, timeout: float
    ) -> subprocess.CompletedProcess[str]:
        """``args`` after ``python -m amrita_plugin_cognition``, in a child of the zygote."""
        with self._lock, tempfile.TemporaryDirectory(prefix="cli-zygote-") as folder:
            process = self._started()
            out, err = Path(folder) / "stdout", Path(folder) / "stderr"
            request = {"argv": args, "env": env, "cwd": str(cwd or Path.cwd()), "stdout": str(out), "stderr": str(err)}
            assert process.stdin is not None
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
            pid = self._reply(timeout)["pid"]
            try:
                code = self._reply(timeout)["code"]
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                self._reply(30)
                raise
            command = [sys.executable, "-m", "amrita_plugin_cognition", *args]
            read = functools.partial(Path.read_text, encoding="utf-8", errors="replace")
            return subprocess.CompletedProcess(command, code, read(out), read(err))

    def _started(self) -> subprocess.Popen[str]:
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                [sys.executable, __file__],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
            )
            self._reply(120)  # ready
        return self._process

    def _reply(self, timeout: float) -> dict:  # type: ignore[type-arg]
        assert self._process is not None and self._process.stdout is not None
        ready, _, _ = select.select([self._process.stdout], [], [], timeout)
        if not ready:
            raise subprocess.TimeoutExpired(self._process.args, timeout)
        line = self._process.stdout.readline()
        if not line:
            raise RuntimeError(f"the CLI zygote ended (exit {self._process.wait(30)})")
        return json.loads(line)

    def close(self) -> None:
        if self._process is not None and self._process.poll() is None:
            assert self._process.stdin is not None
            self._process.stdin.close()
            try:
                self._process.wait(30)
            except subprocess.TimeoutExpired:
                self._process.kill()


if __name__ == "__main__":
    serve()
