"""The embedded index's call thread (index/vector.py ``EmbeddedCalls``), driven from the event loop."""

from __future__ import annotations

import asyncio
import threading

import pytest

from amrita_plugin_cognition.index.vector import EmbeddedCalls, IndexUnavailable


async def test_run_async_runs_on_the_index_thread_and_nested_calls_do_not_wait_for_it() -> None:
    calls = EmbeddedCalls(timeout=5)

    def outer() -> tuple[str, str]:
        # an index call made by another call runs in place (it would deadlock if queued)
        inner = calls.run("inner", lambda: threading.current_thread().name)
        return threading.current_thread().name, inner

    assert await calls.run_async("outer", outer) == ("cognition-chroma", "cognition-chroma")


async def test_a_cancelled_caller_s_queued_call_never_runs() -> None:
    calls = EmbeddedCalls(timeout=5)
    release, busy = threading.Event(), threading.Event()
    ran: list[str] = []

    def blocker() -> None:
        busy.set()
        release.wait(5)
        ran.append("blocker")

    first = asyncio.ensure_future(calls.run_async("blocker", blocker))
    await asyncio.to_thread(busy.wait, 5)
    second = asyncio.ensure_future(calls.run_async("queued", lambda: ran.append("queued")))
    await asyncio.sleep(0.05)
    second.cancel()
    with pytest.raises(asyncio.CancelledError):
        await second
    release.set()
    await first
    assert await calls.run_async("after", lambda: "done") == "done"  # the queue moved past it
    assert ran == ["blocker"]


async def test_run_async_gives_up_at_the_deadline_and_fails_fast_until_the_call_returns() -> None:
    calls = EmbeddedCalls(timeout=0.3)
    release = threading.Event()
    with pytest.raises(IndexUnavailable, match="no answer within"):
        await calls.run_async("stuck", lambda: release.wait(10))
    assert calls.stalled is not None and "stuck" in calls.stalled
    with pytest.raises(IndexUnavailable, match="has not returned"):
        await calls.run_async("next", lambda: "never queued")
    release.set()
    for _ in range(50):
        if calls.stalled is None:
            break
        await asyncio.sleep(0.02)
    assert await calls.run_async("next", lambda: "answered") == "answered"
