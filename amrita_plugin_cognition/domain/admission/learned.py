"""Learned second opinions: on requests not to remember, and on secrets the rules do not name.

The rules in ``intent`` and ``requests`` name the phrasings they know; people keep inventing new
ones ("听听就好别往心里去", "这段别持久化", "当耳旁风"). A linear model over the character n-grams
of a message, trained on labelled Chinese chat (``scripts/train_admission_model.py``), catches
many that no rule names. It is asked only when the rules said no and the message holds a memory
cue, and it reads the speaker's own words (quotes of others removed): a hard negative that quotes
a request ("他跟我说“你就当我没说过”") is not read as one.

The same kind of model judges secrets the rules miss ("短信那个六位数 6 5 3 0 9 1", "行李箱那个三位的
锁我设的 154", "教务系统我换成 jY5QQ&i*hu 了"): it is asked only when the message holds a value of a
secret's shape that is not otherwise explained (``candidates.value_candidates``) or names a
security question, and it also reads the message's shape (digits as 0, letters as a/A), so a
six-digit code is one feature whatever its digits. It reads each candidate between marks, with the
characters a few places before and after it as features of their own: the cue of a code is near it.

A third model of the same kind checks the rules' requests: a rule that reads a request in a film
about erased memories, someone else's wish or a product's delete button is overruled when that
model finds a request unlikely in the message and in each of its parts (``intent.overruled``).

The models are data (``do_not_remember_model.json``, ``request_check_model.json``,
``credential_model.json``: weights per n-gram), loaded once. Scoring is a sum of weights: a few
microseconds per message.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache
from importlib import resources

from ..regex_start import compile_guarded

DO_NOT_REMEMBER_FILE = "do_not_remember_model.json"
REQUEST_CHECK_FILE = "request_check_model.json"
CREDENTIAL_FILE = "credential_model.json"
MAX_N = 3
#: Shape n-grams (only those holding a digit or a letter): 3 to 5 long.
SHAPE_SIZES = (3, 4, 5)
_DIGIT = compile_guarded(r"[0-9]")
_LOWER = compile_guarded(r"[a-z]")
_UPPER = compile_guarded(r"[A-Z]")


def grams(text: str, shape: bool = False) -> set[str]:
    """The features of ``text`` (folded): its lowercase character n-grams, 1 to ``MAX_N`` long,
    with a start and an end mark so that "别记" at the end of a message differs from one inside;
    with ``shape``, also the n-grams of its shape (digits as 0, letters as a or A) that hold one."""
    marked = "\x02" + " ".join(text.lower().split()) + "\x03"
    found: set[str] = set()
    for size in range(1, MAX_N + 1):
        for start in range(len(marked) - size + 1):
            found.add(marked[start : start + size])
    if shape and VALUE_START in marked:
        found |= _window_grams(marked)
    if shape:
        outline = "\x02" + _UPPER.sub("A", _LOWER.sub("a", _DIGIT.sub("0", " ".join(text.split())))) + "\x03"
        for size in SHAPE_SIZES:
            for start in range(len(outline) - size + 1):
                piece = outline[start : start + size]
                if "0" in piece or "a" in piece or "A" in piece:
                    found.add("§" + piece)
    return found


#: The marks around a candidate value in what the credential model reads (``admission.credential_view``).
VALUE_START, VALUE_END = "\x01", "\x04"
#: How far a marked value's context reaches, before and after it.
WINDOW_BEFORE, WINDOW_AFTER = 8, 6
_MARKED_VALUE = compile_guarded(f"{VALUE_START}[^{VALUE_END}]*{VALUE_END}")


def _window_grams(marked: str) -> set[str]:
    """The characters and character pairs a little before («) and after (») each marked value:
    a cue a few words from its value ("PIN 是 508799", "登录要的是 x") counts wherever it stands."""
    found: set[str] = set()
    for match in _MARKED_VALUE.finditer(marked):
        before = marked[max(0, match.start() - WINDOW_BEFORE) : match.start()].replace(VALUE_END, "")
        after = marked[match.end() : match.end() + WINDOW_AFTER].split(VALUE_START)[0]
        for mark, window in (("«", before), ("»", after)):
            for size in (1, 2):
                for start in range(len(window) - size + 1):
                    piece = window[start : start + size]
                    if piece.strip():
                        found.add(mark + piece)
    return found


@dataclass(frozen=True, slots=True)
class LinearModel:
    """Logistic regression over binary, length-normalised n-gram features."""

    weights: dict[str, float]
    bias: float
    threshold: float
    shape: bool = False

    def probability(self, text: str) -> float:
        features = grams(text, self.shape)
        if not features:
            return 0.0
        total = math.fsum(self.weights.get(gram, 0.0) for gram in features)  # order-free: one verdict per text
        score = self.bias + total / math.sqrt(len(features))
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, score))))

    def says_yes(self, text: str) -> bool:
        return self.probability(text) >= self.threshold

    def to_json(self) -> dict[str, object]:
        return {
            "max_n": MAX_N,
            "shape": self.shape,
            "bias": self.bias,
            "threshold": self.threshold,
            "weights": self.weights,
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> LinearModel:
        if data.get("max_n") != MAX_N:
            raise ValueError(f"model was trained with max_n={data.get('max_n')}, features use {MAX_N}")
        weights = data["weights"]
        if not isinstance(weights, dict):
            raise ValueError("model weights must be an object")
        return cls(
            weights={str(k): float(v) for k, v in weights.items()},
            bias=float(data["bias"]),  # type: ignore[arg-type]
            threshold=float(data["threshold"]),  # type: ignore[arg-type]
            shape=bool(data.get("shape", False)),
        )


@cache
def shipped_model(name: str) -> LinearModel:
    """A model shipped with the package (read once)."""
    text = resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
    return LinearModel.from_json(json.loads(text))


def do_not_remember_model() -> LinearModel:
    return shipped_model(DO_NOT_REMEMBER_FILE)


def request_check_model() -> LinearModel:
    """The check on the rules' requests: trained like ``do_not_remember_model`` and also on
    requests joined to ordinary sentences, so that what a request carries is not read as its topic."""
    return shipped_model(REQUEST_CHECK_FILE)


def credential_model() -> LinearModel:
    return shipped_model(CREDENTIAL_FILE)
