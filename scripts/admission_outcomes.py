"""Admission's outcomes on every text of some data folders, to show that a change to admission's
speed changed no outcome: run it on two commits and compare.

Every string of two characters or more found in the ``.json`` and ``.jsonl`` files under the
folders (any field, any depth) is judged: the verdict (admit, reason, stored text, redacted), the
"don't remember" question, the redacted text, the secrets' spans, the text without quotes and the
memory cue.

    uv run python scripts/admission_outcomes.py tests/data [MORE_DIRS...] --out before.json
    uv run python scripts/admission_outcomes.py --compare before.json after.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

MIN_CHARS = 2


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        if len(value) >= MIN_CHARS:
            yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def documents(path: Path) -> list[Any]:
    raw = path.read_text(encoding="utf-8", errors="replace")
    try:
        return [json.loads(raw)]
    except ValueError:  # JSON lines (a comment line of "#" is skipped)
        found = []
        for line in raw.splitlines():
            try:
                found.append(json.loads(line))
            except ValueError:
                continue
        return found


def texts(folders: list[Path]) -> list[str]:
    found: set[str] = set()
    for folder in folders:
        for path in sorted(folder.rglob("*.json*")):
            if path.suffix in (".json", ".jsonl"):
                for document in documents(path):
                    found.update(strings(document))
    return sorted(found)


def outcomes(all_texts: list[str]) -> dict[str, list[Any]]:
    from amrita_plugin_cognition.domain.admission import admit, intent, redact, requests_not_to_remember
    from amrita_plugin_cognition.domain.admission.credentials import find_secrets
    from amrita_plugin_cognition.domain.admission.normalise import fold

    judged = {}
    for text in all_texts:
        verdict, folded = admit(text), fold(text)
        judged[text] = [
            verdict.admit, verdict.reason, verdict.text, verdict.redacted,
            requests_not_to_remember(text), redact(text),
            [[secret.start, secret.end, secret.kind] for secret in find_secrets(folded)],
            intent.without_quotes(folded), intent.has_memory_cue(folded),
        ]  # fmt: skip
    return judged


def compare(before_path: Path, after_path: Path) -> int:
    before = json.loads(before_path.read_text(encoding="utf-8"))
    after = json.loads(after_path.read_text(encoding="utf-8"))
    if before.keys() != after.keys():
        print(f"the texts differ: {len(before)} against {len(after)}")
        return 1
    differ = [text for text in before if before[text] != after[text]]
    print(f"{len(before)} texts, {len(differ)} with another outcome")
    for text in differ[:20]:
        print(f"  {text[:80]!r}\n    before {before[text]}\n    after  {after[text]}")
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.compare:
        return compare(*args.compare)
    if not args.folders or args.out is None:
        parser.error("give the data folders and --out, or --compare BEFORE AFTER")
    started = time.perf_counter()
    all_texts = texts(args.folders)
    args.out.write_text(json.dumps(outcomes(all_texts), ensure_ascii=False), encoding="utf-8")
    print(f"{len(all_texts)} texts judged in {time.perf_counter() - started:.1f} s -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
