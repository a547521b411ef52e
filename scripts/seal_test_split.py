"""Seal the test split: ``tests/data/test/SEALED.json`` records each file's SHA-256, line count and
the day it was added, and ``tests/unit/test_sealed_split.py`` fails when a file there is added, changed
or removed without it.

    uv run python scripts/seal_test_split.py --add tests/data/test/admission_zh_sealed_a.jsonl
    uv run python scripts/seal_test_split.py --check

``--add FILE`` records a file that is already in the test folder (every non-blank, non-``#`` line a
JSON object). A recorded file is sealed: adding it again with other content is refused, and so is
any other change; a corrected set goes in under a new name. The split is read for measuring only
(``docs/evaluation.md``): never for training (``scripts/train_admission_model.py`` reads
``tests/data/train`` alone) and never for tuning.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEST = ROOT / "tests" / "data" / "test"
MANIFEST = "SEALED.json"


class SealError(ValueError):
    """A file that cannot be recorded, or a recorded file that would change."""


def describe(path: Path) -> dict[str, object]:
    """A file's fingerprint: SHA-256 of its bytes and its number of lines."""
    content = path.read_bytes()
    return {"sha256": hashlib.sha256(content).hexdigest(), "lines": len(content.decode("utf-8").splitlines())}


def read_manifest(folder: Path = TEST) -> dict[str, dict[str, object]]:
    path = folder / MANIFEST
    if not path.exists():
        return {}
    files = json.loads(path.read_text(encoding="utf-8")).get("files", {})
    if not isinstance(files, dict):
        raise SealError(f"{path}: 'files' must be an object")
    return files


def _write_manifest(folder: Path, files: dict[str, dict[str, object]]) -> None:
    text = json.dumps({"files": dict(sorted(files.items()))}, ensure_ascii=False, indent=2, sort_keys=True)
    (folder / MANIFEST).write_text(text + "\n", encoding="utf-8")


def problems(folder: Path = TEST) -> list[str]:
    """How the folder differs from its manifest (empty: sealed as recorded)."""
    recorded = read_manifest(folder)
    found: list[str] = []
    present = {path.name: path for path in sorted(folder.iterdir()) if path.name != MANIFEST} if folder.exists() else {}
    for name, path in present.items():
        if not path.is_file():
            found.append(f"{name}: not a file (the sealed split is flat)")
        elif name not in recorded:
            found.append(f"{name}: not in {MANIFEST} (record it with scripts/seal_test_split.py --add)")
        else:
            now = describe(path)
            entry = recorded[name]
            if (now["sha256"], now["lines"]) != (entry.get("sha256"), entry.get("lines")):
                found.append(f"{name}: changed since it was sealed ({entry.get('added')}); sealed files never change")
    found += [f"{name}: recorded in {MANIFEST} but missing" for name in sorted(set(recorded) - set(present))]
    return found


def _check_lines(path: Path) -> None:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        text = line.strip().lstrip("\ufeff")
        if not text or text.startswith("#"):
            continue
        try:
            value = json.loads(text)
        except ValueError as error:
            raise SealError(f"{path.name} line {number}: not JSON ({error})") from error
        if not isinstance(value, dict):
            raise SealError(f"{path.name} line {number}: not a JSON object")


def add(path: Path, folder: Path = TEST, today: date | None = None) -> str:
    """Record ``path`` (a file directly in ``folder``); the same content again is a no-op, other
    content under a recorded name is refused."""
    if not path.is_file():
        raise SealError(f"{path}: no such file")
    if path.resolve().parent != folder.resolve():
        raise SealError(f"{path}: put the file in {folder} first (the sealed split is flat)")
    if path.name == MANIFEST:
        raise SealError(f"{MANIFEST} is the manifest itself")
    files = read_manifest(folder)
    now = describe(path)
    entry = files.get(path.name)
    if entry is not None:
        if (entry.get("sha256"), entry.get("lines")) == (now["sha256"], now["lines"]):
            return f"{path.name}: already sealed on {entry.get('added')}"
        raise SealError(f"{path.name}: sealed on {entry.get('added')} with other content; sealed files never change")
    _check_lines(path)
    files[path.name] = {**now, "added": (today or date.today()).isoformat()}
    _write_manifest(folder, files)
    return f"{path.name}: sealed ({now['lines']} lines, sha256 {str(now['sha256'])[:12]}…)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--add", type=Path, metavar="FILE", help="record a new file of the test folder")
    action.add_argument("--check", action="store_true", help="compare the folder with its manifest")
    parser.add_argument("--dir", type=Path, default=TEST, help=argparse.SUPPRESS)  # for the script's own tests
    arguments = parser.parse_args(argv)
    try:
        if arguments.add is not None:
            print(add(arguments.add, arguments.dir))
            return 0
        found = problems(arguments.dir)
    except SealError as error:
        print(f"refused: {error}", file=sys.stderr)
        return 1
    for problem in found:
        print(problem, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
