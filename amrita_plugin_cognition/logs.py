"""Structured log lines: ``[cognition] stage=... key=value``, with elapsed ms when timed."""

from __future__ import annotations

import logging
import time
from typing import Any

logger = logging.getLogger("cognition")


def log_event(stage: str, started: float | None = None, level: int = logging.INFO, **fields: Any) -> None:
    parts = [f"stage={stage}"]
    if started is not None:
        parts.append(f"elapsed_ms={(time.perf_counter() - started) * 1000:.1f}")
    parts.extend(f"{key}={value}" for key, value in fields.items())
    logger.log(level, "[cognition] %s", " ".join(parts))
