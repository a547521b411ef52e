"""Invisible characters: what no reader of a chat sees, yet a model reads. Pure, no I/O.

One class, dropped from everything the plugin stores (``records.clean_text``) and everything it
renders for a model (``inert``):

- Unicode's default-ignorable code points (``Default_Ignorable_Code_Point``, DerivedCoreProperties
  15.1, reserved ranges included): zero-width characters, bidi controls, the soft hyphen, the
  byte-order mark, variation selectors (U+FE00–FE0F and the ideographic ones, U+E0100–E01EF),
  tag characters, the Hangul fillers (U+115F, U+1160, U+3164, U+FFA0), Mongolian and Khmer
  invisible marks;
- every other format character (category Cf: Arabic number signs, interlinear annotation marks,
  Egyptian format controls);
- U+2800 BRAILLE PATTERN BLANK, the blank that passes for a character in nicknames and "empty"
  messages.

Two members are kept where they do their visible job, exactly as an emoji needs them: one
presentation selector (U+FE0E or U+FE0F) right after a character that has an emoji form (❤️, 1️⃣,
™️), and a zero-width joiner between two emoji (👩‍💻, 🏳️‍🌈). So a run of selectors after a
character (the way bytes are smuggled into a text as variation selectors) keeps at most one of two
values, and ordinary emoji stay byte-identical.
"""

from __future__ import annotations

import re

#: Default_Ignorable_Code_Point (Unicode 15.1), as character-class ranges.
DEFAULT_IGNORABLE = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f"
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff"
)
#: Format characters (Cf) that are not default-ignorable, as of Unicode 15.1 (the Egyptian
#: format controls' unassigned neighbours included).
OTHER_FORMAT = "\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
#: Visible blanks that stand in for a character (the Hangul fillers are default-ignorable already).
BLANK_FILLERS = "\u2800"
INVISIBLE = DEFAULT_IGNORABLE + OTHER_FORMAT + BLANK_FILLERS

ZERO_WIDTH_JOINER = "\u200d"
PRESENTATION_SELECTORS = "\ufe0e\ufe0f"
#: Characters an emoji sequence is made of (pictographs, symbols, regional indicators, skin tones).
EMOJI = "\u2600-\u27bf\u2b00-\u2bff\U0001f000-\U0001faff"
#: Characters that take a presentation selector: the emoji above, keycap bases and the symbols
#: with an emoji form (©, ®, ‼, ™, arrows, 〰, 〽, ㊗, ㊙).
SELECTOR_BASES = f"#*0-9\u00a9\u00ae\u203c\u2049\u2100-\u2bff\u3030\u303d\u3297\u3299{EMOJI}"

_RUN = re.compile(f"[{INVISIBLE}]+")
_EMOJI_CHARACTER = re.compile(f"[{EMOJI}]")
_SELECTOR_BASE = re.compile(f"[{SELECTOR_BASES}]")


def _kept(found: re.Match[str]) -> str:
    """What a run of invisible characters leaves: a selector after an emoji's base, a joiner
    between two emoji; nothing otherwise."""
    run, text = found.group(), found.string
    before = text[found.start() - 1] if found.start() else ""
    after = text[found.end()] if found.end() < len(text) else ""
    kept = ""
    if run[0] in PRESENTATION_SELECTORS and before and _SELECTOR_BASE.match(before):
        kept = run[0]
    joins = (kept or (before and _EMOJI_CHARACTER.match(before))) and after and _EMOJI_CHARACTER.match(after)
    if joins and ZERO_WIDTH_JOINER in run:
        kept += ZERO_WIDTH_JOINER
    return kept


def has_invisible(text: str) -> bool:
    """Whether ``text`` holds any character of the class (kept emoji parts included)."""
    return _RUN.search(text) is not None


def drop_invisible(text: str) -> str:
    """``text`` without invisible characters (see the module's docstring); unchanged, and
    cheaply, when it has none."""
    if _RUN.search(text) is None:
        return text
    return _RUN.sub(_kept, text)
