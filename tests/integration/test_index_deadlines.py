"""Deadlines in the index layer: a hung (not dead) Chroma server and a slow (not failing)
embedder degrade like dead ones, within the caller's deadline."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from amrita_plugin_cognition.config import ChromaSettings
from amrita_plugin_cognition.domain.records import Scope
from amrita_plugin_cognition.index.embedders import (
    CachedQueryEmbedder,
    EmbedderUnavailable,
    LocalUSEEmbedder,
    OllamaEmbedder,
    OpenAIEmbedder,
)
from amrita_plugin_cognition.index.lane import QUERY_QUEUE_SIZE
from amrita_plugin_cognition.index.vector import ChromaVectorIndex, IndexUnavailable, collection_name

DEADLINE = 1.0  # the smallest chroma.call_timeout_seconds the configuration accepts
SCOPE = Scope("group", "20001")


class SilentServer:
    """Accepts TCP connections on 127.0.0.1 and never answers (a hung server)."""

    def __init__(self) -> None:
        self._socket = socket.create_server(("127.0.0.1", 0), backlog=64)
        self._socket.settimeout(0.1)
        self.port = self._socket.getsockname()[1]
        self._connections: list[socket.socket] = []
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._accept, name="silent-server", daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stopped.is_set():
            with contextlib.suppress(TimeoutError):
                connection, _ = self._socket.accept()
                self._connections.append(connection)  # read nothing, answer nothing

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join(5)
        for connection in [*self._connections, self._socket]:
            connection.close()


class HangingProxy:
    """A TCP proxy to a real server that can be told to hang: while ``hung``, it forwards
    nothing (in either direction) on new and open connections alike."""

    def __init__(self, upstream_port: int) -> None:
        self._upstream = upstream_port
        self._socket = socket.create_server(("127.0.0.1", 0), backlog=64)
        self._socket.settimeout(0.1)
        self.port = self._socket.getsockname()[1]
        self.hung = threading.Event()
        self._stopped = threading.Event()
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, name="hanging-proxy", daemon=True).start()

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                client, _ = self._socket.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self._upstream))
            self._sockets += [client, upstream]
            for source, target in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, target), daemon=True).start()

    def _pump(self, source: socket.socket, target: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                while self.hung.is_set() and not self._stopped.is_set():
                    time.sleep(0.02)
                target.sendall(data)
        for end in (source, target):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)

    def stop(self) -> None:
        self._stopped.set()
        for end in [*self._sockets, self._socket]:
            with contextlib.suppress(OSError):
                end.close()


@pytest.fixture
def silent_server() -> Iterator[SilentServer]:
    server = SilentServer()
    yield server
    server.stop()


def _server_index(port: int, tmp_path: Path) -> ChromaVectorIndex:
    settings = ChromaSettings(mode="server", host="127.0.0.1", port=port, call_timeout_seconds=DEADLINE)
    return ChromaVectorIndex(settings, tmp_path)


def _within(limit: float, call: Callable[[], Any]) -> tuple[BaseException | None, float]:
    """Run ``call`` in a thread of the test: what it raised and how long it took, or fail the test
    if it has not returned after ``limit`` seconds (a hung call must not hang the suite)."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            call()
        except BaseException as error:
            outcome.append(error)
        else:
            outcome.append(None)

    started = time.monotonic()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(limit)
    if thread.is_alive():
        pytest.fail(f"no answer in {limit} s: the call has no deadline")
    return outcome[0], time.monotonic() - started


def _index_calls(index: ChromaVectorIndex) -> dict[str, Callable[[], Any]]:
    vector = np.ones(8, dtype=np.float32)
    return {
        "heartbeat": index.heartbeat,
        "query": lambda: index.query(1, "b1", SCOPE, vector, 5),
        "upsert": lambda: index.upsert(1, "b1", SCOPE, [1], vector[None, :], [{"kind": "fact"}]),
    }


def test_a_hung_chroma_server_fails_every_call_within_the_deadline(silent_server: SilentServer, tmp_path) -> None:
    index = _server_index(silent_server.port, tmp_path)
    for operation, call in _index_calls(index).items():
        error, elapsed = _within(DEADLINE + 4, call)
        assert isinstance(error, IndexUnavailable), (operation, error)
        assert elapsed < DEADLINE + 0.5, (operation, elapsed)
    # off the event loop too (the recall path), with a caller's own shorter deadline
    started = time.monotonic()
    with pytest.raises(IndexUnavailable):
        asyncio.run(index.off_loop("query", _index_calls(index)["query"], timeout=0.3))
    assert time.monotonic() - started < 0.8


def test_a_chroma_server_that_hangs_after_connecting_fails_within_the_deadline_and_recovers(
    chroma_port: int | None, tmp_path
) -> None:
    if not chroma_port:
        pytest.skip("needs the real Chroma server of COGNITION_TEST_BACKEND=server")
    proxy = HangingProxy(chroma_port)
    try:
        index = _server_index(proxy.port, tmp_path)
        bot, vector = f"b{time.time_ns()}", np.ones(8, dtype=np.float32)
        # before the hang, on a loaded machine the server may need more than the 1 s deadline
        _eventually(lambda: index.upsert(1, bot, SCOPE, [1], vector[None, :], [{"kind": "fact"}]))
        assert [hit.memory_id for hit in _eventually(lambda: index.query(1, bot, SCOPE, vector, 5))] == [1]
        proxy.hung.set()  # the server stops answering on the connections the client keeps open
        for operation, call in {
            "heartbeat": index.heartbeat,
            "query": lambda: index.query(1, bot, SCOPE, vector, 5),
            "upsert": lambda: index.upsert(1, bot, SCOPE, [2], vector[None, :], [{"kind": "fact"}]),
        }.items():
            error, elapsed = _within(DEADLINE + 4, call)
            assert isinstance(error, IndexUnavailable), (operation, error)
            assert elapsed < DEADLINE + 0.5, (operation, elapsed)
        # the requests given up on end by themselves (their HTTP timeout): no thread stays stuck
        deadline = time.monotonic() + DEADLINE + 2
        while index.calls.running and time.monotonic() < deadline:
            time.sleep(0.05)
        assert index.calls.running == 0 and index.calls.stalled is None
        proxy.hung.clear()
        assert [hit.memory_id for hit in _eventually(lambda: index.query(1, bot, SCOPE, vector, 5))] == [1]
        index._drop_collection(collection_name(1, bot, SCOPE))
    finally:
        proxy.stop()


def _eventually(call, seconds: float = 10.0):  # type: ignore[no-untyped-def]
    """``call()``'s result once it answers within the deadline, trying for ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return call()
        except IndexUnavailable:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


# Slow embedders: the vector side of recall gets a deadline inside the reply's budget.


@pytest.mark.parametrize("protocol", ["openai", "ollama"])
async def test_a_slow_api_embedder_misses_the_query_deadline(fake_openai, protocol: str) -> None:
    embedder: OpenAIEmbedder = (
        OpenAIEmbedder(url=fake_openai.base_url, model="m")
        if protocol == "openai"
        else OllamaEmbedder(url=fake_openai.root_url, model="m")
    )
    fake_openai.embeddings_delay = 2.0
    for call in (embedder.embed_queries, CachedQueryEmbedder(embedder).embed_queries):
        started = time.monotonic()
        with pytest.raises(EmbedderUnavailable):
            await call(["小明吃火锅"], timeout=0.3)
        assert time.monotonic() - started < 0.8
    fake_openai.embeddings_delay = 0.0
    assert (await embedder.embed_queries(["小明吃火锅"], timeout=2)).shape == (1, 64)


class _SlowModel:
    """Stands in for the USE model: encoding takes ``seconds``."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.encoded: list[list[str]] = []

    def encode(self, texts: list[str]) -> np.ndarray:
        time.sleep(self.seconds)
        self.encoded.append(texts)
        return np.ones((len(texts), 512), dtype=np.float32)


class _LocalWithModel(LocalUSEEmbedder):
    def __init__(self, model: _SlowModel) -> None:
        super().__init__()
        self.stand_in = model

    def _load(self):  # type: ignore[no-untyped-def]
        self._model = self.stand_in
        return self.stand_in


def _query_threads() -> int:
    return sum(1 for thread in threading.enumerate() if thread.name == "cognition-embed-query")


async def test_a_slow_local_model_misses_the_query_deadline_without_piling_up_threads() -> None:
    model = _SlowModel(seconds=0.6)
    embedder = _LocalWithModel(model)
    threads_before = _query_threads()
    started = time.monotonic()
    with pytest.raises(EmbedderUnavailable, match=r"no answer within 0\.3 s"):
        await embedder.embed_queries(["小明吃火锅"], timeout=0.3)
    assert time.monotonic() - started < 0.6
    # many more impatient callers: still one thread; beyond the queue they are refused at once
    outcomes = await asyncio.gather(
        *(embedder.embed_queries([f"问题{number}"], timeout=0.05) for number in range(QUERY_QUEUE_SIZE + 4)),
        return_exceptions=True,
    )
    assert all(isinstance(outcome, EmbedderUnavailable) for outcome in outcomes)
    assert any("already waiting" in str(outcome) for outcome in outcomes)
    assert _query_threads() == threads_before + 1
    await asyncio.sleep(0.8)
    assert model.encoded == [["小明吃火锅"]]  # the callers that gave up while queued cost nothing
    # the model is fast again: the caller gets its vectors
    model.seconds = 0.0
    vectors = await CachedQueryEmbedder(embedder).embed_queries(["小明吃火锅"], timeout=1)
    assert vectors.shape == (1, 512) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0)


async def test_an_embedder_of_the_caller_s_own_gets_the_deadline_too() -> None:
    class Sleepy:
        fingerprint = LocalUSEEmbedder().fingerprint

        async def embed(self, texts):  # type: ignore[no-untyped-def]
            await asyncio.sleep(5)
            return np.ones((len(texts), 512), dtype=np.float32)

    started = time.monotonic()
    with pytest.raises(EmbedderUnavailable):
        await CachedQueryEmbedder(Sleepy()).embed_queries(["x"], timeout=0.2)
    assert time.monotonic() - started < 0.6


async def test_a_query_whose_caller_gave_up_never_runs_even_when_the_loop_is_late() -> None:
    """The lane reads each caller's deadline itself: a caller whose event loop is too busy to cancel
    its queued job in time (a loaded machine) still costs the model nothing."""
    model = _SlowModel(seconds=0.3)
    embedder = _LocalWithModel(model)
    first = asyncio.ensure_future(embedder.embed_queries(["小明吃火锅"], timeout=2))
    await asyncio.sleep(0.05)  # the first query is on the lane
    late = asyncio.ensure_future(embedder.embed_queries(["问题"], timeout=0.05))
    await asyncio.sleep(0)  # queued behind it
    time.sleep(0.5)  # the loop is held: nobody cancels the queued job before the lane takes it
    await first
    with pytest.raises(EmbedderUnavailable):
        await late
    await asyncio.sleep(0.1)
    assert model.encoded == [["小明吃火锅"]]
