"""Renamed configuration keys: which old names still work, and moving them to their new names.

A bot owner's file or environment written with a key's old name keeps working: the value moves
to the new key (converted where the meaning of the number changed) and one warning names
old → new, once per process and source. The loader (``config``) moves and warns as it reads;
the schema (``config_schema``) moves silently, for the WebUI's class reading the file as
written. ``_Source``, the description of where a value came from, lives here because the
warnings name it as the loader's errors do.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

logger = logging.getLogger("cognition")


@dataclass(frozen=True)
class _Source:
    """Where a value came from, as named in error messages."""

    zh: str
    en: str

    @classmethod
    def file(cls, path: Path) -> _Source:
        return cls(f"配置文件 {path}", str(path))

    @classmethod
    def env(cls, name: str) -> _Source:
        return cls(f"环境变量 {name}", f"environment variable {name}")


@dataclass(frozen=True)
class RenamedKey:
    """A key that was renamed: files and environment variables with the old name keep working
    (the value moves to the new key, converted when the meaning of the number changed), and
    ``load_config`` logs one warning naming old → new."""

    old: str
    new: str
    #: The old value as the new key takes it (None: the same value).
    convert: Callable[[Any], Any] | None = None


def _retries_to_attempts(value: Any) -> Any:
    """``job_max_retries`` counted the attempts after the first one; ``job_max_attempts`` counts all."""
    return value + 1 if isinstance(value, int) and not isinstance(value, bool) else value


#: Every renamed key, dotted (issue 21: one queue vocabulary — attempts, lease, dead — and names
#: that say their unit: ``<thing>_<unit>``, ``<things>_keep`` for how many are kept).
RENAMED_KEYS: tuple[RenamedKey, ...] = (
    RenamedKey("embedder.timeout", "embedder.timeout_seconds"),
    RenamedKey("historian.stale_job_timeout_seconds", "historian.job_lease_seconds"),
    RenamedKey("historian.job_max_retries", "historian.job_max_attempts", _retries_to_attempts),
    RenamedKey("historian.failed_jobs_keep", "historian.dead_jobs_keep"),
    RenamedKey("historian.failed_jobs_keep_days", "historian.dead_jobs_keep_days"),
    RenamedKey("historian.source_message_max_len", "historian.source_message_max_chars"),
    RenamedKey("profiles.revision_keep", "profiles.revisions_keep"),
)
_RENAMED_BY_OLD = {renamed.old: renamed for renamed in RENAMED_KEYS}


def _move_renamed(data: dict[str, Any], source: _Source | None = None) -> dict[str, Any]:
    """``data`` (a copy, when anything moves) with every old key under its new name. When both
    are given the new one wins. With a ``source``, each move is logged (one warning per key)."""
    moved = data
    for renamed in RENAMED_KEYS:
        *sections, old = renamed.old.split(".")
        new = renamed.new.rsplit(".", 1)[-1]
        holder: Any = moved
        for section in sections:
            holder = holder.get(section) if isinstance(holder, dict) else None
        if not isinstance(holder, dict) or old not in holder:
            continue
        if moved is data:  # copy the path down to the section before changing it
            moved = dict(data)
        holder = moved
        for section in sections:
            holder[section] = dict(holder[section])
            holder = holder[section]
        value = holder.pop(old)
        both = new in holder
        if not both:
            holder[new] = renamed.convert(value) if renamed.convert else value
        if source is not None:
            _warn_renamed(renamed, source, both, value, holder[new])
    return moved


#: The renames already logged, by (source, old key, both): a file is read on every reload and
#: once more for the WebUI, and the owner is told once per process, not on every read.
_warned_renamed: set[tuple[str, str, bool]] = set()


def _warn_renamed(renamed: RenamedKey, source: _Source, both: bool, old_value: Any, new_value: Any) -> None:
    seen = (source.en, renamed.old, both)
    if seen in _warned_renamed:
        return
    _warned_renamed.add(seen)
    if both:
        logger.warning(
            "[cognition] stage=config_renamed old=%s new=%s both=1 %s：配置项 %s 已改名为 %s，两者都写了，"
            "用 %s 的值，%s 被忽略，请删掉它 / %s: config key %s is now %s; both are set, %s wins and %s is "
            "ignored: remove it",
            renamed.old, renamed.new, source.zh, renamed.old, renamed.new, renamed.new, renamed.old,
            source.en, renamed.old, renamed.new, renamed.new, renamed.old,
        )  # fmt: skip
        return
    shown = "" if old_value == new_value else f" ({old_value!r} → {new_value!r})"
    logger.warning(
        "[cognition] stage=config_renamed old=%s new=%s both=0 %s：配置项 %s 已改名为 %s，值已沿用%s，"
        "请改用新名字 / %s: config key %s is now %s, its value is kept%s: please use the new name",
        renamed.old, renamed.new, source.zh, renamed.old, renamed.new, shown,
        source.en, renamed.old, renamed.new, shown,
    )  # fmt: skip
