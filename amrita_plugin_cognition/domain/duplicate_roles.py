"""The roles step of the near-duplicate check: two facts that name the same people and things,
but with who does what to whom turned around (A借给B / B借给A, 小马请阿凯 / 阿凯请小马, 老严被儿子
接走 / 老严把儿子接走), or another one acting (小林给妈妈买了 / 小林的妈妈给他买了: the mother acts,
not 小林; 给父母寄 / 父母给她寄). Pure, no I/O.
"""

from __future__ import annotations

import itertools
import re
import unicodedata

from . import thesaurus

#: Words that give the things around them a role: who or what stands before and after them
#: matters (A借给B ≠ B借给A, 从上海搬到杭州 ≠ 从杭州搬到上海, lent to / from).
_DIRECTION = re.compile(r"给|从|到|向|被|比|(?i:\b(?:to|from|than|by)\b)")
_ENTITY_CJK = re.compile(r"[\u3400-\u9fff]{2,}")
_ENTITY_LATIN = re.compile(r"[A-Za-z]{2,}|\d{5,12}")


def _entities(text: str) -> set[str]:
    """What may hold a role in ``text``: runs of CJK (every 2–4 character piece), Latin words,
    QQ numbers."""
    found = {match.group(0).lower() for match in _ENTITY_LATIN.finditer(text)}
    for match in _ENTITY_CJK.finditer(text):
        run = match.group(0)
        found.update(run[i : i + size] for size in (2, 3, 4) for i in range(len(run) - size + 1))
    return found


def _swapped_roles(first: str, second: str) -> str | None:
    """Two things that stand on opposite sides of the same directional word in the two facts
    (A借给B / B借给A): each named once in each fact, one moved from before the word to after it
    and another the other way. Both texts folded (``swapped``)."""
    markers = {match.group(0) for match in _DIRECTION.finditer(first)}
    markers &= {match.group(0) for match in _DIRECTION.finditer(second)}
    if not markers:
        return None
    shared = [
        entity
        for entity in _entities(first) & _entities(second)
        if first.count(entity) == 1 and second.count(entity) == 1
    ]
    for marker in sorted(markers):
        at_first, at_second = _marker_at(first, marker), _marker_at(second, marker)
        if at_first is None or at_second is None:
            continue
        moved_back = [e for e in shared if first.find(e) < at_first and second.find(e) > at_second]
        moved_front = [e for e in shared if first.find(e) > at_first and second.find(e) < at_second]
        if moved_back and moved_front and not _overlap(moved_back, moved_front):
            return f"{max(moved_back, key=len)} ⇄ {max(moved_front, key=len)} ({marker})"
    return None


#: What may stand between two names that trade places with the fact unchanged (小明和小红 / 小红和小明).
_COORDINATION = frozenset({"和", "跟", "与", "及", "同", "、", "以及", "还有", "and", "&"})
_PIECE = re.compile(r"[\u3400-\u9fff]{2,}|[a-z]{2,}|\d{5,12}")


def _pieces(text: str) -> dict[str, int]:
    """The two-character pieces of CJK runs, Latin words and QQ numbers said once in ``text``,
    with where each starts."""
    seen: dict[str, list[int]] = {}
    for match in _PIECE.finditer(text):
        run, start = match.group(0), match.start()
        if run.isascii():
            seen.setdefault(run, []).append(start)
            continue
        for offset in range(len(run) - 1):
            seen.setdefault(run[offset : offset + 2], []).append(start + offset)
    return {piece: places[0] for piece, places in seen.items() if len(places) == 1}


#: A user written with a QQ number (lower case, NFKC): ``qq号10001(昵称小明)`` (group 1: the
#: nickname) and the brackets of ``小明(qq号10001)``.
_PERSON_BY_NUMBER = re.compile(r"qq\s*号?\s*\d{5,12}\s*\(\s*昵称([^()]{1,32})\)|\s*\(\s*qq\s*号?\s*\d{5,12}\s*\)")


def _people_by_name(text: str) -> str:
    """Each user written with a QQ number by the name alone: a mention is one thing, whose brackets
    no longer stand between it and the words around it."""
    return _PERSON_BY_NUMBER.sub(lambda match: match.group(1) or "", text)


def _swapped_around(first: str, second: str) -> str | None:
    """Two things that trade places around the same words (小马请阿凯 / 阿凯请小马, 老张欠小李 / 小李欠
    老张, 把猫寄养在阿康家 / 在小柯家…, QQ号1（昵称甲）在辅导QQ号2（昵称乙） / the other way): each said
    once in each fact, one before the other in the first and after it in the second, with the same
    words between them, which are no "and" and hold no punctuation but a title's or a quotation's
    marks. Users written with a QQ number are read by name. Both texts folded (``swapped``)."""
    first, second = _people_by_name(first), _people_by_name(second)
    in_first, in_second = _pieces(first), _pieces(second)
    shared = sorted(set(in_first) & set(in_second), key=in_first.__getitem__)
    places = [in_second[piece] for piece in shared]
    if all(earlier <= later for earlier, later in itertools.pairwise(places)):
        return None  # the shared pieces keep their order: nothing traded places
    for index, before in enumerate(shared):
        for after in shared[index + 1 :]:
            start_first, end_first = in_first[before] + len(before), in_first[after]
            start_second, end_second = in_second[after] + len(after), in_second[before]
            if end_first <= start_first or end_second <= start_second:
                continue
            between = first[start_first:end_first]
            if (
                between == second[start_second:end_second]
                and between.strip() not in _COORDINATION
                and (between.strip() and not any(_separates(char) for char in between))
            ):
                return f"{before} ⇄ {after} ({between})"
    return None


def _separates(char: str) -> bool:
    """Punctuation other than brackets and quotation marks (《》 “” 「」 are in a phrase, not between clauses)."""
    category = unicodedata.category(char)
    return category.startswith("P") and category not in ("Ps", "Pe", "Pi", "Pf")


#: The markers of who acts on whom: 被 (the one before it undergoes) and 把 (the one before it acts).
_PASSIVE, _ACTIVE = "被", "把"


def _voice_turned(first: str, second: str) -> str | None:
    """The same one before 被 in one fact and before 把 in the other (老严被儿子接走 / 老严把儿子接走):
    who acts and who undergoes trade places while the words keep their order."""
    for passive, active in ((first, second), (second, first)):
        if _PASSIVE not in passive or _ACTIVE in passive or _ACTIVE not in active or _PASSIVE in active:
            continue
        before_passive = passive[max(0, passive.index(_PASSIVE) - 2) : passive.index(_PASSIVE)]
        before_active = active[max(0, active.index(_ACTIVE) - 2) : active.index(_ACTIVE)]
        if len(before_passive) == 2 and before_passive == before_active:
            return f"{before_passive}{_PASSIVE} ≠ {before_active}{_ACTIVE}"
    return None


#: What may follow a person whose relative is named next, the relative still the one meant
#: (小明的女儿 / 小明女儿 / 小明家女儿 / 小明有个女儿 / 小明她女儿).
_OF = "的"
_HELD = (_OF, "家", "有", "他", "她")
#: An owner is a name (up to ``_NAME_CHARS``) or a name with its QQ number in brackets (up to
#: ``_OWNER_CHARS``, ending in the bracket): not a clause (大刘是湖人的球迷).
_NAME_CHARS = 4
_OWNER_CHARS = 24
_CLAUSE_BREAK = re.compile(r"[，。；！？,.;!?]")


def _person_at(text: str, start: int) -> str | None:
    """The word of people (``thesaurus.person``: 妈妈, 老公, 女朋友) of 2 or 3 characters at ``start``."""
    for size in (3, 2):
        word = text[start : start + size]
        if len(word) == size and thesaurus.person(word):
            return word
    return None


def _possessor_acts(first: str, second: str) -> str | None:
    """One fact opens with a person's relative (小林的妈妈给他买了), the other with the person
    themself doing it (小林给妈妈买了; 阿梅 / 阿梅的老公 每天接孩子): another one acts."""
    for owned, plain in ((first, second), (second, first)):
        at = owned.find(_OF)
        owner = owned[:at]
        if at < 0 or not _named(owner) or _CLAUSE_BREAK.search(owner) or not plain.startswith(owner):
            continue
        relative = _person_at(owned, at + 1)
        rest = plain[len(owner) :]
        # another relative named there is a way round to the same one (阿红丈夫的父亲 / 阿红的公公)
        if relative is None or rest.startswith(_HELD) or _person_at(rest, 0) is not None:
            continue
        # the relative named in the other fact too, told from the person's side (小李的女儿出生了 /
        # 小李喜得一个女儿), unless the relative acts on the person (阿光的妹妹教他 / 阿光教他妹妹)
        if _names_relative(rest, relative) and not _PRONOUN.search(owned, at + 1 + len(relative)):
            continue
        return f"{owner}{_OF}{relative} ≠ {owner}"
    return None


_PRONOUN = re.compile("[他她]")


def _names_relative(text: str, relative: str) -> bool:
    """Whether ``text`` names ``relative`` or a synonym of it (男朋友 / 男友)."""
    if relative in text:
        return True
    words = (_person_at(text, start) for start in range(len(text)))
    return any(word is not None and thesaurus.synonyms(word, relative) for word in words)


def _named(owner: str) -> bool:
    return 2 <= len(owner) <= _NAME_CHARS or (len(owner) <= _OWNER_CHARS and owner.endswith(")"))


#: Words whose two sides are who gives and who gets, who acts and who undergoes.
_ROLE_MARKER = re.compile(r"给|从|向|被|把")


def _single_markers(first: str, second: str) -> list[tuple[str, int, int]]:
    """Each of 给 / 从 / 向 / 被 / 把 said exactly once in each fact, with where it stands in each."""
    shared = set(_ROLE_MARKER.findall(first)) & set(_ROLE_MARKER.findall(second))
    return [
        (marker, first.index(marker), second.index(marker))
        for marker in sorted(shared)
        if first.count(marker) == 1 and second.count(marker) == 1
    ]


def _person_crossed(first: str, second: str) -> str | None:
    """A relative or other word of people (``thesaurus.person``), said once in each fact, that
    stands before the one 给 / 从 / 向 / 被 / 把 of one fact and after it in the other (每个月给父母寄
    / 每个月父母给她寄): they moved from getting to giving, or the other way."""
    for marker, at_first, at_second in _single_markers(first, second):
        for start in range(len(first) - 1):
            word = _person_at(first, start)
            if word is None or first.count(word) != 1 or second.count(word) != 1:
                continue
            if (start < at_first) != (second.index(word) < at_second):
                return f"{word} {marker} ⇄"
    return None


#: What may open the thing after a marker without being it (被一个学长 / 向一个学长).
_ARTICLE = re.compile(r"(?:一|这|那)?(?:个|位|名|只)")
_TWO_CJK = re.compile(r"[\u3400-\u9fff]{2}")


def _after(text: str, at: int) -> str:
    """The two characters of CJK that follow the marker at ``at`` (past an article), or ''."""
    rest = text[at + 1 :]
    article = _ARTICLE.match(rest)
    rest = rest[article.end() :] if article else rest
    found = _TWO_CJK.match(rest)
    return found.group(0) if found else ""


def _objects_traded(first: str, second: str) -> str | None:
    """The one 给 / 从 / 向 / 被 / 把 of each fact followed by two different things, each of which
    the other fact names elsewhere (从北京搬回了老家 / 从老家搬到了北京): where from and where to,
    or who gives and who gets, traded places."""
    for marker, at_first, at_second in _single_markers(first, second):
        one, other = _after(first, at_first), _after(second, at_second)
        if one and other and one != other and one in second and other in first:
            return f"{marker}{one} ⇄ {marker}{other}"
    return None


#: After 被 stands the one who acts; after these, the one acted on, given to or taken from.
_ACTED_ON = ("给", "向", "把", "从")


def _agent_turned(first: str, second: str) -> str | None:
    """The same one after 被 in one fact and after 给 / 向 / 把 / 从 in the other (被一个学长表白 / 向一个
    学长表白): who acts and who is acted on trade places."""
    for passive, active in ((first, second), (second, first)):
        if passive.count("被") != 1:
            continue
        agent = _after(passive, passive.index("被"))
        if not agent or "被" in active:
            continue
        for marker in _ACTED_ON:
            at = active.find(marker)
            if at >= 0 and _after(active, at) == agent:
                return f"被{agent} ≠ {marker}{agent}"
    return None


#: Acts of getting (收到, 买, 领养, borrowing from), and of giving (送, 卖, 借给, 给…转): one fact
#: getting what the other has its opener give is the converse act (送了同事 / 收到了同事送的).
_GETS = re.compile(r"收到|收了|收下|买|购|领养|收养|得到|拿到|(?:从|向)[^，。,.]{1,6}借")
#: 给 alone is often "for" (给狗买了狗粮): giving only before a transfer (给妈妈转了); 送到 is delivered.
_GIVES = re.compile(r"送(?!到|来)|卖|借给|借出|转给|寄给|还给|捐|给[^，。,.]{1,6}?(?:转|寄|汇)")


def _direction(text: str) -> str:
    if _GETS.search(text):
        return "gets"
    return "gives" if _GIVES.search(text) else ""


def _converse_acts(first: str, second: str) -> str | None:
    """Two facts that open on the same person, one giving and the other getting (小赵送了同事 /
    小赵收到了同事送的, 借给了小李 / 从小李那里借了, 卖 / 买): the converse act, not the same one.
    A getting said from the giver's side opens on the giver, and is not caught here."""
    one, other = _direction(first), _direction(second)
    if {one, other} != {"gets", "gives"} or len(first) < 2 or first[:2] != second[:2]:
        return None
    if _PASSIVE in first or _PASSIVE in second:  # 沙发被邻居买走: the opener is what was got, not the getter
        return None
    return f"{one} ≠ {other}"


def _marker_at(text: str, marker: str) -> int | None:
    """Where the one occurrence of ``marker`` is (None when it is written more than once)."""
    found = [match.start() for match in _DIRECTION.finditer(text) if match.group(0).lower() == marker]
    return found[0] if len(found) == 1 else None


def _overlap(first: list[str], second: list[str]) -> bool:
    return any(a in b or b in a for a in first for b in second)


def swapped(first: str, second: str) -> str | None:
    """What trades places between ``first`` and ``second`` (for the verdict's detail), or None:
    two things on opposite sides of the same directional word, two things around the same words,
    the same one before 被 and before 把, a person's relative acting in one fact and the person in
    the other, a word of people on both sides of the same 给 / 从 / 向 / 被 / 把, the things after
    the one 给 / 从 / 向 / 被 / 把 of each fact traded, the same one after 被 and after 给 / 向 / 把 /
    从, or the same opener giving and getting. Both are read as NFKC and lower case, once."""
    first, second = unicodedata.normalize("NFKC", first).lower(), unicodedata.normalize("NFKC", second).lower()
    return (
        _swapped_roles(first, second)
        or _swapped_around(first, second)
        or _voice_turned(first, second)
        or _possessor_acts(first, second)
        or _person_crossed(first, second)
        or _objects_traded(first, second)
        or _agent_turned(first, second)
        or _converse_acts(first, second)
    )
