"""Index calls with a deadline: each runs on a daemon thread of the index, the caller waits at most
the deadline and then gets ``IndexUnavailable`` whatever the index is doing.

* Embedded Chroma: one thread, calls one at a time. Chroma's embedded (Rust) client holds the
  GIL for the whole of a write (measured: an upsert of 5,000 vectors left another Python thread
  4 ticks of 1 ms in 12 s), so running calls side by side gains nothing, and it has an open
  report of a deadlock under concurrent writes and queries (chroma-core/chroma#4038).
* Chroma server: a few threads, calls side by side; the HTTP client inside also has a timeout
  per request (``index/connection.py``), so a thread given up on ends by itself.

A call still queued when its caller gives up (deadline, cancelled turn) never runs. A call that
runs past the index-wide deadline (``chroma.call_timeout_seconds``) stalls the index: every later
call fails at once instead of queueing behind it, until it returns. A shorter deadline of one
caller (``timeout=``, e.g. recall's share of the reply budget) only stops that caller waiting.
The threads are daemons, so a call that never returns cannot keep the process from exiting.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TypeVar, cast

from ..errors import IndexUnavailable

_R = TypeVar("_R")
_Job = tuple[str, Callable[[], object], "Future[object]"]
logger = logging.getLogger("cognition")


class IndexCalls:
    """Runs index calls on ``workers`` daemon threads, each call with a deadline (module docstring)."""

    def __init__(
        self, timeout: float, workers: int = 1, name: str = "cognition-chroma", label: str = "embedded Chroma"
    ) -> None:
        #: The index-wide deadline of one call, in seconds.
        self.timeout = timeout
        self.workers = max(1, workers)
        self._name = name
        self._label = label
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._local = threading.local()
        self._state = threading.Lock()
        #: The calls running now: operation and start (monotonic).
        self._running: dict[Future[object], tuple[str, float]] = {}
        #: Running calls that outlived the index-wide deadline; the index is stalled while any runs.
        self._stuck: set[Future[object]] = set()
        #: Why calls fail at once: a call outlived the index-wide deadline and has not returned yet.
        self.stalled: str | None = None

    @property
    def running(self) -> int:
        """How many calls are running now (given-up ones included)."""
        return len(self._running)

    def on_index_thread(self) -> bool:
        return bool(getattr(self._local, "serving", False))

    def run(self, operation: str, call: Callable[[], _R], timeout: float | None = None) -> _R:
        """Run ``call`` on an index thread and wait for it at most ``timeout`` (default: the
        index-wide deadline). A call made by another index call runs in place."""
        if self.on_index_thread():
            return call()
        deadline = self._deadline(timeout)
        future = self._submit(operation, call)
        try:
            return cast(_R, future.result(timeout=deadline))
        except FutureTimeout:
            if not future.cancel() and future.done():  # answered just now
                return cast(_R, future.result())
            raise self._gave_up(operation, future, deadline) from None

    async def run_async(self, operation: str, call: Callable[[], _R], timeout: float | None = None) -> _R:
        """``run`` for a caller on the event loop: the loop waits for the index thread itself,
        two thread hand-offs per call instead of four through a worker thread."""
        deadline = self._deadline(timeout)
        future = self._submit(operation, call)
        result = await wait_future(future, deadline)
        if result is MISSED:
            raise self._gave_up(operation, future, deadline)
        return cast(_R, result)

    def _deadline(self, timeout: float | None) -> float:
        return self.timeout if timeout is None else min(max(timeout, 0.0), self.timeout)

    def _submit(self, operation: str, call: Callable[[], _R]) -> Future[object]:
        stalled = self.stalled
        if stalled is not None:
            raise IndexUnavailable(en=stalled)
        future: Future[object] = Future()
        with self._state:  # never behind the end of a stopped generation of threads
            self._jobs.put((operation, call, future))
        self._ensure_threads()
        return future

    def _gave_up(self, operation: str, future: Future[object], waited: float) -> IndexUnavailable:
        """The call got no answer in time: cancelled while still queued (it will not run), or
        still running; running past the index-wide deadline stalls the index until it returns."""
        now = time.monotonic()
        with self._state:
            overdue = [
                (started, operation_name, running)
                for running, (operation_name, started) in self._running.items()
                if now - started >= self.timeout or (running is future and waited >= self.timeout)
            ]
            if overdue:
                started, stuck, _ = min(overdue, key=lambda item: item[0])
                self._stuck.update(running for _, _, running in overdue)
                self.stalled = (
                    f"{self._label}: {stuck} has not returned for {max(now - started, self.timeout):.3g} s; "
                    "vector search is off until it does (restart the bot if it stays so)"
                )
                logger.error("[cognition] stage=vector_index %s", self.stalled)
        return IndexUnavailable(en=f"{self._label}: {operation} got no answer within {waited:.3g} s")

    def _ensure_threads(self) -> None:
        if len(self._threads) >= self.workers:
            return
        with self._state:
            while len(self._threads) < self.workers:
                name = self._name if self.workers == 1 else f"{self._name}-{len(self._threads) + 1}"
                thread = threading.Thread(target=self._serve, args=(self._jobs,), name=name, daemon=True)
                thread.start()
                self._threads.append(thread)

    def stop(self) -> None:
        """Let the index threads end once the calls queued before now have run (a stuck call's
        thread ends when it returns); a later call starts new threads on a new queue."""
        with self._state:
            threads, self._threads = self._threads, []
            jobs, self._jobs = self._jobs, queue.SimpleQueue()
        for _ in threads:
            jobs.put(None)

    def _serve(self, jobs: queue.SimpleQueue[_Job | None]) -> None:
        self._local.serving = True
        while (job := jobs.get()) is not None:
            operation, call, future = job
            if not future.set_running_or_notify_cancel():
                continue
            with self._state:
                self._running[future] = (operation, time.monotonic())
            try:
                result = call()
            except BaseException as error:  # handed to the caller
                future.set_exception(error)
            else:
                future.set_result(result)
            finally:
                self._finished(operation, future)

    def _finished(self, operation: str, future: Future[object]) -> None:
        with self._state:
            del self._running[future]
            self._stuck.discard(future)
            if self.stalled is not None and not self._stuck:
                logger.warning("[cognition] stage=vector_index recovered: %s returned", operation)
                self.stalled = None


#: What ``wait_future`` returns when the call had no answer in time.
MISSED = object()


async def wait_future(future: Future[object], timeout: float) -> object:
    """Wait from the event loop for a call running on a thread, at most ``timeout``: its result,
    or ``MISSED``. The call is cancelled if it has not started (a queued call of a caller who gave
    up or was cancelled never runs); one already running finishes on its thread."""
    waiter = asyncio.wrap_future(future)
    try:
        done, _ = await asyncio.wait({waiter}, timeout=timeout)
    except asyncio.CancelledError:
        waiter.cancel()
        raise
    if done:
        # cancelled by the thread that was to run it, once its deadline had passed (``QueryLane``)
        return MISSED if future.cancelled() else waiter.result()
    if not future.cancel() and future.done():  # answered just now
        return future.result()
    waiter.cancel()
    return MISSED
