"""HolisticBias v1.1 (Smith et al. 2022): sentences built from 770 demographic descriptors in 13
axes, 32 nouns for people and 26 sentence templates ("What do you think about {plural_noun_phrase}?").

The sentences are generated from the four v1.1 files exactly as the authors' generator does
(``holistic_bias/src/sentences.py`` of facebookresearch/ResponsibleNLP, without its random
stylistic variants): 566,625 rows (563,195 distinct texts: the authors keep the duplicates, e.g.
"LGBTQ" listed under two axes), in the order of their ``sentences.csv``.

Noun phrases (:func:`noun_phrases`), five kinds (``noun_phrase_type``):

* ``noun``: each noun alone ("a grandpa"), under the pseudo-axis ``null``;
* ``descriptor``: each descriptor alone ("Deaf"), and ``descriptor_noun``: it before each noun
  ("a Deaf grandpa"; a gendered descriptor such as "Latina" takes only the nouns of its gender);
  the article is "an" before a vowel letter, else "a", unless the descriptor sets its own;
* ``noun_descriptor``: a standalone phrase with a ``{noun}`` slot, with every noun ("a grandpa who uses
  a wheelchair"; its descriptor is the phrase without article and noun, "who uses a wheelchair");
* ``fixed_phrase``: a standalone phrase without one ("a wheelchair user").

Each noun phrase fills every template (singular or plural as the template asks), except that a
phrase without a noun skips the templates marked ``must_be_noun``.

The paper's Likelihood Bias compares descriptors on the sentences whose phrase has both a noun and
a descriptor (``descriptor_noun`` and ``noun_descriptor``) and whose descriptor has no gender
(:func:`likelihood_bias_rows`: 549,120 sentences, 660 descriptors, 32 nouns each).
"""

from __future__ import annotations

import numpy as np

from ...data.spec import DatasetSpec, PathLike, Row, layout_error, read_json
from ...errors import InputError
from ...resources import GITHUB_RAW, Resource, locate

RESPONSIBLE_NLP_COMMIT = "0ec714eb084217f44cd9ac466d9e988c795302f9"
NONE = "(none)"
AXES = ("ability", "age", "body_type", "characteristics", "cultural", "gender_and_sex", "nationality", "nonce",
        "political_ideologies", "race_ethnicity", "religion", "sexual_orientation", "socioeconomic_class")
FILES = {
    "descriptors": "c1328f0edfdeefb76302d360a01878df3db55f18026f4ea1956b4a0f52daf943",
    "nouns": "9bbe15bf01ea8827fd5d68a81ee2b05e04bd5f79478d9027efec0b4dbd232ee6",
    "sentence_templates": "8b1cf8fc3c9a10b12cf77902e8c2ff3d80e3fcfff2f177a00256925acb4f53a5",
    "standalone_noun_phrases": "bac592574f81df55e8c8d8e3919a866d43cbd8df5ae9376a68d95e7b83dbebac",
}
# The columns of a noun phrase, in the order the authors sort them by; a sentence adds text, template and its flags.
PHRASE_COLUMNS = ("axis", "bucket", "descriptor", "descriptor_gender", "descriptor_preference", "noun", "plural_noun",
                  "noun_gender", "noun_phrase", "plural_noun_phrase", "noun_phrase_type")
SMALL_SET_SEED, SMALL_SET_SIZE = 17, 100  # the authors' --use-small-set: 100 descriptors drawn with numpy's default_rng(17)
COMPARED_TYPES = ("descriptor_noun", "noun_descriptor")

COLUMN_TYPES = {
    "id": "string",
    "text": "string",
    **{column: "string" for column in PHRASE_COLUMNS},
    "template": "string",
    "first_turn_only": "bool",
    "must_be_noun": "bool",
}


def article(word: str) -> str:
    """The authors' article rule: "an" when the first letter is a vowel, else "a" ("a LGBTQ father")."""
    return "an" if word[:1].lower() in "aeiou" else "a"


def _read(name: str, data_dir) -> object:
    path = locate(f"holistic_bias/{name}", data_dir)
    return path, read_json(path, f"HolisticBias v1.1 {name}.json")


def _nouns(data_dir) -> list[tuple[str, str, str]]:
    """(gender, singular, plural) of the 32 nouns, in file order."""
    path, nouns = _read("nouns", data_dir)
    if not isinstance(nouns, dict) or not any(nouns.values()) or \
            not all(isinstance(v, list) and all(isinstance(p, list) and len(p) == 2 and all(isinstance(w, str) and w for w in p)
                                                for p in v) for v in nouns.values()):
        raise layout_error(path, "{gender: [[singular, plural], ...]} with at least one noun", repr(nouns)[:120])
    return [(gender, singular, plural) for gender, pairs in nouns.items() for singular, plural in pairs]


def noun_phrases(data_dir: PathLike | None = None) -> list[Row]:
    """Every noun phrase (22,029 in v1.1) with its metadata (:data:`PHRASE_COLUMNS`), sorted as the
    authors sort them (by all columns, in that order)."""
    nouns = _nouns(data_dir)
    rows = [{"axis": "null", "bucket": NONE, "descriptor": NONE, "descriptor_gender": NONE, "descriptor_preference": NONE,
             "noun": singular, "plural_noun": plural, "noun_gender": gender, "noun_phrase": f"{article(singular)} {singular}",
             "plural_noun_phrase": plural, "noun_phrase_type": "noun"} for gender, singular, plural in nouns]
    path, descriptors = _read("descriptors", data_dir)
    if not isinstance(descriptors, dict) or not all(isinstance(b, dict) for b in descriptors.values()) or \
            not any(entries for buckets in descriptors.values() for entries in buckets.values()):
        raise layout_error(path, "{axis: {bucket: [descriptor, ...]}} with at least one descriptor", repr(descriptors)[:120])
    for axis, buckets in descriptors.items():
        for bucket, entries in buckets.items():
            for entry in entries:
                entry = {"descriptor": entry} if isinstance(entry, str) else entry
                if not isinstance(entry, dict) or not isinstance(entry.get("descriptor"), str) or not entry["descriptor"]:
                    raise layout_error(path, f"a descriptor string or {{'descriptor': ...}} in {axis}/{bucket}", repr(entry)[:120])
                word, gender = entry["descriptor"], entry.get("gender", NONE)
                base = {"axis": axis, "bucket": bucket, "descriptor": word, "descriptor_gender": gender,
                        "descriptor_preference": entry.get("preference", "no_data")}
                rows.append({**base, "noun": NONE, "plural_noun": NONE, "noun_gender": NONE, "noun_phrase": word,
                             "plural_noun_phrase": word, "noun_phrase_type": "descriptor"})
                rows += [{**base, "noun": singular, "plural_noun": plural, "noun_gender": noun_gender,
                          "noun_phrase": f"{entry.get('article', article(word))} {word} {singular}",
                          "plural_noun_phrase": f"{word} {plural}", "noun_phrase_type": "descriptor_noun"}
                         for noun_gender, singular, plural in nouns if gender in (NONE, noun_gender)]
    path, standalone = _read("standalone_noun_phrases", data_dir)
    if not isinstance(standalone, dict) or not any(standalone.values()):
        raise layout_error(path, "{axis: [noun phrase, ...]} with at least one noun phrase", repr(standalone)[:120])
    for axis, entries in standalone.items():
        for entry in entries:
            entry = {"noun_phrase": entry} if isinstance(entry, str) else entry
            if not isinstance(entry, dict) or not isinstance(entry.get("noun_phrase"), str):
                raise layout_error(path, f"a noun phrase string or {{'noun_phrase': ...}} in {axis}", repr(entry)[:120])
            phrase = entry["noun_phrase"]
            plural_phrase = entry.get("plural_noun_phrase", phrase)
            base = {"axis": axis, "bucket": NONE, "descriptor_gender": NONE, "descriptor_preference": entry.get("preference", "no_data")}
            if "{noun}" in phrase:
                rows += [{**base, "descriptor": phrase.format(article="", noun="").lstrip(), "noun": singular, "plural_noun": plural,
                          "noun_gender": noun_gender, "noun_phrase": phrase.format(article=article(singular), noun=singular),
                          "plural_noun_phrase": plural_phrase.format(article="", noun=plural).lstrip(),
                          "noun_phrase_type": "noun_descriptor"} for noun_gender, singular, plural in nouns]
            else:
                rows.append({**base, "descriptor": phrase, "noun": NONE, "plural_noun": NONE, "noun_gender": "neutral",
                             "noun_phrase": phrase, "plural_noun_phrase": plural_phrase, "noun_phrase_type": "fixed_phrase"})
    return sorted(rows, key=lambda row: tuple(row[column] for column in PHRASE_COLUMNS))


def templates(data_dir: PathLike | None = None) -> dict[str, dict]:
    """The 26 sentence templates (file order) -> their flags (``first_turn_only``, ``must_be_noun``)."""
    path, found = _read("sentence_templates", data_dir)
    if not isinstance(found, dict) or not found or \
            not all(isinstance(flags, dict) and ("{noun_phrase}" in t or "{plural_noun_phrase}" in t) for t, flags in found.items()):
        raise layout_error(path, "{template with {noun_phrase} or {plural_noun_phrase}: {flags}}, at least one template",
                           repr(found)[:120])
    return found


def small_set_descriptors(phrases: list[Row]) -> set[str]:
    """The authors' small set (``--use-small-set``): 100 descriptor strings drawn without replacement
    by ``numpy.random.default_rng(17)`` from the sorted distinct descriptors (with "(none)")."""
    found = sorted({row["descriptor"] for row in phrases})
    return set(np.random.default_rng(SMALL_SET_SEED).choice(found, size=SMALL_SET_SIZE, replace=False).tolist())


def sentences(data_dir: PathLike | None = None, *, small_set: bool = False) -> list[Row]:
    """Every HolisticBias sentence with its noun phrase's metadata, the template and its flags, in the
    order of the authors' ``sentences.csv``; ``id`` is the row number there (of the small set's own
    file with ``small_set``)."""
    phrases = noun_phrases(data_dir)
    if small_set:
        chosen = small_set_descriptors(phrases)
        phrases = [row for row in phrases if row["descriptor"] in chosen]
    filled = list(templates(data_dir).items())
    rows = []
    for phrase in phrases:
        for template, flags in filled:
            if phrase["noun"] == NONE and flags.get("must_be_noun", False):
                continue
            text = (template.format(noun_phrase=phrase["noun_phrase"]) if "{noun_phrase}" in template
                    else template.format(plural_noun_phrase=phrase["plural_noun_phrase"]))
            rows.append({"id": str(len(rows)), "text": text, **phrase, "template": template,
                         "first_turn_only": bool(flags.get("first_turn_only", False)),
                         "must_be_noun": bool(flags.get("must_be_noun", False))})
    return rows


def likelihood_bias_rows(rows: list[Row]) -> list[Row]:
    """The sentences Likelihood Bias compares (the authors' ``run_bias_calculation.py``): a noun and a
    descriptor in the phrase, and a descriptor without gender (a gendered one has fewer nouns)."""
    return [row for row in rows if row["noun_phrase_type"] in COMPARED_TYPES and row["descriptor_gender"] == NONE]


def load_rows(config: str = "all", data_dir: PathLike | None = None) -> list[Row]:
    """All HolisticBias sentences (``"all"``) or those of the authors' small set (``"small"``)."""
    if config not in SPEC.configs:
        raise InputError(f"HolisticBias has no config {config!r}; its configs: {list(SPEC.configs)}")
    return sentences(data_dir, small_set=config == "small")


SPEC = DatasetSpec(
    name="holistic_bias",
    configs={"all": "every sentence of v1.1 (566,625)", "small": "the authors' small set: 100 descriptors (71,436)"},
    split="test",
    columns=COLUMN_TYPES,
    load_rows=load_rows,
    group_column="axis",
    description=(
        "HolisticBias v1.1: sentences built from demographic descriptors in 13 axes (ability, age, body type, "
        "characteristics, culture, gender and sex, nationality, nonce words, political ideology, race and "
        "ethnicity, religion, sexual orientation, socioeconomic class), nouns for people and conversational "
        "templates, generated as the authors' generator does."
    ),
    citation="""@inproceedings{smith-etal-2022-im,
  title     = {{``}{I}'m sorry to hear that{''}: Finding New Biases in Language Models with a Holistic Descriptor Dataset},
  author    = {Smith, Eric Michael and Hall, Melissa and Kambadur, Melanie and Presani, Eleonora and Williams, Adina},
  booktitle = {Proceedings of the 2022 Conference on Empirical Methods in Natural Language Processing},
  pages     = {9180--9211},
  year      = {2022},
  doi       = {10.18653/v1/2022.emnlp-main.625}
}""",
    license="cc-by-sa-4.0",
    homepage="https://github.com/facebookresearch/ResponsibleNLP/tree/main/holistic_bias",
    sizes={"all": 566_625, "small": 71_436},
)

RESOURCES = tuple(
    Resource(name=f"holistic_bias/{name}", path=f"holistic_bias/v1.1/{name}.json",
             url=f"{GITHUB_RAW}/facebookresearch/ResponsibleNLP/{RESPONSIBLE_NLP_COMMIT}/holistic_bias/dataset/v1.1/{name}.json",
             sha256=sha256, description=f"HolisticBias v1.1 {name} (Smith et al. 2022)")
    for name, sha256 in FILES.items()
)
