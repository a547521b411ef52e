"""``domain/regex_start``: a pattern compiled with the lookahead of its first characters matches
exactly what it matched before, on crafted patterns and on every guarded pattern of admission,
in examples and in generated texts (hypothesis)."""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amrita_plugin_cognition.domain import admission
from amrita_plugin_cognition.domain.regex_start import compile_guarded, start_class

DATA = Path(__file__).resolve().parents[1] / "data" / "dev"
GUARD = re.compile(r"\(\?=\[(?P<class>(?:\\.|[^\]\\])*)\]\)\(\?:(?P<body>.*)\)", re.DOTALL)


def _matches(pattern: re.Pattern[str], text: str) -> list[tuple[tuple[int, int], ...]]:
    return [tuple(match.span(group) for group in range(pattern.groups + 1)) for match in pattern.finditer(text)]


def _guarded_patterns() -> list[tuple[str, re.Pattern[str], re.Pattern[str]]]:
    """Every module-level pattern of admission that got a guard, with the pattern as written."""
    found = []
    for module_info in pkgutil.iter_modules(admission.__path__):
        module = importlib.import_module(f"{admission.__name__}.{module_info.name}")
        for name, value in vars(module).items():
            values = value if isinstance(value, tuple) else (value,)
            for index, item in enumerate(values):
                if isinstance(item, re.Pattern) and (guard := GUARD.fullmatch(item.pattern)):
                    found.append((f"{module_info.name}.{name}[{index}]", item, re.compile(guard["body"], item.flags)))
    return found


GUARDED = _guarded_patterns()


def _texts() -> list[str]:
    texts = []
    for path in sorted(DATA.glob("admission_zh_*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("{"):  # a line of "#" is the set's comment
                texts.append(admission.normalise.fold(json.loads(line)["text"]))
    return texts


@pytest.mark.parametrize(
    ("pattern", "flags", "expected"),
    [
        (r"(?<!流量)(?<!财富)密\s?码", 0, "密"),
        (r"(?<![A-Za-z])(?:pass|pin|pw)(?=\s*[:=])", re.IGNORECASE, "p"),
        (r"(?<![\w.\-])(?P<k>[A-Za-z_][\w\-]*?)?token=", 0, "A-Z_a-zt"),
        (r"(?<!\d)\d{4,8}|(?<![a-z])code", 0, r"\dc"),
        (r"(?<!a)(?:x|y)?z", 0, "xyz"),
    ],
)
def test_the_class_names_every_first_character(pattern: str, flags: int, expected: str) -> None:
    assert start_class(pattern, flags) == "".join(sorted(re.findall(r"\\.|.-.|.", expected)))


@pytest.mark.parametrize(
    ("pattern", "flags"),
    [
        (r"密码", 0),  # begins with a character: the engine skips to it by itself
        (r"(?<!a)[^b]c", 0),  # a negated class
        (r"(?<!a).c", 0),  # any character
        (r"(?<!a)(?-i:x)y", re.IGNORECASE),  # flags of its own
        (r"(?<!a)x?", 0),  # can match nothing
        (r"(?<!a)(x?)\1y", 0),  # may begin with a back reference
        (r"(?<!a)(?:\b)", 0),  # consumes nothing
        (r"(?<!a) x # note", re.VERBOSE),
        (r"(?i)(?<!a)x", 0),  # flags at the pattern's start
    ],
)
def test_what_cannot_be_guarded_is_compiled_as_written(pattern: str, flags: int) -> None:
    assert compile_guarded(pattern, flags).pattern == pattern


def test_admission_has_guarded_patterns() -> None:
    """The guard applies where it pays: the password cue's figurative lookbehinds, the account
    names and the request words behind a letter boundary (were none guarded, the tests below
    would test nothing)."""
    names = {name.split("[")[0] for name, _, _ in GUARDED}
    assert {"credentials._PASSWORD", "credentials._ACCOUNT_TALK", "intent._ANY_CUE", "keys._KEY"} <= names
    assert len(names) >= 100


@pytest.mark.parametrize(("name", "guarded", "written"), GUARDED, ids=[name for name, _, _ in GUARDED])
def test_a_guarded_pattern_matches_what_it_did_on_the_admission_sets(
    name: str, guarded: re.Pattern[str], written: re.Pattern[str]
) -> None:
    for text in TEXTS:
        assert _matches(guarded, text) == _matches(written, text), text


TEXTS = _texts()


def _alphabet(pattern: re.Pattern[str]) -> str:
    """The characters the pattern names, and a few it does not: generated texts then match it often."""
    named = {char for char in re.sub(r"\\[a-zA-Z]", "", pattern.pattern) if char.isprintable()}
    return "".join(sorted(named | set("aZ09 ,。:：/@-_'\"码号的是我")))


@pytest.mark.parametrize(("name", "guarded", "written"), GUARDED, ids=[name for name, _, _ in GUARDED])
def test_a_guarded_pattern_matches_what_it_did_on_generated_texts(
    name: str, guarded: re.Pattern[str], written: re.Pattern[str]
) -> None:
    @settings(max_examples=25, deadline=None, database=None)
    @given(text=st.text(alphabet=_alphabet(written), max_size=40))
    def same(text: str) -> None:
        assert _matches(guarded, text) == _matches(written, text), text

    same()


# Pieces of what the mention pattern looks for (its quote marks, the words it looks ahead for, cut
# anywhere) and of what stops it: generated texts put them together in every order.
_MENTION_PIECES = [
    *"“”\"「」『』‘’'这个词说法梗短语表达是什么意思啥怎么翻别记在口语的开关按钮，。 a",
    "这个词", "这个说法", "这个梗", "这个短语", "这个表达", "是什么意思", "啥意思", "什么意思", "怎么翻",
    "这个", "什么", "意思", "怎么", "在口语", "的开关", "这四个字",
]  # fmt: skip


@settings(max_examples=500, deadline=None, database=None)
@given(text=st.lists(st.sampled_from(_MENTION_PIECES), max_size=12).map("".join))
def test_the_words_a_mention_needs_are_in_every_mention(text: str) -> None:
    """``without_quotes`` skips the mention pattern on a text without what it needs
    (``requests.MENTION_NEEDS``): no text it would have matched is skipped."""
    if admission.requests._MENTIONED.search(text):
        assert admission.requests.MENTION_NEEDS.search(text), text


@pytest.mark.parametrize(
    "text", ["“这条不记录”这四个字", "off the record这个词怎么翻", "他说的“算了”是什么意思", "普通的一句话"]
)
def test_mentions_are_still_removed(text: str) -> None:
    folded = admission.normalise.fold(text)
    assert admission.requests.without_quotes(folded) == admission.requests._MENTIONED.sub(
        " ", admission.requests._QUOTED.sub(" ", folded)
    )


def test_the_outcomes_script_reads_every_string_and_finds_a_changed_outcome(tmp_path: Path) -> None:
    """``scripts/admission_outcomes.py``, which showed the guard changed no outcome: it reads
    every string of JSON and JSON-lines files, and its comparison fails on one changed outcome."""
    from script_modules import load_script

    script = load_script("admission_outcomes")
    (tmp_path / "a.jsonl").write_text(
        '# a comment line\n{"text": "我的密码是 Abc12345xyz", "n": 1}\n{"pair": ["明天去成都", "x"]}\n',
        encoding="utf-8",
    )
    texts = script.texts([tmp_path])
    assert texts == ["我的密码是 Abc12345xyz", "明天去成都"]
    judged = script.outcomes(texts)
    assert judged["我的密码是 Abc12345xyz"][0:2] == [False, "credential"]
    (tmp_path / "before.json").write_text(json.dumps(judged), encoding="utf-8")
    assert script.compare(tmp_path / "before.json", tmp_path / "before.json") == 0
    judged["明天去成都"][0] = False
    (tmp_path / "after.json").write_text(json.dumps(judged), encoding="utf-8")
    assert script.compare(tmp_path / "before.json", tmp_path / "after.json") == 1
