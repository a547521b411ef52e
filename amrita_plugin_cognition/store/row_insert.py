"""New rows, written at once in the caller's transaction with as few calls of the database driver
as it allows.

The ``end`` tool writes a note and a job on every turn that remembers, and its target is a small
multiple of one bare insert (``bench/end_latency.py``). The ORM's flush of fresh objects costs more
than the statements it sends; and each statement is a wait: on SQLite SQLAlchemy runs it as three
hand-offs to aiosqlite's thread (open a cursor, execute, close it), on PostgreSQL it is a round
trip to the server. So:

- on SQLite, aiosqlite's own ``execute_insert`` on the session's connection, one hand-off a row.
  The statement and the columns' bind processors (the conversions SQLAlchemy applies: a UTC time
  is stored as the text SQLAlchemy writes) are built once per table and column set. pysqlite opens
  the transaction at the first write (SQLAlchemy's SQLite dialect leaves that to it), so the rows
  are committed or rolled back with the rest of the unit of work;
- elsewhere (PostgreSQL), one Core statement for all the rows: a single row is its table's
  insert; several are data-modifying ``WITH`` parts of one insert (PostgreSQL runs each part to
  completion whether or not the statement reads it): one round trip. Built once per table and
  column set, so SQLAlchemy compiles it once.

Values name every column they set; the others take the database's default (the rows written here
need no Python-side default). Nothing is returned: callers that need the new id use the ORM.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cachetools import LRUCache
from sqlalchemy import Insert, Table, bindparam
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

#: A row to insert: its table and its values by column name.
NewRow = tuple[Table, Mapping[str, Any]]
Processor = Callable[[Any], Any] | None
#: The columns of each row of a statement, in order: the key its prepared form is kept under.
_Shape = tuple[tuple[str, tuple[str, ...]], ...]

#: SQLite: per (table, columns), the statement and the bind processors, in column order.
_SQLITE: LRUCache[tuple[str, tuple[str, ...]], tuple[str, tuple[Processor, ...]]] = LRUCache(maxsize=64)
#: Elsewhere: per shape, the one Core statement of those rows.
_CORE: LRUCache[_Shape, Insert] = LRUCache(maxsize=64)


async def insert_rows(session: AsyncSession, rows: Sequence[NewRow]) -> None:
    """Insert ``rows`` in the session's transaction, in order."""
    if not rows:
        return
    connection = await session.connection()
    if connection.dialect.name == "sqlite":
        await _insert_on_sqlite(connection, rows)
        return
    shape = tuple((table.name, tuple(values)) for table, values in rows)
    statement = _CORE.get(shape)
    if statement is None:
        statement = _CORE[shape] = _core_statement(rows)
    if len(rows) == 1:
        await connection.execute(statement, dict(rows[0][1]))
        return
    named = {f"r{index}_{name}": value for index, (_, values) in enumerate(rows) for name, value in values.items()}
    await connection.execute(statement, named)


async def _insert_on_sqlite(connection: AsyncConnection, rows: Sequence[NewRow]) -> None:
    """One ``execute_insert`` a row; the driver's errors raised as SQLAlchemy raises them (an
    ``OperationalError`` for a busy or unopenable file, an ``IntegrityError``...), so the unit of
    work and its callers tell them apart as for any other statement."""
    driver = (await connection.get_raw_connection()).driver_connection
    for table, values in rows:
        sql, processors = _sqlite_statement(table, tuple(values), connection.dialect)
        bound = [
            value if process is None else process(value)
            for value, process in zip(values.values(), processors, strict=True)
        ]
        try:
            await driver.execute_insert(sql, bound)  # type: ignore[union-attr]
        except sqlite3.Error as error:
            raise DBAPIError.instance(sql, bound, error, sqlite3.Error, dialect=connection.dialect) from error


def _columns_known(table: Table, columns: Sequence[str]) -> None:
    unknown = [name for name in columns if name not in table.columns]
    if unknown:
        raise KeyError(f"{table.name} has no column {unknown}")


def _sqlite_statement(table: Table, columns: tuple[str, ...], dialect: Dialect) -> tuple[str, tuple[Processor, ...]]:
    key = (table.name, columns)
    found = _SQLITE.get(key)
    if found is None:
        _columns_known(table, columns)
        quote = dialect.identifier_preparer.quote
        sql = (
            f"INSERT INTO {quote(table.name)} ({', '.join(quote(name) for name in columns)}) "
            f"VALUES ({', '.join('?' for _ in columns)})"
        )
        processors = tuple(table.columns[name].type.dialect_impl(dialect).bind_processor(dialect) for name in columns)
        found = _SQLITE[key] = (sql, processors)
    return found


def _core_statement(rows: Sequence[NewRow]) -> Insert:
    """One row: its table's insert (values given at execution). Several: the last row's insert,
    the others ``WITH`` parts of it, every value a bound parameter named after its row and column."""
    for table, values in rows:
        _columns_known(table, list(values))
    if len(rows) == 1:
        return rows[0][0].insert()

    def part(index: int) -> Insert:
        table, values = rows[index]
        return table.insert().values(
            {name: bindparam(f"r{index}_{name}", type_=table.columns[name].type) for name in values}
        )

    statement = part(len(rows) - 1)
    for index in range(len(rows) - 1):
        statement = statement.add_cte(part(index).cte(f"row_{index}"))
    return statement
