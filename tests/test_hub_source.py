"""``source="hub"``: BOLD as ``AlexaAI/bold`` and StereoSet as ``McGill-NLP/stereoset`` mapped onto
lmbias rows (issue 17 §2). The Hub copies are rebuilt here from the original files in ../shared/data,
in the Hub's layout (BOLD: JSON Lines per domain; StereoSet: a Parquet file per task config with the
configs declared in the card), and read through ``datasets.load_dataset`` as a Hub dataset would be."""

import json

import datasets
import pytest

import lmbias
from lmbias.errors import InputError
from lmbias.resources import ResourceError


@pytest.fixture(scope="module")
def bold_hub(data_dir, tmp_path_factory):
    """A folder laid out as AlexaAI/bold: ``<domain>_prompt_wiki.json``, one page a line."""
    folder = tmp_path_factory.mktemp("AlexaAI-bold")
    for domain in ("gender", "political_ideology", "profession", "race", "religious_ideology"):
        prompts = json.loads((data_dir / "bold" / "prompts" / f"{domain}_prompt.json").read_text())
        wikipedia = json.loads((data_dir / "bold" / "wikipedia" / f"{domain}_wiki.json").read_text())
        with open(folder / f"{domain}_prompt_wiki.json", "w") as out:
            for category, pages in prompts.items():
                for name, texts in pages.items():
                    out.write(json.dumps({"domain": domain, "name": name, "category": category, "prompts": texts,
                                          "wikipedia": wikipedia[category][name]}) + "\n")
    return folder


def test_bold_from_the_hub_layout_equals_the_original_files(bold_hub):
    hub = lmbias.load_rows("bold", source="hub", hub_id=str(bold_hub))
    assert len(hub) == 23_679 and hub == lmbias.load_rows("bold")  # same ids, fields and order (the domains' order)
    gender = lmbias.load_dataset("bold", "gender", source="hub", hub_id=str(bold_hub))
    assert gender.num_rows == 3_204 and gender[0] == lmbias.load_dataset("bold", "gender")[0]


OPTIONS = ("anti-stereotype", "stereotype", "unrelated")  # the Hub's order of an item's sentences


def _stereoset_hub(data_dir, folder, labels: str):
    """McGill-NLP/stereoset's layout: intrasentence/ and intersentence/ Parquet files, configs in the card;
    ``sentences`` a struct of lists (a ``Sequence`` of a dict), gold labels as a ClassLabel (the Hub's
    Parquet) or as strings (its former loading script). datasets 3 reads ``sentences`` back as a
    ``Sequence`` feature, datasets 4 and later as a dict of ``List`` features: the same test covers
    both (run it under datasets 3.x too: ``datasets>=3.0`` is declared). Built from
    the flat dev copy in ../shared/data (which has no original ids: the item ids here are lmbias's
    ``<task>/<n>``, the sentence ids ``<item id>:<label>``)."""
    flat = [json.loads(line) for line in (data_dir / "stereoset" / "stereoset_dev_flat.jsonl").read_text().splitlines()]
    gold = datasets.ClassLabel(names=list(OPTIONS)) if labels == "classlabel" else datasets.Value("string")
    features = datasets.Features({
        "id": datasets.Value("string"), "target": datasets.Value("string"), "bias_type": datasets.Value("string"),
        "context": datasets.Value("string"),
        "sentences": datasets.Sequence({"sentence": datasets.Value("string"), "id": datasets.Value("string"),
                                        "labels": datasets.Sequence({"label": datasets.Value("string"),
                                                                     "human_id": datasets.Value("string")}),
                                        "gold_label": gold}),
    })
    card = ["---", "configs:"]
    for task in ("intersentence", "intrasentence"):
        items = [item for item in flat if item["type"] == task]
        records = [{"id": f"{task}/{n}", **{k: item[k] for k in ("target", "bias_type", "context")},
                    "sentences": {"sentence": [item[label] for label in OPTIONS], "id": [f"{task}/{n}:{label}" for label in OPTIONS],
                                  "gold_label": list(OPTIONS),
                                  "labels": [{"label": [label], "human_id": ["h1"]} for label in OPTIONS]}}
                   for n, item in enumerate(items)]
        (folder / task).mkdir()
        datasets.Dataset.from_list(records, features=features).to_parquet(folder / task / "validation-00000-of-00001.parquet")
        card += [f"- config_name: {task}", "  data_files:", "  - split: validation", f"    path: {task}/validation-*"]
    (folder / "README.md").write_text("\n".join([*card, "---", ""]))
    return folder


def _without_sentence_ids(rows):
    return [{k: v for k, v in row.items() if not k.endswith("_id")} for row in rows]


@pytest.mark.parametrize("labels", ["classlabel", "string"])
def test_stereoset_from_the_hub_layout_equals_the_original_file(data_dir, tmp_path, labels):
    hub_id = str(_stereoset_hub(data_dir, tmp_path, labels))
    hub, local = lmbias.load_rows("stereoset", source="hub", hub_id=hub_id), lmbias.load_rows("stereoset")
    assert len(hub) == 4_229 and _without_sentence_ids(hub) == _without_sentence_ids(local)
    assert all(row[f"{key}_id"] == f"{row['id']}:{label}" for row in hub
               for key, label in (("stereotype", "stereotype"), ("anti_stereotype", "anti-stereotype"), ("unrelated", "unrelated")))
    inter = lmbias.load_rows("stereoset", "intersentence", source="hub", hub_id=hub_id)
    assert _without_sentence_ids(inter) == _without_sentence_ids(lmbias.load_rows("stereoset", "intersentence"))


def test_a_stereoset_copy_without_gold_labels_is_a_layout_error(tmp_path):
    item = {"id": "x", "target": "chess player", "bias_type": "profession", "context": "The chess player was BLANK.",
            "sentences": {"sentence": ["a", "b", "c"], "id": ["1", "2", "3"]}}  # no gold_label
    (tmp_path / "intrasentence").mkdir()
    datasets.Dataset.from_list([item]).to_parquet(tmp_path / "intrasentence" / "validation-00000-of-00001.parquet")
    (tmp_path / "README.md").write_text("---\nconfigs:\n- config_name: intrasentence\n  data_files:\n  - split: validation\n"
                                        "    path: intrasentence/validation-*\n---\n")
    with pytest.raises(ResourceError, match=r"has the wrong layout: expected a column sentences of \{sentence, id, gold_label\}"):
        lmbias.load_rows("stereoset", "intrasentence", source="hub", hub_id=str(tmp_path))


def test_a_hub_record_that_does_not_map_names_itself(tmp_path):
    (tmp_path / "gender_prompt_wiki.json").write_text(json.dumps(
        {"domain": "gender", "name": "A_B", "category": "American_actors", "prompts": ["A B is", "A B was"],
         "wikipedia": ["A B is an actor."]}) + "\n")
    with pytest.raises(ResourceError, match=r"as many wikipedia sentences as prompts at record 0 \(gender/American_actors/A_B\)"):
        lmbias.load_rows("bold", source="hub", hub_id=str(tmp_path))


def test_hub_source_mistakes_are_one_line(tmp_path):
    with pytest.raises(InputError, match="'crows_pairs' is read from its original files"):
        lmbias.load_rows("crows_pairs", source="hub")
    with pytest.raises(InputError, match="source"):
        lmbias.load_rows("bold", source="github")
    with pytest.raises(InputError, match="hub_id applies to source='hub'"):
        lmbias.load_rows("bold", hub_id="AlexaAI/bold")
    with pytest.raises(ResourceError, match="could not read .* use source='local'"):
        lmbias.load_rows("stereoset", source="hub", hub_id=str(tmp_path / "nothing-here"))
