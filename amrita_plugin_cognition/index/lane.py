"""A thread for work a caller waits for with a deadline (the local model's query embeddings)."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import TypeVar, cast

from ..errors import EmbedderUnavailable
from .calls import MISSED, wait_future

#: Jobs that may wait for the lane; more are refused at once.
QUERY_QUEUE_SIZE = 8

_R = TypeVar("_R")
#: A job: the call, its caller's future, and the monotonic time its caller stops waiting.
_LaneJob = tuple[Callable[[], object], "Future[object]", float]


class QueryLane:
    """One daemon thread with a short queue for work a caller waits for with a deadline.

    A caller that gives up stops waiting; its job, if still queued, never runs (the lane reads the
    caller's deadline itself, so a busy event loop that has not cancelled the job yet changes
    nothing), and one already running finishes on the lane (it cannot be interrupted). Threads
    never pile up: there is one, and when the queue is full a new job is refused at once."""

    def __init__(self, name: str, capacity: int = QUERY_QUEUE_SIZE) -> None:
        self._name = name
        self._jobs: queue.Queue[_LaneJob] = queue.Queue(maxsize=capacity)
        self._thread: threading.Thread | None = None
        self._start = threading.Lock()

    async def run(self, call: Callable[[], _R], timeout: float, what: str) -> _R:
        """``call()`` on the lane; ``EmbedderUnavailable`` if it has no answer within ``timeout``."""
        future: Future[object] = Future()
        try:
            self._jobs.put_nowait((call, future, time.monotonic() + timeout))
        except queue.Full:
            raise EmbedderUnavailable(en=f"{what}: {self._jobs.maxsize} queries already waiting") from None
        self._ensure_thread()
        result = await wait_future(future, timeout)
        if result is MISSED:
            raise EmbedderUnavailable(en=f"{what}: no answer within {timeout:.3g} s")
        return cast(_R, result)

    def _ensure_thread(self) -> None:
        if self._thread is not None:
            return
        with self._start:
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name=self._name, daemon=True)
                self._thread.start()

    def _serve(self) -> None:
        while True:
            call, future, deadline = self._jobs.get()
            if time.monotonic() >= deadline:
                future.cancel()  # its caller has given up, whether or not its loop said so yet
                continue
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = call()
            except BaseException as error:  # handed to the caller
                future.set_exception(error)
            else:
                future.set_result(result)
