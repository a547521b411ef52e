"""``amrita_plugin_cognition.api``, the one public module: its three lists of names agree (what
type checkers see, what loads on first use, ``__all__``), every name loads as the object its
module defines, and the facade's services are reachable as attributes."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import amrita_plugin_cognition.api as api

SOURCE = Path(api.__file__).read_text(encoding="utf-8")


def _type_checking_imports() -> dict[str, tuple[str, str]]:
    found: dict[str, tuple[str, str]] = {}
    for node in ast.parse(SOURCE).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom)
                for alias in statement.names:
                    found[alias.asname or alias.name] = ("." * statement.level + (statement.module or ""), alias.name)
    return found


def test_the_three_lists_agree() -> None:
    assert _type_checking_imports() == api._EXPORTS
    assert sorted(api.__all__) == sorted(api._EXPORTS)


def test_every_name_is_its_module_object() -> None:
    for name, (module, attribute) in api._EXPORTS.items():
        assert getattr(api, name) is getattr(importlib.import_module(module, "amrita_plugin_cognition"), attribute)


def test_the_services_are_attributes_of_the_facade() -> None:
    hints = api.CognitionEngine.__init__.__code__.co_names
    for attribute, service in {
        "memories": api.MemoryService,
        "notes": api.NoteService,
        "profiles": api.ProfileService,
        "governance": api.GovernanceService,
        "index": api.IndexService,
        "jobs": api.JobService,
        "turns": api.TurnService,
    }.items():
        assert attribute in hints and service.__name__ in hints
        public = [name for name in vars(service) if not name.startswith("_")]
        assert public and all(getattr(service, name).__doc__ for name in public), service
