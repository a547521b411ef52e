"""Whether the database holds this plugin's schema: its tables, with the columns the models use.

A bot whose owner has not run ``ambot orm upgrade`` yet (or has upgraded the plugin without it)
has none of the tables, or an older shape of them; the first query then failed with a bare
``OperationalError`` ("启动出错（OperationalError）"). The engine asks here first, once at start
(a catalogue read per table), and says what is missing and which command creates it.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import inspect
from sqlalchemy.ext.asyncio import AsyncSession

from . import models

#: Every table of the plugin, as its models define it (the bank's own first).
TABLES = [model.__table__ for model in models.MODELS]


def _missing(connection: Any) -> tuple[list[str], dict[str, list[str]]]:
    inspector = inspect(connection)
    present = set(inspector.get_table_names())
    tables = [table.name for table in TABLES if table.name not in present]
    columns: dict[str, list[str]] = {}
    for table in TABLES:
        if table.name in present:
            found = {column["name"] for column in inspector.get_columns(table.name)}
            lacking = [column.name for column in table.columns if column.name not in found]
            if lacking:
                columns[table.name] = lacking
    return tables, columns


async def missing(session: AsyncSession) -> tuple[list[str], dict[str, list[str]]]:
    """The plugin's tables the database lacks, and the columns lacking in the tables it has."""
    connection = await session.connection()
    return await connection.run_sync(_missing)
