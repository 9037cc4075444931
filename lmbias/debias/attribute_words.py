"""bias-bench's attribute words (Meade et al. 2022, ``data/bias_attribute_words.json``) and what the
debiasing methods of that survey build from them: two-sided counterfactual swaps (CDA,
SentenceDebias) and the attribute classes of sentences (INLP, LEACE).

The lists: gender 57 male/female pairs ("actor", "actress"); race and religion 6 triples each
("black", "caucasian", "asian"; "jewish", "christian", "muslim"). As bias-bench does, a word matches
a whitespace-separated word exactly (lower case as listed), also when one of ``. , ? ! ; :`` follows it.

Contexts: bias-bench draws its sentences from Wikipedia (a 2.5 % sample), which is not at hand
offline; lmbias uses the debiasing corpus (default: BOLD's Wikipedia sentences), training part only
(:func:`lmbias.debias.pairs.is_held_out`), and never an evaluation item.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from ..checks import check_choice
from ..data.spec import read_json
from ..errors import InputError
from ..resources import GITHUB_RAW, Resource, locate

BIAS_BENCH_COMMIT = "291426aab926f78ecfc7bd040b531429ee8123e0"
BIAS_TYPES = ("gender", "race", "religion")
PUNCTUATION = (".", ",", "?", "!", ";", ":")

RESOURCES = (
    Resource(name="bias_bench/attribute_words", path="bias_bench/bias_attribute_words.json",
             url=f"{GITHUB_RAW}/McGill-NLP/bias-bench/{BIAS_BENCH_COMMIT}/data/bias_attribute_words.json",
             sha256="221f9f997b6eee90c4b5791c6f60771fb91bbbe3631ac07a010bd8b026e50dbc",
             description="bias-bench's gender, race and religion attribute words (Meade et al. 2022)"),
)


def attribute_words(bias_type: str, data_dir=None) -> list[tuple[str, ...]]:
    """The word tuples of ``bias_type`` (gender: (male, female); race, religion: triples), with
    bias-bench's punctuated variants ("he." / "she.") after the plain ones."""
    check_choice(bias_type, BIAS_TYPES, "bias_type")
    path = locate("bias_bench/attribute_words", data_dir)
    loaded = read_json(path, "bias-bench's attribute words: {bias type: [[word, ...], ...]}")
    words = loaded.get(bias_type) if isinstance(loaded, dict) else None
    size = 2 if bias_type == "gender" else 3
    if not isinstance(words, list) or not words or not all(
            isinstance(t, list) and len(t) == size and all(isinstance(w, str) and w for w in t) for t in words):
        raise InputError(f"{path}: expected {bias_type!r} to hold lists of {size} words")
    plain = [tuple(t) for t in words]
    return plain + [tuple(w + mark for w in t) for mark in PUNCTUATION for t in plain]


def check_vocabulary(tokenizer, bias_type: str, model: str | None, data_dir=None) -> None:
    """Refuse, in one line, a model whose vocabulary has none of ``bias_type``'s attribute words (each
    would be its unknown token, so nothing could tell the groups apart)."""
    unknown = tokenizer.unk_token_id
    for t in attribute_words(bias_type, data_dir):
        for word in t:
            ids = tokenizer(word, add_special_tokens=False)["input_ids"]
            if ids and (unknown is None or any(i != unknown for i in ids)):
                return
    raise InputError(f"--model {model or 'the embedded default'}: none of bias-bench's {bias_type} attribute words is in its "
                     f"vocabulary (each is its unknown token {tokenizer.unk_token!r}); choose another --bias-type or model")


def word_classes(words: Sequence[tuple[str, ...]]) -> dict[str, int]:
    """Each attribute word -> its position in the tuples (0: male / first group, 1: female / second ...)."""
    return {word: position for t in words for position, word in enumerate(t)}


def swap(text: str, words: Sequence[tuple[str, ...]], rng: random.Random | None = None) -> str | None:
    """``text`` with every attribute word replaced by its counterpart (two-sided: "he" -> "she" and
    "she" -> "he" in the same text), words split on whitespace and joined by one space, as bias-bench's
    CDA does; None when the text holds no attribute word.

    Pairs swap to the other word; for triples each position's replacement (one of the two others) is
    drawn once per text from ``rng`` (bias-bench's ternary CDA), so the same group always maps to
    the same group within a text. A word in several tuples takes the last one's counterpart, as in
    bias-bench's loop ("her" -> "his": (him, her) comes before (his, her)); no grammar is repaired.

    >>> swap("she said he was an actor.", [("he", "she"), ("actor", "actress"), ("actor.", "actress.")])
    'he said she was an actress.'
    """
    size = len(words[0])
    if size == 2:
        target = {0: 1, 1: 0}
    else:
        rng = rng or random.Random(0)
        target = {position: rng.choice([p for p in range(size) if p != position]) for position in range(size)}
    lookup = {t[position]: t[target[position]] for t in words for position in range(size)}
    tokens = text.split()
    swapped = [lookup.get(token, token) for token in tokens]
    return " ".join(swapped) if swapped != tokens else None


def attribute_class(text: str, classes: dict[str, int]) -> int | None:
    """The one attribute class whose words ``text`` holds (None: none; -1: words of several classes)."""
    found = {classes[token] for token in text.split() if token in classes}
    return None if not found else found.pop() if len(found) == 1 else -1

