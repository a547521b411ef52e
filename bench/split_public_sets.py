"""The fixed dev / held-out parts of the public recall sets that the second model's weights were
chosen on (bench/README.md, issue 23), written as recall files.

LoCoMo: the conversations (scopes) sorted by number, every other one from the first is dev, the
rest held out; ``locomo_test_30_42`` is the part of the held-out half that was run in time.
MADial zh: queries with an even id are dev, odd ids held out; the memories go into both.

    uv run python bench/split_public_sets.py [--data /path/to/data] [--out /tmp]
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from _common import parse_args


def _read(path: Path) -> list[dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip() and not line.startswith("#")]


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    queries = sum(row["type"] == "query" for row in rows)
    print(f"{path}: {queries} queries, {len(rows) - queries} memories")


def main() -> None:
    def arguments(parser: Any) -> None:
        parser.add_argument("--data", type=Path, required=True, help="folder with locomo/ and madial/ recall files")
        parser.add_argument("--out", type=Path, default=Path("/tmp"))

    args = parse_args("the dev / held-out parts of LoCoMo and MADial zh", arguments)
    locomo = _read(args.data / "locomo" / "locomo_recall.jsonl")
    scopes = sorted({row["scope"]["id"] for row in locomo}, key=int)
    dev = set(scopes[0::2])
    _write(args.out / "locomo_dev.jsonl", [row for row in locomo if row["scope"]["id"] in dev])
    _write(args.out / "locomo_test.jsonl", [row for row in locomo if row["scope"]["id"] not in dev])
    _write(args.out / "locomo_test_30_42.jsonl", [row for row in locomo if row["scope"]["id"] in {"30", "42"}])
    madial = _read(args.data / "madial" / "madial_zh_recall.jsonl")
    memories = [row for row in madial if row["type"] == "memory"]
    for name, parity in (("dev", 0), ("test", 1)):
        chosen = [row for row in madial if row["type"] == "query" and int(row["id"][1:]) % 2 == parity]
        _write(args.out / f"madial_{name}.jsonl", memories + chosen)


if __name__ == "__main__":
    main()
