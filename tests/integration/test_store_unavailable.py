"""A database that cannot be reached is ``StoreUnavailable`` at the unit of work, raised from the
driver's error; a missing table, a busy SQLite database and an error of no database code are
left as they were (``store/unreachable.py``)."""

from __future__ import annotations

import asyncio
import gzip
import socket
from pathlib import Path

import pytest
from booting import BACKEND
from engine_helpers import make_engine
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.ext.asyncio import async_sessionmaker, create_async_engine

from amrita_plugin_cognition.errors import CognitionError, StoreUnavailable
from amrita_plugin_cognition.store.unit_of_work import ScopeLocks, UnitOfWork


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def _select_one(url: str) -> None:
    engine = create_async_engine(url)
    try:
        async with UnitOfWork(async_sessionmaker(engine), lambda events: None, ScopeLocks()) as uow:
            await uow.session.execute(text("SELECT 1"))
            await uow.commit()
    finally:
        await engine.dispose()


async def test_a_postgresql_server_on_a_closed_port_is_store_unavailable() -> None:
    pytest.importorskip("asyncpg")
    with pytest.raises(StoreUnavailable) as caught:
        await _select_one(f"postgresql+asyncpg://nobody@127.0.0.1:{_closed_port()}/none")
    assert isinstance(caught.value.__cause__, ConnectionRefusedError)
    assert isinstance(caught.value, CognitionError) and "无法连接" in caught.value.zh
    assert "ConnectionRefusedError" in str(caught.value)


async def test_an_unopenable_sqlite_file_is_store_unavailable(tmp_path: Path) -> None:
    folder_in_its_place = tmp_path / "memory.sqlite3"
    folder_in_its_place.mkdir()  # unopenable even for root, whom file modes do not stop
    with pytest.raises(StoreUnavailable) as caught:
        await _select_one(f"sqlite+aiosqlite:///{folder_in_its_place}")
    assert isinstance(caught.value.__cause__, OperationalError)
    assert "unable to open database file" in caught.value.reason

    with pytest.raises(StoreUnavailable):  # its folder missing
        await _select_one(f"sqlite+aiosqlite:///{tmp_path / 'gone' / 'memory.sqlite3'}")


async def test_a_file_that_is_no_database_is_store_unavailable(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite3"
    path.write_bytes(b"not sqlite at all " * 400)
    engine = create_async_engine(f"sqlite+aiosqlite:///{path}")
    try:
        with pytest.raises(StoreUnavailable) as caught:
            async with UnitOfWork(async_sessionmaker(engine), lambda events: None, ScopeLocks()) as uow:
                await uow.session.execute(text("SELECT * FROM sqlite_master"))
        assert isinstance(caught.value.__cause__, DBAPIError)
    finally:
        await engine.dispose()


async def test_a_missing_table_or_column_is_not_store_unavailable(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    for statement in ("SELECT * FROM cognition_no_such_table", "SELECT no_such_column FROM cognition_meta"):
        with pytest.raises(DBAPIError) as caught:  # the schema's problem: the driver's own error
            async with engine.unit_of_work() as uow:
                await uow.session.execute(text(statement))
        assert not isinstance(caught.value, StoreUnavailable)
    async with engine.unit_of_work() as uow:  # and the store is fine
        assert (await uow.session.execute(text("SELECT 1"))).scalar_one() == 1


def _read_gzip(path: Path) -> str:
    with gzip.open(path, "rt") as handle:
        return handle.read()


async def test_an_error_of_no_database_code_is_left_as_it_is(tmp_root, chroma_port, tmp_path: Path) -> None:
    """A restore reads its gzip file inside a unit of work: an unreadable file is the file's."""
    engine = await make_engine(tmp_root, chroma_port)
    (tmp_path / "backup.jsonl.gz").mkdir()
    with pytest.raises(OSError) as caught:
        async with engine.unit_of_work() as uow:
            await uow.session.execute(text("SELECT 1"))
            await asyncio.to_thread(_read_gzip, tmp_path / "backup.jsonl.gz")
    assert not isinstance(caught.value, StoreUnavailable)
    with pytest.raises(ConnectionResetError):
        async with engine.unit_of_work():
            raise ConnectionResetError("a socket of no database")


@pytest.mark.skipif(BACKEND == "server", reason="SQLite's own lock")
async def test_a_locked_sqlite_database_is_not_store_unavailable(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite3"
    holder = create_async_engine(f"sqlite+aiosqlite:///{path}")
    waiter = create_async_engine(f"sqlite+aiosqlite:///{path}", connect_args={"timeout": 0.05})
    try:
        async with holder.begin() as connection:
            await connection.execute(text("CREATE TABLE t (x INTEGER)"))
        async with holder.connect() as connection:
            await connection.execute(text("BEGIN IMMEDIATE"))
            await connection.execute(text("INSERT INTO t VALUES (1)"))
            with pytest.raises(OperationalError, match="locked") as caught:
                async with UnitOfWork(async_sessionmaker(waiter), lambda events: None, ScopeLocks()) as uow:
                    await uow.session.execute(text("INSERT INTO t VALUES (2)"))
                    await uow.commit()
            assert not isinstance(caught.value, StoreUnavailable)
            await connection.rollback()
    finally:
        await holder.dispose()
        await waiter.dispose()


@pytest.mark.skipif(BACKEND != "server", reason="a PostgreSQL backend ended under a transaction")
async def test_a_server_gone_under_a_transaction_is_store_unavailable(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    async with engine.session() as other:
        with pytest.raises(StoreUnavailable):
            async with engine.unit_of_work() as uow:
                pid = (await uow.session.execute(text("SELECT pg_backend_pid()"))).scalar_one()
                await other.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
                await uow.session.execute(text("SELECT 1"))
    async with engine.unit_of_work() as uow:  # the pool hands out a live connection again
        assert (await uow.session.execute(text("SELECT 1"))).scalar_one() == 1
