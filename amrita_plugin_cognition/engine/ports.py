"""What a use case needs of the engine, as small protocols.

A use case typed with one of these takes anything that offers it (the engine, or a stand-in in a
test) instead of the whole ``CognitionEngine``: the type says what the function may touch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..store.unit_of_work import UnitOfWork


class Transactional(Protocol):
    """Reads and writes the authority store through one unit of work per call, nothing else."""

    def unit_of_work(self) -> UnitOfWork:
        """One transaction; after ``commit()`` the owner's after-commit handlers run."""
        ...
