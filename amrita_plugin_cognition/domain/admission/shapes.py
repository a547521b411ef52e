"""What a secret value looks like: checksums, entropy and the shape of a token.

A cue word alone proves nothing ("密码忘了"); these checks decide whether the token next to it is a
value worth hiding.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from datetime import date

from ..regex_start import compile_guarded

_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"

# Words that follow a password cue in talk about passwords, not as the password itself.
_STOPWORDS = """
    a an the is was are be been not no yes too very so and or of to for in on at by with from as it
    this that these those my your his her our their its same different also still again here there
    only just please ok okay wrong incorrect correct invalid valid expired required reset change
    changed changes update updated manager managers policy policies rule rules strength length field
    input box form page hint hash hashed hashes hashing salt salted plaintext plain text encrypted
    encryption decrypt protected protection less free recovery login logon error errors fail failed
    weak strong must should can cannot will would may might need needs needed generator generated
    null none empty nil undefined true false string varchar char int integer md5 sha1 sha256 sha512
    bcrypt scrypt argon2 argon2id pbkdf2 aes rsa des base64 json xml utf8
    keychain vault authenticator enabled disabled wifi wlan app apps web email
    bug bugs api sdk ssh vpn bios pc
    push pull clone fetch commit sudo su scp sftp ftp rsync telnet rdp deploy connect mount
"""
STOPWORDS = frozenset(_STOPWORDS.split())

_PLACEHOLDER = compile_guarded(
    r"^(?:x{2,}|\*+|\.{2,}|…+|_+|-+|#+|\?+|<[^>]*>|\{[^}]*\}|\$\{[^}]*\}|%[^%]*%|\[[^\]]*\]"
    r"|your[_-]?[\w\-]*|my[_-][\w\-]*|[\w\-]*[_-]here|password|passwd|pass|pwd|secret|token"
    r"|apikey|api[_-]?key|placeholder|redacted|hidden|none|null|nil|true|false|change[_-]?me|[\w/+\-]*(?:xxx|example|dummy)[\w/+\-]*)$",
    re.IGNORECASE,
)


# Card numbers the payment networks publish for testing (Stripe, Adyen, PayPal and UnionPay
# sandboxes): printed in every integration guide, they pay for nothing.
PUBLIC_TEST_CARDS = frozenset(
    (
        "4242424242424242",
        "4000056655665556",
        "4111111111111111",
        "4012888888881881",
        "4000000000000002",
        "4000000000000077",
        "5555555555554444",
        "5200828282828210",
        "5105105105105100",
        "2223003122003222",
        "378282246310005",
        "371449635398431",
        "6011111111111117",
        "6011000990139424",
        "3056930009020004",
        "36227206271667",
        "3566002020360505",
        "6200000000000005",
        "6250946000000016",
    )
)


def luhn_valid(digits: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


def id_card_date_valid(value: str) -> bool:
    """An 18-character resident identity number has a plausible region and birth date."""
    if len(value) != 18 or not value[:17].isdigit() or value[0] not in "12345678":
        return False
    try:
        born = date(int(value[6:10]), int(value[10:12]), int(value[12:14]))
    except ValueError:
        return False
    return 1900 <= born.year <= date.today().year


def compact_date(value: str) -> bool:
    """Eight digits that read as a calendar date, YYYYMMDD from 1900 to 2099 (a birthday, a log's or a
    file's date). People do choose such PINs: the rules catch them where a password or a lock is
    named; shape alone does not tell the two apart."""
    if len(value) != 8 or not value.isdigit() or value[:2] not in ("19", "20"):
        return False
    try:
        date(int(value[:4]), int(value[4:6]), int(value[6:]))
    except ValueError:
        return False
    return True


def id_card_checksum_valid(value: str) -> bool:
    """ISO 7064 MOD 11-2 check character of an 18-character resident identity number."""
    if len(value) != 18 or not value[:17].isdigit():
        return False
    total = sum(int(char) * weight for char, weight in zip(value[:17], _ID_WEIGHTS, strict=True))
    return _ID_CHECK[total % 11] == value[17].upper()


#: The shortest letters-only value taken for a generated key.
RANDOM_LETTERS_MIN = 20


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    if not value:
        return 0.0
    counts = Counter(value)
    return -sum(count / len(value) * math.log2(count / len(value)) for count in counts.values())


def char_classes(value: str) -> int:
    """How many of lower case, upper case, digits and symbols the value uses."""
    return (
        any(char.islower() for char in value)
        + any(char.isupper() for char in value)
        + any(char.isdigit() for char in value)
        + any(not char.isalnum() for char in value)
    )


def is_placeholder(value: str) -> bool:
    return bool(_PLACEHOLDER.match(value.strip("'\"`"))) or len(set(value)) <= 1


def plausible_password(value: str, *, explicit: bool) -> bool:
    """A token after a password cue is a password. ``explicit``: joined by 是/:/= rather than a space."""
    if len(value) < 3 or len(value) > 64 or is_placeholder(value) or value.lower() in STOPWORDS:
        return False
    has_digit = any(char.isdigit() for char in value)
    has_symbol = any(not char.isalnum() for char in value)
    if value.isdigit():
        return len(value) >= 4
    if not explicit:
        return has_digit or has_symbol
    return has_digit or has_symbol or len(value) >= 4


def strong_password(value: str) -> bool:
    """Shaped like a password whatever words surround it: long enough, letters with digits or symbols."""
    if len(value) < 6 or is_placeholder(value) or value.lower() in STOPWORDS:
        return False
    has_alpha = any(char.isalpha() for char in value)
    return has_alpha and char_classes(value) >= 2 and any(not char.isalpha() for char in value)


def random_letters(value: str) -> bool:
    """Letters drawn at random (a generated key with no digit), not words run together: long and
    varied, and either mixed case without the rhythm of words (capitals next to capitals, lone
    lower-case letters between them, as CamelCase names never have) or, in one case, poor in
    vowels (about one letter in five is a vowel at random, more than one in three in English or
    pinyin). Shorter runs (16 to 19 letters) count only in one case, almost without a vowel and
    almost without a repeated letter ("kqzbmwrtyplxhfjd")."""
    if not value.isascii() or not value.isalpha():
        return False
    if len(value) < RANDOM_LETTERS_MIN:  # shorter: one case, hardly a vowel, hardly a letter twice
        vowels = sum(char in "aeiouAEIOU" for char in value)
        single_case = value.islower() or value.isupper()
        return len(value) >= 16 and single_case and vowels / len(value) < 0.1 and len(set(value)) >= 12
    if entropy(value) < 4.0:
        return False
    if value.islower() or value.isupper():
        return sum(char in "aeiouAEIOU" for char in value) / len(value) < 0.25
    capitals_together = sum(a.isupper() and b.isupper() for a, b in itertools.pairwise(value))
    lone_lower = sum(
        a.isupper() and b.islower() and c.isupper() for a, b, c in zip(value, value[1:], value[2:], strict=False)
    )
    return capitals_together + lone_lower >= max(4, len(value) // 6)


def high_entropy_key(value: str, *, minimum: int = 16) -> bool:
    """A generated key or token: long, varied, not a word or a number."""
    core = value[2:] if value[:2].lower() == "0x" else value
    if core.isalpha():
        return random_letters(core)
    if len(core) < minimum or is_placeholder(core) or core.isdigit():
        return False
    if len(set(core)) < 8:
        return False
    return entropy(core) >= 3.0
