"""Train admission's learned second opinions (amrita_plugin_cognition/domain/admission/learned.py).

    uv run python scripts/train_admission_model.py                   # train the models on every set, write them
    uv run python scripts/train_admission_model.py --output DIR      # write the models elsewhere (tests compare)

Data: every ``tests/data/train/admission_zh*.jsonl`` (the eval format: text, admit, reason). Three models:

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
with balanced class weights (and optional L2), trained by full-batch Adam in numpy: deterministic,
same data, same weights. The do-not-remember threshold comes from out-of-fold scores (5 folds) of
the negatives the model would be asked about: the lowest (not below 0.5) that lets at most
``train_fp`` of them through. The credential model keeps the balanced boundary, 0.5: on the unseen
sets a calibrated threshold (about 0.63) caught four secrets fewer and refused no ordinary line less.

What the models add on sets they have not seen is measured by ``scripts/admission_unseen_estimate.py``
(each blind set against the rules of the commit before it and models trained without it).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import sys
from collections.abc import Callable
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

DATA = ROOT / "tests" / "data" / "train"
PACKAGE = ROOT / "amrita_plugin_cognition" / "domain" / "admission"
# Weights this small change no verdict and are left out of the file.
PRUNE = 0.01
FOLDS = 5
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


def load_sets() -> dict[str, list[dict]]:
    sets: dict[str, list[dict]] = {}
    for path in sorted(DATA.glob("admission_zh*.jsonl")):
        lines = path.read_text(encoding="utf-8").splitlines()
        sets[path.stem] = [json.loads(line) for line in lines if line.strip() and not line.lstrip().startswith("#")]
    return sets


def _fit(texts: list[str], labels: np.ndarray, *, shape: bool, l2: float, epochs: int) -> LinearModel:
    features = [grams(text, shape) for text in texts]
    counts: dict[str, int] = {}
    for found in features:
        for gram in found:
            counts[gram] = counts.get(gram, 0) + 1
    vocabulary = sorted(gram for gram, count in counts.items() if count >= 2)
    index = {gram: position for position, gram in enumerate(vocabulary)}
    columns: list[int] = []
    rows_of: list[int] = []
    values: list[float] = []
    for row, found in enumerate(features):
        norm = 1.0 / math.sqrt(max(1, len(found)))  # every gram of the text counts, as the scorer does
        for gram in found:
            position = index.get(gram)
            if position is not None:
                columns.append(position)
                rows_of.append(row)
                values.append(norm)
    column, row_index = np.array(columns, dtype=np.int64), np.array(rows_of, dtype=np.int64)
    value = np.array(values)
    samples, width = len(texts), len(vocabulary)
    positives = labels.sum()
    balance = (samples / (2 * max(1.0, positives)), samples / (2 * max(1.0, samples - positives)))
    sample_weight = np.where(labels > 0, *balance)
    weights, bias = np.zeros(width), 0.0
    first, second = np.zeros(width + 1), np.zeros(width + 1)  # Adam moments, the bias last
    rate, beta1, beta2 = 0.05, 0.9, 0.999
    for step in range(1, epochs + 1):
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
    kept = {gram: round(float(w), 4) for gram, w in zip(vocabulary, weights, strict=True) if abs(w) >= PRUNE}
    return LinearModel(weights=kept, bias=round(float(bias), 4), threshold=0.5, shape=shape)


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


def train(task: Task, rows: list[dict], *, l2: float = 0.0, epochs: int = 400) -> LinearModel:
    """Fit on ``rows``; the threshold from out-of-fold scores (a model scores its own training
    lines too well to calibrate on them)."""
    if task.augment:
        rows = rows + with_content(rows, task.augment)
    labelled = [(task.view(row["text"]), label) for row in rows if (label := task.label(row)) is not None]
    texts = [text for text, _ in labelled]
    labels = np.array([label for _, label in labelled], dtype=np.float64)
    if task.train_fp is None:
        model = _fit(texts, labels, shape=task.shape, l2=l2, epochs=epochs)
        return LinearModel(model.weights, model.bias, 0.5, task.shape)
    negative_scores: list[float] = []
    for fold_number in range(FOLDS):
        held = [position for position in range(len(texts)) if position % FOLDS == fold_number]
        rest = [position for position in range(len(texts)) if position % FOLDS != fold_number]
        model = _fit([texts[p] for p in rest], labels[rest], shape=task.shape, l2=l2, epochs=epochs)
        negative_scores += [model.probability(texts[p]) for p in held if labels[p] == 0 and task.consulted(texts[p])]
    model = _fit(texts, labels, shape=task.shape, l2=l2, epochs=epochs)
    ordered = sorted(negative_scores, reverse=True)
    allowed = int(task.train_fp * len(ordered))
    above = ordered[allowed] if allowed < len(ordered) else 0.0
    return LinearModel(model.weights, model.bias, round(max(0.5, above + 1e-4), 4), task.shape)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output", type=Path, default=PACKAGE, help="folder to write the models to (default: package)")
    arguments = parser.parse_args()
    sets = load_sets()
    rows = [row for lines in sets.values() for row in lines]
    for key, task in TASKS.items():
        model = train(task, rows)
        text = json.dumps(model.to_json(), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        (arguments.output / task.file).write_text(text + "\n", encoding="utf-8")
        print(f"{key}: {len(model.weights)} weights, threshold {model.threshold} -> {task.file}")


if __name__ == "__main__":
    main()
