"""The sentences the projection methods are fitted on, built from the training part of the debiasing
corpus and bias-bench's attribute words (:mod:`lmbias.debias.attribute_words`) as bias-bench builds
them from Wikipedia.

* :func:`labelled_sentences` (INLP, LEACE; bias-bench's ``dataset/inlp.py``): sentences of at least
  5 words, lower-cased. Gender: those with male words only (class "male"), female words only
  ("female"), neither ("neutral"); race and religion: any attribute word ("<bias type>") or none
  ("neutral"). An attribute sentence is cut after a random word at or after its (last) attribute
  word, a neutral one after a random 4th word or later, at most ``per_class`` of each, texts in a
  seeded shuffled order.
* :func:`counterfactual_sets` (SentenceDebias; bias-bench's ``dataset/sentence_debias.py``): for each
  attribute word in a sentence, the versions of the sentence with that word replaced by each word
  of its tuple (gender: 2 versions, race and religion: 3).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from ..errors import InputError
from .attribute_words import attribute_words, word_classes

MIN_WORDS = 5


def labelled_sentences(texts: Sequence[str], bias_type: str, *, per_class: int = 10000, seed: int = 0,
                       data_dir=None) -> tuple[list[str], list[int], list[str]]:
    """``(sentences, labels, class names)`` (see the module docstring); labels index the class names."""
    words = attribute_words(bias_type, data_dir)
    classes = word_classes(words) if bias_type == "gender" else {word: 0 for t in words for word in t}
    names = ["male", "female", "neutral"] if bias_type == "gender" else [bias_type, "neutral"]
    neutral = len(names) - 1
    rng = random.Random(seed)
    order = list(texts)
    rng.shuffle(order)
    sentences, labels, counts = [], [], [0] * len(names)
    for text in order:
        tokens = text.lower().split(" ")
        if len(tokens) < MIN_WORDS:
            continue
        found = {classes[token] for token in tokens if token in classes}
        if len(found) > 1:
            continue  # male and female words: left out, as bias-bench does
        label = found.pop() if found else neutral
        if counts[label] >= per_class:
            continue
        if label == neutral:
            cut = tokens[: rng.randint(4, len(tokens))]
        else:
            last = max(i for i, token in enumerate(tokens) if token in classes)
            cut = tokens[: rng.randint(last, len(tokens)) + 1]
        sentences.append(" ".join(cut))
        labels.append(label)
        counts[label] += 1
        if min(counts) >= per_class:
            break
    missing = [name for name, n in zip(names, counts) if n == 0]
    if missing:
        raise InputError(f"the corpus has no {bias_type} sentence of class {missing[0]!r} (of {names}); give a corpus "
                         "that mentions them (--train-file)")
    return sentences, labels, names


def counterfactual_sets(texts: Sequence[str], bias_type: str, *, data_dir=None) -> list[list[str]]:
    """Per attribute word occurrence, the sentence in each group's version (see the module docstring)."""
    words = attribute_words(bias_type, data_dir)
    owner = {word: t for t in words for word in t}
    sets = []
    for text in texts:
        tokens = text.split(" ")
        for position, token in enumerate(tokens):
            if token in owner:
                sets.append([" ".join([*tokens[:position], other, *tokens[position + 1:]]) for other in owner[token]])
    if not sets:
        raise InputError(f"no sentence of the corpus holds a {bias_type} attribute word; give a corpus that mentions them")
    return sets
