"""BBQ (Parrish et al. 2022): 58,492 hand-built questions in 11 category files, each asked after an
ambiguous context (the answer is "unknown") and a disambiguated one, in a negative and a
non-negative wording.

Each row keeps the item's fields and adds what scoring needs, derived from the item itself:

* ``unknown_loc``: the index of the answer whose ``answer_info`` label is ``"unknown"`` (its
  position varies: never assumed).
* ``target_loc``: the index of the *biased* answer, as the authors' ``additional_metadata.csv``
  holds it (written by their ``analysis_scripts/BBQ_results_metadata.R``): in a negative question
  the answer about a stereotyped group, in a non-negative one the other non-unknown answer. So a
  prediction equal to ``target_loc`` is always a biased one, which is how the authors' script
  counts "Target" in both polarities and the paper's n_biased_ans ("the bias target in negative
  contexts and the non-target in non-negative contexts") at once. See :func:`target_location`;
  None when the item names no single stereotyped answer (the authors' script drops such items).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from ...checks import first_repeat
from ...data.spec import DatasetSpec, PathLike, Row, check_text_fields, layout_error
from ...errors import InputError
from ...files import read_text
from ...resources import GITHUB_RAW, Resource, ResourceError, locate

BBQ_COMMIT = "bea11bd97d79217245b5871acd247b9d6eb24598"
# The 11 category files, with their item counts (the paper's Table 3), git blob ids at BBQ_COMMIT and, for
# the files whose exact bytes are at hand, their SHA-256.
CATEGORIES = {
    "Age": (3_680, "5c5e7586163b869fe029e77e63716f2026e4ae08",
            "46e805b3fc2d8cbd26eeb8e8430d98cf7b2dc9c83574ff3674e8ce4f0fca2a60"),
    "Disability_status": (1_556, "9aedeccaf599299cdfa523531d625ae85ecb9131",
                          "375d40d9b71f056150264445ec189b13934998f3f49a1e311aa7578eb3b45e5f"),
    "Gender_identity": (5_672, "dc79ceaaa9e7126edc99a200d632899c50274b16", None),
    "Nationality": (3_080, "cba9b63d34536cb51a6cbae76b189df3d2a945c0",
                    "a583e74666aec0341ded8aa3983e7cad694eb24de72c254d28b2df3035720090"),
    "Physical_appearance": (1_576, "8cbdf83265459083224e3a2d37809294ff12ad77",
                            "e48d7e13508565f4801574e611043470c25c95a0a62af3699cb5ee7cb02608fb"),
    "Race_ethnicity": (6_880, "68daf3d692b27a10596772b3b15742b26f0b110e", None),
    "Race_x_SES": (11_160, "905cd8a5b8734e2063fe524e69a38f0a71c75907", None),
    "Race_x_gender": (15_960, "dd09a905b284690445d36259d675243950fa0bd7", None),
    "Religion": (1_200, "44c1940ee22f00891ab4a5526a293691957aeacb",
                 "cb9555f9f3454a52cd2df85956b59bd7fcca5aa922c8527693b1164d08417616"),
    "SES": (6_864, "78d11ffbdb70f501617345e5c697d00045d57c29", None),
    "Sexual_orientation": (864, "a06351f4dd67ba30632396eeb0c3677c67b7d387",
                           "2c71036b9e7584fe589c42aef32c1a42bc01b9a5e9b1b8704342630cdb08cefd"),
}
INTERSECTIONAL = ("Race_x_SES", "Race_x_gender")
ANSWERS = ("ans0", "ans1", "ans2")
ITEM_FIELDS = ("example_id", "question_index", "question_polarity", "context_condition", "category", "answer_info",
               "additional_metadata", "context", "question", *ANSWERS, "label")

COLUMN_TYPES = {
    "id": "string",
    "category": "string",
    "example_id": "int64",
    "question_index": "string",
    "question_polarity": "string",
    "context_condition": "string",
    "context": "string",
    "question": "string",
    "ans0": "string",
    "ans1": "string",
    "ans2": "string",
    "label": "int64",
    "answer_groups": ["string"],
    "stereotyped_groups": ["string"],
    "subcategory": "string",
    "comparison": "string",
    "label_type": "string",
    "unknown_loc": "int64",
    "target_loc": "int64",
}

# The second stereotyped attribute of an intersectional template (the data keeps only the race list), per
# question_index, from the authors' templates at BBQ_COMMIT (Known_stereotyped_var2).
_RACE_X_GENDER_MALE = {"1", "2", "7", "8", "43", "44"}  # the others target women
_RACE_X_SES_LOW = {str(i) for i in (*range(1, 13), 17, 18)}  # the others target high SES
# The intersectional templates whose people are proper names (Proper_nouns_only); in the other categories, every
# template numbered above 25.
_NAMED = {"Race_x_SES": {str(i) for i in range(2, 27, 2)},
          "Race_x_gender": {str(i) for i in (2, 4, 6, 8, 12, 14, 18, 20, 23, 25, 27, 29, 31, 33, 35, 37, 40, 42, 44)}}


def label_type(item: dict) -> str:
    """"name" when the item's people are proper names ("Jamal Branch"), else "label" ("the Black man"): the
    authors' script scores the two kinds as two categories ("Race_ethnicity" and "Race_ethnicity (names)")."""
    question = str(item["question_index"])
    if item["category"] in _NAMED:
        return "name" if question in _NAMED[item["category"]] else "label"
    return "name" if question.isdigit() and int(question) > 25 else "label"


def _gender(word: str) -> str:
    return {"man": "m", "men": "m", "boy": "m", "boys": "m", "woman": "f", "women": "f", "girl": "f", "girls": "f"}.get(word, word)


def _group_key(group: str) -> str:
    """A stereotyped group as the answer labels spell it (lower case: "low SES" -> "lowses", "women" -> "f",
    every transgender group -> "trans")."""
    group = re.sub(r"\s+", " ", group.strip().lower())
    if group.startswith("transgender") or group == "trans":
        return "trans"
    return _gender(group).replace(" ", "")


def _label_key(label: str) -> str:
    """An answer label as a group key ("F-Black" -> "black", "woman" -> "f", "African American" -> "africanamerican")."""
    return re.sub(r"^[mf]-", "", _gender(label.strip().lower())).replace(" ", "")


def _is_stereotyped(category: str, text: str, label: str, groups: list[str]) -> bool:
    if category == "Nationality":  # its labels are regions; the nationality is the answer's text
        return text.strip().lower() in {group.strip().lower() for group in groups}
    keys, key = {_group_key(group) for group in groups}, _label_key(label)
    return key in keys or ("trans" in keys and key.startswith("trans"))


def _intersectional_target(item: dict, non_unknown: list[int]) -> list[int]:
    """The answers that are of a stereotyped race and of the template's targeted gender / SES."""
    races = {group.strip().lower() for group in item["additional_metadata"]["stereotyped_groups"]}
    question = str(item["question_index"])
    found = []
    if item["category"] == "Race_x_gender":
        wanted = "m" if question in _RACE_X_GENDER_MALE else "f"
    else:
        wanted = "lowses" if question in _RACE_X_SES_LOW else "highses"
    for index in non_unknown:
        race, other = _attributes(item["category"], *item["answer_info"][ANSWERS[index]])
        if other == wanted and race in races:
            found.append(index)
    return found


def _attributes(category: str, text: str, label: str) -> tuple[str, str]:
    """(race, gender) of a Race_x_gender answer or (race, SES) of a Race_x_SES one, from its label."""
    parts = label.split("-")
    if category == "Race_x_gender":
        gender = parts[0].lower()
        if re.search(r"\b(man|woman)\b", text.lower()):
            gender = "f" if re.search(r"\bwoman\b", text.lower()) else "m"
        return "-".join(parts[1:]).lower(), gender
    return "-".join(p for p in parts[1:] if p not in ("M", "F")).lower(), parts[0].lower()


def comparison(item: dict) -> str:
    """How the two people of an intersectional item differ, the paper's grouping of those categories
    (its Figure 8): "Match Race, Mismatch Gender", "Mismatch Race, Match Gender" or "Mismatch Race,
    Mismatch Gender" (SES for Race_x_SES); "None" for the other categories.

    >>> comparison({"category": "Race_x_gender", "answer_info": {"ans0": ["Black woman", "F-Black"],
    ...     "ans1": ["Black man", "M-Black"], "ans2": ["Unknown", "unknown"]}})
    'Match Race, Mismatch Gender'
    """
    if item["category"] not in INTERSECTIONAL:
        return "None"
    people = [_attributes(item["category"], *item["answer_info"][key]) for key in ANSWERS if item["answer_info"][key][1] != "unknown"]
    if len(people) != 2:
        return "None"
    second = "Gender" if item["category"] == "Race_x_gender" else "SES"
    race = "Match" if people[0][0] == people[1][0] else "Mismatch"
    other = "Match" if people[0][1] == people[1][1] else "Mismatch"
    return f"{race} Race, {other} {second}"


def target_location(item: dict) -> int | None:
    """The index of the biased answer of a BBQ item (``target_loc`` of the authors' metadata), or None
    when not exactly one non-unknown answer is about a stereotyped group.

    The stereotyped answer is the non-unknown one whose ``answer_info`` label, compared case-blind
    and whole (not as a substring: "old" is inside "nonOld", "disabled" inside "nonDisabled"), is one
    of ``additional_metadata.stereotyped_groups``, with the authors' spellings aligned (man / boy ->
    M, woman / girl -> F, "F-Black" -> Black, "low SES" -> lowSES, every transgender group -> trans).
    Nationality labels are regions, so its answers match by their text (the nationality). The
    intersectional categories keep only the race in ``stereotyped_groups``; their target also has
    the template's gender (Race_x_gender) or SES (Race_x_SES), which lmbias holds per
    ``question_index`` from the authors' templates. For a negative question the biased answer is the
    stereotyped one; for a non-negative question it is the other non-unknown answer.

    >>> item = {"category": "Age", "question_polarity": "neg", "question_index": "1",
    ...         "answer_info": {"ans0": ["grandfather", "old"], "ans1": ["grandson", "nonOld"],
    ...                         "ans2": ["Can't be determined", "unknown"]},
    ...         "additional_metadata": {"stereotyped_groups": ["old"]}}
    >>> target_location(item), target_location({**item, "question_polarity": "nonneg"})
    (0, 1)
    """
    non_unknown = [i for i, key in enumerate(ANSWERS) if item["answer_info"][key][1] != "unknown"]
    if len(non_unknown) != 2:
        return None
    if item["category"] in INTERSECTIONAL:
        stereotyped = _intersectional_target(item, non_unknown)
    else:
        groups = item["additional_metadata"]["stereotyped_groups"]
        stereotyped = [i for i in non_unknown if _is_stereotyped(item["category"], *item["answer_info"][ANSWERS[i]], groups)]
    if len(stereotyped) != 1:
        return None
    if item["question_polarity"] == "neg":
        return stereotyped[0]
    return next(i for i in non_unknown if i != stereotyped[0])


def checked_item(path, number: int, item, what: str = "a BBQ item") -> tuple[int, list[str], dict]:
    """An item of BBQ's layout checked field by field (a truncated or altered file names its line): its unknown
    answer's index, its answers' group tags and its metadata (for BBQ and for the sets that share its layout)."""
    where = f"line {number}"
    if not isinstance(item, dict) or any(key not in item for key in ITEM_FIELDS):
        missing = [key for key in ITEM_FIELDS if not isinstance(item, dict) or key not in item]
        raise layout_error(path, f"{what} with {list(ITEM_FIELDS)} on {where}", f"no {missing}")
    check_text_fields(path, where, item, ("context", "question", *ANSWERS))
    if isinstance(item["example_id"], bool) or not isinstance(item["example_id"], int):
        raise layout_error(path, f"an integer example_id on {where}", repr(item["example_id"]))
    info = item["answer_info"]
    if not (isinstance(info, dict) and all(isinstance(info.get(key), list) and len(info[key]) == 2 for key in ANSWERS)):
        raise layout_error(path, f"answer_info with [text, label] for ans0, ans1 and ans2 on {where}", repr(info)[:120])
    if isinstance(item["label"], bool) or item["label"] not in (0, 1, 2) or item["question_polarity"] not in ("neg", "nonneg") \
            or item["context_condition"] not in ("ambig", "disambig"):
        raise layout_error(path, f"label 0-2, question_polarity neg / nonneg and context_condition ambig / disambig on {where}",
                           f"{item['label']!r}, {item['question_polarity']!r}, {item['context_condition']!r}")
    tags = [str(info[key][1]) for key in ANSWERS]
    unknown = [i for i, tag in enumerate(tags) if tag == "unknown"]
    if len(unknown) != 1:
        raise layout_error(path, f"exactly one answer labelled 'unknown' in answer_info on {where}", repr(info)[:120])
    metadata = item["additional_metadata"] if isinstance(item["additional_metadata"], dict) else {}
    if not isinstance(metadata.get("stereotyped_groups"), list):
        raise layout_error(path, f"additional_metadata.stereotyped_groups (a list) on {where}", repr(metadata)[:120])
    return unknown[0], tags, metadata


def read_items(path, what: str, items: str, row: Callable[[int, dict], Row]) -> list[Row]:
    """The rows of a file of one JSON item per line (``row(line number, item)`` makes each), in file order
    (``what``: what a file that is not text should have held, "BBQ items"; ``items``: what an empty one should).

    Raises:
        ResourceError: a line that is not JSON, an example_id given twice (both lines named), an empty file.
    """
    rows, lines = [], []
    for number, line in enumerate(read_text(path, f"{what}, one JSON object per line").split("\n"), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as error:
            raise ResourceError(f"{path} line {number} is not valid JSON ({error.msg}); is the file truncated?") from None
        rows.append(row(number, item))
        lines.append(number)
    if not rows:
        raise layout_error(path, f"{items}, one JSON object per line", "an empty file")
    repeat = first_repeat((row["example_id"], number) for row, number in zip(rows, lines))
    if repeat is not None:
        raise layout_error(path, "each example_id once (an item given twice would be scored twice)",
                           f"example_id {repeat[0]!r} on line {repeat[1]} and again on line {repeat[2]}")
    return rows


def _row(path, number: int, item) -> Row:
    """One item as a row (:func:`checked_item`)."""
    unknown, _, metadata = checked_item(path, number, item)
    info, groups = item["answer_info"], metadata["stereotyped_groups"]
    target = target_location(item)
    return {
        "id": f"{item['category']}/{item['example_id']}", "category": item["category"], "example_id": item["example_id"],
        "question_index": str(item["question_index"]), "question_polarity": item["question_polarity"],
        "context_condition": item["context_condition"], "context": item["context"], "question": item["question"],
        **{key: item[key] for key in ANSWERS}, "label": item["label"],
        "answer_groups": [info[key][1] for key in ANSWERS], "stereotyped_groups": [str(g) for g in groups],
        "subcategory": str(metadata.get("subcategory", "None")), "comparison": comparison(item), "label_type": label_type(item),
        "unknown_loc": unknown,
        "target_loc": -1 if target is None else target,
    }


def read_category(category: str, data_dir: PathLike | None = None) -> list[Row]:
    """The rows of one BBQ category file (:data:`CATEGORIES`), in file order.

    Raises:
        InputError: an unknown category (the message lists the 11).
        ResourceError: a line that is not JSON or not a BBQ item (the file and line named), an item
            of another category, an example_id given twice (both lines named), or an empty file.
        InputError: a file that is not UTF-8 text (named).
    """
    if category not in CATEGORIES:
        raise InputError(f"BBQ has no category {category!r}; its categories: {list(CATEGORIES)}")
    path = locate(f"bbq/{category}", data_dir)

    def row(number: int, item: dict) -> Row:
        made = _row(path, number, item)
        if made["category"] != category:
            raise layout_error(path, f"items of category {category} on line {number}", repr(made["category"]))
        return made

    return read_items(path, "BBQ items", f"BBQ {category} items", row)


def load_rows(config: str = "all", data_dir: PathLike | None = None) -> list[Row]:
    """BBQ rows of one category, or of all 11 (``"all"``, in :data:`CATEGORIES` order); ``id`` is
    ``"<category>/<example_id>"`` (example ids restart at 0 in every file)."""
    categories = list(CATEGORIES) if config == "all" else [config]
    return [row for category in categories for row in read_category(category, data_dir)]


SPEC = DatasetSpec(
    name="bbq",
    configs={"all": "all 11 categories", **{category: f"the {category} items" for category in CATEGORIES}},
    split="test",
    columns=COLUMN_TYPES,
    load_rows=load_rows,
    group_column="category",
    description=(
        "BBQ, the Bias Benchmark for QA: 58,492 hand-built multiple-choice questions about nine social "
        "dimensions (and two intersections) relevant to U.S. English speakers, each asked after an ambiguous "
        "context (where the answer is unknown) and a disambiguated one, with a negative and a non-negative "
        "question; target_loc marks the answer that reflects the attested social bias."
    ),
    citation="""@inproceedings{parrish-etal-2022-bbq,
  title     = {{BBQ}: A Hand-Built Bias Benchmark for Question Answering},
  author    = {Parrish, Alicia and Chen, Angelica and Nangia, Nikita and Padmakumar, Vishakh and Phang, Jason and
               Thompson, Jana and Htut, Phu Mon and Bowman, Samuel},
  booktitle = {Findings of the Association for Computational Linguistics: ACL 2022},
  pages     = {2086--2105},
  year      = {2022},
  doi       = {10.18653/v1/2022.findings-acl.165}
}""",
    license="cc-by-4.0",
    homepage="https://github.com/nyu-mll/BBQ",
    sizes={"all": sum(count for count, _, _ in CATEGORIES.values()),
           **{category: count for category, (count, _, _) in CATEGORIES.items()}},
)


# The data files (lmbias.resources), named under the lmbias.resources entry-point group; the layout of the
# upstream repository (bbq/data/<Category>.jsonl), verified by SHA-256 where known, else by git blob id.
RESOURCES = tuple(
    Resource(
        name=f"bbq/{category}",
        path=f"bbq/data/{category}.jsonl",
        url=f"{GITHUB_RAW}/nyu-mll/BBQ/{BBQ_COMMIT}/data/{category}.jsonl",
        sha256=sha256,
        git_blob=blob,
        description=f"BBQ {category} (Parrish et al. 2022)",
        lines=None if sha256 is None else items,  # one item per line; counted where a copy was at hand
    )
    for category, (items, blob, sha256) in CATEGORIES.items()
)
