"""EsBBQ and CaBBQ (Ruiz-Fernández et al. 2025): BBQ adapted to Spain, in Spanish and in Catalan; ten
categories each, one CSV per category (langtech-bsc/EsBBQ-CaBBQ at a pinned commit, Apache-2.0).

Each row keeps its item's fields and adds what scoring needs, read from the row as the authors' scorer
(``bias_score.py``, the same code as lm-evaluation-harness's ``esbbq`` / ``cabbq`` tasks) reads it:

* ``answer_groups``: each answer's group tag, the last comma-separated field of its ``answer_info`` entry
  (``"m, árabe"`` is ``"árabe"``).
* ``target_loc``: the answer whose tag is one of ``stereotyped_groups`` (exactly one of ``ans0`` / ``ans1``
  in every row of the release; a row with none or two is refused). It is *not* assumed to be ``ans0``: a
  few Physical Appearance rows have the other person there.
* ``unknown_loc``: always 2; the file's ``ans2`` is the placeholder ``unknown``, which the authors never
  show a model (they score nine wordings of "unknown" in the set's language instead: :data:`UNKNOWN`).
* ``template``: ``template_id`` (restarting in each category); ``question_type`` as shipped ("pro-stereo" /
  "anti-stereo": whether a disambiguated item's correct answer fits the stereotype; "n/a" when ambiguous),
  the four Physical Appearance rows in Spanish and twelve in Catalan that it gets wrong included, as the
  authors' numbers include them.

CaBBQ's Physical Appearance has 24 rows more than EsBBQ's (template 20), so its later instance ids are
shifted: the two sets are read apart, never aligned by id.
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

ESBBQ_COMMIT = "ee2e0f6123f718b735fc445d368d92acd2c223be"
CITATION = """@misc{ruizfernandez2025esbbq,
  title         = {{EsBBQ} and {CaBBQ}: The {Spanish} and {Catalan} Bias Benchmarks for Question Answering},
  author        = {Ruiz-Fern{\\'a}ndez, Valle and Falc{\\~a}o, J{\\'u}lia and Gonzalez-Agirre, Aitor and others},
  year          = {2025},
  eprint        = {2507.11216},
  archivePrefix = {arXiv},
  url           = {https://arxiv.org/abs/2507.11216}
}"""
LANGUAGES = ("es", "ca")
CATEGORIES = ("Age", "DisabilityStatus", "Gender", "LGBTQIA", "Nationality", "PhysicalAppearance", "RaceEthnicity",
              "Religion", "SES", "SpanishRegion")
# rows per file (language -> category), the files' git blob ids and SHA-256 at ESBBQ_COMMIT
ROWS = {"es": dict(zip(CATEGORIES, (4068, 2832, 4832, 2000, 504, 3528, 3716, 648, 4204, 988))),
        "ca": dict(zip(CATEGORIES, (4068, 2832, 4832, 2000, 504, 3552, 3716, 648, 4204, 988)))}
BLOBS = {
    "es": dict(zip(CATEGORIES, ("02eb51ccd546661efddac3b21a8794f36a8f4bf7", "82b2a29945074a3cf0e6e1656f402048635bcd80",
                                "a7d5ba5dd93ae1dd00170fffa1fe85d0f8f20985", "abc570113377d69138e5b857c7c204cdea68425d",
                                "25ce40016b83be7a96c0bc7adddcc9bc7a4e8a99", "5ac1fee16b88fab09e3cd05b26f897adf88bb93e",
                                "5227887a904137ab1fd16bcc0bb073a59ca3a001", "0373594a782c4bec13370293e1c9fa37687903f2",
                                "911d351ebb2481cada7b33494c42d91b9420e795", "795af969d17fec8385d0204511d1005f255dcfbf"))),
    "ca": dict(zip(CATEGORIES, ("3d001b485602df2f40a250027448b8f3f3688504", "3da1c252321f88816c863d21044f024d16035fe8",
                                "78db7df3fa891d9adb4090807532607c54a026e2", "1963c7bc88d7fe8249dce0ac88aee8a6a38f1529",
                                "450488bab2ec1f065ac57404661e0b0f101329a0", "e7ce937b05a4a88c94d1915af18fb41a63c4168d",
                                "413af0b8d69caf15a737b32b5bb37abb486d6d84", "75a5661403e41bd483b3a0bc7cbebe0944982482",
                                "7351e52a6350046d4751117e73e25838b019749e", "c8006c6cd2d67cf75e7d7ed41b374ce0ef261053"))),
}
SHA256 = {
    "es": dict(zip(CATEGORIES, ("05fd57cf59460c9a2a3d96b49f1377a1a5bd8cf13daac87e1ff13d851b473c1c",
                                "d9fcc40a97d8f8fc081d6733dcff262c37f1b771076c84020429cbd28302e2a0",
                                "340242eabe1133de12e4f5496c547cdd78e7a7bb4c6514b21b48cae0fdc362e0",
                                "4008b83ea7fcb3e4400667ea501501fed1e8eed4c5fe7064e65361476d793b39",
                                "1c95c5ad8b0cf7f93848aa156d9a3ddba8ec330a1078633df750ccabbc259ea3",
                                "920cdfd8814470ff3204eacbb36c5cd5376b12a3cbeafca4812318c1f26bbe5a",
                                "c9fd61928e9f5d86ac8081274e9f6e622725742c89a94a0ad25b14e14290e21d",
                                "4f224a33a744217651e62b95d9c5a2ed2eb1c9ddb694d42b37af715221542b71",
                                "64164f05bf6ab7ceea00a35d465c2cf8bf7364c7045131c2136d8aab49bd4270",
                                "cc9d1ad1dbb0e4dbefcd10205f3cb764d0ea53f64b82c2c03dd3cbe0ba9d1002"))),
    "ca": dict(zip(CATEGORIES, ("da477fc5c6897ee3424204c396cec66b92b85ff615b122c93fdd054dda9b0d09",
                                "44ce612d6cd03d0cd10bc27d4c5cbb0495a7a1fa84aaf1f3f04dad2a6f28b4f8",
                                "35aea9aeefd666965026ef1b7d02f53959cc9ec2b548d5227914526d9396035d",
                                "89a531f80e0e1d875c4efec64390bcede78ca30a3c8f2aeaba9300b6c020b1f7",
                                "3d586021e8d00ed005fc3ddcf66df6b8d2deec2b7d1e771bc9136b1287e64ae2",
                                "f48c9e288feb01a7fc84a5a7022ceb88dec88da615bdf3c3ba011ecf5e77cb88",
                                "5f6869eb397d56730921adf1eeec1abb25a4dcf3a541175295c46b5151c2bec9",
                                "ff2bdbcaecb2ad96558f961edd671b209447a2cd21802d069530eb9216e789b2",
                                "b2d4880f5d7aaeb96033b97051f30b8259b397b65326100d331dd15b45428b38",
                                "efe6aac654ddd8b1a154d5c5f69186c2c5b6ce411978863f0881fc3f3cd37be4"))),
}
# the nine wordings of "unknown" the authors score in place of the file's placeholder (lm-evaluation-harness's
# esbbq / cabbq doc_to_choice, the authors' evaluation)
UNKNOWN = {
    "es": ("No hay suficiente información", "No hay información suficiente", "No lo sé", "No sé", "Falta información",
           "No se puede responder", "No se sabe", "No se puede saber", "No se puede determinar"),
    "ca": ("No hi ha prou informació", "No hi ha informació suficient", "No ho sé", "No sé", "Falta informació",
           "No es pot respondre", "No se sap", "No es pot saber", "No es pot determinar"),
}
NAMES = {"es": "EsBBQ", "ca": "CaBBQ"}
_COLUMNS = ("instance_id", "template_id", "question_polarity", "context_condition", "category", "stereotyped_groups",
            "answer_info.ans0", "answer_info.ans1", "answer_info.ans2", "context", "question", "ans0", "ans1", "ans2",
            "question_type", "label")


def file_path(language: str, category: str) -> str:
    """A category's file in the authors' repository: ``data_es/Age.full.csv``."""
    return f"data_{language}/{category}.full.csv"


def _literal(path, number: int, column: str, text: str) -> list:
    """A list column (a Python literal, as the authors' CSVs write it)."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise layout_error(path, f"a list in column {column} on row {number}", repr(text[:60])) from None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise layout_error(path, f"a list of strings in column {column} on row {number}", repr(text[:60]))
    return value


def _row(path, number: int, record: dict, language: str, category: str) -> Row:
    """One CSV record as a row (module docstring), checked."""
    def expect(ok: bool, expected: str, found) -> None:
        if not ok:
            raise layout_error(path, f"{expected} on row {number}", repr(found))

    expect(record["category"] == category, f"items of category {category}", record["category"])
    expect(record["context_condition"] in ("ambig", "disambig"), "context_condition ambig or disambig", record["context_condition"])
    expect(record["question_polarity"] in ("neg", "nonneg"), "question_polarity neg or nonneg", record["question_polarity"])
    expect(record["label"] in ("0", "1", "2"), "a label 0-2", record["label"])
    expect(record["template_id"].isdigit() and record["instance_id"].isdigit(), "numeric template_id and instance_id",
           (record["template_id"], record["instance_id"]))
    ambiguous = record["context_condition"] == "ambig"
    expect((record["label"] == "2") == ambiguous, "label 2 exactly where the context is ambiguous", record["label"])
    expect(record["question_type"] == "n/a" if ambiguous else record["question_type"] in ("pro-stereo", "anti-stereo"),
           "question_type n/a (ambiguous) or pro-stereo / anti-stereo (disambiguated)", record["question_type"])
    groups = _literal(path, number, "stereotyped_groups", record["stereotyped_groups"])
    tags = [_literal(path, number, f"answer_info.ans{k}", record[f"answer_info.ans{k}"]) for k in range(3)]
    expect(all(tags) and tags[2] == ["unknown", "unknown"], "answer_info entries, ans2 the unknown one", tags)
    tags = [tag[-1].split(",")[-1].strip() for tag in tags]
    targets = [k for k in (0, 1) if tags[k] in groups]
    expect(len(targets) == 1, f"exactly one of ans0 / ans1 tagged with a stereotyped group {groups}", tags[:2])
    return {
        "id": f"{language}/{category}/{record['instance_id']}", "language": language, "category": category,
        "instance_id": int(record["instance_id"]), "template": int(record["template_id"]),
        "question_polarity": record["question_polarity"], "context_condition": record["context_condition"],
        "question_type": record["question_type"], "context": record["context"], "question": record["question"],
        "ans0": record["ans0"], "ans1": record["ans1"], "ans2": record["ans2"], "label": int(record["label"]),
        "answer_groups": tags, "stereotyped_groups": groups, "unknown_loc": 2, "target_loc": targets[0],
    }


def read_file(language: str, category: str, data_dir: PathLike | None = None) -> list[Row]:
    """The rows of one category's file, in file order.

    Raises:
        InputError: an unknown language or category (the message lists the known ones).
        ResourceError: a file that is not the authors' CSV layout, a row that is not an item (the file, row and
            field named), an instance id given twice (both rows named), or an empty file.
    """
    for value, known, what in ((language, LANGUAGES, "language"), (category, CATEGORIES, "category")):
        if value not in known:
            raise InputError(f"EsBBQ / CaBBQ have no {what} {value!r}; their {what} values: {list(known)}")
    path = locate(f"esbbq_cabbq/{language}/{category}", data_dir)
    reader = csv.DictReader(io.StringIO(read_text(path, "EsBBQ / CaBBQ items as CSV"), newline=""))
    missing = [column for column in _COLUMNS if column not in (reader.fieldnames or ())]
    if missing:
        raise layout_error(path, f"the authors' CSV columns ({', '.join(missing)} missing)", repr(reader.fieldnames))
    rows = [_row(path, number, record, language, category) for number, record in enumerate(reader, start=1)]
    if not rows:
        raise layout_error(path, "EsBBQ / CaBBQ items, one per CSV row", "an empty file")
    repeat = first_repeat((row["instance_id"], number) for number, row in enumerate(rows, start=1))
    if repeat is not None:
        raise layout_error(path, "each instance_id once (an item given twice would be scored twice)",
                           f"instance_id {repeat[0]} on row {repeat[1]} and again on row {repeat[2]}")
    return rows


COLUMN_TYPES = {
    "id": "string", "language": "string", "category": "string",
    "instance_id": "int64", "template": "int64",
    "question_polarity": "string", "context_condition": "string",
    "question_type": "string", "context": "string", "question": "string",
    "ans0": "string", "ans1": "string", "ans2": "string",
    "label": "int64", "answer_groups": ["string"],
    "stereotyped_groups": ["string"], "unknown_loc": "int64",
    "target_loc": "int64",
}


def spec(language: str) -> DatasetSpec:
    """The dataset of one language's set (EsBBQ: es, CaBBQ: ca), a config per category."""
    name = NAMES[language]
    return DatasetSpec(
        name=name.lower(), configs={category: f"{name}'s {category} items" for category in CATEGORIES}, split="test",
        columns=COLUMN_TYPES, load_rows=lambda config, data_dir: read_file(language, config, data_dir),
        group_column="category",
        description=(f"{name}: BBQ adapted to Spain in {'Spanish' if language == 'es' else 'Catalan'} "
                     f"({sum(ROWS[language].values()):,} questions in ten categories), each after an ambiguous or a "
                     "disambiguated context; target_loc marks the stereotyped group's answer, question_type whether a "
                     "disambiguated item's answer fits the stereotype."),
        citation=CITATION, license="apache-2.0", homepage="https://github.com/langtech-bsc/EsBBQ-CaBBQ",
        sizes=dict(ROWS[language]),
    )


ESBBQ_SPEC, CABBQ_SPEC = spec("es"), spec("ca")

RESOURCES = tuple(
    Resource(name=f"esbbq_cabbq/{language}/{category}", path=f"esbbq_cabbq/{file_path(language, category)}",
             url=f"{GITHUB_RAW}/langtech-bsc/EsBBQ-CaBBQ/{ESBBQ_COMMIT}/{file_path(language, category)}",
             sha256=SHA256[language][category], git_blob=BLOBS[language][category],
             description=f"{NAMES[language]} {category} items (Ruiz-Fernández et al. 2025)",
             lines=ROWS[language][category] + 1)  # a header, then a row per item
    for language in LANGUAGES for category in CATEGORIES
) + (Resource(name="esbbq_cabbq/bias_score", path="esbbq_cabbq/bias_score.py",
              url=f"{GITHUB_RAW}/langtech-bsc/EsBBQ-CaBBQ/{ESBBQ_COMMIT}/bias_score.py",
              sha256="d15249c9786215a3de6fb4d1d5e3ba8a19c8461adaf382bb69409d1f777ee373",
              git_blob="41ebc25991d79dc3c8e82608b4f96752732b3f60",
              description="EsBBQ / CaBBQ's authors' scorer, the reference the tests compare with"),)
