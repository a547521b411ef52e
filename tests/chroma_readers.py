"""What the index's readers without chromadb (``index/chroma_file.py``, ``index/chroma_rest.py``)
must answer as chromadb's own client does, for the tests of each."""

from __future__ import annotations

from typing import Any


def vector(seed: int) -> list[float]:
    return [((seed * 7 + index * 3) % 11) / 11.0 + 0.01 for index in range(8)]


def fill(client: Any, other: Any, big: int) -> None:
    """Three collections in ``client``'s database (one of ``big`` ids, some deleted and one more
    upserted; one small with a deletion; one empty) and one in ``other``'s."""
    collection = client.get_or_create_collection("g1_big", metadata={"bot": "1", "scope": "group:1", "n": 3, "f": 0.5})
    ids = [str(number) for number in range(1, big + 1)]
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        collection.add(ids=chunk, embeddings=[vector(int(item)) for item in chunk])
    collection.delete(ids=[str(number) for number in range(100, 300)])
    collection.upsert(ids=["5", "9999"], embeddings=[vector(5), vector(9999)])
    small = client.get_or_create_collection("g1_small", metadata={"bot": "2", "scope": "private:7", "flag": True})
    small.add(ids=["1", "2", "3"], embeddings=[vector(1), vector(2), vector(3)])
    small.delete(ids=["2"])
    client.get_or_create_collection("g1_empty")
    other.get_or_create_collection("g1_other").add(ids=["1"], embeddings=[vector(1)])


def assert_reads_as_the_client(reader: Any, client: Any, page: int) -> set[str]:
    """The same collections with the same metadata (listed whole and one per page), the same
    count and the same ids (listed ``page`` at a time) in each. Returns the collections' names."""
    expected = {item.name: dict(item.metadata or {}) for item in client.list_collections()}
    found = {item.name: item.metadata for item in reader.list_collections(limit=1000)}
    assert found == expected
    paged = [
        item.name for offset in range(len(expected) + 1) for item in reader.list_collections(limit=1, offset=offset)
    ]
    assert sorted(paged) == sorted(expected)
    for name in expected:
        theirs, ours = client.get_collection(name), reader.get_collection(name)
        assert ours.count() == theirs.count()
        their_ids = set(theirs.get(include=[])["ids"])
        our_ids: set[str] = set()
        offset = 0
        while ids := ours.get(limit=page, offset=offset, include=[])["ids"]:
            our_ids.update(ids)
            offset += len(ids)
        assert our_ids == their_ids
    return set(expected)
