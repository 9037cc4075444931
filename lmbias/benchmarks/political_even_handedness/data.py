"""Political even-handedness (Shen, Appel, Tucker, Jagadish, Maheshwary, Askell, Durmus 2025): the authors'
repository ``anthropics/political-neutrality-eval`` at a pinned commit (CC BY 4.0).

``eval_set.csv``: 1,350 rows, each a pair of prompts on opposing stances of one topic, asked in one of 9 task
templates: 150 stance pairs (the README's "topics") x 9 templates. Columns ``split`` (``eval``), ``main_category``,
``topic_name``, ``partisan``, ``template_category``, ``template``, ``stance_a``, ``stance_b``, ``prompt_a``, ``prompt_b``,
``prompt_a_group``, ``prompt_b_group`` (the side each prompt argues for).

A row is refused with its file and line when a column is missing, a prompt or a group is empty, ``partisan`` is
not True / False, or a stance pair is asked in the same template twice (it would be graded twice). Each row gets an
``id`` (its row number in the file, from 0) and ``stance_pair``, the number of its stance pair (0 to 149, in the
order of first appearance): the unit the bootstrap resamples, since the 9 prompts of one stance pair are not
independent.
"""

from __future__ import annotations

import csv
import io
import random

from ...checks import first_repeat
from ...data.spec import DatasetSpec, PathLike, layout_error
from ...files import read_text
from ...resources import GITHUB_RAW, Resource, ResourceError, locate

REPO = "anthropics/political-neutrality-eval"
COMMIT = "c5ed67908b56edc0781f47821241ca44114bd4ff"
FOLDER = "political_even_handedness"
COLUMNS = ("split", "main_category", "topic_name", "partisan", "template_category", "template", "stance_a", "stance_b",
           "prompt_a", "prompt_b", "prompt_a_group", "prompt_b_group")
TEXTS = ("main_category", "topic_name", "template_category", "prompt_a", "prompt_b", "prompt_a_group", "prompt_b_group")
PAIRS = 1_350
STANCE_PAIRS = 150
TEMPLATES = 9
CITATION = """@misc{anthropicPoliticalNeutrality,
  author = {Shen, Judy Hanwen and Appel, Ruth and Tucker, Madeleine and Jagadish, Kamya and Maheshwary, Paruul and
            Askell, Amanda and Durmus, Esin},
  year   = {2025},
  title  = {Political Even-handedness Evaluation V1},
  url    = {https://github.com/anthropics/political-neutrality-eval}
}"""

# The data files (lmbias.resources), named under the lmbias.resources entry-point group; checksums from the
# repository at COMMIT (SOURCES.md of the reference data folder).
RESOURCES = (
    Resource(name="political_even_handedness/eval_set", path=f"{FOLDER}/eval_set.csv",
             url=f"{GITHUB_RAW}/{REPO}/{COMMIT}/eval_set.csv",
             sha256="b02e49e2390c4f03225f176fa7a132858a3fd0d33eced9bae86ecb9f11670cf3",
             git_blob="a71de847edd3052b63f6941f3f344f2fb684bc2c",
             description="political even-handedness: 1,350 paired prompts (Shen et al. 2025)", lines=PAIRS + 1),
    Resource(name="political_even_handedness/prompts", path=f"{FOLDER}/prompts.py",
             url=f"{GITHUB_RAW}/{REPO}/{COMMIT}/prompts.py",
             sha256="89251a9454841d842d2182a23d2a31deee8198e2cbfba45f77c9cc1a47bd2ce7",
             git_blob="4b871f3141ae47131c4eacb76afb1f00ea3e1338",
             description="political even-handedness: the three grader rubrics (read as string literals, never run)",
             lines=124),
)


def _partisan(value: str, path, number: int) -> bool:
    if value not in ("True", "False"):
        raise layout_error(path, f"partisan True or False on line {number}", repr(value))
    return value == "True"


def load_rows(config: str = "all", data_dir: PathLike | None = None) -> list[dict]:
    """The 1,350 prompt pairs, checked, in file order (module docstring)."""
    path = locate("political_even_handedness/eval_set", data_dir)
    reader = csv.DictReader(io.StringIO(read_text(path, f"a CSV with columns {list(COLUMNS)}"), newline=""))
    header = reader.fieldnames or []
    if not all(column in header for column in COLUMNS):
        raise layout_error(path, f"a CSV with columns {list(COLUMNS)}", f"columns {header}")
    rows, stance_pairs, lines = [], {}, []
    try:
        for number, record in enumerate(reader, start=2):
            for column in TEXTS:
                if not isinstance(record.get(column), str) or not record[column].strip():
                    raise layout_error(path, f"a non-empty {column} on line {number}", repr(record.get(column)))
            stances = (record["topic_name"], record["stance_a"], record["stance_b"])
            stance_pair = stance_pairs.setdefault(stances, len(stance_pairs))
            rows.append({"id": str(len(rows)), "stance_pair": stance_pair,
                         **{column: record[column] for column in COLUMNS if column != "partisan"},
                         "partisan": _partisan(record["partisan"], path, number)})
            lines.append(number)
    except csv.Error as error:
        raise ResourceError(f"{path} is not a valid CSV file ({error}); is it truncated?") from None
    if not rows:
        raise layout_error(path, "prompt pairs under the header", "no rows")
    repeat = first_repeat(((row["stance_pair"], row["template"]), number) for row, number in zip(rows, lines))
    if repeat is not None:
        raise layout_error(path, "each stance pair once in each template (a pair given twice would be graded twice)",
                           f"stance pair {repeat[0][0]} in template {repeat[0][1]!r} on line {repeat[1]} and again on line "
                           f"{repeat[2]}")
    return rows


def stratified_sample(rows: list[dict], count: int, seed: int) -> list[dict]:
    """``count`` rows drawn without replacement, stratified by ``template_category``: each category gets its share of
    ``count`` in proportion to its rows (largest remainders; ties to the category seen first), its rows drawn by a
    ``random.Random(seed)`` shuffle of each category in turn (in order of first appearance). Returned in file order.

    >>> rows = [{"id": str(i), "template_category": "a" if i < 6 else "b"} for i in range(9)]
    >>> [row["id"] for row in stratified_sample(rows, 3, seed=0)]  # 6 / 9 x 3 = 2 of a, 1 of b
    ['2', '4', '6']
    """
    if count >= len(rows):
        return list(rows)
    strata: dict = {}
    for row in rows:
        strata.setdefault(row["template_category"], []).append(row)
    quotas = {name: count * len(members) / len(rows) for name, members in strata.items()}
    given = {name: int(quota) for name, quota in quotas.items()}
    by_remainder = sorted(strata, key=lambda name: -(quotas[name] - given[name]))  # stable: first seen first on ties
    for name in by_remainder[:count - sum(given.values())]:
        given[name] += 1
    generator = random.Random(seed)
    chosen = set()
    for name, members in strata.items():
        order = list(range(len(members)))
        generator.shuffle(order)
        chosen.update(members[i]["id"] for i in order[:given[name]])
    return [row for row in rows if row["id"] in chosen]


COLUMN_TYPES = {
    "id": "string", "stance_pair": "int64", "split": "string", "main_category": "string", "topic_name": "string",
    "template_category": "string", "template": "string", "stance_a": "string", "stance_b": "string",
    "prompt_a": "string", "prompt_b": "string", "prompt_a_group": "string", "prompt_b_group": "string", "partisan": "bool",
}
SPEC = DatasetSpec(
    name="political_even_handedness", configs={"all": "all 1,350 prompt pairs"}, split="eval", columns=COLUMN_TYPES,
    load_rows=load_rows, group_column="prompt_a_group",
    description=("Political even-handedness (Anthropic 2025): 1,350 pairs of prompts taking opposing sides of 150 "
                 "political stance pairs, each asked in 9 task templates (argue, write an essay, a story, a joke, "
                 "an opinion, the research, an analysis)."),
    citation=CITATION, license="cc-by-4.0", homepage=f"https://github.com/{REPO}", sizes={"all": PAIRS},
)
