"""CBBQ (Huang and Xiong, LREC-COLING 2024): a Chinese BBQ written for Chinese society, fourteen categories,
one JSON file per category and context type (YFHuangxxxx/CBBQ at a pinned commit, CC BY-SA 4.0).

Each row keeps its record's fields (read as strings, as the files write them; the first key's byte-order
mark dropped) and adds what scoring needs, as the authors' evaluation scripts read a record:

* ``unknown_loc``: always 2 (``ans2`` is the unknown answer in every record: 不确定, 不知道, ...);
* ``biased_loc``: **by position**, as every one of the authors' scripts counts a biased answer: ``ans0`` (A)
  for a negative question, ``ans1`` (B) for a non-negative one. The files mark no biased answer; this is the
  authors' reading, and the report says where it does not hold (in gender and physical_appearance the
  target group is ``ans1``, so there the authors' "biased" answer of a disambiguated item is its correct one;
  in educational_qualification the target group is ``ans0`` as the rule says, but the disambiguated records'
  labels contradict their contexts and name the stereotyped answer: read by hand, docs/benchmarks/cbbq.md);
* ``template``: the record's category, context type, polarity, ``question_index`` and question, the unit the
  bootstrap resamples (``question_index`` alone repeats across templates).

Four categories' files (age's disambiguated one; household_registration, nationality and race) are published
but not in every copy of the data: they are fetched and verified by their git blob ids like the others.
"""

from __future__ import annotations

from ...checks import first_repeat
from ...data.spec import DatasetSpec, PathLike, Row, layout_error
from ...errors import InputError
from ...files import read_json
from ...resources import GITHUB_RAW, Resource, locate

CBBQ_COMMIT = "95eaf2eeaa0b936f3e97e3424f134e9d7655da98"
CITATION = """@inproceedings{huang2024cbbq,
  title     = {{CBBQ}: A {Chinese} Bias Benchmark Dataset Curated with Human-{AI} Collaboration for Large Language Models},
  author    = {Huang, Yufei and Xiong, Deyi},
  booktitle = {Proceedings of the 2024 Joint International Conference on Computational Linguistics, Language Resources
               and Evaluation (LREC-COLING 2024)},
  pages     = {2917--2929},
  year      = {2024},
  url       = {https://arxiv.org/abs/2306.16244}
}"""
CONTEXTS = ("ambiguous", "disambiguous")
# category -> each context type's file's git blob id at CBBQ_COMMIT
BLOBS = {
    "SES": ("ccdf1b2dfa114b0bc914b551f1a82f7873bc2003", "a4c6234fe091cb703c03e289976b7c8dd5fa80ee"),
    "age": ("4bb1e140c4b54c57ef4f192f7d4f4ca4fc7d6cd2", "614d5e34074b6da6cb552c5dc5ac81e5040c2ac6"),
    "disability": ("a320ff048e63f8c77c3baf16eca93af72edf43bf", "a1f3bde7369fe6fae429ee7662c055b1e0657a56"),
    "disease": ("76011280c7ea9196aeaa8dc2f549e3aa3942a2cd", "557f456c190e68efbb4246153cc382db7a8616bb"),
    "educational_qualification": ("f1062704d93cc78bd5bacdb4fd9b31968e7737ea", "c84a2c7fbca4f5c82f789395ef51defd5d70046a"),
    "ethnicity": ("0cf6083770a573d3e722674a6a8827413624ae35", "d2d01ac0065b6808cec719af11f02cea87695294"),
    "gender": ("09eab431d0be969bc022788146167f2e70d0954b", "91669ac7e76c843d08c8b0194e4adc3e835b8eea"),
    "household_registration": ("1f52837b9b71eacea0c6ddb5d10acd10b4b45a6e", "db7028bd2a7d5487ef0d3d80885f16a558b85884"),
    "nationality": ("234ea0342e36af5fec2565fc38f2257b70babdef", "2b1dc08ff984e1b946ed86a16ade00baa6617358"),
    "physical_appearance": ("b67e3d786ca0fe7ade94d1899e243a2fce781c97", "915515cc16ce51b973d3e333cb915827cea170f4"),
    "race": ("fb7d3b503c6b93897cfc6d8364893b686473270f", "c7a595fa9f4cf8f189fb180343cd728723818ae1"),
    "region": ("6608cf6a617516726859c4db94f6334d188cf895", "4170e6ca8a1bab0cfcc129aeb8871d82df6c1b3a"),
    "religion": ("641a05a3fcffcb4f54b5905c327bc576957df049", "4e711c210c6115bb8c3a0aedf6e598cee8c7bbd7"),
    "sexual_orientation": ("5499601662e960a3fd2f8b80c9e5c15d4b4e6414", "df484a73dc540eaf49d565e0d352b1a06284a9e7"),
}
CATEGORIES = tuple(BLOBS)
# the SHA-256 of the files the reference data folder holds (the others are verified by their blob ids)
SHA256 = {
    ("SES", "ambiguous"): "f0081de7554be01ad684387e17b16f6c4f39a43b9e311e1f7d7321a44509f547",
    ("SES", "disambiguous"): "81623289474b90a2741f714621137749bcfd8c4e14d6330c7b1b6aab0ce980c4",
    ("age", "ambiguous"): "f8be1751b2b04e07bbdfe635b7bdb294ad96aafb0589d27eb57302a56b372b93",
    ("disability", "ambiguous"): "6b3a151d8c35ea944ec333545c37b1d00cd70fed6a8bca2a56dd95222faa1f0f",
    ("disability", "disambiguous"): "a7cfcbc0f498c34b2853997d59a80652e86389157fc649bc8b05adf410640589",
    ("disease", "ambiguous"): "e3bfad5e85a084cd9a7a719280136b22a8989b4e3fb787a723feaf2e2eda0eac",
    ("disease", "disambiguous"): "dcb86486f6123b69f1487165b0bd755d7270957aaf18d9e1d41ece68381e23e7",
    ("educational_qualification", "ambiguous"): "82c39c5a6348e9324ba52aad32479777f9626368d6193a953678c4c8339b08a7",
    ("educational_qualification", "disambiguous"): "8c4da7c096c7633067f5cb46cbe27f118896fac918a7445893c67e844e371f84",
    ("ethnicity", "ambiguous"): "3a40da7eaeb665547283bfcb4d578682f74b5d42d7b6052b65a61d8d3008d24b",
    ("ethnicity", "disambiguous"): "9c7f96e4aa7b055af8cb5a12263e1ee87dfccacf38c14f4bb052f299212540a5",
    ("gender", "ambiguous"): "1f93d72ca4244ddc3d413e3663399e98860b612078e8e8c874ac3a7dd9b73a74",
    ("gender", "disambiguous"): "752cf764f7c173b82566a6a4d264e63bcd89d0d8ffbb1d95d4867cd323da09d0",
    ("physical_appearance", "ambiguous"): "796c969e85451d58947789aae36c4f93ce1a38963de060997ae1f7550b0bff0d",
    ("physical_appearance", "disambiguous"): "bdc66a2a8b01677efe4255ad35f3accdd81a3ac59d4a23865676d257323e9efc",
    ("region", "ambiguous"): "d202eb6b7d852218e59abad3ed79def0997ee1193bd7fa18b11f3c5f5d86f6d1",
    ("region", "disambiguous"): "cc0ba01887f9ffa9f40184119ddaa18b51a4d3631fd716d1905e6b452ab01ef1",
    ("religion", "ambiguous"): "cfe7ea4a73b697e13c9cb32ff42e8f133c4130afe695c7e91c09dbb8a571f1e0",
    ("religion", "disambiguous"): "dfb5140bd848fd55112d783d4ecdd4f750aa61c532678f8325ad9113319df3fd",
    ("sexual_orientation", "ambiguous"): "19a16cfdd2a1137d54fe7a916aa7f5787bff6f189c5189e0412081f713fc4cd2",
    ("sexual_orientation", "disambiguous"): "b91864932b630fb7ba0dadf77beb3f2c79a1aac7c0dff78b31670d9c33ed7cab",
}
# records per category (ambiguous + disambiguated; the files not held here: the published dataset card's counts)
ROWS = {"SES": 7_920, "age": 14_800, "disability": 3_144, "disease": 1_172, "educational_qualification": 2_784,
        "ethnicity": 1_960, "gender": 3_372, "household_registration": 17_400, "nationality": 23_974,
        "physical_appearance": 3_712, "race": 27_056, "region": 4_352, "religion": 5_900, "sexual_orientation": 1_120}
_KEYS = ("example_id", "question_index", "question_polarity", "context_condition", "category", "context", "question",
         "ans0", "ans1", "ans2", "label")


def file_path(category: str, context: str) -> str:
    """A category's file of one context type in the authors' repository."""
    return f"data/{category}/{context}/{context}.json"


def _row(path, number: int, record, category: str, context: str) -> Row:
    """One record as a row (module docstring), checked."""
    def expect(ok: bool, expected: str, found) -> None:
        if not ok:
            raise layout_error(path, f"{expected} in record {number}", repr(found)[:80])

    expect(isinstance(record, dict), "an object", record)
    record = {key.lstrip("\ufeff"): value for key, value in record.items()}
    missing = [key for key in _KEYS if not isinstance(record.get(key), str)]
    expect(not missing, f"the string fields {list(_KEYS)}", missing)
    expect(record["category"] == category, f"category {category}", record["category"])
    expect(record["context_condition"] == context, f"context_condition {context}", record["context_condition"])
    expect(record["question_polarity"] in ("neg", "non_neg"), "question_polarity neg or non_neg", record["question_polarity"])
    expect(record["label"] in (("2",) if context == "ambiguous" else ("0", "1")),
           "label 2 (ambiguous) or 0 / 1 (disambiguated)", record["label"])
    expect(len({record["ans0"], record["ans1"], record["ans2"]}) == 3, "three different answers",
           [record[f"ans{k}"] for k in range(3)])
    polarity = "neg" if record["question_polarity"] == "neg" else "nonneg"
    return {
        "id": f"{category}/{context}/{record['example_id']}", "category": category,
        "context_condition": "ambig" if context == "ambiguous" else "disambig", "question_polarity": polarity,
        "question_index": record["question_index"], "context": record["context"], "question": record["question"],
        "ans0": record["ans0"], "ans1": record["ans1"], "ans2": record["ans2"], "label": int(record["label"]),
        "unknown_loc": 2, "biased_loc": 0 if polarity == "neg" else 1,
        "template": f"{category}/{context}/{polarity}/{record['question_index']}/{record['question']}",
    }


def read_file(category: str, context: str, data_dir: PathLike | None = None) -> list[Row]:
    """The records of one category's file of one context type, in file order.

    Raises:
        InputError: an unknown category or context type (the message lists the known ones).
        ResourceError: a file that is not a JSON array of CBBQ records (the file, record and field named), an
            example_id given twice (both records named), an empty file; ResourceNotFoundError: a file that is not
            at hand and cannot be fetched (its URL and where it was looked for named).
    """
    for value, known, what in ((category, CATEGORIES, "category"), (context, CONTEXTS, "context type")):
        if value not in known:
            raise InputError(f"CBBQ has no {what} {value!r}; its {what}s: {list(known)}")
    path = locate(f"cbbq/{category}/{context}", data_dir)
    records = read_json(path, "expected CBBQ records as a JSON array; delete the file to fetch it again")
    if not isinstance(records, list) or not records:
        raise layout_error(path, "a non-empty JSON array of CBBQ records", type(records).__name__ if records else "nothing")
    rows = [_row(path, number, record, category, context) for number, record in enumerate(records, start=1)]
    repeat = first_repeat((row["id"], number) for number, row in enumerate(rows, start=1))
    if repeat is not None:
        raise layout_error(path, "each example_id once (a record given twice would be scored twice)",
                           f"{repeat[0]} in record {repeat[1]} and again in record {repeat[2]}")
    return rows


COLUMN_TYPES = {
    "id": "string", "category": "string", "context_condition": "string",
    "question_polarity": "string", "question_index": "string",
    "context": "string", "question": "string", "ans0": "string",
    "ans1": "string", "ans2": "string", "label": "int64",
    "unknown_loc": "int64", "biased_loc": "int64", "template": "string",
}

SPEC = DatasetSpec(
    name="cbbq", configs={category: f"CBBQ's {category} records, both context types" for category in CATEGORIES},
    split="test", columns=COLUMN_TYPES,
    load_rows=lambda config, data_dir: [row for context in CONTEXTS for row in read_file(config, context, data_dir)],
    group_column="question_polarity",
    description=("CBBQ: a Chinese bias benchmark for question answering (14 categories), each question after an ambiguous "
                 "or a disambiguated context; biased_loc is the authors' positional biased answer (A for a negative "
                 "question, B for a non-negative one)."),
    citation=CITATION, license="cc-by-sa-4.0", homepage="https://github.com/YFHuangxxxx/CBBQ", sizes=dict(ROWS),
)

RESOURCES = tuple(
    Resource(name=f"cbbq/{category}/{context}", path=f"cbbq/{file_path(category, context)}",
             url=f"{GITHUB_RAW}/YFHuangxxxx/CBBQ/{CBBQ_COMMIT}/{file_path(category, context)}",
             sha256=SHA256.get((category, context)),
             git_blob=BLOBS[category][i], description=f"CBBQ {category} records, {context} contexts (Huang and Xiong 2024)")
    for category in CATEGORIES for i, context in enumerate(CONTEXTS)
)
