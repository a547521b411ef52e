"""Modules imported on first use: what building the engine does not need to import.

A read command of the CLI (``status``, ``inspect``, ``jobs list``, ``profile show``) builds the
engine and calls one or two areas of it; importing every area's use cases, and the domain rules
they bring (hundreds of regular expressions compiled at import), cost it more than the command
itself. Behaviour is the same: the module is imported, once, by the first attribute read.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class LazyModule:
    """Stands for the module ``name`` (absolute) and imports it on the first attribute read."""

    __slots__ = ("_module", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attribute: str) -> Any:
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attribute)
