"""A Chroma server read over its HTTP API with httpx, without chromadb, for the CLI's read commands.

``ambot cognition status`` against a Chroma server counts the vectors of the collections and
lists their ids to compare with SQL. chromadb's own HTTP client costs that command its import (the
whole package: pydantic models, the Rust bindings, OpenTelemetry) and, in its constructor, three
requests of its own (identity, tenant, database). What status needs is six kinds of request to the
server's v2 API, which this module makes with httpx, each with the call's deadline:

* ``GET /api/v2/heartbeat``
* ``GET …/tenants/{tenant}/databases/{database}`` (once: the database is there)
* ``GET …/tenants/{tenant}/databases/{database}/collections?limit&offset`` (names and metadata)
* ``GET …/collections/{name}`` (one collection by name; 404 when it does not exist)
* ``GET …/collections/{id}/count``
* ``POST …/collections/{id}/get`` with ``include: []`` (a page of ids)

Only reads are served: any other call of chromadb's client or collections raises
``IndexUnavailable``. ``tests/integration/test_chroma_rest.py`` compares every answer with
chromadb's own client on a real server.
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass
from typing import Any

import httpx

from ..errors import IndexUnavailable


class RestCollectionMissing(Exception):
    """Named as chromadb names it (``NotFoundError``) so ``collections.is_missing`` knows it."""


RestCollectionMissing.__name__ = "NotFoundError"


@dataclass(frozen=True, slots=True)
class RestCollection:
    """A collection as the server lists it: name, metadata, id; counted and listed by id."""

    name: str
    metadata: dict[str, Any]
    id: str
    client: ChromaRestClient

    def count(self) -> int:
        return int(self.client.request("GET", f"collections/{self.id}/count"))

    def get(self, limit: int, offset: int = 0, include: list[str] | None = None) -> dict[str, list[str]]:
        """The ids of one page (what this reader serves: ``include=[]``)."""
        if include:
            raise IndexUnavailable(en="the Chroma HTTP reader lists ids only")
        answer = self.client.request(
            "POST", f"collections/{self.id}/get", json={"limit": limit, "offset": offset, "include": []}
        )
        return {"ids": list(answer["ids"])}

    def __getattr__(self, name: str) -> Any:
        """Any other call of chromadb's collections (a query, a write): not served here."""
        raise IndexUnavailable(en=f"the Chroma HTTP reader serves counts and ids only, not {name}")


class ChromaRestClient:
    """The read calls of chromadb's client that the index's inventory makes, over HTTP."""

    def __init__(self, base_url: str, tenant: str, database: str, headers: dict[str, str], timeout: float) -> None:
        self._root = base_url.rstrip("/")
        quote = urllib.parse.quote
        self._prefix = f"/api/v2/tenants/{quote(tenant, safe='')}/databases/{quote(database, safe='')}/"
        self._http = httpx.Client(headers=headers, timeout=timeout)
        # as chromadb's client does when it starts: a database that is not there is an error, not
        # an empty listing (the server lists no collections for it)
        try:
            self._answer(self._http.get(self._root + self._prefix.rstrip("/")))
        except BaseException:
            self._http.close()
            raise

    def request(self, method: str, path: str, json: Any = None, params: dict[str, Any] | None = None) -> Any:
        """One request under the tenant's database (``path`` after it); the answer's JSON.
        A 404 naming a collection raises ``RestCollectionMissing``; any other failure raises
        ``IndexUnavailable`` with the server's words."""
        url = self._root + self._prefix + urllib.parse.quote(path, safe="/")
        return self._answer(self._http.request(method, url, json=json, params=params))

    def heartbeat(self) -> int:
        return int(self._answer(self._http.get(f"{self._root}/api/v2/heartbeat"))["nanosecond heartbeat"])

    def list_collections(self, limit: int, offset: int = 0) -> list[RestCollection]:
        listed = self.request("GET", "collections", params={"limit": limit, "offset": offset})
        return [self._collection(item) for item in listed]

    def get_collection(self, name: str, embedding_function: object = None) -> RestCollection:
        return self._collection(self.request("GET", f"collections/{name}"))

    def _collection(self, item: dict[str, Any]) -> RestCollection:
        return RestCollection(str(item["name"]), dict(item.get("metadata") or {}), str(item["id"]), self)

    @staticmethod
    def _answer(response: httpx.Response) -> Any:
        if response.is_success:
            return response.json()
        try:
            body = response.json()
        except ValueError:
            body = {}
        message = str(body.get("message") or response.text[:300]) if isinstance(body, dict) else response.text[:300]
        if response.status_code == 404 and "ollection" in message:
            raise RestCollectionMissing(message)
        raise IndexUnavailable(en=f"Chroma server answered {response.status_code}: {message}")

    def __getattr__(self, name: str) -> Any:
        """Any other call of chromadb's client (creating or dropping a collection): not served here."""
        raise IndexUnavailable(en=f"the Chroma HTTP reader reads only, not {name}")

    def close(self) -> None:
        self._http.close()
