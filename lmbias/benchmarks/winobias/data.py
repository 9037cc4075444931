"""WinoBias (Zhao et al. 2018): 3,168 sentences in which a pronoun refers to one of two occupations,
in pro-stereotypical and anti-stereotypical versions (the same sentence with the pronoun's gender
swapped), of two types, each with a dev and a test half.

* Type 1 (``[entity1] [interacts with] [entity2] [conjunction] [pronoun] [circumstances]``): only
  world knowledge (semantics) says which occupation the pronoun refers to.
* Type 2 (``[entity1] [interacts with] [entity2] and then [interacts with] [pronoun] for
  [circumstances]``): the syntax says it too.

The files mark the occupation the pronoun refers to and the pronoun with brackets
(``[The developer] argued with the designer because [he] did not like the design.``). Each row keeps
the sentence without brackets, the referent, the other occupation (the one of the authors' 40
occupations that the sentence mentions before the pronoun: "The developer hated [the cleaner] and
reported [her] to the manager" names a third after it), both in the order the sentence mentions them (``candidates``; ``label`` is
the referent's index), and the first bracketed pronoun (30 sentences bracket a second one, "[his]").
The files are read as they are, with their typos ("notified the [the chief]").

Line N of a pro file and line N of its anti file are the same sentence with the pronoun's gender
swapped (except lines 382 and 384 of the type 2 test files, which upstream are two different
sentences): rows are paired by ``pair`` (``<split>/type<T>/<N>``), which the pro - anti gap's
intervals resample together.
"""

from __future__ import annotations

import re

from ...data.spec import DatasetSpec, PathLike, Row, layout_error
from ...errors import InputError
from ...files import read_text
from ...resources import GITHUB_RAW, Resource, locate

COREFBIAS_COMMIT = "0bce984dd081bbc10b0622f326727a024c607895"
SPLITS = ("test", "dev")
TYPES = (1, 2)
STEREOTYPES = ("pro", "anti")
FILE_ROWS = 396  # sentences in each of the 8 files
PRONOUNS = {"he": "male", "him": "male", "his": "male", "himself": "male",
            "she": "female", "her": "female", "hers": "female", "herself": "female"}
# The two occupation lists: a resource each, checked like the sentence files.
OCCUPATION_FILES = {"male": "male_occupations.txt", "female": "female_occupations.txt"}
# The sentence files with their SHA-256 at COREFBIAS_COMMIT (from ../shared/data/winobias/SOURCES.md).
FILES = {
    ("anti", 1, "dev"): "a4e0ebae344e78b56f657a42e8ae684b9db7747d177c5e7149c0907ebb7f3bf6",
    ("anti", 1, "test"): "331db5bd74bfefebf146a60b67645152a4a1991570d2a56f57154103ac361dd2",
    ("anti", 2, "dev"): "763ad829ad724f9a85ead689ba8ca69072020cb1238def6210f0fc6a47b97e59",
    ("anti", 2, "test"): "336571ac1ea8c06cd2aba8e5dd2bd98e00acc0c48da3e4ec5ec7e54eb2633a8f",
    ("pro", 1, "dev"): "dd55a0d220fe4c0ceb63dd4648223fb4fe1a58d5ad95c116a002ad24b0e292a5",
    ("pro", 1, "test"): "db7838907238a758eeb5779e48f38c013b892910d6fe864456c59f04245c6689",
    ("pro", 2, "dev"): "8f0250de723cea9328e3eaf7169e07936f01aa5909ce7aa580db66eb803f4e86",
    ("pro", 2, "test"): "ea1c1fd94fa612e3cc44d7fa3cc4cb76021bb63fdf94f9826f430051e9052438",
}
OCCUPATION_SHA256 = {"male": "6b82d88847b69d56d207a0c396e9830b031890de585e916e6b4e9bc50672657e",
                     "female": "693bff12286c2c1d46c7d4d45a44a631574710c30b39c1a3001bb7bdebb44ed8"}

COLUMN_TYPES = {
    "id": "string",
    "pair": "string",
    "split": "string",
    "type": "int64",
    "stereotype": "string",
    "sentence": "string",
    "pronoun": "string",
    "pronoun_gender": "string",
    "referent": "string",
    "referent_gender": "string",
    "other": "string",
    "candidates": ["string"],
    "label": "int64",
}


def file_name(stereotype: str, type_: int, split: str) -> str:
    """The upstream name of one sentence file ("pro_stereotyped_type1.txt.test")."""
    return f"{stereotype}_stereotyped_type{type_}.txt.{split}"


def occupations(data_dir: PathLike | None = None) -> dict[str, str]:
    """The authors' 40 occupations (lower case) -> the gender the U.S. labour statistics make them
    majority ("male" / "female"), from ``male_occupations.txt`` and ``female_occupations.txt``."""
    found = {}
    for gender in OCCUPATION_FILES:
        path = locate(f"winobias/{gender}_occupations", data_dir)
        words = [line.strip().lower() for line in read_text(path, "one occupation per line").splitlines() if line.strip()]
        if not words:
            raise layout_error(path, "one occupation per line", "an empty file")
        found.update((word, gender) for word in words)
    return found


def _mentions(sentence: str, names) -> list[tuple[int, str]]:
    """(position, occupation) of each whole-word, case-blind mention of ``names`` in ``sentence``,
    the longer name first where two overlap."""
    found = []
    for name in sorted(names, key=len, reverse=True):
        for match in re.finditer(rf"(?<![\w-]){re.escape(name)}(?![\w-])", sentence, re.IGNORECASE):
            if not any(start <= match.start() < start + len(other) for start, other in found):
                found.append((match.start(), name))
    return sorted(found)


def parse_line(line: str, jobs: dict[str, str]) -> dict:
    """One WinoBias line as a row's fields (without ids); a :class:`ValueError` says what is wrong.

    >>> jobs = {"developer": "male", "designer": "female"}
    >>> row = parse_line("1 [The developer] argued with the designer because [he] did not like the design.", jobs)
    >>> row["sentence"], row["candidates"], row["label"], row["pronoun"]
    ('The developer argued with the designer because he did not like the design.', ['developer', 'designer'], 0, 'he')
    """
    number, _, text = line.strip().partition(" ")
    if not number.isdigit():
        raise ValueError(f"a line number first, found {number!r}")
    spans = list(re.finditer(r"\[([^\[\]]+)\]", text))
    if len(spans) < 2:
        raise ValueError(f"two bracketed mentions (the occupation and its pronoun), found {len(spans)}")
    mention = re.sub(r"^(the|a|an)\s+", "", spans[0].group(1).strip(), flags=re.IGNORECASE).lower()
    if mention not in jobs:
        raise ValueError(f"the first bracketed mention to be one of the 40 occupations, found {spans[0].group(1)!r}")
    pronoun = spans[1].group(1).strip().lower()
    if pronoun not in PRONOUNS:
        raise ValueError(f"the second bracketed mention to be a pronoun ({sorted(PRONOUNS)}), found {spans[1].group(1)!r}")
    sentence = re.sub(r"\[([^\[\]]+)\]", r"\1", text)
    # the referent's position in the plain sentence: each earlier span lost its two brackets
    referent_at = spans[0].start() - 2 * sum(1 for span in spans if span.start() < spans[0].start()) \
        + spans[0].group(1).lower().rindex(mention)
    pronoun_at = spans[1].start() - 2 * sum(1 for span in spans if span.start() < spans[1].start())
    others = [(at, name) for at, name in _mentions(sentence, jobs) if name != mention and at < pronoun_at]
    if len({name for _, name in others}) != 1:
        raise ValueError(f"exactly one other occupation before the pronoun, found {sorted({n for _, n in others}) or 'none'}")
    other_at, other = others[0]
    candidates = [mention, other] if referent_at < other_at else [other, mention]
    return {"number": int(number), "sentence": sentence, "pronoun": pronoun, "pronoun_gender": PRONOUNS[pronoun],
            "referent": mention, "referent_gender": jobs[mention], "other": other, "candidates": candidates,
            "label": candidates.index(mention)}


def read_file(stereotype: str, type_: int, split: str, data_dir: PathLike | None = None, jobs=None) -> list[Row]:
    """The rows of one sentence file, in file order."""
    jobs = jobs or occupations(data_dir)
    path = locate(f"winobias/{stereotype}_type{type_}_{split}", data_dir)
    rows, seen = [], set()
    for number, line in enumerate(read_text(path, "WinoBias sentences, one per line").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            parsed = parse_line(line, jobs)
        except ValueError as error:
            raise layout_error(path, f"{error.args[0].split(', found')[0]} on line {number}",
                               error.args[0].split(", found ")[-1] if ", found " in error.args[0] else repr(line[:80])) from None
        if (parsed["pronoun_gender"] == parsed["referent_gender"]) != (stereotype == "pro"):
            raise layout_error(path, f"a {stereotype}-stereotypical sentence on line {number} (its pronoun "
                               f"{'of' if stereotype == 'pro' else 'not of'} the occupation's majority gender)",
                               f"{parsed['pronoun']!r} for {parsed['referent']!r} ({parsed['referent_gender']})")
        if parsed["number"] in seen:
            raise layout_error(path, f"each sentence number once; line {number}", f"number {parsed['number']} again")
        seen.add(parsed["number"])
        pair = f"{split}/type{type_}/{parsed.pop('number')}"
        rows.append({"id": f"{pair}/{stereotype}", "pair": pair, "split": split, "type": type_, "stereotype": stereotype,
                     **parsed})
    if not rows:
        raise layout_error(path, "WinoBias sentences, one per line", "an empty file")
    return rows


def load_rows(config: str = "test", data_dir: PathLike | None = None) -> list[Row]:
    """WinoBias rows of the test half (``"test"``) or the dev half (``"dev"``, published as the
    ``validation`` split): type 1 pro, type 1 anti, type 2 pro, type 2 anti, each in file order."""
    if config not in SPLITS:
        raise InputError(f"WinoBias has no config {config!r}; its configs: {list(SPLITS)}")
    jobs = occupations(data_dir)
    rows = []
    for type_ in TYPES:
        pro, anti = (read_file(stereotype, type_, config, data_dir, jobs) for stereotype in STEREOTYPES)
        _check_pairs(pro, anti, type_, config, data_dir)
        rows += pro + anti
    return rows


def _check_pairs(pro: list[Row], anti: list[Row], type_: int, split: str, data_dir) -> None:
    """Every sentence number of one type's pro file is in its anti file and the reverse (a file cut
    short, or one of another split, would leave sentences without their other version, and the pro -
    anti gap would compare different sentences); else a ResourceError naming the file that lacks them."""
    numbers = {"pro": [row["pair"] for row in pro], "anti": [row["pair"] for row in anti]}
    for stereotype, other in (("anti", "pro"), ("pro", "anti")):
        present = set(numbers[stereotype])
        missing = [pair for pair in numbers[other] if pair not in present]
        if missing:
            path = locate(f"winobias/{stereotype}_type{type_}_{split}", data_dir)
            shown = ", ".join(pair.rsplit("/", 1)[1] for pair in missing[:5]) + (", ..." if len(missing) > 5 else "")
            raise layout_error(path, f"{'an' if stereotype == 'anti' else 'a'} {stereotype}-stereotypical version of each of the {len(numbers[other])} sentences of "
                                     f"{file_name(other, type_, split)} (line N of both: one sentence, the pronoun's gender "
                                     "swapped)", f"{len(numbers[stereotype])} sentences, none numbered {shown} "
                                     f"({len(missing)} missing)")


SPEC = DatasetSpec(
    name="winobias",
    configs={"test": "the test half (1,584 sentences)", "dev": "the dev half (1,584 sentences)"},
    split="test",
    config_splits={"dev": "validation"},
    columns=COLUMN_TYPES,
    load_rows=load_rows,
    group_column="pronoun_gender",
    description=(
        "WinoBias: Winograd-style sentences in which a pronoun refers to one of two occupations, in a "
        "pro-stereotypical version (the pronoun's gender is the occupation's majority gender) and an "
        "anti-stereotypical one; type 1 needs world knowledge to resolve, type 2 has syntactic cues."
    ),
    citation="""@inproceedings{zhao-etal-2018-gender,
  title     = {Gender Bias in Coreference Resolution: Evaluation and Debiasing Methods},
  author    = {Zhao, Jieyu and Wang, Tianlu and Yatskar, Mark and Ordonez, Vicente and Chang, Kai-Wei},
  booktitle = {Proceedings of the 2018 Conference of the North American Chapter of the Association for
               Computational Linguistics: Human Language Technologies, Volume 2 (Short Papers)},
  pages     = {15--20},
  year      = {2018},
  doi       = {10.18653/v1/N18-2003}
}""",
    license="mit",
    homepage="https://github.com/uclanlp/corefBias",
    sizes={"test": 4 * FILE_ROWS, "dev": 4 * FILE_ROWS},
)

_UPSTREAM = f"{GITHUB_RAW}/uclanlp/corefBias/{COREFBIAS_COMMIT}/WinoBias/wino/data"
RESOURCES = (
    *(Resource(name=f"winobias/{stereotype}_type{type_}_{split}", path=f"winobias/data/{file_name(stereotype, type_, split)}",
               url=f"{_UPSTREAM}/{file_name(stereotype, type_, split)}", sha256=sha256,
               description=f"WinoBias {stereotype}-stereotypical type {type_}, {split} (Zhao et al. 2018)", lines=396)
      for (stereotype, type_, split), sha256 in FILES.items()),
    *(Resource(name=f"winobias/{gender}_occupations", path=f"winobias/data/{name}", url=f"{_UPSTREAM}/{name}",
               sha256=OCCUPATION_SHA256[gender], description=f"WinoBias's {gender}-majority occupations",
               lines=19)  # 20 occupations, the last without a line end
      for gender, name in OCCUPATION_FILES.items()),
)
