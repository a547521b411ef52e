"""Reports on the sealed split carry ids and counts, never texts.

A file recorded in the ``SEALED.json`` of its own folder (``scripts/seal_test_split.py`` writes it:
``{"files": {NAME: {"sha256", "lines", "added"}}}``) is sealed: it is measured, never read for
tuning. Every evaluator's report names failing cases with their texts (``failures`` of ``time``
and ``gate``, ``failure_details`` of ``dedup``, a model's ``last_error``), and printing them would
show the sealed sentences to whoever runs the eval. So when any evaluated file is sealed, the report
keeps, of every listed case, its ``id`` (and ``file``) alone, drops any other free text, and says so
on stderr.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

MANIFEST = "SEALED.json"
#: What a listed case keeps in the report of a sealed file.
KEPT_CASE_KEYS = ("id", "file")
#: Free text besides the listed cases (a model's error can quote the line it was asked about).
TEXT_KEYS = frozenset({"last_error"})


def is_sealed(path: Path) -> bool:
    """Whether ``path`` is recorded in the ``SEALED.json`` of its folder (an unreadable manifest
    counts as sealing everything beside it: the safe side)."""
    manifest = path.parent / MANIFEST
    if not manifest.is_file():
        return False
    try:
        files = json.loads(manifest.read_text(encoding="utf-8")).get("files", {})
    except (ValueError, OSError, AttributeError):
        return True
    return not isinstance(files, dict) or path.name in files


def sealed_files(paths: Iterable[Path]) -> list[Path]:
    return [path for path in paths if is_sealed(path)]


def without_texts(report: Any) -> Any:
    """``report`` with every listed case cut down to its id (``KEPT_CASE_KEYS``) and the other free
    text (``TEXT_KEYS``) left out; counts, rates and intervals stay."""
    if isinstance(report, dict):
        return {key: without_texts(value) for key, value in report.items() if key not in TEXT_KEYS}
    if isinstance(report, list):
        return [
            {key: item[key] for key in KEPT_CASE_KEYS if key in item} if isinstance(item, dict) else without_texts(item)
            for item in report
        ]
    return report
