"""Which configuration keys need a restart, and what a reload may change in a running engine.

Every key applies at once when the file changes (the engine reads ``engine.config`` on each
use), except the ones read only while the engine is built and started:

* ``embedder.*``: the embedding model (and its query cache) is created once;
* ``chroma.*`` and ``data_dir``: the vector index client and folder are opened once;
* ``outbox_interval_seconds``, ``historian.poll_interval_seconds`` and
  ``consolidation.activity_flush_seconds``: the periods of the scheduler's jobs, set when the bot
  starts.

A reload keeps the running values of these (a restart applies them) and names the ones that
differ, so that the log can say what waits for a restart.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from .config import CognitionConfig

#: Dotted keys (a section stands for all its keys) whose change needs a restart.
RESTART_KEYS: tuple[str, ...] = (
    "data_dir",
    "outbox_interval_seconds",
    "embedder",
    "chroma",
    "historian.poll_interval_seconds",
    "consolidation.activity_flush_seconds",
)


def needs_restart(key: str) -> bool:
    """Whether the dotted ``key`` (``chroma.port``, ``embedder``, ``recall.top_k`` …) needs a restart."""
    return any(key == restart or key.startswith(f"{restart}.") for restart in RESTART_KEYS)


def restart_changes(running: CognitionConfig, fresh: CognitionConfig) -> list[str]:
    """The dotted keys that need a restart and differ between ``running`` and ``fresh``."""
    changed: list[str] = []
    for key in RESTART_KEYS:
        before = _leaves(_value(running, key), key)
        after = _leaves(_value(fresh, key), key)
        changed.extend(leaf for leaf, value in after.items() if before.get(leaf) != value)
    return changed


def keep_restart_values(running: CognitionConfig, fresh: CognitionConfig) -> CognitionConfig:
    """``fresh`` with the running values of the keys that need a restart."""
    kept = fresh
    for key in RESTART_KEYS:
        kept = _replaced(kept, key.split("."), _value(running, key))
    return kept


def _value(config: BaseModel, key: str) -> Any:
    value: Any = config
    for part in key.split("."):
        value = getattr(value, part)
    return value


def _replaced(model: Any, path: list[str], value: Any) -> Any:
    head, *rest = path
    inner = value if not rest else _replaced(getattr(model, head), rest, value)
    return model.model_copy(update={head: inner})


def _leaves(value: Any, key: str) -> dict[str, Any]:
    """``{dotted key: value}`` of every plain value at or below ``key``."""
    if not isinstance(value, BaseModel):
        return {key: value}
    leaves: dict[str, Any] = {}
    for name in type(value).model_fields:
        leaves.update(_leaves(getattr(value, name), f"{key}.{name}"))
    return leaves
