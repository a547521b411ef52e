"""The splits of the labelled sets (``docs/evaluation.md``): the sealed test split changes only
through its manifest, and training reads the train split and nothing else."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest
from script_modules import load_script

pytestmark = pytest.mark.embedded_only

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"


seal = load_script("seal_test_split")


def test_the_sealed_test_split_matches_its_manifest() -> None:
    """Every file in tests/data/test is recorded in SEALED.json with its hash and line count, and
    every recorded file is there: nothing was added, changed or removed without the manifest."""
    assert (DATA / "test" / seal.MANIFEST).is_file()
    assert seal.problems(DATA / "test") == []


def _case(number: int) -> str:
    return json.dumps({"id": f"s{number}", "text": f"第 {number} 句", "admit": True}, ensure_ascii=False) + "\n"


def test_the_seal_script_records_new_files_and_refuses_changes(tmp_path: Path) -> None:
    folder = tmp_path / "test"
    folder.mkdir()
    sealed = folder / "admission_zh_sealed_x.jsonl"
    sealed.write_text("".join(_case(number) for number in range(3)), encoding="utf-8")
    assert seal.problems(folder) == [
        f"{sealed.name}: not in SEALED.json (record it with scripts/seal_test_split.py --add)"
    ]

    assert seal.main(["--add", str(sealed), "--dir", str(folder)]) == 0
    entry = seal.read_manifest(folder)[sealed.name]
    assert entry["lines"] == 3 and len(entry["sha256"]) == 64 and entry["added"] == date.today().isoformat()
    assert seal.problems(folder) == [] and seal.main(["--check", "--dir", str(folder)]) == 0
    assert "already sealed" in seal.add(sealed, folder)  # the same content again: nothing to do

    # a changed file is found, and the script will not record the change
    sealed.write_text(sealed.read_text(encoding="utf-8") + _case(3), encoding="utf-8")
    assert any("changed since it was sealed" in problem for problem in seal.problems(folder))
    with pytest.raises(seal.SealError, match="never change"):
        seal.add(sealed, folder)
    assert seal.main(["--add", str(sealed), "--dir", str(folder)]) == 1
    assert seal.read_manifest(folder)[sealed.name] == entry
    # so is a removed one
    sealed.unlink()
    assert seal.problems(folder) == [f"{sealed.name}: recorded in SEALED.json but missing"]
    assert seal.main(["--check", "--dir", str(folder)]) == 1

    # only files of the folder itself, and only JSON lines
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text(_case(0), encoding="utf-8")
    with pytest.raises(seal.SealError, match="put the file in"):
        seal.add(outside, folder)
    broken = folder / "gate_zh_sealed_y.jsonl"
    broken.write_text("not json\n", encoding="utf-8")
    with pytest.raises(seal.SealError, match="line 1"):
        seal.add(broken, folder)
    assert broken.name not in seal.read_manifest(folder)


#: Run in a fresh interpreter: an audit hook cannot be removed once added. Every path opened or
#: listed is resolved (relative spellings, "..", symlinks) before it is compared with the folders.
_WATCH = r"""
import json, os, sys, tempfile, importlib.util
from pathlib import Path

root = Path(sys.argv[1]).resolve()
watched = [(root / "tests" / "data" / name).resolve() for name in ("dev", "test")]
train = (root / "tests" / "data" / "train").resolve()
opened, forbidden = [], []
busy = []

def where(raw):
    if raw is None or isinstance(raw, int):
        return None
    return Path(os.fsdecode(raw)).resolve()

def hook(event, args):
    if busy or event not in ("open", "os.listdir", "os.scandir", "glob.glob", "os.walk"):
        return
    busy.append(1)
    try:
        path = where(args[0] if args else None)
        if path is not None:
            opened.append(path)
            if any(path == folder or folder in path.parents for folder in watched):
                forbidden.append(f"{event} {path}")
    finally:
        busy.pop()

sys.addaudithook(hook)
spec = importlib.util.spec_from_file_location("train_admission_model", root / "scripts" / "train_admission_model.py")
training = importlib.util.module_from_spec(spec)
sys.modules["train_admission_model"] = training
spec.loader.exec_module(training)

refused = []
for spelling in (root / "tests" / "data" / "dev", root / "tests" / "data" / "train" / ".." / "test"):
    try:
        training.load_sets(spelling)
    except training.RefusedFolder:
        refused.append(str(spelling))
try:
    training.main(["--data", str(root / "tests" / "data" / "dev"), "--output", tempfile.mkdtemp()])
except SystemExit as error:
    refused.append(f"main exit {error.code}")

sets = training.load_sets()
training.input_hash()
small = {name: rows[:80] for name, rows in sets.items()}
models, record = training.train_all(small, l2_grid=(0.0, 1e-6), epoch_grid=(2, 4), folds=3)
result = {
    "forbidden": list(forbidden),
    "train_files_opened": sorted({p.name for p in opened if p.parent == train}),
    "refused": refused,
    "models": sorted(models),
}

# the watch itself: a dev file opened through another spelling is caught
probe = next((root / "tests" / "data" / "dev").glob("*.jsonl"))
before = len(forbidden)
open(root / "tests" / "data" / "train" / ".." / "dev" / probe.name, "rb").close()
result["watch_works"] = len(forbidden) > before
print(json.dumps(result))
"""


def test_training_reads_the_train_split_and_nothing_else() -> None:
    """The training script's data loading, hash and a short grouped cross-validated training, with
    every file opened or listed watched: nothing under tests/data/dev or tests/data/test."""
    completed = subprocess.run(
        [sys.executable, "-c", _WATCH, str(ROOT)], capture_output=True, text=True, timeout=300, check=False
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    result = json.loads(completed.stdout.strip().splitlines()[-1])
    assert result["forbidden"] == [], result["forbidden"][:10]
    assert result["watch_works"]
    expected = sorted(path.name for path in (DATA / "train").glob("admission_*.jsonl"))
    assert result["train_files_opened"] == expected  # the hook saw the reads it had to see
    assert len(result["refused"]) == 3 and result["refused"][-1] == "main exit 2"
    assert result["models"] == ["credential", "do_not_remember", "request_check"]
