"""DiscrimEval's items (Tamkin et al. 2023): ``Anthropic/discrim-eval`` on the Hub (CC BY 4.0) at a pinned
commit, configs ``explicit`` (the person's age, gender and race stated) and ``implicit`` (age stated, gender and
race implied by a name), each ``<config>.jsonl``, split ``train``: 70 decision scenarios x 9 ages x 3 genders x
5 races = 9,450 prompts.

Fields as the dataset card gives them: ``filled_template`` (the decision question), ``decision_question_id``,
``age`` (20 to 100 in steps of 10; a float in the file), ``gender`` (male, female, non-binary), ``race`` (white,
Black, Asian, Hispanic, Native American: the file's spelling) and ``fill_type``. A row is refused with its file
and line when a field is missing or a value is outside the paper's levels; a scenario is refused when its grid
of 135 people is not complete (its mixed-effects fit compares every person with the baseline), and a person
given twice is refused.
"""

from __future__ import annotations

from collections import Counter

from ...data.spec import DatasetSpec
from ...errors import InputError
from ..hub_file import hub_file, jsonl_records

REPO = "Anthropic/discrim-eval"
REVISION = "6986d6ea802e019d01e94dd59597e94fbd8f8c4a"  # "Update README.md"; the data unchanged since 279640d
CONFIGS = ("explicit", "implicit")
FOLDER = "discrim_eval"
AGES = (20, 30, 40, 50, 60, 70, 80, 90, 100)
GENDERS = ("male", "female", "non-binary")
RACES = ("white", "Black", "Asian", "Hispanic", "Native American")
GRID = len(AGES) * len(GENDERS) * len(RACES)  # 135 people per scenario
QUESTIONS = 70
BASELINE = {"age": 60, "gender": "male", "race": "white"}  # the paper's reference person
CITATION = """@misc{tamkin2023discrimeval,
  title         = {Evaluating and Mitigating Discrimination in Language Model Decisions},
  author        = {Tamkin, Alex and Askell, Amanda and Lovitt, Liane and Durmus, Esin and Joseph, Nicholas and
                   Kravec, Shauna and Nguyen, Karina and Kaplan, Jared and Ganguli, Deep},
  year          = {2023},
  eprint        = {2312.03689},
  archivePrefix = {arXiv},
  url           = {https://arxiv.org/abs/2312.03689}
}"""
FIELDS = ("filled_template", "decision_question_id", "age", "gender", "race")


def _level(value, levels, field: str, where: str):
    """``value`` as one of ``levels`` (case-insensitive for text, as the file mixes cases), else one line."""
    if field == "age":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or float(value) not in map(float, levels):
            raise InputError(f"{where}: age {value!r} is not one of the paper's ages {list(levels)}")
        return int(value)
    by_lower = {level.lower(): level for level in levels}
    if not isinstance(value, str) or value.strip().lower() not in by_lower:
        raise InputError(f"{where}: {field} {value!r} is not one of the paper's levels {list(levels)}")
    return by_lower[value.strip().lower()]


def check_person(age, gender, race, where: str) -> dict:
    """``age``, ``gender`` and ``race`` as the paper's levels (its spellings); one line naming ``where`` otherwise."""
    return {"age": _level(age, AGES, "age", where), "gender": _level(gender, GENDERS, "gender", where),
            "race": _level(race, RACES, "race", where)}


def read_items(config: str, data_dir=None) -> tuple[list[dict], str]:
    """The prompts of ``config``, checked, in file order, and where they were read from.

    Each row: ``id`` (``config/question/age/gender/race``), ``question`` (the decision question id), ``prompt``
    (``filled_template``), ``age``, ``gender``, ``race`` (the paper's spellings), ``category`` (the config).
    """
    path, source = hub_file(REPO, f"{config}.jsonl", REVISION, folder=FOLDER, data_dir=data_dir)
    rows, seen = [], set()
    for _, where, record in jsonl_records(path, source):
        missing = [key for key in FIELDS if not isinstance(record, dict) or record.get(key) in (None, "")]
        if missing:
            raise InputError(f"{where}: no {', '.join(missing)}; expected DiscrimEval's fields {list(FIELDS)}")
        question = record["decision_question_id"]
        if isinstance(question, bool) or not isinstance(question, (int, float)) or int(question) != question:
            raise InputError(f"{where}: decision_question_id {question!r} is not an integer")
        if record.get("fill_type") not in (None, config):
            raise InputError(f"{where}: fill_type {record['fill_type']!r} in the {config} config")
        if not isinstance(record["filled_template"], str):
            raise InputError(f"{where}: filled_template is not text")
        row = {"question": int(question), **check_person(record["age"], record["gender"], record["race"], where)}
        key = tuple(row.values())
        if key in seen:
            raise InputError(f"{where}: question {row['question']} asks about the same person ({row['age']}, "
                             f"{row['gender']}, {row['race']}) twice")
        seen.add(key)
        rows.append({"id": f"{config}/{row['question']}/{row['age']}/{row['gender']}/{row['race']}",
                     "category": config, "prompt": record["filled_template"], **row})
    if not rows:
        raise InputError(f"{source}: no prompts")
    for question, count in Counter(row["question"] for row in rows).items():
        if count != GRID:
            raise InputError(f"{source}: decision question {question} has {count} of its {GRID} people (9 ages x 3 "
                             "genders x 5 races); the fit compares each with the baseline, so a scenario must be whole")
    return rows, source


COLUMN_TYPES = {
    "id": "string", "category": "string", "prompt": "string",
    "question": "int64", "age": "int64", "gender": "string",
    "race": "string",
}
SPEC = DatasetSpec(
    name="discrim_eval", configs={"explicit": "age, gender and race stated", "implicit": "age stated, gender and race "
                                                                                      "implied by a name"},
    split="train", columns=COLUMN_TYPES, load_rows=lambda config, data_dir: read_items(config, data_dir)[0],
    group_column="race",
    description=("DiscrimEval: yes / no decision questions about people in 70 scenarios, each asked about 135 people "
                 "(9 ages x 3 genders x 5 races), the person described explicitly or by a name."),
    citation=CITATION, license="cc-by-4.0", homepage=f"https://huggingface.co/datasets/{REPO}",
    sizes={"explicit": QUESTIONS * GRID, "implicit": QUESTIONS * GRID},
)
