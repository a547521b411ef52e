"""One owner per embedded Chroma folder.

Two processes writing one embedded Chroma folder (its SQLite file and HNSW segment files) can
corrupt it, and Chroma does not stop the second one. So the process that opens a folder holds an
exclusive file lock in it (``cognition.lock``, through ``filelock``) for as long as it has the
folder open, and writes its pid, host and command beside it (``cognition.lock.owner``); a second
process gets ``IndexLocked`` at once, naming the holder. The kernel drops the lock when the
holder exits, however it exits, so a crash leaves no stale lock (a stale owner file is simply
overwritten by the next holder).

Within one process every index on the same folder shares the one hold (Chroma shares one client
system per folder in a process too); the lock goes when the last of them releases it.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sys
import threading
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from filelock import BaseFileLock, FileLock, Timeout

from ..domain.clock import UTC
from ..errors import IndexLocked, IndexUnavailable

LOCK_FILE_NAME = "cognition.lock"
OWNER_FILE_NAME = "cognition.lock.owner"
logger = logging.getLogger("cognition")


@dataclass(slots=True)
class _Held:
    lock: BaseFileLock
    users: int


_HELD: dict[Path, _Held] = {}
_GUARD = threading.Lock()


class FolderHold:
    """This process's hold on one embedded Chroma folder; ``release`` once."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._released = False

    def release(self) -> None:
        with _GUARD:
            if self._released:
                return
            self._released = True
            held = _HELD.get(self.folder)
            if held is None:
                return
            held.users -= 1
            if held.users > 0:
                return
            del _HELD[self.folder]
            try:
                (self.folder / OWNER_FILE_NAME).unlink(missing_ok=True)
            except OSError as error:
                logger.warning("[cognition] stage=vector_index owner file not removed: %s", error)
            held.lock.release()


def hold_folder(folder: Path) -> FolderHold:
    """Take (or share, within this process) the exclusive hold on ``folder``.

    Raises ``IndexLocked`` at once when another process holds it, ``IndexUnavailable`` when the
    lock file cannot be created at all.
    """
    folder = folder.resolve()
    with _GUARD:
        held = _HELD.get(folder)
        if held is None:
            try:
                folder.mkdir(parents=True, exist_ok=True)
                lock = FileLock(str(folder / LOCK_FILE_NAME), timeout=0, thread_local=False)
                lock.acquire(timeout=0)
            except Timeout:
                raise _locked(folder) from None
            except OSError as error:
                raise IndexUnavailable(en=f"cannot lock the Chroma folder {folder}: {error}") from error
            _write_owner(folder)
            held = _HELD[folder] = _Held(lock, 0)
        held.users += 1
    return FolderHold(folder)


def read_owner(folder: Path) -> dict[str, object] | None:
    """What the holder of ``folder`` wrote about itself (pid, host, since, command), if readable."""
    try:
        data = json.loads((folder / OWNER_FILE_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write_owner(folder: Path) -> None:
    owner = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "since": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": " ".join(sys.argv)[:300],
    }
    path = folder / OWNER_FILE_NAME
    partial = path.with_name(f"{OWNER_FILE_NAME}.{os.getpid()}.tmp")
    try:
        partial.write_text(json.dumps(owner, ensure_ascii=False), encoding="utf-8")
        os.replace(partial, path)
    except OSError as error:  # the lock itself is what protects the folder
        logger.warning("[cognition] stage=vector_index owner file not written: %s", error)


def _locked(folder: Path) -> IndexLocked:
    owner = read_owner(folder) or {}
    pid = owner.get("pid")
    who_zh = f"进程号 {pid}" if pid else "进程号未知"
    details = [f"pid {pid}" if pid else "pid unknown"]
    details += [f"{key} {owner[key]}" for key in ("host", "since") if owner.get(key)]
    return IndexLocked(
        f"向量索引文件夹 {folder} 正被另一个进程使用（{who_zh}）。"
        "请先停止机器人，或在机器人运行时使用不需要向量索引的命令。",
        en=(
            f"embedded Chroma folder {folder} is held by another process ({', '.join(details)}): "
            "stop the bot first, or while it runs use commands that do not need the vector index"
        ),
    )
