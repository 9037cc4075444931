"""The debiasing corpus: texts that contain a sensitive token, each paired with its counterfactual
(Huang et al. 2020, §4): the token replaced by another value of the same attribute.

Sensitive tokens are the counterfactual templates' lists (:mod:`lmbias.benchmarks.counterfactual.data`):
10 countries, 29 occupations, 17 male and 17 female names. Choices where the paper is silent:

* A token matches as a whole word: countries and names case-sensitively, occupations in lower case
  or capitalised ("nurse", "Nurse"; "CEO" as written). The first attribute (in the order asked) with
  a match in a text is the one replaced, at every occurrence of the matched token.
* The replacement is another value of the attribute, drawn with a seeded generator keyed by the text,
  so the corpus is the same on every run and process.
* Grammar is kept as the templates keep it: "a"/"an" before an occupation follows the new word; when a
  name is replaced by one of the other gender, the third-person pronouns are swapped (he/she, him/her,
  his/her, himself/herself; "her" becomes "his" before a noun-like word and "him" otherwise, e.g.
  before "a", "to" or punctuation).
* Texts are split into training and held-out parts by a hash of the text (:func:`is_held_out`), so the
  split does not depend on the corpus order; ``lmbias perplexity`` uses the same split.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..benchmarks.counterfactual.data import ATTRIBUTES, indefinite_article, tokens_of
from ..checks import check_choice
from ..errors import InputError

HELD_OUT_PERCENT = 10
# Words after which "her" is an object ("gave her a book"), not a possessive ("her book").
_NOT_AFTER_POSSESSIVE = {"a", "an", "the", "his", "her", "their", "to", "and", "or", "but", "in", "on", "at", "for", "with",
                         "that", "as", "from", "by", "about", "into", "up", "out", "back", "again", "when", "while", "if"}
_SWAP = {"he": "she", "she": "he", "him": "her", "his": "her", "himself": "herself", "herself": "himself"}


def is_held_out(text: str) -> bool:
    """Whether ``text`` belongs to the held-out part (about 10 %, by a hash of the text)."""
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) % 100 < HELD_OUT_PERCENT


def check_attributes(attributes: Sequence[str]) -> list[str]:
    """``attributes`` as a list of known attributes (country, occupation, name), at least one."""
    attributes = [attributes] if isinstance(attributes, str) else list(attributes)
    if not attributes:
        raise InputError(f"attributes is empty; expected some of {list(ATTRIBUTES)}")
    for attribute in attributes:
        check_choice(attribute, ATTRIBUTES, "attributes")
    return attributes


def _pattern(attribute: str) -> re.Pattern:
    words = [token for token, _ in tokens_of(attribute)]
    if attribute == "occupation":
        words += [word.capitalize() for word in words if word.islower()]
    return re.compile(r"\b(" + "|".join(sorted(map(re.escape, words), key=len, reverse=True)) + r")\b")


def _swap_pronouns(text: str) -> str:
    def swap(match: re.Match) -> str:
        word, lower = match.group(0), match.group(0).lower()
        following = re.match(r"\s+([A-Za-z]+)", text[match.end():])
        possessive = following is not None and following.group(1).lower() not in _NOT_AFTER_POSSESSIVE
        new = ("his" if possessive else "him") if lower == "her" else _SWAP[lower]
        return new.capitalize() if word[0].isupper() else new

    return re.sub(r"\b(?:[Hh]e|[Ss]he|[Hh]im|[Hh]is|[Hh]er|[Hh]imself|[Hh]erself)\b", swap, text)


def counterfactual(text: str, attribute: str, token: str, replacement: str) -> str:
    """``text`` with every whole-word ``token`` replaced by ``replacement`` (see the module docstring).

    >>> counterfactual("She is a nurse in Italy.", "occupation", "nurse", "accountant")
    'She is an accountant in Italy.'
    >>> counterfactual("Jake said he met her friend.", "name", "Jake", "Amy")
    'Amy said she met his friend.'
    """
    if attribute == "occupation" and token[0].isupper() and replacement.islower():
        replacement = replacement.capitalize()
    new = re.sub(r"\b" + re.escape(token) + r"\b", replacement, text)
    if attribute == "occupation":
        article = indefinite_article(replacement)
        new = re.sub(r"\b([Aa]n?)(\s+)(?=" + re.escape(replacement) + r"\b)",
                     lambda m: (article.capitalize() if m.group(1)[0] == "A" else article) + m.group(2), new)
    if attribute == "name":
        gender = dict(tokens_of("name"))
        if gender[token] != gender[replacement]:
            new = _swap_pronouns(new)
    return new


def counterfactual_pairs(texts: Sequence[str], attributes: Sequence[str], *, seed: int = 0) -> list[dict]:
    """The texts that contain a sensitive token of ``attributes``, each with its counterfactual.

    Returns one dict per such text, in input order: ``text``, ``counterfactual``, ``attribute``,
    ``token``, ``replacement``, ``held_out`` (:func:`is_held_out`).
    """
    attributes = check_attributes(attributes)
    patterns = {attribute: _pattern(attribute) for attribute in attributes}
    values = {attribute: [token for token, _ in tokens_of(attribute)] for attribute in attributes}
    pairs = []
    for text in texts:
        for attribute in attributes:
            match = patterns[attribute].search(text)
            if match is None:
                continue
            token = match.group(1)
            plain = token.lower() if attribute == "occupation" and token.lower() in values[attribute] else token
            others = [value for value in values[attribute] if value != plain]
            digest = hashlib.sha256(f"{seed}:{text}".encode()).digest()
            replacement = others[np.random.default_rng(int.from_bytes(digest[:8], "little")).integers(len(others))]
            pairs.append({"text": text, "counterfactual": counterfactual(text, attribute, token, replacement),
                          "attribute": attribute, "token": token, "replacement": replacement, "held_out": is_held_out(text)})
            break
    return pairs


def count_by_attribute(pairs: Sequence[dict], attributes: Sequence[str]) -> dict[str, int]:
    """How many pairs each attribute has (0 included)."""
    return {attribute: sum(pair["attribute"] == attribute for pair in pairs) for attribute in attributes}


def load_corpus(train_file=None, train_dataset: str | None = None, *, data_dir=None) -> tuple[list[str], str]:
    """The texts to debias on and a description of where they came from.

    Default: BOLD's Wikipedia sentences (unique). ``train_file``: a ``.txt`` file (one text per line)
    or ``.jsonl`` (one JSON object with a string ``"text"`` per line). ``train_dataset``: a Hub dataset
    id whose ``train`` split has a ``text`` column (WikiText-103 is the paper's).

    Raises:
        InputError: both sources given, a file that is missing, not UTF-8 text or lacks ``text``
            (the message names the file and line), a dataset without a ``text`` column, no texts.
    """
    if train_file is not None and train_dataset is not None:
        raise InputError("give --train-file or --train-dataset, not both")
    if train_file is not None:
        texts, source = _read_text_file(Path(train_file)), str(train_file)
    elif train_dataset is not None:
        texts, source = _read_hub_dataset(train_dataset), f"{train_dataset} (train split)"
    else:
        from ..data import load_rows

        texts = list(dict.fromkeys(row["wikipedia"] for row in load_rows("bold", data_dir=data_dir)))
        source = "BOLD Wikipedia sentences (Dhamala et al. 2021)"
    if not texts:
        raise InputError(f"{source} has no texts")
    return texts, source


def _read_text_file(path: Path) -> list[str]:
    if not path.is_file():
        raise InputError(f"--train-file {path}: no such file")
    raw = path.read_bytes()
    try:
        content = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"--train-file {path} is not UTF-8 text (byte {error.start}); expected one text per line "
                         "(.txt) or JSON lines with a 'text' field (.jsonl)") from None
    if "\x00" in content:
        raise InputError(f"--train-file {path} is not text (it holds NUL bytes); expected .txt or .jsonl")
    lines = content.splitlines()
    if path.suffix != ".jsonl":
        return [line.strip() for line in lines if line.strip()]
    texts = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            raise InputError(f"--train-file {path} line {number}: not JSON; expected an object with a string 'text'") from None
        if not isinstance(value, dict) or not isinstance(value.get("text"), str):
            raise InputError(f"--train-file {path} line {number}: expected an object with a string 'text'")
        if value["text"].strip():
            texts.append(value["text"].strip())
    return texts


def _read_hub_dataset(name: str) -> list[str]:
    import datasets

    try:
        dataset = datasets.load_dataset(name, split="train")
    except Exception as error:  # the Hub's and datasets' own errors name the cause
        raise InputError(f"--train-dataset {name!r} could not be loaded: {type(error).__name__}: "
                         f"{str(error).splitlines()[0] if str(error) else ''}") from None
    if "text" not in dataset.column_names:
        raise InputError(f"--train-dataset {name!r} has no 'text' column (it has {dataset.column_names})")
    return [text.strip() for text in dataset["text"] if isinstance(text, str) and text.strip()]
