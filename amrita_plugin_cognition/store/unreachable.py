"""Which database errors mean "the database cannot be reached", mapped to ``StoreUnavailable``.

The unit of work raises ``StoreUnavailable`` from the driver's error, as httpx raises its own
errors from httpcore's: nothing above the store catches SQLAlchemy's, the driver's or the
socket's exceptions to tell a database that is down from one that answered.

Unreachable: the connection refused or timed out, the name not resolved (``OSError`` raised by
the driver while it connects: asyncpg does not wrap these), the server gone or the connection
closed under a transaction (SQLAlchemy's ``connection_invalidated``, PostgreSQL's SQLSTATE class
08 and the shutdown states 57P01–57P03), the SQLite file unopenable or no database, a disk I/O
error. Not unreachable, left as they are: a missing table or column (a schema problem:
``SchemaMissing`` at start, the driver's error later), a busy or locked SQLite database (it waits
its busy timeout; callers that defer on it keep catching ``OperationalError``), and an
``OSError`` no database code raised (a backup file read inside a unit of work).
"""

from __future__ import annotations

from types import TracebackType

from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

from ..errors import StoreUnavailable

#: Modules whose frames mark an ``OSError`` as the database connection's.
DATABASE_MODULES = ("sqlalchemy", "asyncpg", "aiosqlite", "sqlite3", "psycopg", "psycopg2", "aiomysql", "asyncmy")
#: SQLite messages of a file that cannot be used at all (``sqlite3`` has no error codes before 3.11).
SQLITE_UNREACHABLE = ("unable to open database file", "disk i/o error", "file is not a database")
#: PostgreSQL SQLSTATEs of a server going away: admin_shutdown, crash_shutdown, cannot_connect_now.
POSTGRES_GONE = ("57P01", "57P02", "57P03")
#: Messages of a closed connection where the driver gives no code.
CLOSED = ("connection is closed", "connection was closed", "server closed the connection", "connection refused")


def _from_database(trace: TracebackType | None) -> bool:
    while trace is not None:
        module = str(trace.tb_frame.f_globals.get("__name__", ""))
        if module.split(".")[0] in DATABASE_MODULES:
            return True
        trace = trace.tb_next
    return False


def _sqlstate(error: BaseException | None) -> str:
    for candidate in (error, getattr(error, "__cause__", None)):
        code = getattr(candidate, "sqlstate", None) or getattr(candidate, "pgcode", None)
        if isinstance(code, str):
            return code
    return ""


def _reason(error: BaseException) -> str:
    cause = getattr(error, "orig", None) or error
    text = " ".join(str(cause).split())
    return f"{type(cause).__name__}: {text[:200]}" if text else type(cause).__name__


def is_unreachable(error: BaseException) -> bool:
    """Whether ``error`` says the database cannot be reached (see the module docstring)."""
    if isinstance(error, StoreUnavailable):
        return False  # already mapped
    if isinstance(error, DBAPIError):
        if error.connection_invalidated:
            return True
        if not isinstance(error, (OperationalError, InterfaceError)) and "not a database" not in str(error.orig):
            return False
        code = _sqlstate(error.orig)
        if code.startswith("08") or code in POSTGRES_GONE:
            return True
        message = str(error.orig).lower()
        return any(part in message for part in SQLITE_UNREACHABLE + CLOSED)
    if isinstance(error, OSError):  # ConnectionError and TimeoutError included
        return _from_database(error.__traceback__)
    return False


def unavailable(error: BaseException) -> StoreUnavailable | None:
    """``StoreUnavailable`` for an unreachable database's error (to raise ``from`` it), else None."""
    return StoreUnavailable(_reason(error)) if is_unreachable(error) else None
