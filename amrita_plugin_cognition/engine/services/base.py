"""What every service shares: the facade it delegates to."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from ..service import CognitionEngine

Target = Literal["user", "group"]


class _Service:
    def __init__(self, engine: CognitionEngine) -> None:
        self._engine = engine
