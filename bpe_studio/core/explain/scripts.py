"""Unicode scripts: the name of each character's script, for the vocabulary's categories.

What it does: :data:`SCRIPTS` lists Unicode's scripts by their long names (Scripts.txt, as
``\\p{Script=...}`` takes them), the ones the installed ``regex`` module knows;
:func:`scripts_of` names the script of each character of a set, looked up in bulk: one scan of
one regex whose groups are the scripts, so a vocabulary's tens of thousands of distinct
characters cost milliseconds. What it leaves out: what a token's category is
(``categories``).
"""

from __future__ import annotations

from collections.abc import Iterable

import regex

# The scripts most tokens are in come first: each script's scan only sees the characters no
# earlier script took.
_LONG_NAMES = (
    "Latin Han Cyrillic Arabic Hangul Hiragana Katakana Greek Hebrew Devanagari Thai "
    "Bengali Tamil Telugu Kannada Malayalam Gujarati Gurmukhi Oriya Sinhala Georgian Armenian "
    "Ethiopic Khmer Lao Myanmar Tibetan Mongolian Thaana Syriac Bopomofo Yi "
    "Adlam Ahom Anatolian_Hieroglyphs Avestan Balinese Bamum Bassa_Vah Batak Beria_Erfe "
    "Bhaiksuki Brahmi Braille Buginese Buhid Canadian_Aboriginal Carian Caucasian_Albanian "
    "Chakma Cham Cherokee Chorasmian Coptic Cuneiform Cypriot Cypro_Minoan Deseret "
    "Dives_Akuru Dogra Duployan Egyptian_Hieroglyphs Elbasan Elymaic Garay Glagolitic Gothic "
    "Grantha Gunjala_Gondi Gurung_Khema Hanifi_Rohingya Hanunoo Hatran Imperial_Aramaic "
    "Inscriptional_Pahlavi Inscriptional_Parthian Javanese Jurchen Kaithi Kawi Kayah_Li Kharoshthi "
    "Khitan_Small_Script Khojki Khudawadi Kirat_Rai Lepcha Limbu Linear_A Linear_B Lisu "
    "Lycian Lydian Mahajani Makasar Mandaic Manichaean Marchen Masaram_Gondi Medefaidrin "
    "Meetei_Mayek Mende_Kikakui Meroitic_Cursive Meroitic_Hieroglyphs Miao Modi Mro Multani "
    "Nabataean Nag_Mundari Nandinagari New_Tai_Lue Newa Nko Nushu Nyiakeng_Puachue_Hmong "
    "Ogham Ol_Chiki Ol_Onal Old_Hungarian Old_Italic Old_North_Arabian Old_Permic "
    "Old_Persian Old_Sogdian Old_South_Arabian Old_Turkic Old_Uyghur Osage Osmanya "
    "Pahawh_Hmong Palmyrene Pau_Cin_Hau Phags_Pa Phoenician Proto_Cuneiform Psalter_Pahlavi "
    "Rejang Runic Samaritan Saurashtra Seal Sharada Shavian Siddham Sidetic SignWriting Sogdian "
    "Sora_Sompeng "
    "Soyombo Sundanese Sunuwar Syloti_Nagri Tagalog Tagbanwa Tai_Le Tai_Tham Tai_Viet Tai_Yo "
    "Takri Tangsa Tangut Tifinagh Tirhuta Todhri Tolong_Siki Toto Tulu_Tigalari Ugaritic Vai "
    "Vithkuqi Wancho Warang_Citi Yezidi Zanabazar_Square Common Inherited"
).split()

# Characters shared by several scripts (Script=Common: "ー", "·"; Script=Inherited: combining
# marks) take the script of the letters around them in a token.
COMMON, INHERITED = "Common", "Inherited"
# A letter of no listed script (one that a newer Unicode than this list assigned).
UNKNOWN = "Unknown"


def _alternation(names: list[str]) -> str:
    return "|".join(rf"(\p{{Script={name}}})" for name in names)


def _known_names() -> list[str]:
    """The names of ``_LONG_NAMES`` the installed ``regex`` knows (one compile, as a rule)."""
    try:
        regex.compile(_alternation(_LONG_NAMES))
        return list(_LONG_NAMES)
    except regex.error:  # an older regex than the newest scripts: ask name by name
        pass
    known = []
    for name in _LONG_NAMES:
        try:
            regex.compile(rf"\p{{Script={name}}}")
        except regex.error:
            continue
        known.append(name)
    return known + _newer_names(known)


# Script values no character takes (Scripts.txt): Zzzz, and Hrkt, Katakana and Hiragana together.
_NO_CHARACTERS = ("UNKNOWN", "KATAKANAORHIRAGANA")


def _newer_names(known: list[str]) -> list[str]:
    """The scripts the installed ``regex`` knows that ``_LONG_NAMES`` does not (a newer
    Unicode's), by the longest of their names in its table, so their letters are not called
    ``UNKNOWN``; none where the table (not a public part of ``regex``) is not as expected."""
    try:
        from regex import _regex_core

        table = vars(_regex_core)["PROPERTIES"]["SCRIPT"][1]
        listed = {table[name.upper().replace("_", "")] for name in known}
        empty = {table[name] for name in _NO_CHARACTERS}
    except (ImportError, AttributeError, KeyError, IndexError, TypeError):
        return []
    names: dict[int, str] = {}
    for name, value in table.items():
        if value not in listed and value not in empty and len(name) > len(names.get(value, "")):
            names[value] = name
    return [name.capitalize() for _, name in sorted(names.items())]


_KNOWN = _known_names()
# Display names ("Canadian Aboriginal"), of the scripts this regex module knows.
SCRIPTS: tuple[str, ...] = tuple(n.replace("_", " ") for n in _KNOWN) + (UNKNOWN,)
# One group per script, in the order of SCRIPTS: a character's match names its script.
_FINDER = regex.compile(_alternation(_KNOWN))


def scripts_of(chars: Iterable[str]) -> dict[str, str]:
    """The script of each character in ``chars`` (``UNKNOWN`` for one of no listed script).

    >>> sorted(scripts_of("aЖ中ー").items())
    [('a', 'Latin'), ('Ж', 'Cyrillic'), ('ー', 'Common'), ('中', 'Han')]
    """
    found = dict.fromkeys(set(chars), UNKNOWN)
    for m in _FINDER.finditer("".join(found)):
        found[m.group()] = SCRIPTS[(m.lastindex or 0) - 1]
    return found
