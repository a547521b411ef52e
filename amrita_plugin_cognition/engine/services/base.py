"""What every service shares: the facade it delegates to."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from ..lazy import LazyModule

if TYPE_CHECKING:
    from ..service import CognitionEngine

Target = Literal["user", "group"]


class _Service:
    def __init__(self, engine: CognitionEngine) -> None:
        self._engine = engine


def UseCases(name: str) -> LazyModule:
    """The engine's use-case module ``engine/<name>.py``, imported when a service first calls into
    it (``engine/lazy.py``)."""
    return LazyModule(f"{__package__.rpartition('.')[0]}.{name}")
