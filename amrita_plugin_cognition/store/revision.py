"""Which of the plugin's migrations the database has, read without running alembic.

A read command (``status``, ``inspect``, ``jobs list``, ``profile show``) must not migrate the
bot's database, and should not pay for alembic's environment either. The plugin's revisions are
read from the migration files themselves (their ``revision`` and ``down_revision`` assignments,
parsed, not imported), and the database's from nonebot-plugin-orm's ``alembic_version`` table
(one row per branch head: the other plugins' heads are there too, and are ignored here).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from sqlalchemy import inspect, text
from sqlalchemy.ext.asyncio import AsyncSession

#: The migrations folder shipped inside the package (a wheel and a checkout alike).
MIGRATIONS = Path(__file__).resolve().parent.parent / "migrations"
VERSION_TABLE = "alembic_version"


@dataclass(frozen=True)
class Revisions:
    """The plugin's migration graph: every revision id, and the head(s)."""

    known: frozenset[str]
    heads: frozenset[str]


def _assigned(tree: ast.Module, name: str) -> object:
    target: ast.expr
    value: ast.expr | None
    for node in tree.body:
        if isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id == name and value is not None:
            return ast.literal_eval(value)
    return None


@cache
def package_revisions(folder: Path = MIGRATIONS) -> Revisions:
    """The revisions of the plugin's migration files, and the heads (the ones no other names as
    its parent)."""
    known: set[str] = set()
    parents: set[str] = set()
    for path in folder.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        revision = _assigned(tree, "revision")
        if not isinstance(revision, str):
            continue
        known.add(revision)
        down = _assigned(tree, "down_revision")
        parents.update([down] if isinstance(down, str) else list(down) if isinstance(down, (list, tuple)) else [])
    return Revisions(frozenset(known), frozenset(known - parents))


@dataclass(frozen=True)
class AppliedState:
    """What the database records of the plugin's migrations."""

    #: The plugin's revisions in ``alembic_version`` (empty: never migrated with alembic, e.g. ``orm sync``).
    recorded: frozenset[str]
    heads: frozenset[str]

    @property
    def behind(self) -> bool:
        """An older revision of the plugin is recorded: a migration of this version has not run."""
        return bool(self.recorded) and not self.heads <= self.recorded

    @property
    def current(self) -> bool:
        return self.heads <= self.recorded


def _recorded(connection: object) -> set[str]:
    if not inspect(connection).has_table(VERSION_TABLE):
        return set()
    return {row[0] for row in connection.execute(text(f"SELECT version_num FROM {VERSION_TABLE}"))}  # type: ignore[attr-defined]


async def applied(session: AsyncSession) -> AppliedState:
    """The plugin's revisions the database (the one its tables are bound to) records."""
    from .models import MemoryRow  # importable without NoneBot up to here (the migration files are parsed)

    revisions = package_revisions()
    connection = await session.connection(bind_arguments={"mapper": MemoryRow})
    recorded = await connection.run_sync(_recorded)
    return AppliedState(frozenset(recorded & revisions.known), revisions.heads)
