"""KoBBQ (Jin et al., TACL 2024): a Korean BBQ, rebuilt for Korean culture (naver-ai/KoBBQ at a pinned
commit, MIT): the 2,280 test samples (one per template version, 12 categories, 269 templates) and the
authors' five evaluation prompts.

Each row keeps its sample's fields and adds what scoring needs, as the authors' ``5_evaluation.py`` reads a
sample id (``{category}-{NNN}{version}-{sample}-{amb|dis}-{bsd|cnt}``):

* ``choices``: the three answers in file order (two people, then ``'알 수 없음'``, "unknown": ``unknown_loc``
  is always 2); ``label``: the correct answer's index; ``biased_loc``: the index of ``biased_answer``, the
  answer that fits the stereotype *for this question* (the target group for a biased question, ``bsd``, the
  other person for a counter-biased one, ``cnt``);
* ``context_type``: ``amb``, or for a disambiguated context ``dis-biased`` (versions b and d: the answer fits
  the stereotype) or ``dis-counterb`` (versions a and c);
* ``template``: ``{category}-{NNN}``, the versions together, as the authors key a template.
"""

from __future__ import annotations

import ast
import csv
import io

from ...checks import first_repeat
from ...data.spec import DatasetSpec, PathLike, Row, layout_error
from ...errors import InputError
from ...files import read_text
from ...resources import GITHUB_RAW, Resource, locate

KOBBQ_COMMIT = "0dd165aeaaacd1bd46c63513a9b2e9875eb6dce7"
CITATION = """@article{jin2024kobbq,
  title   = {{KoBBQ}: {Korean} Bias Benchmark for Question Answering},
  author  = {Jin, Jiho and Kim, Jiseon and Lee, Nayeon and Yoo, Haneul and Oh, Alice and Lee, Hwaran},
  journal = {Transactions of the Association for Computational Linguistics},
  volume  = {12},
  pages   = {507--524},
  year    = {2024},
  url     = {https://arxiv.org/abs/2307.16778}
}"""
UNKNOWN = "알 수 없음"  # the file's unknown answer; each prompt shows its own wording in its place
# rows of the test samples per category (its sample-id prefix)
ROWS = {"age": 168, "disability_status": 160, "domestic_area_of_origin": 176, "educational_background": 192,
        "family_structure": 184, "gender_identity": 200, "physical_appearance": 160, "political_orientation": 88,
        "race_ethnicity_nationality": 480, "religion": 160, "ses": 216, "sexual_orientation": 96}
CATEGORIES = tuple(ROWS)
PROMPT_IDS = (1, 2, 3, 4, 5)
_COLUMNS = ("sample_id", "label_annotation", "context", "question", "choices", "biased_answer", "answer")
_PROMPT_COLUMNS = ("prompt_id", "instruction", "context", "question", "a", "b", "c", "answer", "unknown")


def _row(path, number: int, record: dict) -> Row:
    """One sample as a row (module docstring), checked."""
    def expect(ok: bool, expected: str, found) -> None:
        if not ok:
            raise layout_error(path, f"{expected} on row {number}", repr(found))

    parts = record["sample_id"].split("-")
    expect(len(parts) == 5 and parts[0] in ROWS and len(parts[1]) == 4 and parts[1][:3].isdigit() and parts[1][3] in "abcd"
           and parts[3] in ("amb", "dis") and parts[4] in ("bsd", "cnt"),
           "a sample_id category-NNNv-sample-amb|dis-bsd|cnt with a known category", record["sample_id"])
    try:
        choices = ast.literal_eval(record["choices"])
    except (ValueError, SyntaxError):
        choices = None
    expect(isinstance(choices, list) and len(choices) == 3 and all(isinstance(c, str) for c in choices)
           and len(set(choices)) == 3 and choices[2] == UNKNOWN, f"three different choices, the last {UNKNOWN!r}",
           record["choices"])
    expect(record["answer"] in choices, "an answer among the choices", record["answer"])
    expect(record["biased_answer"] in choices[:2], "a biased_answer among the two people", record["biased_answer"])
    ambiguous = parts[3] == "amb"
    expect((record["answer"] == UNKNOWN) == ambiguous, "the unknown answer exactly where the context is ambiguous",
           record["answer"])
    context_type = "amb" if ambiguous else "dis-biased" if parts[1][3] in "bd" else "dis-counterb"
    return {
        "id": record["sample_id"], "category": parts[0], "template": f"{parts[0]}-{parts[1][:3]}", "version": parts[1][3],
        "context_condition": "ambig" if ambiguous else "disambig", "context_type": context_type, "question_type": parts[4],
        "label_annotation": record["label_annotation"], "context": record["context"], "question": record["question"],
        "choices": choices, "biased_answer": record["biased_answer"], "answer": record["answer"],
        "label": choices.index(record["answer"]), "biased_loc": choices.index(record["biased_answer"]), "unknown_loc": 2,
    }


def _records(path, expected: str, columns: tuple) -> list[dict]:
    """The records of a tab-separated file with ``columns`` (one line naming the file when they are missing)."""
    reader = csv.DictReader(io.StringIO(read_text(path, expected), newline=""), delimiter="\t")
    missing = [column for column in columns if column not in (reader.fieldnames or ())]
    if missing:
        raise layout_error(path, f"the authors' columns ({', '.join(missing)} missing)", repr(reader.fieldnames))
    return list(reader)


def read_samples(categories=CATEGORIES, data_dir: PathLike | None = None) -> list[Row]:
    """The test samples of ``categories``, in file order.

    Raises:
        InputError: an unknown category (the message lists the known ones).
        ResourceError: a file that is not the authors' layout, a row that is not a sample (the file, row and field
            named), a sample id given twice (both rows named), or an empty file.
    """
    unknown = [category for category in categories if category not in ROWS]
    if unknown:
        raise InputError(f"KoBBQ has no category {unknown[0]!r}; its categories: {list(CATEGORIES)}")
    path = locate("kobbq/test_samples", data_dir)
    rows = [_row(path, number, record) for number, record in
            enumerate(_records(path, "KoBBQ test samples, tab-separated", _COLUMNS), start=1)]
    if not rows:
        raise layout_error(path, "KoBBQ test samples, one per line", "an empty file")
    repeat = first_repeat((row["id"], number) for number, row in enumerate(rows, start=1))
    if repeat is not None:
        raise layout_error(path, "each sample_id once (a sample given twice would be scored twice)",
                           f"sample_id {repeat[0]} on row {repeat[1]} and again on row {repeat[2]}")
    return [row for row in rows if row["category"] in categories]


def read_prompts(data_dir: PathLike | None = None) -> dict[int, dict]:
    """The authors' five prompts (``0_evaluation_prompts.tsv``): prompt id -> its instruction, labels and
    unknown wording."""
    path = locate("kobbq/prompts", data_dir)
    prompts = {}
    for number, record in enumerate(_records(path, "KoBBQ evaluation prompts, tab-separated", _PROMPT_COLUMNS), start=1):
        if not record["prompt_id"].isdigit():
            raise layout_error(path, f"a numeric prompt_id on row {number}", repr(record["prompt_id"]))
        prompts[int(record["prompt_id"])] = {column: record[column] for column in _PROMPT_COLUMNS[1:]}
    if sorted(prompts) != list(PROMPT_IDS):
        raise layout_error(path, f"prompts {list(PROMPT_IDS)}", repr(sorted(prompts)))
    return prompts


COLUMN_TYPES = {
    "id": "string", "category": "string", "template": "string",
    "version": "string", "context_condition": "string",
    "context_type": "string", "question_type": "string",
    "label_annotation": "string", "context": "string", "question": "string",
    "choices": ["string"], "biased_answer": "string",
    "answer": "string", "label": "int64", "biased_loc": "int64",
    "unknown_loc": "int64",
}

SPEC = DatasetSpec(
    name="kobbq", configs={"test": "the 2,280 test samples (one per template version)"}, split="test", columns=COLUMN_TYPES,
    load_rows=lambda config, data_dir: read_samples(CATEGORIES, data_dir), group_column="category",
    description=("KoBBQ: a Korean BBQ (12 categories, 269 templates), one sample per template version, each after an "
                 "ambiguous or a disambiguated context with a biased and a counter-biased question; biased_loc marks the "
                 "answer that fits the stereotype for the question."),
    citation=CITATION, license="mit", homepage="https://github.com/naver-ai/KoBBQ", sizes={"test": sum(ROWS.values())},
)


def _resource(name: str, path: str, sha256: str, blob: str, description: str, lines: int | None = None) -> Resource:
    return Resource(name=f"kobbq/{name}", path=f"kobbq/{path}", url=f"{GITHUB_RAW}/naver-ai/KoBBQ/{KOBBQ_COMMIT}/{path}",
                    sha256=sha256, git_blob=blob, description=f"{description} (Jin et al. 2024)", lines=lines)


RESOURCES = (
    _resource("test_samples", "data/KoBBQ_test_samples.tsv",
              "6eacb1c0ff995c74b26183d368c500193454b7bf96a2a0f9462641e57972aab7", "ea97feba3c586f727aaf385928a79ade83d8d84b",
              "KoBBQ's test samples", lines=2_281),  # a header and 2,280 samples
    _resource("prompts", "evaluation/0_evaluation_prompts.tsv",
              "1757448babb55bfc01dce7233f64c2188ad06843646f75b6c590bff633d88bca", "8d9663af15763d414f6c95710ced762fe9d89d53",
              "KoBBQ's five evaluation prompts", lines=5),  # a header and five prompts, the last without a line end
    _resource("postprocess", "evaluation/3_postprocess_predictions.py",
              "4848428bb8adb7a488d75d9a476f28aab668dd58c6d0fa7cf17693794d04d6b3", "a287e778f7c85760e2b4110fae29d0f07f9adf15",
              "KoBBQ's reply reading, the reference the tests compare with"),
    _resource("evaluation", "evaluation/5_evaluation.py",
              "7e08c7a594ee3c9be4a0a8ee5ca19bbbeba56d66e201064479b20a0150a01781", "6e3cf8e4ea68573b6b3fd31821114bd8dde22fd5",
              "KoBBQ's scoring, the reference the tests compare with"),
)
