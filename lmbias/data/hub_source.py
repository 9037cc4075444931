"""The originals as the Hugging Face Hub hosts them, mapped onto lmbias rows (``source="hub"``).

* BOLD as ``AlexaAI/bold``: one record per Wikipedia page, ``{domain, name, category, prompts: [...],
  wikipedia: [...]}`` in JSON Lines files (``<domain>_prompt_wiki.json``), split ``train``.
* StereoSet as ``McGill-NLP/stereoset``: configs ``intrasentence`` and ``intersentence``, split
  ``validation``; each item ``{id, target, bias_type, context, sentences: {sentence: [...], id: [...],
  gold_label: [...], labels: [...]}}``, the gold labels as strings or as a ``ClassLabel``.

The rows are the ones the local files give (same ids, fields and order), so a run reads the same
data from either source. ``hub_id`` may also name a local folder in the Hub's layout: ``datasets``
reads a folder before it asks the Hub.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import InputError
from ..resources import ResourceError
from . import bold, stereoset
from .spec import Row, check_text_fields, layout_error

SOURCES = ("local", "hub")


def _read(hub_id: str, config: str | None, split: str):
    import datasets

    try:
        return datasets.load_dataset(hub_id, config, split=split)
    except Exception as error:  # the Hub's and datasets' own errors say what went wrong; keep them to one line
        raise ResourceError(f"could not read {hub_id!r}{f' (config {config!r})' if config else ''} split {split!r} with "
                            f"datasets.load_dataset: {type(error).__name__}: {str(error).splitlines()[0][:300]}; "
                            "use source='local' (the default) to read the original files") from None


def _bold_rows(hub_id: str, config: str) -> list[Row]:
    records = _read(hub_id, None, bold.SPEC.split)
    missing = {"domain", "name", "category", "prompts", "wikipedia"} - set(records.column_names)
    if missing:
        raise layout_error(hub_id, "AlexaAI/bold's columns domain, name, category, prompts, wikipedia",
                           f"no column {sorted(missing)}")
    by_domain: dict[str, list[Row]] = {domain: [] for domain in bold.DOMAINS}
    for number, record in enumerate(records):
        domain, group, name = record["domain"], record["category"], record["name"]
        where = f"record {number} ({domain}/{group}/{name})"
        if domain not in by_domain:
            raise layout_error(hub_id, f"a domain in {bold.DOMAINS} at {where}", repr(domain))
        if len(record["prompts"]) != len(record["wikipedia"]):
            raise layout_error(hub_id, f"as many wikipedia sentences as prompts at {where}",
                               f"{len(record['wikipedia'])} and {len(record['prompts'])}")
        for index, (prompt, sentence) in enumerate(zip(record["prompts"], record["wikipedia"])):
            check_text_fields(hub_id, f"{where}[{index}]", {"wikipedia": sentence}, ("wikipedia",))
            by_domain[domain].append({"id": f"{domain}/{group}/{name}/{index}", "domain": domain, "group": group,
                                      "name": name, "prompt": prompt, "wikipedia": sentence,
                                      "merged_group": bold.merged_profession_group(group)})
    return [row for domain in (bold.DOMAINS if config == "all" else (config,)) for row in by_domain[domain]]


def _gold_label_names(hub_id: str, items) -> Callable[[object], str]:
    """Gold labels as names: the Hub's Parquet stores them as a ``ClassLabel`` (integers), its former script as strings.

    ``sentences`` is a ``Sequence`` of a dict under datasets 3 and a dict of ``List`` features from
    datasets 4 on; flattened, both give ``sentences.gold_label`` as a list feature of the labels."""
    import datasets

    gold = items.features.flatten().get("sentences.gold_label")
    if not hasattr(gold, "feature"):
        raise layout_error(hub_id, "a column sentences of {sentence, id, gold_label} lists", repr(items.features.get("sentences")))
    return gold.feature.int2str if isinstance(gold.feature, datasets.ClassLabel) else str


def _stereoset_rows(hub_id: str, config: str) -> list[Row]:
    rows = []
    for task in stereoset.TASKS if config == "all" else (config,):
        items = _read(hub_id, task, stereoset.SPEC.split)
        label_name = _gold_label_names(hub_id, items)
        for number, item in enumerate(items):
            where = f"{task} item {number}"
            sentences = item["sentences"]
            try:
                by_label = {stereoset.GOLD_LABELS[label_name(label)]: (sentence, sentence_id) for label, sentence, sentence_id
                            in zip(sentences["gold_label"], sentences["sentence"], sentences["id"], strict=True)}
                if len(by_label) != 3 or len(sentences["sentence"]) != 3:
                    raise KeyError("sentences")
            except (KeyError, TypeError, ValueError) as error:
                raise layout_error(hub_id, f"at {where} three sentences labelled stereotype / anti-stereotype / unrelated",
                                   f"missing or invalid {error}") from None
            row = {"id": item["id"], "task": task, "bias_type": item["bias_type"], "target": item["target"],
                   "context": item["context"], **{key: by_label[key][0] for key in stereoset.GOLD_LABELS.values()},
                   **{f"{key}_id": by_label[key][1] for key in stereoset.GOLD_LABELS.values()}}
            rows.append(stereoset.check_row(hub_id, where, row))
    return rows


HUB_DATASETS: dict[str, tuple[str, Callable[[str, str], list[Row]]]] = {
    "bold": ("AlexaAI/bold", _bold_rows),
    "stereoset": ("McGill-NLP/stereoset", _stereoset_rows),
}


def hub_rows(name: str, config: str, hub_id: str | None = None) -> list[Row]:
    """Rows of dataset ``name`` (config ``config``) read from the Hub's copy of the original,
    ``hub_id`` (default: :data:`HUB_DATASETS`' id; a local folder in the same layout works too).

    Raises:
        InputError: the dataset has no Hub original lmbias can map.
        ResourceError: the Hub copy cannot be read or is not laid out as expected (the row is named).
    """
    if name not in HUB_DATASETS:
        raise InputError(f"source='hub' reads {', '.join(HUB_DATASETS)} from the Hub's originals; {name!r} is read from "
                         "its original files (source='local')")
    default_id, rows_of = HUB_DATASETS[name]
    return rows_of(hub_id or default_id, config)
