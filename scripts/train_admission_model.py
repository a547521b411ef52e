"""Train admission's learned second opinions (amrita_plugin_cognition/domain/admission/learned.py).

    uv run python scripts/train_admission_model.py                   # train on tests/data/train, write the models
    uv run python scripts/train_admission_model.py --output DIR      # write the models elsewhere (tests compare)

Data: every ``tests/data/train/admission_*.jsonl`` (the eval format: text, admit, reason) and
nothing else: the script refuses another folder (``--data``), and a test watches every file it
opens. ``tests/data/dev`` is for measuring (``ambot cognition eval admission tests/data/dev``),
``tests/data/test`` is the sealed split (``docs/evaluation.md``). Three models:

- ``do_not_remember``: positives are the do-not-remember lines, negatives the lines to keep
  (credential lines are left out: a secret says nothing about a request, and some of them hold
  one); it reads the folded text with others' quoted words removed, and is asked only when
  ``model_consulted``.
- ``request_check``: the same lines, and ``AUGMENT`` requests with content made from them
  (``with_content``: a short request joined to a line to keep); it weighs the rules' requests
  (``intent.overruled``), so it must not read what a request carries as its topic.
- ``credential``: positives are the credential lines, negatives the lines to keep (requests not to
  remember are left out: they say nothing about secrets); it reads the folded text with its
  candidate values marked (``credential_view``) and its shape, and is asked only when
  ``credential_model_consulted`` (a value of a secret's shape no rule explained, or a security
  question).

Features are the models' own (``learned.grams``), binary and length-normalised; logistic regression
with balanced class weights and L2, trained by full-batch Adam in numpy: deterministic, same data,
same weights. The L2 strength and the number of epochs of each model are chosen by ``FOLDS``-fold
cross-validation on the training sets, grouped by file (a set's near-duplicate lines never sit on
both sides of a fold): the pair with the lowest class-balanced log-loss of the out-of-fold scores
on the lines the model is asked about. The do-not-remember threshold comes from the same
out-of-fold scores: the lowest (not below 0.5) that lets at most ``train_fp`` of the negatives the
model would be asked about through. The other two keep the balanced boundary, 0.5 (the request
check is read at its own cut points, ``intent.RULES_OVERRULED_BELOW``).

Next to the models the script writes ``training.json``: the chosen hyper-parameters, the
cross-validation table, and a hash of its inputs (this script, ``domain/admission/*.py`` and the
training files); ``tests/unit/test_admission_learned.py`` retrains only when that hash changes.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import math
import random
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from amrita_plugin_cognition.domain.admission import (  # noqa: E402
    credential_model_consulted,
    credential_view,
    unmarked,
)
from amrita_plugin_cognition.domain.admission.intent import model_consulted  # noqa: E402
from amrita_plugin_cognition.domain.admission.learned import (  # noqa: E402
    CREDENTIAL_FILE,
    DO_NOT_REMEMBER_FILE,
    REQUEST_CHECK_FILE,
    LinearModel,
    grams,
)
from amrita_plugin_cognition.domain.admission.normalise import fold  # noqa: E402
from amrita_plugin_cognition.domain.admission.requests import without_quotes  # noqa: E402

TRAIN = ROOT / "tests" / "data" / "train"
PACKAGE = ROOT / "amrita_plugin_cognition" / "domain" / "admission"
#: What the script records next to the models: hyper-parameters, cross-validation, input hash.
RECORD_FILE = "training.json"
# Weights this small change no verdict and are left out of the file.
PRUNE = 0.01
FOLDS = 5
#: The L2 strengths tried (the loss is a mean over lines: a gram seen in a few lines of 15,000
#: pulls its weight by about 1e-5 a step, so 1e-5 already holds rare grams near 0; 1e-4 was
#: worse than all of these on every model).
L2_GRID = (0.0, 1e-7, 1e-6, 1e-5)
#: The epochs tried: checkpoints of one run, so the longest costs what all of them cost.
EPOCH_GRID = (100, 200, 400, 800)
#: Requests with content added to the check model's lines: at 4,000 (with 2,500 real requests)
#: its scores no longer follow the content, and it still tells the stories and reports apart.
AUGMENT = 4000
_JOINTS = ("，", " ", "：", "。", "！", "", "~ ")
_CJK = re.compile(r"[\u4e00-\u9fff]")


@dataclass(frozen=True)
class Task:
    reason: str
    file: str
    shape: bool
    view: Callable[[str], str]
    consulted: Callable[[str], bool]
    #: The share of out-of-fold negatives the threshold lets through; None: the balanced boundary 0.5.
    train_fp: float | None
    #: How many requests with content (``with_content``) are added to the training lines.
    augment: int = 0

    def label(self, row: dict) -> bool | None:
        """True for a positive, False for a negative, None for a line this model does not learn from."""
        if row["admit"]:
            return False
        if row.get("reason") == self.reason:
            return True
        return None  # a secret says nothing about a request, nor a request about a secret


TASKS = {
    "do_not_remember": Task(
        "do_not_remember", DO_NOT_REMEMBER_FILE, False, lambda text: without_quotes(fold(text)), model_consulted, 0.02
    ),
    "request_check": Task(
        "do_not_remember",
        REQUEST_CHECK_FILE,
        False,
        lambda text: without_quotes(fold(text)),
        lambda text: True,
        None,
        augment=AUGMENT,
    ),
    "credential": Task(
        "credential",
        CREDENTIAL_FILE,
        True,
        lambda text: credential_view(fold(text)),
        lambda view: credential_model_consulted(unmarked(view)),
        None,
    ),
}


class RefusedFolder(ValueError):
    """Training was pointed at a folder other than ``tests/data/train``."""


def load_sets(folder: Path = TRAIN) -> dict[str, list[dict]]:
    """Every admission set of the training split, by file stem; any other folder is refused
    (however it is spelled: the path is resolved first)."""
    if folder.resolve() != TRAIN.resolve():
        raise RefusedFolder(f"training reads only {TRAIN.relative_to(ROOT)}, not {folder}")
    sets: dict[str, list[dict]] = {}
    for path in sorted(TRAIN.glob("admission_*.jsonl")):
        lines = path.read_text(encoding="utf-8").splitlines()
        sets[path.stem] = [json.loads(line) for line in lines if line.strip() and not line.lstrip().startswith("#")]
    if not sets:
        raise RefusedFolder(f"no admission_*.jsonl in {TRAIN.relative_to(ROOT)}")
    return sets


def training_inputs() -> list[Path]:
    """What the models are a function of, in a stable order: this script, the admission code (the
    views and gates the models are trained through) and the training files."""
    return [Path(__file__).resolve(), *sorted(PACKAGE.glob("*.py")), *sorted(TRAIN.glob("admission_*.jsonl"))]


def input_hash() -> str:
    """SHA-256 over each input's path (relative to the repository) and content: a data file's
    bytes (line ends as LF), a Python file's syntax tree without its docstrings, so that a comment
    or a docstring (a moved test's path in one, say) does not ask for minutes of retraining."""
    digest = hashlib.sha256()
    for path in training_inputs():
        if path.suffix == ".py":
            content = code_without_docs(path.read_text(encoding="utf-8")).encode()
        else:
            content = path.read_bytes().replace(b"\r\n", b"\n")
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + hashlib.sha256(content).digest())
    return digest.hexdigest()


def code_without_docs(source: str) -> str:
    """What a Python file does: its syntax tree without docstrings (comments are never in it)."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body:
            first = body[0]
            value = first.value if isinstance(first, ast.Expr) else None
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree, annotate_fields=False)


def assign_folds(sizes: dict[str, int], folds: int) -> dict[str, int]:
    """Each file to a fold, largest first, to the fold with the fewest lines so far (ties: the
    lower fold): every fold gets whole files and about the same number of lines."""
    totals = [0] * folds
    fold_of: dict[str, int] = {}
    for name, size in sorted(sizes.items(), key=lambda item: (-item[1], item[0])):
        chosen = min(range(folds), key=lambda number: (totals[number], number))
        fold_of[name] = chosen
        totals[chosen] += size
    return fold_of


class _Encoder:
    """Texts as sorted arrays of gram ids (ids given in a fixed order: same data, same ids) and
    their length norms."""

    def __init__(self, shape: bool) -> None:
        self.shape = shape
        self.index: dict[str, int] = {}
        self.grams_of: list[str] = []
        self._cache: dict[str, tuple[np.ndarray, float]] = {}

    def encode(self, text: str) -> tuple[np.ndarray, float]:
        found = self._cache.get(text)
        if found is None:
            features = sorted(grams(text, self.shape))
            ids = []
            for gram in features:
                if gram not in self.index:
                    self.index[gram] = len(self.grams_of)
                    self.grams_of.append(gram)
                ids.append(self.index[gram])
            # every gram of the text counts in its norm, as the scorer does
            found = (np.array(sorted(ids), dtype=np.int64), 1.0 / math.sqrt(max(1, len(features))))
            self._cache[text] = found
        return found


@dataclass(frozen=True)
class _Fitted:
    """A model during training: weights over global gram ids (``vocabulary``), with its bias."""

    vocabulary: np.ndarray
    weights: np.ndarray
    bias: float

    def shipped(self, encoder: _Encoder) -> LinearModel:
        kept = {
            encoder.grams_of[gram]: round(float(w), 4)
            for gram, w in zip(self.vocabulary.tolist(), self.weights, strict=True)
            if abs(w) >= PRUNE
        }
        return LinearModel(weights=kept, bias=round(float(self.bias), 4), threshold=0.5, shape=encoder.shape)

    def probabilities(self, encoded: list[tuple[np.ndarray, float]], width: int) -> np.ndarray:
        """What the shipped (pruned, rounded) model would say of each text."""
        lookup = np.zeros(width)
        lookup[self.vocabulary] = np.where(np.abs(self.weights) >= PRUNE, np.round(self.weights, 4), 0.0)
        if not encoded:
            return np.zeros(0)
        lengths = np.array([len(ids) for ids, _ in encoded])
        sums = np.bincount(
            np.repeat(np.arange(len(encoded)), lengths),
            weights=lookup[np.concatenate([ids for ids, _ in encoded])],
            minlength=len(encoded),
        )
        scores = round(float(self.bias), 4) + sums * np.array([norm for _, norm in encoded])
        return 1.0 / (1.0 + np.exp(-np.clip(scores, -60, 60)))


def _fit_path(
    encoded: list[tuple[np.ndarray, float]], labels: np.ndarray, *, l2: float, checkpoints: tuple[int, ...]
) -> Iterator[tuple[int, _Fitted]]:
    """Full-batch Adam on the balanced logistic loss with L2; the model at each checkpoint (epochs)."""
    lengths = np.array([len(ids) for ids, _ in encoded])
    every = np.concatenate([ids for ids, _ in encoded])
    frequency = np.bincount(every)
    vocabulary = np.flatnonzero(frequency >= 2)  # grams of one line teach nothing general
    local = np.full(len(frequency), -1, dtype=np.int64)
    local[vocabulary] = np.arange(len(vocabulary))
    columns = local[every]
    inside = columns >= 0
    column = columns[inside]
    row_index = np.repeat(np.arange(len(encoded)), lengths)[inside]
    value = np.repeat(np.array([norm for _, norm in encoded]), lengths)[inside]
    samples, width = len(encoded), len(vocabulary)
    positives = labels.sum()
    balance = (samples / (2 * max(1.0, positives)), samples / (2 * max(1.0, samples - positives)))
    sample_weight = np.where(labels > 0, *balance)
    weights, bias = np.zeros(width), 0.0
    first, second = np.zeros(width + 1), np.zeros(width + 1)  # Adam moments, the bias last
    rate, beta1, beta2 = 0.05, 0.9, 0.999
    for step in range(1, max(checkpoints) + 1):
        scores = np.bincount(row_index, weights=value * weights[column], minlength=samples) + bias
        predicted = 1.0 / (1.0 + np.exp(-np.clip(scores, -60, 60)))
        residual = (predicted - labels) * sample_weight / samples
        per_weight = np.bincount(column, weights=value * residual[row_index], minlength=width) + l2 * weights
        gradient = np.append(per_weight, residual.sum())
        first = beta1 * first + (1 - beta1) * gradient
        second = beta2 * second + (1 - beta2) * gradient * gradient
        update = rate * (first / (1 - beta1**step)) / (np.sqrt(second / (1 - beta2**step)) + 1e-8)
        weights -= update[:-1]
        bias -= update[-1]
        if step in checkpoints:
            yield step, _Fitted(vocabulary, weights.copy(), float(bias))


def with_content(rows: list[dict], count: int, seed: int = 7) -> list[dict]:
    """Requests not to remember that carry something said: a short request from ``rows`` joined to
    a line to keep from ``rows`` ("别记这个：…", "…，这条别存"). Without them the model reads a
    request's content as its topic, and a request about a meeting or an order number scores like
    the ordinary sentences about them."""
    chance = random.Random(seed)
    requests = [
        row["text"]
        for row in rows
        if row.get("reason") == "do_not_remember" and 4 <= len(_CJK.findall(row["text"])) <= 10
    ]
    contents = [row["text"] for row in rows if row["admit"]]
    made: list[dict] = []
    for _ in range(count if requests and contents else 0):
        request, content = chance.choice(requests), chance.choice(contents)
        joint = chance.choice(_JOINTS)
        text = request + joint + content if chance.random() < 0.5 else content + joint + request
        made.append({"text": text, "admit": False, "reason": "do_not_remember"})
    return made


def _labelled(task: Task, encoder: _Encoder, rows: list[dict]) -> tuple[list[tuple[np.ndarray, float]], np.ndarray]:
    """The lines ``task`` learns from (with its made-up requests), encoded, and their labels."""
    if task.augment:
        rows = rows + with_content(rows, task.augment)
    pairs = [(encoder.encode(task.view(row["text"])), label) for row in rows if (label := task.label(row)) is not None]
    return [encoded for encoded, _ in pairs], np.array([label for _, label in pairs], dtype=np.float64)


def balanced_log_loss(probabilities: np.ndarray, labels: np.ndarray) -> float:
    """The mean log-loss of the positives and that of the negatives, averaged."""
    clipped = np.clip(probabilities, 1e-12, 1 - 1e-12)
    losses = -(labels * np.log(clipped) + (1 - labels) * np.log(1 - clipped))
    parts = [losses[labels == value].mean() for value in (1.0, 0.0) if (labels == value).any()]
    return float(sum(parts) / len(parts))


def train(
    task: Task,
    sets: dict[str, list[dict]],
    *,
    l2_grid: tuple[float, ...] = L2_GRID,
    epoch_grid: tuple[int, ...] = EPOCH_GRID,
    folds: int = FOLDS,
    log: Callable[[str], None] = lambda line: None,
) -> tuple[LinearModel, dict[str, object]]:
    """Choose L2 and epochs by grouped cross-validation, fit on every set with them, and set the
    threshold from the out-of-fold scores. Returns the model and what was chosen and why."""
    encoder = _Encoder(task.shape)
    fold_of = assign_folds({name: len(rows) for name, rows in sets.items()}, folds)
    # the lines scored out of fold: real lines only, those the model is asked about
    scored: list[tuple[int, tuple[np.ndarray, float], bool]] = []
    for name, rows in sets.items():
        for row in rows:
            label = task.label(row)
            if label is None:
                continue
            view = task.view(row["text"])
            if task.consulted(view):
                scored.append((fold_of[name], encoder.encode(view), label))
    labels = np.array([label for _, _, label in scored], dtype=np.float64)
    out_of_fold = {(l2, epochs): np.zeros(len(scored)) for l2 in l2_grid for epochs in epoch_grid}
    for number in range(folds):
        rest = [row for name, rows in sets.items() if fold_of[name] != number for row in rows]
        held = [position for position, item in enumerate(scored) if item[0] == number]
        encoded, fold_labels = _labelled(task, encoder, rest)
        held_encoded = [scored[position][1] for position in held]
        for l2 in l2_grid:
            for epochs, fitted in _fit_path(encoded, fold_labels, l2=l2, checkpoints=epoch_grid):
                out_of_fold[(l2, epochs)][held] = fitted.probabilities(held_encoded, len(encoder.grams_of))
        log(f"  fold {number + 1}/{folds}: {len(encoded)} lines, {len(held)} held out")
    table = [
        {"l2": l2, "epochs": epochs, "log_loss": round(balanced_log_loss(scores, labels), 5)}
        for (l2, epochs), scores in out_of_fold.items()
    ]
    best = min(table, key=lambda entry: (entry["log_loss"], -entry["l2"], entry["epochs"]))  # ties: the simpler
    l2, epochs = float(best["l2"]), int(best["epochs"])
    everything = [row for rows in sets.values() for row in rows]
    encoded, all_labels = _labelled(task, encoder, everything)
    (_, fitted), *_ = _fit_path(encoded, all_labels, l2=l2, checkpoints=(epochs,))
    model = fitted.shipped(encoder)
    threshold = 0.5
    if task.train_fp is not None:
        chosen = out_of_fold[(l2, epochs)]
        ordered = sorted((float(score) for score, label in zip(chosen, labels, strict=True) if not label), reverse=True)
        allowed = int(task.train_fp * len(ordered))
        above = ordered[allowed] if allowed < len(ordered) else 0.0
        threshold = round(max(0.5, above + 1e-4), 4)
    record: dict[str, object] = {
        "l2": l2,
        "epochs": epochs,
        "threshold": threshold,
        "out_of_fold_lines": len(scored),
        "cross_validation": table,
    }
    return LinearModel(model.weights, model.bias, threshold, task.shape), record


def train_all(
    sets: dict[str, list[dict]],
    *,
    l2_grid: tuple[float, ...] = L2_GRID,
    epoch_grid: tuple[int, ...] = EPOCH_GRID,
    folds: int = FOLDS,
    log: Callable[[str], None] = lambda line: None,
) -> tuple[dict[str, LinearModel], dict[str, object]]:
    """Every model, and the record written next to them (without the input hash)."""
    models: dict[str, LinearModel] = {}
    chosen: dict[str, object] = {}
    for key, task in TASKS.items():
        log(f"{key}:")
        models[key], chosen[key] = train(task, sets, l2_grid=l2_grid, epoch_grid=epoch_grid, folds=folds, log=log)
    record = {
        "files": sorted(sets),
        "folds": assign_folds({name: len(rows) for name, rows in sets.items()}, folds),
        "grid": {"l2": list(l2_grid), "epochs": list(epoch_grid)},
        "models": chosen,
    }
    return models, record


def _dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output", type=Path, default=PACKAGE, help="folder to write the models to (default: package)")
    parser.add_argument("--data", type=Path, default=TRAIN, help="the training split; no other folder is accepted")
    arguments = parser.parse_args(argv)
    try:
        sets = load_sets(arguments.data)
    except RefusedFolder as error:
        parser.error(str(error))
    digest = input_hash()
    models, record = train_all(sets, log=lambda line: print(line, file=sys.stderr, flush=True))
    for key, task in TASKS.items():
        model = models[key]
        (arguments.output / task.file).write_text(_dump(model.to_json()), encoding="utf-8")
        chosen = record["models"][key]  # type: ignore[index]
        print(
            f"{key}: l2 {chosen['l2']}, {chosen['epochs']} epochs, {len(model.weights)} weights, "
            f"threshold {model.threshold} -> {task.file}"
        )
    text = json.dumps({"inputs_sha256": digest, **record}, ensure_ascii=False, sort_keys=True, indent=1)
    (arguments.output / RECORD_FILE).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
