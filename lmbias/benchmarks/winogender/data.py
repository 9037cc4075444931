"""Winogender schemas (Rudinger et al. 2018): 720 sentences, 120 templates (two per occupation, 60
occupations) x three pronoun genders x two participants (the template's own, and "someone"), in
which the pronoun refers to the occupation or to the participant; with the occupations' share of
women (U.S. Bureau of Labor Statistics 2015 and Bergsma & Lin 2006's text statistics).

Each row keeps the sentence, its pronoun (the form the template asks for: nominative, possessive or
accusative, of the sentence's gender), the two candidates (``[occupation, participant]``, the order
lm-evaluation-harness offers them), ``label`` (0: the occupation, 1: the participant, from the
sentence id) and ``gotcha`` (:func:`is_gotcha`).
"""

from __future__ import annotations

import csv
import io

from ...checks import first_repeat
from ...data.spec import DatasetSpec, PathLike, Row, layout_error
from ...errors import InputError
from ...files import read_text
from ...resources import GITHUB_RAW, Resource, ResourceError, locate

WINOGENDER_COMMIT = "1c7f8b481ad8a234b41e9f76a424d6e856e13f7f"
GENDERS = ("male", "female", "neutral")
PRONOUNS = {"male": {"$NOM_PRONOUN": "he", "$POSS_PRONOUN": "his", "$ACC_PRONOUN": "him"},
            "female": {"$NOM_PRONOUN": "she", "$POSS_PRONOUN": "her", "$ACC_PRONOUN": "her"},
            "neutral": {"$NOM_PRONOUN": "they", "$POSS_PRONOUN": "their", "$ACC_PRONOUN": "them"}}
STATISTICS = ("bls_pct_female", "bergsma_pct_female")
FILES = {  # file name, SHA-256, lines (a header and a row per line)
    "sentences": ("all_sentences.tsv", "bd69da16bf228cb8df63fd0843aec2d8b5c36a7f21bf8c7b168bcc83932556c8", 721),
    "templates": ("templates.tsv", "496f2e2dc77296bcebcdd8865a8dc5715ce22b772de9abb5f531d5b3114c48a0", 121),
    "occupations": ("occupations-stats.tsv", "3f7f37c16381a70571356982ea7fe613ac700ad04a6d3b19b9f2be18248df567", 61),
}

COLUMN_TYPES = {
    "id": "string",
    "pair": "string",
    "sentence": "string",
    "occupation": "string",
    "participant": "string",
    "gender": "string",
    "pronoun": "string",
    "candidates": ["string"],
    "label": "int64",
    "bls_pct_female": "float64",
    "bergsma_pct_female": "float64",
    "gotcha": "bool",
}


def is_gotcha(gender: str, label: int, bls_pct_female: float) -> bool:
    """Whether a sentence is a "gotcha" (the paper's Table 2): for a female pronoun, the answer is the
    occupation and the occupation is < 50 % female (BLS), or the occupation is >= 50 % female and the
    answer is the participant; reversed for a male pronoun (the answer is the occupation and it is
    < 50 % male, or it is >= 50 % male and the answer is the participant). Neutral pronouns never are.

    >>> is_gotcha("male", 0, 86.13)   # "The librarian ... because he liked to encourage reading."
    True
    >>> is_gotcha("female", 0, 86.13), is_gotcha("female", 1, 86.13)
    (False, True)
    """
    if gender == "neutral":
        return False
    share = bls_pct_female if gender == "female" else 100.0 - bls_pct_female
    return share < 50 if label == 0 else share >= 50


def _read_tsv(name: str, columns: tuple, data_dir, key: tuple = (0,)) -> tuple:
    """(path, [(line number, fields)]) of a tab-separated file with ``columns`` first, each ``key``
    (field indices) once."""
    path = locate(f"winogender/{name}", data_dir)
    expected = f"a tab-separated file with columns {list(columns)}"
    reader = csv.reader(io.StringIO(read_text(path, expected), newline=""), delimiter="\t")
    header = next(reader, None)
    if header is None or tuple(header[:len(columns)]) != columns:
        raise layout_error(path, expected, f"columns {header}")
    records = [(number, record) for number, record in enumerate(reader, start=2) if record]
    if not records:
        raise layout_error(path, f"{expected} and rows under them", "no rows")
    repeat = first_repeat((tuple(record[i] if i < len(record) else None for i in key), number) for number, record in records)
    if repeat is not None:
        raise layout_error(path, f"each {', '.join(columns[i] for i in key)} once (line {repeat[2]})", f"{repeat[0]} again")
    return path, records


def occupation_statistics(data_dir: PathLike | None = None) -> dict[str, dict[str, float]]:
    """Occupation -> ``{"bls_pct_female": .., "bergsma_pct_female": ..}`` (``occupations-stats.tsv``)."""
    path, records = _read_tsv("occupations", ("occupation", "bergsma_pct_female", "bls_pct_female"), data_dir)
    found = {}
    for number, record in records:
        try:
            found[record[0]] = {"bergsma_pct_female": float(record[1]), "bls_pct_female": float(record[2])}
        except (ValueError, IndexError):
            raise layout_error(path, f"two percentages on line {number}", repr(record[1:3])) from None
        if not all(0 <= value <= 100 for value in found[record[0]].values()):  # NaN fails too
            raise layout_error(path, f"two percentages from 0 to 100 on line {number}", repr(record[1:3]))
    return found


def _templates(data_dir) -> dict[tuple[str, str], str]:
    """(occupation, answer) -> the template (two per occupation: answer 0 and 1)."""
    path, records = _read_tsv("templates", ("occupation(0)", "other-participant(1)", "answer", "sentence"), data_dir, key=(0, 2))
    found = {}
    for number, record in records:
        if len(record) < 4 or record[2] not in ("0", "1") or sum(record[3].count(p) for p in PRONOUNS["male"]) != 1:
            raise layout_error(path, f"occupation, participant, answer 0 / 1 and a template with one pronoun slot on line {number}",
                               repr(record)[:120])
        found[record[0], record[2]] = record[3]
    return found


def load_rows(config: str = "all", data_dir: PathLike | None = None) -> list[Row]:
    """The Winogender sentences (``"all"``, in file order) or those of one pronoun gender; ``id`` is
    the sentence id ("technician.customer.1.male.txt" minus ".txt"), ``pair`` the part its three
    genders share ("technician.customer.1")."""
    if config not in SPEC.configs:
        raise InputError(f"Winogender has no config {config!r}; its configs: {list(SPEC.configs)}")
    statistics, templates = occupation_statistics(data_dir), _templates(data_dir)
    path, records = _read_tsv("sentences", ("sentid", "sentence"), data_dir)
    rows, genders_of = [], {}
    for number, record in records:
        parts = record[0].split(".")
        if len(record) < 2 or len(parts) != 5 or parts[3] not in GENDERS or parts[2] not in ("0", "1") or not record[1].strip():
            raise layout_error(path, f"a sentence id <occupation>.<participant>.<answer>.<gender>.txt and a sentence on line {number}",
                               repr(record)[:120])
        occupation, participant, answer, gender = parts[:4]
        if occupation not in statistics or (occupation, answer) not in templates:
            raise ResourceError(f"{path} line {number}: occupation {occupation!r} with answer {answer} is not in "
                                "occupations-stats.tsv and templates.tsv")
        slot = next(p for p in PRONOUNS[gender] if p in templates[occupation, answer])
        genders_of.setdefault(f"{occupation}.{participant}.{answer}", []).append(gender)
        if gender != config and config != "all":
            continue
        stats = statistics[occupation]
        rows.append({"id": record[0].removesuffix(".txt"), "pair": f"{occupation}.{participant}.{answer}", "sentence": record[1].strip(), "occupation": occupation,
                     "participant": participant, "gender": gender, "pronoun": PRONOUNS[gender][slot],
                     "candidates": [occupation, participant], "label": int(answer), **stats,
                     "gotcha": is_gotcha(gender, int(answer), stats["bls_pct_female"])})
    # a sentence without its other genders (a file cut short) would compare the genders on different sentences
    unpaired = next(((pair, found) for pair, found in genders_of.items() if len(found) != len(GENDERS)), None)
    if unpaired is not None:
        raise layout_error(path, f"each sentence with each pronoun gender {list(GENDERS)}",
                           f"{unpaired[0]} only with {unpaired[1]} ({sum(len(f) != len(GENDERS) for f in genders_of.values())} "
                           "sentences incomplete)")
    return rows


SPEC = DatasetSpec(
    name="winogender",
    configs={"all": "all 720 sentences", **{gender: f"the 240 sentences with a {gender} pronoun" for gender in GENDERS}},
    split="test",
    columns=COLUMN_TYPES,
    load_rows=load_rows,
    group_column="gender",
    description=(
        "Winogender schemas: 720 sentences in which a pronoun (male, female or neutral) refers to an "
        "occupation or to another participant, differing only in the pronoun's gender, with each "
        "occupation's share of women from U.S. labour statistics and from text."
    ),
    citation="""@inproceedings{rudinger-etal-2018-gender,
  title     = {Gender Bias in Coreference Resolution},
  author    = {Rudinger, Rachel and Naradowsky, Jason and Leonard, Brian and Van Durme, Benjamin},
  booktitle = {Proceedings of the 2018 Conference of the North American Chapter of the Association for
               Computational Linguistics: Human Language Technologies, Volume 2 (Short Papers)},
  pages     = {8--14},
  year      = {2018},
  doi       = {10.18653/v1/N18-2002}
}""",
    license="mit",
    homepage="https://github.com/rudinger/winogender-schemas",
    sizes={"all": 720, **{gender: 240 for gender in GENDERS}},
)

RESOURCES = tuple(
    Resource(name=f"winogender/{key}", path=f"winogender/data/{name}",
             url=f"{GITHUB_RAW}/rudinger/winogender-schemas/{WINOGENDER_COMMIT}/data/{name}", sha256=sha256,
             description=f"Winogender {key} (Rudinger et al. 2018)", lines=lines)
    for key, (name, sha256, lines) in FILES.items()
)
