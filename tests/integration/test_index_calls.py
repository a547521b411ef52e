"""Index calls: the call threads with their deadlines (index/calls.py), driven from the event
loop and from threads; missing collections and the listing of stored ids on real Chroma."""

from __future__ import annotations

import asyncio
import random
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from amrita_plugin_cognition.config import ChromaSettings
from amrita_plugin_cognition.domain.records import Scope
from amrita_plugin_cognition.index import inventory as inventory_module
from amrita_plugin_cognition.index.calls import IndexCalls
from amrita_plugin_cognition.index.vector import (
    ChromaVectorIndex,
    CollectionMissing,
    EmbeddedCalls,
    IndexUnavailable,
    collection_name,
)


async def test_run_async_runs_on_the_index_thread_and_nested_calls_do_not_wait_for_it() -> None:
    calls = EmbeddedCalls(timeout=5)

    def outer() -> tuple[str, str]:
        # an index call made by another call runs in place (it would deadlock if queued)
        inner = calls.run("inner", lambda: threading.current_thread().name)
        return threading.current_thread().name, inner

    assert await calls.run_async("outer", outer) == ("cognition-chroma", "cognition-chroma")


async def _running_and_queued(
    calls: IndexCalls, hold: Callable[[], object]
) -> tuple[asyncio.Future[object], asyncio.Future[object], list[str]]:
    """A call that runs ``hold`` on an index thread, and a call queued behind it (once the first
    has started); each adds its name ("running", "queued") to the list returned when it runs."""
    started = threading.Event()
    ran: list[str] = []

    def running() -> None:
        started.set()
        hold()
        ran.append("running")

    first = asyncio.ensure_future(calls.run_async("running", running))
    await asyncio.to_thread(started.wait, 5)
    second = asyncio.ensure_future(calls.run_async("queued", lambda: ran.append("queued")))
    return first, second, ran


async def test_a_cancelled_caller_s_queued_call_never_runs() -> None:
    calls = EmbeddedCalls(timeout=5)
    release = threading.Event()
    first, second, ran = await _running_and_queued(calls, lambda: release.wait(5))
    await asyncio.sleep(0.05)
    second.cancel()
    with pytest.raises(asyncio.CancelledError):
        await second
    release.set()
    await first
    assert await calls.run_async("after", lambda: "done") == "done"  # the queue moved past it
    assert ran == ["running"]


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


async def test_a_caller_s_shorter_deadline_gives_up_without_stalling_the_index() -> None:
    calls = EmbeddedCalls(timeout=5)
    release = threading.Event()
    started = time.monotonic()
    with pytest.raises(IndexUnavailable, match=r"no answer within 0\.2 s"):
        await calls.run_async("slow query", lambda: release.wait(5), timeout=0.2)
    assert time.monotonic() - started < 1
    assert calls.stalled is None  # slow for this caller is not stuck for the index
    release.set()
    assert await calls.run_async("next", lambda: "answered") == "answered"


def test_server_mode_calls_run_side_by_side_and_a_stuck_one_stalls_the_index() -> None:
    calls = IndexCalls(timeout=0.5, workers=3, name="test-http", label="Chroma server")
    barrier = threading.Barrier(3, timeout=5)
    results: list[object] = []
    threads = [threading.Thread(target=lambda: results.append(calls.run("q", barrier.wait))) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert sorted(results) == [0, 1, 2]  # all three waited for each other: they ran at once
    release = threading.Event()
    with pytest.raises(IndexUnavailable, match="no answer within"):
        calls.run("hung request", lambda: release.wait(10))
    assert calls.stalled is not None and "Chroma server: hung request has not returned" in calls.stalled
    started = time.monotonic()
    with pytest.raises(IndexUnavailable, match="has not returned"):
        calls.run("next", lambda: "never queued")
    assert time.monotonic() - started < 0.1  # fails at once instead of waiting its deadline
    release.set()
    deadline = time.monotonic() + 5
    while calls.stalled is not None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert calls.run("next", lambda: "answered") == "answered"


# Real Chroma (a temp folder, or the session's server with COGNITION_TEST_BACKEND=server).


def _index(tmp_path: Path, chroma_port: int | None) -> ChromaVectorIndex:
    if chroma_port:
        return ChromaVectorIndex(ChromaSettings(mode="server", host="127.0.0.1", port=chroma_port), tmp_path)
    return ChromaVectorIndex(ChromaSettings(mode="embedded", path=str(tmp_path / "chroma")), tmp_path)


def _vectors(count: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).random((count, 8), dtype=np.float32)


def _metadatas(count: int) -> list[dict[str, str | int | float | bool]]:
    return [{"kind": "fact"} for _ in range(count)]


def _index_threads(prefix: str) -> set[threading.Thread]:
    return {thread for thread in threading.enumerate() if thread.name.startswith(prefix)}


async def test_a_stopped_index_ends_its_threads_after_the_queued_calls_and_a_later_call_starts_new_ones() -> None:
    calls = IndexCalls(timeout=5, workers=2, name="cognition-test-stop")
    running, queued, ran = await _running_and_queued(calls, lambda: time.sleep(0.2))
    await asyncio.sleep(0)
    threads = _index_threads("cognition-test-stop")
    assert len(threads) == 2
    calls.stop()
    await asyncio.gather(running, queued)  # what was queued before the stop still runs
    for thread in threads:
        thread.join(5)
        assert not thread.is_alive()
    assert sorted(ran) == ["queued", "running"]
    assert await calls.run_async("after", lambda: threading.current_thread().name) == "cognition-test-stop-1"
    calls.stop()


def test_closing_an_index_ends_its_thread(tmp_path: Path, chroma_port: int | None) -> None:
    before = _index_threads("cognition-chroma")
    index = _index(tmp_path, chroma_port)
    index.upsert(1, "b1", Scope("group", "20001"), [1], _vectors(1), _metadatas(1))
    mine = _index_threads("cognition-chroma") - before
    assert mine
    index.close()
    for thread in mine:
        thread.join(5)
        assert not thread.is_alive(), thread.name


def test_a_dropped_collection_raises_collection_missing(tmp_path: Path, chroma_port: int | None) -> None:
    generation = random.randrange(10**6, 10**7)  # the server is shared by the whole session
    bot, scope = f"b{uuid.uuid4().hex[:8]}", Scope("group", "20001")
    reader, writer, other = (_index(tmp_path, chroma_port) for _ in range(3))
    writer.upsert(generation, bot, scope, [1, 2], _vectors(2), _metadatas(2))
    assert {hit.memory_id for hit in reader.query(generation, bot, scope, _vectors(1)[0], 5)} == {1, 2}
    # another index (in the bot: a reindex in another process) switches generation and drops this
    # one (only this test's collection: a server is shared by the session)
    other._drop_collection(collection_name(generation, bot, scope))
    with pytest.raises(CollectionMissing) as caught:
        reader.query(generation, bot, scope, _vectors(1)[0], 5)
    assert isinstance(caught.value, IndexUnavailable) and caught.value.collection.startswith(f"cog{generation}-")
    with pytest.raises(CollectionMissing):
        writer.upsert(generation, bot, scope, [3], _vectors(1), _metadatas(1))
    # once told, a collection that does not exist gives no hits, unless the caller requires it
    assert reader.query(generation, bot, scope, _vectors(1)[0], 5) == []
    with pytest.raises(CollectionMissing):
        reader.query(generation, bot, scope, _vectors(1)[0], 5, missing_ok=False)
    assert reader.collection_ids(generation, bot, scope) == set()
    # the caller's retry (same generation after re-reading it) writes the collection anew
    writer.upsert(generation, bot, scope, [3], _vectors(1), _metadatas(1))
    assert reader.collection_ids(generation, bot, scope) == {3}
    other._drop_collection(collection_name(generation, bot, scope))


def test_stored_ids_pages_through_every_collection_of_a_generation(
    tmp_path: Path, chroma_port: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    generation = random.randrange(10**6, 10**7)
    bot = f"b{uuid.uuid4().hex[:8]}"
    group, private, legacy = Scope("group", "20001"), Scope("private", "10001"), Scope("group", "20002")
    index = _index(tmp_path, chroma_port)
    index.upsert(generation, bot, group, list(range(1, 21)), _vectors(20), _metadatas(20))
    index.upsert(generation, bot, private, [31, 32, 33], _vectors(3, 1), _metadatas(3))
    index.upsert(generation + 1, bot, group, [99], _vectors(1, 2), _metadatas(1))  # another generation
    # a collection made before collections named their owner: created without the metadata
    index._collection(collection_name(generation, bot, legacy), create=True)
    index.upsert(generation, bot, legacy, [41, 42], _vectors(2, 3), _metadatas(2))
    monkeypatch.setattr(inventory_module, "ID_PAGE_SIZE", 7)
    pages: list[tuple[object, ...]] = []
    real_page = index._id_page
    monkeypatch.setattr(index, "_id_page", lambda *args: pages.append(args) or real_page(*args))

    stored = index.stored_ids(generation)
    assert stored.by_scope == {(bot, group): set(range(1, 21)), (bot, private): {31, 32, 33}}
    assert stored.unmapped == {collection_name(generation, bot, legacy): {41, 42}}
    assert stored.total == 25
    assert sum(1 for args in pages if args[0] == collection_name(generation, bot, group)) == 3  # 7 + 7 + 6
    known = index.stored_ids(generation, known_scopes=[(bot, legacy)])
    assert known.by_scope[(bot, legacy)] == {41, 42} and known.unmapped == {}
    assert index.collection_ids(generation, bot, group) == set(range(1, 21))
    for found_generation, scope in ((generation, group), (generation, private), (generation, legacy)):
        index._drop_collection(collection_name(found_generation, bot, scope))
    index._drop_collection(collection_name(generation + 1, bot, group))
