"""One owner per embedded Chroma folder: a second process is refused at once, with the holder's
pid and what to do, and never touches the folder; the folder is free again when the holder exits."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import numpy as np
import pytest
from processes import start_index_holder

from amrita_plugin_cognition.config import ChromaSettings
from amrita_plugin_cognition.domain.records import Scope
from amrita_plugin_cognition.index.owner import LOCK_FILE_NAME, OWNER_FILE_NAME
from amrita_plugin_cognition.index.vector import ChromaVectorIndex, IndexLocked, IndexUnavailable

# The lock of an embedded Chroma folder, in folders of its own: the server run skips it.
pytestmark = pytest.mark.embedded_only

SCOPE = Scope("group", "20001")
WHAT_TO_DO = "请先停止机器人，或在机器人运行时使用不需要向量索引的命令"


def _index(folder: Path) -> ChromaVectorIndex:
    return ChromaVectorIndex(ChromaSettings(mode="embedded", path=str(folder)), folder)


def test_a_second_process_is_refused_with_the_holder_s_pid_and_the_data_stays_intact(tmp_path: Path) -> None:
    folder = tmp_path / "chroma"
    holder = start_index_holder(folder)
    try:
        second = _index(folder)
        started = time.monotonic()
        with pytest.raises(IndexLocked) as caught:
            second.open()
        assert time.monotonic() - started < 1  # at once, not after a wait
        assert f"进程号 {holder.pid}" in caught.value.zh and WHAT_TO_DO in caught.value.zh
        assert f"pid {holder.pid}" in str(caught.value) and str(folder) in str(caught.value)
        # every call is refused the same way, and none waits on the folder
        with pytest.raises(IndexLocked):
            second.query(1, "b1", SCOPE, np.ones(8, dtype=np.float32), 5)
        assert json.loads((folder / OWNER_FILE_NAME).read_text(encoding="utf-8"))["pid"] == holder.pid
    finally:
        assert holder.stdin is not None
        holder.stdin.close()  # the holder exits normally
        holder.wait(60)
    # the holder is gone: the folder is free, and what it wrote is all there
    index = _index(folder)
    index.open()
    assert index.count(1, "b1", SCOPE) == 3
    hits = index.query(1, "b1", SCOPE, np.eye(3, 8, dtype=np.float32)[1], 1)
    assert [hit.memory_id for hit in hits] == [2]
    assert json.loads((folder / OWNER_FILE_NAME).read_text(encoding="utf-8"))["pid"] == os.getpid()
    index.close()
    assert not (folder / OWNER_FILE_NAME).exists()


def test_a_killed_holder_leaves_no_lock_behind(tmp_path: Path) -> None:
    folder = tmp_path / "chroma"
    holder = start_index_holder(folder)
    holder.send_signal(signal.SIGKILL)
    holder.wait(30)
    assert (folder / OWNER_FILE_NAME).exists()  # stale: the kernel dropped the lock itself
    index = _index(folder)
    index.open()
    assert index.count(1, "b1", SCOPE) == 3
    index.close()


def test_indexes_of_one_process_share_the_folder_until_the_last_one_closes(tmp_path: Path) -> None:
    from filelock import FileLock, Timeout

    folder = tmp_path / "chroma"
    first, second = _index(folder), _index(folder)
    first.upsert(1, "b1", SCOPE, [1], np.ones((1, 8), dtype=np.float32), [{"kind": "fact"}])
    assert second.count(1, "b1", SCOPE) == 1  # the same process: no refusal
    outsider = FileLock(str(folder / LOCK_FILE_NAME), timeout=0)  # as another process would try
    first.close()
    with pytest.raises(Timeout):
        outsider.acquire(timeout=0)  # the second index still holds it
    assert second.count(1, "b1", SCOPE) == 1
    second.close()
    outsider.acquire(timeout=0)  # free once the last index closed
    outsider.release()


def test_a_server_index_takes_no_lock(tmp_path: Path) -> None:
    index = ChromaVectorIndex(ChromaSettings(mode="server", host="127.0.0.1", port=9), tmp_path)
    with pytest.raises(IndexUnavailable):  # nothing listens there; only the folder matters here
        index.open()
    assert not any(tmp_path.rglob(LOCK_FILE_NAME))
