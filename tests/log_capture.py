"""What the plugin's ``cognition`` logger says during a test: one handler for every test file that
checks a warning or the absence of a traceback (each file adds the queries it needs)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import TypeVar


class CognitionLog(logging.Handler):
    """Every record of ``level`` or above, in order."""

    def __init__(self, level: int = logging.DEBUG) -> None:
        super().__init__(level)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


Log = TypeVar("Log", bound=CognitionLog)


@contextlib.contextmanager
def capturing(handler: Log) -> Iterator[Log]:
    """``handler`` on the ``cognition`` logger for the duration of the block."""
    logger = logging.getLogger("cognition")
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
