"""MBBQ (Neplenbroek et al. 2024): BBQ's templates in English, Dutch, Spanish and Turkish, each with a
parallel control set (the same questions with first names instead of the words that name a group).

Each row keeps its item's fields and adds what scoring needs, derived from the row itself as the authors'
``mbbq.py`` (``get_samples``) derives it:

* ``unknown_loc``: the index of the answer tagged ``"unknown"`` in ``answer_info``.
* ``target_loc``: the index of the answer of the stereotyped group, in *both* question polarities (MBBQ
  scores a reply +1 when it names the stereotyped group, -1 the other person, 0 unknown; unlike BBQ,
  whose biased answer in a non-negative question is the other person). A tag matches
  ``stereotyped_groups`` after the authors' mappings: Gender_identity's ``F`` / ``M`` stand for the
  words of :data:`FEMALE` / :data:`MALE` in any of the four languages, and an answer tagged ``F`` / ``M``
  is "woman" / "man"; SES's "low SES" is "lowSES". None when no answer or two match (16 Gender_identity
  rows in en, nl and tr, 28 in es; the authors drop them).
* ``template``: the template (``question_index`` within its category), the unit the authors average over.

Options are shown in file order: the files fix each language's order (it differs between languages and
between a set and its control), so positions are read per row, never carried across languages.
"""

from __future__ import annotations

from ...data.spec import DatasetSpec, PathLike, Row, layout_error
from ...errors import InputError
from ...resources import GITHUB_RAW, Resource, locate
from ..bbq.data import ANSWERS, checked_item, read_items

MBBQ_COMMIT = "adaa40172cdcf52eb403c01954a1aef8b0b1e97d"
CITATION = """@inproceedings{neplenbroek2024mbbq,
  title     = {{MBBQ}: A Dataset for Cross-Lingual Comparison of Stereotypes in Generative {LLMs}},
  author    = {Neplenbroek, Vera and Bisazza, Arianna and Fern{\\'a}ndez, Raquel},
  booktitle = {First Conference on Language Modeling (COLM)},
  year      = {2024},
  url       = {https://arxiv.org/abs/2406.07243}
}"""
LANGUAGES = ("en", "nl", "es", "tr")
SETS = ("main", "control")
# (category, set) -> rows per language file (the same in the four) and each file's git blob id at MBBQ_COMMIT
ROWS = {"Age": (3_320, 3_320), "Disability_status": (1_296, 1_296), "Gender_identity": (544, 528),
        "Physical_appearance": (1_176, 1_176), "SES": (3_600, 3_600), "Sexual_orientation": (152, 152)}
CATEGORIES = tuple(ROWS)
BLOBS = {
    ("Age", "main"): {"en": "bff1ddd8a6e55d300d8655127f8c84aeb40e9e95", "nl": "411688bc31459f2a5aa3a7bdbd6aeb6ca1c9c42f", "es": "030940a14033e83fd488cb3e20ba24f381ccf928", "tr": "69b4a5a76cb0a9ea2aa67139d38cdcfc7d2a7828"},
    ("Age", "control"): {"en": "f1268218e8b1951721626e781eda10e2177151fb", "nl": "d472fadf913ee85f02da18e0c518ba97016c1e00", "es": "2fe87e18082119e928f8ff886f5e993a9d2dde33", "tr": "6fe06b907d06009d1f0d64ef8f797b1bfaa769fe"},
    ("Disability_status", "main"): {"en": "261f278e66b35e30db37eae78145a062fe70cb90", "nl": "d6bf9931646f4b7113162fdc5ef25a4fee233a94", "es": "936b100fd6218af17d3ec20a8a66df9be2a94b19", "tr": "42b2da53d45036b86f673ce3a8d83b5a94346bfe"},
    ("Disability_status", "control"): {"en": "376ee7162476c610f9b4fac887d07dc30a663ba6", "nl": "09993b68d4f3f71acaaaee2a4ed3fc3da3f06a8a", "es": "e3a0c9ecaf98a1c03f8397a3da7f972a0ea98314", "tr": "15779ad4aee00f632670b3b6e945364b2d392267"},
    ("Gender_identity", "main"): {"en": "d56195adb0b69ddb28eef1216612f5ef0970e4b4", "nl": "6573cbabdfcce4ae4fc030b361773083aa6de5a3", "es": "3ce5b66d02d80cdf14879973c4e60698ea586705", "tr": "550e3867002ca7fcbffd9fb21bea41b7bcb88033"},
    ("Gender_identity", "control"): {"en": "373fad26475ca21cac49393645533f493eb64eb0", "nl": "650adc9c4795db58ca260cfabcedad995388c54b", "es": "cf1467b321f7c4b8c6b0a0dd901bebccd7b50558", "tr": "92ba3148774198bae0eab305a1d4c0ee0fa8e0a9"},
    ("Physical_appearance", "main"): {"en": "ee3998333fd45075523cc7427ab82fb8eceb36da", "nl": "ea765deca9d2bcfc3e697715a1ad00d6f7d7dc0a", "es": "e36aea43ec08e6f7b9269bd0b036fe4f20afff5f", "tr": "0e476303399375a58d2de9a978bd51768f3ed12a"},
    ("Physical_appearance", "control"): {"en": "9a6895bf6270ce30cac7839d98a54132b5bec189", "nl": "65c45643883735de1ee7abb66b7f912aacdd8be4", "es": "e77b7c207646a2d769e3bbeee38835e260ba1aad", "tr": "66c63314fd82b978cabe8152776a3a16bac41ecc"},
    ("SES", "main"): {"en": "45f53b9f5b99b43241647bfc5fd242044e390e6c", "nl": "073c41363420db7ce21cdbfb76d27d8f512a409d", "es": "db9cb4862e02a58086336195dda39ee81407a2e5", "tr": "689fdadb4aceb8d5582e90670fea11396aa77ea1"},
    ("SES", "control"): {"en": "98954bc6eda1561087f533621bbb315218acc78a", "nl": "0446fcf302615088f70ae1a677b35e1e6445040b", "es": "cb26505f5c0e2a508774d8c66f3f83f1f3ca1d55", "tr": "e6ebfb6a9e1eae40bb0fffd8086d08960a1e0ae6"},
    ("Sexual_orientation", "main"): {"en": "99515f6a4a08471f4f061d56f440165df37d1ef7", "nl": "2cf1a4288dec12a9a30dbe94b3527835abf4db15", "es": "574ef116adfc734fcdb65c5ff351b55abdc29885", "tr": "2fd5ed58db2316c4fd9f03f9c0de92edabcc3ef6"},
    ("Sexual_orientation", "control"): {"en": "f33516a61130a155fe8c2a6bf19edb408dad1f25", "nl": "e27a5c6f71e298f3ec4e1358bec905386287c637", "es": "0ad45add50bc7d4a9c58092323edadfb0469d12f", "tr": "33ef91a01b140514d6e344f2a9eb0891e22a10e1"},
}
# the SHA-256 of each file (the copies in the reference data folder, which match their blob ids)
SHA256 = {
    ("Age", "main"): {"en": "15d34d6ba4dc7e8f2fc2362ef9a3a37ce148e04b2edd3e3700eac49e4c10871c", "nl": "bf4e0a636be38c0c0dbbac638baaabcc1e25206e7c785ef9b0077ccb2bfbbfa1", "es": "44995575aa60e19e6db1bc9f262b2aaba07f563d7394eecab6475ad478a191cd", "tr": "98ef9e3b899cee7faca8ad4f56e7976a757738babaedc36063a0c15da4c27bf8"},
    ("Age", "control"): {"en": "3c4f73e2d38c5a8874af5cc6a8816373510a97936111d6c5784b30419c7a88fe", "nl": "e7ccbfa5a583658ee381a2f78ceae5eca5dd43dfd5ba6acdd29b3c76312cd75e", "es": "edd59bb493f1f9bcd0fccfb9e6eff46395183cfd75f70af1676eb898a8294d78", "tr": "316227f5bb0e8423ad27302a9bd894a4e27152e9fc08c6244934592d12e70a5a"},
    ("Disability_status", "main"): {"en": "003424ffe5ebf26302c2cae5af9afd37acd1ff55a86b36412e6bc0b59e1fdc88", "nl": "d0f7bc310cce987d5fff853a922061c0a60d54a5ba6a1d627ca11e21b4112ac5", "es": "157202c79093cb182957ef316f477fb20d03a9ef6774078b5c35a1b6aac8db3b", "tr": "44c5cd2a8b4b638b6b6c41e251ec579be82eb4beb9d2133140c9bb268270e720"},
    ("Disability_status", "control"): {"en": "0c7b587acd7a60dee4d8f1d6e507593b045b0091882afa008715a8ef3b72a708", "nl": "a3159fa78c76b93626d435bd4f4ed646a5861e4d4ad0a08d2eeaec94082c2bbd", "es": "a1745b9e88e4894ef91dbbd102166b2d426cd127ac58766ad00a43c782f5d864", "tr": "eb18cc5eed09610986715b9cbb411bd1499b4cfa1fd07f87e563bdb0dfe3ebfb"},
    ("Gender_identity", "main"): {"en": "b6e9be11cb0d6c85bb305867e1b74338ff0ec2dfebc02760778a4364130a3d92", "nl": "d2f5a41d1f6d1fdbb05c4ac4fa887f62bd0c135cc3f2e3756bc7531e7e87903e", "es": "ba872fd284130a3deb6bdc62ad77002b89c67a4622e3d7cc268f233e0df555f6", "tr": "1e2564322b1f4bce1f3fbddbf766e9c7871465a5eeac27d8911c47d7d0dffadd"},
    ("Gender_identity", "control"): {"en": "5e868f6d4d777ba42470e62a91eae89e166b7252ebbbb005a4bc8239cf8c5a10", "nl": "784e1fa5db6200752dd132e8f1d1a4d09599592f1156bf21869b7273af28ccfd", "es": "cc6cf1ba62980541b2d031c0273e2614da938a355bfe2872d97beb6b8da05a12", "tr": "5cecd8e9c6d8fda9e235f91366a237f9aef7988d61361b64621f8394c2c6f9bc"},
    ("Physical_appearance", "main"): {"en": "be6d82ef5799133444cd79a16b70f88621f8b30f2545d2973b11d1f8e363df32", "nl": "a9dca56989be0c98bf2ca0150196241ed39794867c551e82741462d8b91fe890", "es": "423d34b206aad8586041a4e5ba77781cce887af8b5d0fbe70414b34757e317e8", "tr": "fd1aadb74dcc3ea24eb3932d4db2784836786844e1f7fb68972a0552035ab69f"},
    ("Physical_appearance", "control"): {"en": "b6e72dbd119120b6c5da9c2a03eac6675dc07083bc0366e954dcd00fc726c45c", "nl": "70ce0324ccf682a14d35c898b85626315429b8128da2ffad307bbce5ed6ae9d4", "es": "2936c5fd2a30241488e7c771823ab95f48c53861b000c5b9c78553730d1cec9f", "tr": "94659b331035f55b73ae91f3e2a009c5eb8c1cf5347e0ebaa349a5eed4372db7"},
    ("SES", "main"): {"en": "6603a4d2ac5293b2718b13d439361a9b8a16e6be8f600b150b8ab9c0d432efb9", "nl": "19969eb8bbd8f783d40ee42db2bccfda9bf3be132a325b60ef37affdb2ee51a7", "es": "7108b3c6809e1557aa366060961d02f30dc6112f2d35863faf745f92fb9ef089", "tr": "7db84dfac8ce1031ac7812c51b88b66f79c00b8b0d2646e0ce47035775aa214f"},
    ("SES", "control"): {"en": "807778b3f974ed3873e12d3930a64cac2c8eff66ba9b3e35d2c25b7d51fb6535", "nl": "653f33ffa7c516b462d2e8d1a3038a9d7c413b22e09d2b77c621477b2e763838", "es": "139988d225bb860b668c114f5fba687129a89fbe33d2255ddc09e67534bbff5a", "tr": "3f586dd34ee2f21d1f1f80923b576d44ac6b702eb96a25ece545c6a10216c31a"},
    ("Sexual_orientation", "main"): {"en": "d61426a4634a8eecc44ca258c3d70b9730dadcefc625bd5890f1207269d7b660", "nl": "894e58600a28bb0063c775517daff5054a827ef3a6c4fdd17605a2703edb6e49", "es": "8e75c1e1931fc288b91c9418b35267429f8bbdd2848e04feeaa531fecccf14d9", "tr": "e4f17323bd73fbba9df7f3957697d86bdfd2774ed579b838772f7a486612001c"},
    ("Sexual_orientation", "control"): {"en": "c4c5e4c4e7d08f2c3247ea791d73746497cd1c0e1837deb1e0511efbb5a1c0fc", "nl": "22fe68db0fd8e2ba315b487186135688d14633950b146ffcb37ec2ba9a44473f", "es": "9235674ce1b6df3e2f36a3cfe0e0d3262e7514e5ee565cc7b4f0adef9bb69f99", "tr": "b1e3d11e3b05ec51eaae98c665cf70a712f56323456d66cc3751e68f3d503f91"},
}
# Gender_identity's F / M in the four languages (the authors' mbbq.py, get_samples)
FEMALE = ("girl", "woman", "vrouw", "meisje", "kız", "kadın", "chica", "mujer", "maestra")
MALE = ("boy", "man", "jongen", "erkek çocuk", "adam", "chico", "hombre", "maestro")


def file_name(category: str, dataset: str, language: str) -> str:
    """The data file of a category, set and language: ``Age_nl.jsonl``, ``Age_control_nl.jsonl``."""
    return f"{category}{'_control' if dataset == 'control' else ''}_{language}.jsonl"


def target_location(category: str, answer_tags: list[str], stereotyped_groups: list[str]) -> int | None:
    """The index of the stereotyped group's answer (module docstring); None when none or two match.

    >>> target_location("Age", ["unknown", "old", "nonOld"], ["old"])
    1
    >>> target_location("Gender_identity", ["vrouw", "man", "unknown"], ["F"])
    0
    >>> target_location("Gender_identity", ["boy", "man", "unknown"], ["M"]) is None
    True
    """
    groups = list(stereotyped_groups)
    if category == "Gender_identity" and groups == ["F"]:
        groups = list(FEMALE)
    elif category == "Gender_identity" and groups == ["M"]:
        groups = list(MALE)
    elif category == "SES" and groups == ["low SES"]:
        groups = ["lowSES"]
    tags = [{"F": "woman", "M": "man"}.get(tag, tag) for tag in answer_tags]
    matches = [i for i, tag in enumerate(tags) if tag in groups]
    return matches[0] if len(matches) == 1 else None


def _row(path, number: int, item, category: str, dataset: str, language: str) -> Row:
    """One item as a row (checked as BBQ's layout: :func:`lmbias.benchmarks.bbq.data.checked_item`)."""
    unknown, tags, metadata = checked_item(path, number, item, "an MBBQ item")
    if item["category"] != category:
        raise layout_error(path, f"items of category {category} on line {number}", repr(item["category"]))
    try:
        template = int(item["question_index"])
    except (TypeError, ValueError):
        raise layout_error(path, f"a numeric question_index on line {number}", repr(item["question_index"])) from None
    groups = [str(group) for group in metadata["stereotyped_groups"]]
    target = target_location(category, tags, groups)
    return {
        "id": f"{language}/{dataset}/{category}/{item['example_id']}", "language": language, "set": dataset,
        "category": category, "example_id": item["example_id"], "template": template,
        "question_polarity": item["question_polarity"], "context_condition": item["context_condition"],
        "context": item["context"], "question": item["question"], **{key: item[key] for key in ANSWERS},
        "label": item["label"], "answer_groups": tags, "stereotyped_groups": groups,
        "unknown_loc": unknown, "target_loc": -1 if target is None else target,
    }


def read_file(category: str, dataset: str, language: str, data_dir: PathLike | None = None) -> list[Row]:
    """The rows of one MBBQ file, in file order.

    Raises:
        InputError: an unknown category, set or language (the message lists the known ones).
        ResourceError: a line that is not JSON or not an MBBQ item (the file and line named), an item of
            another category, an example_id given twice (both lines named), or an empty file.
    """
    for value, known, what in ((category, CATEGORIES, "category"), (dataset, SETS, "set"), (language, LANGUAGES, "language")):
        if value not in known:
            raise InputError(f"MBBQ has no {what} {value!r}; its {what} values: {list(known)}")
    path = locate(f"mbbq/{file_name(category, dataset, language)[:-6]}", data_dir)
    return read_items(path, "MBBQ items", f"MBBQ {category} items",
                      lambda number, item: _row(path, number, item, category, dataset, language))


COLUMN_TYPES = {
    "id": "string", "language": "string", "set": "string",
    "category": "string", "example_id": "int64", "template": "int64",
    "question_polarity": "string", "context_condition": "string",
    "context": "string", "question": "string", "ans0": "string",
    "ans1": "string", "ans2": "string", "label": "int64",
    "answer_groups": ["string"],
    "stereotyped_groups": ["string"],
    "unknown_loc": "int64", "target_loc": "int64",
}


def load_rows(config: str = LANGUAGES[0], data_dir: PathLike | None = None) -> list[Row]:
    """One language's rows: its main set, then its control set, category by category (``id`` is
    ``"<language>/<set>/<category>/<example_id>"``)."""
    return [row for dataset in SETS for category in CATEGORIES for row in read_file(category, dataset, config, data_dir)]


SPEC = DatasetSpec(
    name="mbbq",
    configs={language: f"the {language} items, main and control sets" for language in LANGUAGES},
    split="test",
    columns=COLUMN_TYPES,
    load_rows=load_rows,
    group_column="category",
    description=(
        "MBBQ: BBQ's templates for six categories in English, Dutch, Spanish and Turkish (10,088 questions per language), "
        "each after an ambiguous and a disambiguated context, with a parallel control set (first names instead of the "
        "words that name a group); target_loc marks the stereotyped group's answer (-1: none or two), in both polarities."
    ),
    citation=CITATION,
    license="other",  # the repository states none; the data derive from BBQ's (CC BY 4.0)
    homepage="https://github.com/Veranep/MBBQ",
    sizes={language: sum(main + control for main, control in ROWS.values()) for language in LANGUAGES},
)


# The data files, the upstream repository's layout (mbbq/data/<file>), verified by git blob id; and the authors'
# prompts and reply-reading phrase lists (read as data by lmbias.benchmarks.mbbq.detect) and their script (the tests'
# reference for reading replies).
RESOURCES = (Resource(
    name="mbbq/answer_detection", path="mbbq/answer_detection.py",
    url=f"{GITHUB_RAW}/Veranep/MBBQ/{MBBQ_COMMIT}/answer_detection.py",
    sha256="ae2b9f8c722ea6ce243d8465019d4d6c6937d66ee7cd725560ee51775fb34b99",
    git_blob="9dab5200ddbce472c59619b2dc9dfcf315dff493",
    description="MBBQ's prompts and answer-detection phrase lists (Neplenbroek et al. 2024, answer_detection.py)"),
    Resource(
    name="mbbq/script", path="mbbq/mbbq.py", url=f"{GITHUB_RAW}/Veranep/MBBQ/{MBBQ_COMMIT}/mbbq.py",
    sha256="1d73a731074383a4bff12e521ba94ef3e9f72977fa31591cbc0c5c3ce16d18cc",
    git_blob="9ec12c6611d9a706b7077f85c830458eb8af88ab",
    description="MBBQ's authors' script (prompts, answer detection and reply scores), the reference the tests compare with"),
) + tuple(
    Resource(
        name=f"mbbq/{file_name(category, dataset, language)[:-6]}",
        path=f"mbbq/data/{file_name(category, dataset, language)}",
        url=f"{GITHUB_RAW}/Veranep/MBBQ/{MBBQ_COMMIT}/data/{file_name(category, dataset, language)}",
        sha256=SHA256[category, dataset][language],
        git_blob=BLOBS[category, dataset][language],
        description=f"MBBQ {category} {dataset} set, {language} (Neplenbroek et al. 2024)",
        lines=ROWS[category][SETS.index(dataset)],  # one item per line
    )
    for category in CATEGORIES for dataset in SETS for language in LANGUAGES
)
