#!/usr/bin/env bash
# Ready to publish: `uv build` (the sdist, then the wheel built from that sdist) into a temporary
# folder, `twine check --strict` on both, and the metadata PyPI shows: every classifier a known
# trove classifier, one "Programming Language :: Python :: 3.x" classifier for each minor version
# Requires-Python admits, the README as a Markdown long description, the entry point of
# `ambot cognition`, the LICENSE file, and the files the plugin loads at run time in the wheel.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
uv build --quiet --out-dir "$work/dist" "$repo"
ls -l "$work"/dist/*.tar.gz "$work"/dist/*.whl
uv tool run --quiet twine check --strict "$work"/dist/*
uv run --quiet --no-project --with trove-classifiers --with packaging python - "$work/dist" <<'PY'
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

from packaging.specifiers import SpecifierSet
from trove_classifiers import classifiers as known

dist = Path(sys.argv[1])
wheel = next(dist.glob("*.whl"))
sdist = next(dist.glob("*.tar.gz"))
with zipfile.ZipFile(wheel) as archive:
    names = archive.namelist()
    info = next(name for name in names if name.endswith(".dist-info/METADATA"))
    metadata = Parser().parsestr(archive.read(info).decode("utf-8"))
    entry_points = archive.read(info.replace("METADATA", "entry_points.txt")).decode("utf-8")
with tarfile.open(sdist) as archive:
    pkg_info = next(member for member in archive.getmembers() if member.name.count("/") == 1 and member.name.endswith("/PKG-INFO"))
    sdist_metadata = Parser().parsestr(archive.extractfile(pkg_info).read().decode("utf-8"))  # type: ignore[union-attr]

problems = []
classifiers = metadata.get_all("Classifier") or []
problems += [f"unknown classifier: {c}" for c in classifiers if c not in known]
problems += [f"License classifier next to License-Expression: {c}" for c in classifiers if c.startswith("License ::")]
if not metadata.get("License-Expression"):
    problems.append("no License-Expression")
if "LICENSE" not in (metadata.get_all("License-File") or []) or not any(name.endswith(".dist-info/licenses/LICENSE") for name in names):
    problems.append("the wheel does not carry the LICENSE file")
requires = SpecifierSet(metadata["Requires-Python"])
admitted = {f"3.{minor}" for minor in range(6, 20) if f"3.{minor}.0" in requires}
declared = {c.rsplit(" :: ", 1)[1] for c in classifiers if c.startswith("Programming Language :: Python :: 3.")}
if admitted != declared:
    problems.append(f"Requires-Python {requires} admits {sorted(admitted)} but the classifiers say {sorted(declared)}")
if not any(c.startswith("Framework :: ") for c in classifiers):
    problems.append("no Framework classifier")
if not metadata.get("Keywords"):
    problems.append("no keywords")
if metadata.get("Description-Content-Type") != "text/markdown":
    problems.append(f"long description is {metadata.get('Description-Content-Type')!r}, not text/markdown")
body = metadata.get_payload()
if "## 安装到机器人" not in body:
    problems.append("the long description is not the README (no 安装到机器人 section)")
if sdist_metadata.get("Version") != metadata.get("Version"):
    problems.append("sdist and wheel disagree on the version")
if "[ambot.commands]" not in entry_points or "cognition = " not in entry_points:
    problems.append(f"no ambot.commands entry point for cognition:\n{entry_points}")
for needed in ("amrita_plugin_cognition/prompt/memory_block.jinja",):
    if needed not in names:
        problems.append(f"the wheel lacks {needed}")
if not any(name.startswith("amrita_plugin_cognition/migrations/") and name.endswith(".py") for name in names):
    problems.append("the wheel has no migrations")
if problems:
    print("\n".join(problems), file=sys.stderr)
    sys.exit(1)
print(
    f"{wheel.name} and {sdist.name}: {len(classifiers)} known classifiers, Python {sorted(admitted)}, "
    f"license {metadata['License-Expression']}, README as text/markdown ({len(body)} characters)"
)
PY
