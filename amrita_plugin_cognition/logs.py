"""Structured log lines: ``[cognition] stage=... key=value``, with elapsed ms when timed."""

from __future__ import annotations

import logging
import time
from typing import Any

logger = logging.getLogger("cognition")
#: Stages whose warnings a process reports in its own output, logged at INFO there instead.
_REPORTED: set[str] = set()


def reported_elsewhere(*stages: str) -> None:
    """This process reports these stages' problems itself (a command line: ``status`` shows the
    vector index's state, a command that needs the index fails naming it): their warnings are
    logged at INFO, so the same fact is not said twice on the console."""
    _REPORTED.update(stages)


def log_event(stage: str, started: float | None = None, level: int = logging.INFO, **fields: Any) -> None:
    if stage in _REPORTED and logging.INFO < level < logging.ERROR:
        level = logging.INFO
    parts = [f"stage={stage}"]
    if started is not None:
        parts.append(f"elapsed_ms={(time.perf_counter() - started) * 1000:.1f}")
    parts.extend(f"{key}={value}" for key, value in fields.items())
    logger.log(level, "[cognition] %s", " ".join(parts))
