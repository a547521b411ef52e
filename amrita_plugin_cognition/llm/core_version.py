"""Which amrita_core releases the plugin was written and tested for, and whether the installed one
is among them: the code that reaches into amrita_core's internals (the agent driver here, the tool
adapter of the bot) runs only on these releases."""

from __future__ import annotations

import importlib.metadata
import re

#: [lowest, first untested). Keep in step with the ``amrita-core`` dependency in pyproject.toml.
SUPPORTED: tuple[tuple[int, ...], tuple[int, ...]] = ((1, 2, 0), (1, 4))


def range_text() -> str:
    """``SUPPORTED`` as a requirement: ``>=1.2.0,<1.4``."""
    low, high = SUPPORTED
    return f">={'.'.join(map(str, low))},<{'.'.join(map(str, high))}"


def installed_version() -> str | None:
    """The installed amrita-core's version (None when its metadata cannot be read)."""
    try:
        return importlib.metadata.version("amrita-core")
    except importlib.metadata.PackageNotFoundError:
        return None


def release(version: str) -> tuple[int, ...] | None:
    """``"1.3.1"`` → ``(1, 3, 1)``; the release part only (``1.4.0rc1`` → ``(1, 4, 0)``)."""
    match = re.match(r"\s*v?(\d+(?:\.\d+)*)", version)
    return tuple(int(part) for part in match.group(1).split(".")) if match else None


def supported(version: str | None) -> bool:
    numbers = release(version) if version else None
    if numbers is None:
        return False
    low, high = SUPPORTED
    return low <= numbers < high
