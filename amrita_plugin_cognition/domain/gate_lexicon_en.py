"""English word lists of the absoluteness gate (see ``gate.py``; the Chinese ones are in
``gate_lexicon.py``, whose conventions these follow).

The entries take part in the same leftmost-longest segmentation as the Chinese ones, bounded by
letters (``here`` is not in ``where``, ``he`` not in ``the``). Decisions on the ambiguous cases
(tests/unit/test_gate_english.py pins them):

* First and second person (I, me, my, we, us, our, you, your …) are always flagged: the fact must
  name who. ``US`` in capitals is the country; ``I`` after War, Part, Chapter … is a numeral.
* Third person (he, she, her, they, them, their, it, its …) is fine once someone is named before it
  in the fact, as 自己 is in Chinese: a QQ user, or a capitalised name that is not a sentence
  word (Caroline, Melanie; not The, After, Yesterday). English cannot drop the possessive the way
  Chinese does (“Caroline painted her sunrise” is as absolute as it gets); "She moved there" with
  nobody named is flagged. ``it`` needs anything at all before it (only a fact opening with "It"
  has nothing to point back to).
* Demonstratives (this, these, those) are flagged like 这个 / 那些, unless the thing is named in
  place ("this project, called Apollo", 'this song "Yellow"'); ``those who`` is generic. ``that``
  is mostly a conjunction ("said that …"): only its fixed phrases are flagged (that guy, that day).
* Windows relative to the moment of speaking are flagged: yesterday, today, tonight, tomorrow,
  recently, lately, soon, the other day, last/next/this week, N days ago, in two weeks, a while
  ago, these days. Unbounded or present ones (before, once, long ago, now, currently) are not, as
  in Chinese.
* Anaphors (that day, the next day, the following week, at that time, back then; that year, the
  same year) pass once an absolute date (a year for the year ones) came before them in the fact.
* A bare weekday (on Friday) is flagged unless the clause marks a habit (every, usually …), a date
  sits in the clause, or it is part of a range (Monday to Friday); plural weekdays are habits.
  Festivals pass bare (on Christmas) and need a year or a habit with before/after/during.
* Relative places: here, there, nearby, locally, this city, next door (not "next door to X").
  ``there`` is fine as the existential "there is / was …" and after a place named before it in
  the fact ("moved to Boston … bought a house there"). ``local`` is anchored to the subject, like 家里.
"""

from __future__ import annotations

from .gate_lexicon import PRONOUN, RELATIVE_PLACE, RELATIVE_TIME

# A word starts and ends here: not inside an identifier (your_password, here-and-now.dev, today-is-the-day).
_B = r"(?<![A-Za-z0-9_'’.@-])"
_E = r"(?![A-Za-z0-9_]|[-./@][A-Za-z0-9])"
_NUMBER = (
    r"(?:\d{1,4}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty"
    r"|forty|fifty|(?:a\s+)?few|(?:a\s+)?couple(?:\s+of)?|several|some|many|another)"
)
_UNIT = r"(?:second|minute|hour|day|night|week|weekend|fortnight|month|year|decade)s?"
WEEKDAY = r"(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)"
MONTH = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December"
    r"|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)"
)
_PERIOD = (
    rf"(?:morning|afternoon|evening|night|week|weekend|month|year|season|semester|term|quarter|spring|summer"
    rf"|autumn|fall|winter|{WEEKDAY}|Christmas|Easter|Thanksgiving|Halloween|holidays?|vacation|time)"
)
_FESTIVAL = (
    r"(?:Christmas(?:\s+Eve)?|Easter|Thanksgiving|Halloween|(?:Chinese\s+)?New\s+Year(?:'s|’s)?(?:\s+Eve)?"
    r"|Spring\s+Festival|(?:the\s+)?holidays|(?:the\s+)?holiday\s+season"
    r"|(?:the\s+)?(?:summer|winter|spring|Christmas|Easter)\s+(?:break|vacation|holidays?))"
)

# (kind, rule, regular expression), as PROBLEM_ENTRIES in gate_lexicon.py. Rules are in gate_rules.py.
PROBLEM_ENTRIES: tuple[tuple[str, str, str], ...] = (
    # --- pronouns
    (
        PRONOUN,
        "",
        rf"{_B}(?:I|me|Me|my|My|myself|Myself|we|We|us|Us|our|Our|ours|Ours|ourselves|Ourselves"
        rf"|you|You|your|Your|yours|Yours|yourself|Yourself|yourselves|Yourselves){_E}"
        rf"|{_B}i(?=\s+[a-z]|['’])|{_B}(?i:of|is|was|are|were|be)\s+mine{_E}",
    ),
    (
        PRONOUN,
        "antecedent",
        rf"{_B}(?:[Hh]e|[Hh]im|[Hh]is|[Hh]imself|[Ss]he|[Hh]er|[Hh]ers|[Hh]erself"
        rf"|[Tt]hey|[Tt]hem|[Tt]heir|[Tt]heirs|[Tt]hemselves){_E}",
    ),
    (PRONOUN, "anything_before", rf"{_B}(?:[Ii]t|[Ii]ts|[Ii]tself){_E}"),
    (PRONOUN, "demonstrative_en", rf"{_B}(?:[Tt]his|[Tt]hese|[Tt]hose){_E}"),
    (
        PRONOUN,
        "",
        rf"{_B}(?i:the\s+other\s+(?:person|party|side|guy|one)|aforementioned|above-mentioned|mentioned\s+above"
        rf"|(?:said|discussed)\s+above|the\s+above|that\s+(?:guy|person|one|thing|stuff|matter|issue|girl|boy|man"
        rf"|woman|lady|dude)s?){_E}",
    ),
    # --- relative time: anaphors first (an equal match goes to the earlier entry)
    (
        RELATIVE_TIME,
        "anaphoric_day",
        rf"{_B}(?i:that\s+(?:day|night|morning|afternoon|evening|week|weekend|month|time)"
        rf"|the\s+(?:same|next|following|previous)\s+(?:day|night|morning|afternoon|evening|week|weekend|month)"
        rf"|the\s+(?:day|night|week|month)\s+(?:before|after)|at\s+(?:that|the)\s+time|back\s+then|by\s+then"
        rf"|(?:un)?till?\s+then|since\s+then){_E}",
    ),
    (
        RELATIVE_TIME,
        "anaphoric_year",
        rf"{_B}(?i:that\s+year|the\s+(?:same|next|following|previous)\s+year|the\s+year\s+(?:before|after)){_E}",
    ),
    (
        RELATIVE_TIME,
        "",
        rf"{_B}(?i:yesterday|today|tonight|tonite|tomorrow|tmrw?|tmr|the\s+day\s+(?:before\s+yesterday|after\s+tomorrow)"
        rf"|recently|lately|recent|just\s+now|a\s+(?:moment|minute|second)\s+ago|the\s+other\s+(?:day|night|week)"
        rf"|a\s+while\s+(?:ago|back)|some\s+time\s+(?:ago|back)|not\s+(?:too\s+|so\s+)?long\s+ago|these\s+days"
        rf"|(?:earlier|later)\s+(?:today|tonight|on)|later\s+this\s+{_PERIOD}|soon|shortly"
        rf"|(?:this|last|next|coming)\s+{_PERIOD}|(?:the\s+)?(?:past|last|coming)\s+(?:{_NUMBER}\s+)?{_UNIT}"
        rf"|next\s+(?:{_NUMBER}\s+)?{_UNIT}|(?:{_NUMBER}\s+)?(?:more\s+)?{_UNIT}\s+ago"
        rf"|{_NUMBER}\s+{_UNIT}\s+(?:from\s+now|hence)){_E}",
    ),
    (
        RELATIVE_TIME,
        "duration_en",
        rf"{_B}(?i:(?:in|within)\s+(?:another\s+|the\s+next\s+)?{_NUMBER}\s+(?:more\s+)?{_UNIT}"
        rf"|{_NUMBER}\s+{_UNIT}\s+(?:later|earlier|afterwards?|before|after|prior)){_E}",
    ),
    (RELATIVE_TIME, "weekday_en", rf"{_B}(?i:{WEEKDAY}){_E}"),
    (RELATIVE_TIME, "holiday_en", rf"{_B}(?i:(?:before|after|during|around|over|until|till)\s+{_FESTIVAL}){_E}"),
    (
        RELATIVE_TIME,
        "year_anchor_en",
        rf"{_B}(?i:(?:the\s+)?(?:beginning|start|end|middle)\s+of\s+the\s+(?:month|year|week|semester|term))(?!\s*,?\s*\d)",
    ),
    # --- relative place
    (
        RELATIVE_PLACE,
        "",
        rf"{_B}(?i:here|over\s+there|around\s+here|near\s+here|locally|nearby"
        rf"|(?:this|that|these|those)\s+(?:place|city|town|area|spot|location|neighbou?rhood|region|village)s?"
        rf"|next\s+door(?!\s+to)){_E}",
    ),
    (RELATIVE_PLACE, "there_en", rf"{_B}[Tt]here{_E}"),
)

SAFE_PATTERNS: tuple[str, ...] = (
    # a Roman numeral, not the pronoun
    rf"{_B}(?:War|Part|Chapter|Act|Volume|Phase|Season|Level|Grade|Type|Class|Stage|Tier|Book|Episode|Gen)\s+I{_E}",
    # generic: those who care, those affected, those living abroad
    rf"{_B}(?i:those\s+(?:who|whom|whose|of|that|which|with|in\s+need|[a-z]+(?:ed|ing))){_E}",
    rf"{_B}(?i:oh\s+my\s+(?:god|gosh|goodness)|as\s+soon\s+as|sooner\s+or\s+later|in\s+my\s+opinion){_E}",
)

# After "there": the existential "there is / was / will be …", not a place.
EXISTENTIAL_AFTER = (
    r"\s*(?:is|are|was|were|will|would|could|should|might|may|must|can|has|have|had|seems?|seemed|appears?"
    r"|appeared|used\s+to|exists?|existed|remains?|remained|['’]s|['’]re|isn['’]t|aren['’]t|wasn['’]t"
    r"|weren['’]t|won['’]t)(?![A-Za-z])"
)

# A place named with its preposition or verb: "to Boston", "in the Smoky Mountains", "visited Rome".
PLACE_NAMED = (
    r"(?<![A-Za-z])(?:in|to|at|from|near|around|toward|towards|visit|visits|visited|visiting|reached|left)"
    r"\s+(?:the\s+)?(?P<place>[A-Z][a-z]+)"
)

# Naming the thing a demonstrative points at: "this project, called Apollo", 'this song "Yellow"'.
NAMED_AFTER = r"\s*(?:[A-Za-z-]+\s*){0,3},?\s*(?:called|named|titled|nicknamed|known\s+as|\ue000|\ue001)"

# A weekday in a range names no particular week: Monday to Friday, Mon-Fri.
RANGE_WORDS = r"\s*(?:-|–|—|to|through|thru|till|until|and|or)\s*"

HABIT_MARKERS = (
    r"(?<![A-Za-z])(?i:every|each|usually|often|always|typically|normally|generally|regularly|frequently"
    r"|sometimes|weekly|daily|monthly|annually|yearly|routinely|tends?\s+to|used\s+to)(?![A-Za-z])"
)

# Dates that anchor an anaphor: "May 8, 2023", "8 May 2023", "the 8th of May"; a year alone
# anchors the year anaphors ("in 2023 … that year").
DATE_ANCHOR = (
    rf"{_B}{MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?{_E}|(?<![0-9])\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{MONTH}{_E}"
)
YEAR_ANCHOR = r"(?<![0-9A-Za-z])(?:1[89]|2[01])[0-9]{2}(?![0-9])"

# Capitalised words that are no name: an English sentence may open with any of them.
_NOT_NAMES_TEXT = """
    I A An The This That These Those He She It They We You His Her Its Their Our Your My Me Him Them Us
    On In At By For From To With Without After Before During Since Until Till When While Where Why How What
    Which Who Whom Whose If Then Also And But Or So Yet Because As Though Although Once There Here Every Each
    Some Many Most All Both Either Neither No Not Yesterday Today Tomorrow Tonight Last Next Recently Lately
    Now Later Soon Earlier Mr Mrs Ms Dr Sir Madam Miss Over Around About Into Onto Upon Near Just Only Even
    Still Already Usually Often Always Sometimes Never Ever Another Other Such Any Each Few Several Much More
    Less Least Very Really Please Thanks Thank Yes Yeah Hi Hello Hey Dear Oh Well Okay OK Let Do Does Did
    Is Are Was Were Be Been Being Have Has Had Can Could Will Would Shall Should May Might Must During
    January February March April June July August September October November December Monday Tuesday
    Wednesday Thursday Friday Saturday Sunday Christmas Easter Thanksgiving Halloween New Year
"""
NOT_NAMES = frozenset(_NOT_NAMES_TEXT.split())
