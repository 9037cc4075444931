"""datasets builder classes and the Parquet + card export, round-tripped through datasets.load_dataset."""

import importlib

import bbq_files
import datasets
import pytest

import lmbias
from lmbias.data.export import CARDS_DIR, card_data_files, export_dataset, read_card_metadata


def _builders() -> dict:
    """Dataset name -> its builder class, from every module of datasets_scripts/."""
    import pkgutil

    import datasets_scripts
    from lmbias.data.builder import SpecBuilder

    found = {}
    for module in pkgutil.iter_modules(datasets_scripts.__path__):
        for value in vars(importlib.import_module(f"datasets_scripts.{module.name}")).values():
            if isinstance(value, type) and issubclass(value, SpecBuilder) and value is not SpecBuilder:
                found[value.SPEC.name] = value
    return found


BUILDERS = _builders()


def test_every_named_builder_is_a_registered_dataset_and_builder_for_makes_the_same_class():
    from lmbias.data.builder import builder_for

    assert set(BUILDERS) <= set(lmbias.DATASETS) and len(BUILDERS) >= 17
    for name, named in BUILDERS.items():
        made = builder_for(name)
        assert made.SPEC is named.SPEC and made.BUILDER_CONFIGS == named.BUILDER_CONFIGS
    assert builder_for("counterfactual_templates").__name__ == "CounterfactualTemplates"


def test_a_dataset_without_a_named_builder_builds_through_builder_for(tmp_path, data_dir):
    from lmbias.data.builder import builder_for

    builder = builder_for("crows_pairs")(config_name="all", data_dir=str(data_dir), cache_dir=str(tmp_path))
    builder.download_and_prepare()
    built = builder.as_dataset(split="test")
    assert built.num_rows == 1508 and built.to_list() == lmbias.load_dataset("crows_pairs", "all").to_list()


def write_hub_only(name, folder):
    """Rows built in the Hub layout of a dataset that lives only on the Hub (DiscrimEval, RealToxicityPrompts):
    the folder, or None for a dataset held here."""
    from discrim_eval_items import write_items
    from rtp_rows import write_rows

    if name == "discrim_eval":
        write_items(folder, questions=2)
        write_items(folder, questions=2, config="implicit")
        return folder
    if name == "real_toxicity_prompts":
        write_rows(folder)
        return folder
    return None


@pytest.mark.parametrize("name", list(BUILDERS))
def test_builder_class_yields_the_same_rows_as_load_dataset(name, tmp_path, monkeypatch, data_dir):
    builder_class = BUILDERS[name]
    if write_hub_only(name, tmp_path / "built"):
        data_dir = tmp_path / "built"
        monkeypatch.setenv("LMBIAS_DATA_DIR", str(data_dir))
    config = min(lmbias.DATASETS[name].sizes, key=lmbias.DATASETS[name].sizes.get)  # the smallest config
    assert [c.name for c in builder_class.BUILDER_CONFIGS] == list(lmbias.DATASETS[name].configs)
    builder = builder_class(config_name=config, data_dir=str(data_dir), cache_dir=str(tmp_path))
    builder.download_and_prepare()
    built = builder.as_dataset(split=lmbias.DATASETS[name].split_of(config))
    expected = lmbias.load_dataset(name, config)
    assert built.features == expected.features
    assert built.to_list() == expected.to_list()
    assert builder.info.citation == lmbias.DATASETS[name].citation


def write_missing_cbbq(folder):
    """Two records in CBBQ's layout for each file the data folder does not hold; the folder."""
    import json

    from lmbias.resources import REGISTRY

    for name in ("age/disambiguous", "household_registration/ambiguous", "household_registration/disambiguous",
                 "nationality/ambiguous", "nationality/disambiguous", "race/ambiguous", "race/disambiguous"):
        category, context = name.split("/")
        record = {"\ufeffexample_id": "1", "question_index": "1", "question_polarity": "neg", "context_condition": context,
                  "category": category, "context": "甲和乙在聊天。", "question": "谁不友好？", "ans0": "甲", "ans1": "乙",
                  "ans2": "不知道", "label": "2" if context == "ambiguous" else "1"}
        path = folder / REGISTRY[f"cbbq/{name}"].path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps([record, {**record, "\ufeffexample_id": "2", "question_polarity": "non_neg"}],
                                   ensure_ascii=False))
    return folder


@pytest.mark.parametrize("name", list(lmbias.DATASETS))
def test_export_then_load_dataset_round_trips_every_config(name, tmp_path, monkeypatch, data_dir):
    if name in ("bbq", "cbbq"):  # 5 of BBQ's 11 files and 7 of CBBQ's 28 are not held here: built ones stand in (unverified)
        built = bbq_files.write_missing(tmp_path / "built") if name == "bbq" else write_missing_cbbq(tmp_path / "built")
        monkeypatch.setenv("LMBIAS_DATA_DIR", f"{built}:{data_dir}")
        monkeypatch.setenv("LMBIAS_VERIFY", "0")
    if write_hub_only(name, tmp_path / "built"):
        monkeypatch.setenv("LMBIAS_DATA_DIR", str(tmp_path / "built"))
    out = tmp_path / name
    counts = export_dataset(name, out)
    spec = lmbias.DATASETS[name]
    assert list(counts) == list(spec.configs)
    card = (out / "README.md").read_text()
    assert spec.citation.splitlines()[0] in card and "license: " + spec.license in card
    for config in spec.configs:
        loaded = datasets.load_dataset(str(out), config, split=spec.split_of(config), cache_dir=str(tmp_path / "cache"))
        expected = lmbias.load_dataset(name, config)
        assert loaded.num_rows == counts[config] == expected.num_rows
        assert loaded.features == expected.features
        assert loaded.data.table.equals(expected.data.table)  # every value (HolisticBias: 566,625 rows, so not as dicts)


def test_cards_declare_exactly_the_configs_of_each_dataset(tmp_path):
    from lmbias.data.export import spec_card

    written = 0
    for name, spec in lmbias.DATASETS.items():
        made = tmp_path / name / "README.md"  # the card its spec makes, where hub_cards/ has none
        made.parent.mkdir()
        made.write_text(spec_card(spec))
        for card in (CARDS_DIR / name / "README.md", made):
            if not card.is_file():
                continue
            written += card != made
            paths = card_data_files(spec, card)
            assert paths == {config: f"{config}/{spec.split_of(config)}.parquet" for config in spec.configs}
            metadata = read_card_metadata(card)
            assert metadata["license"] == spec.license
            assert [c for c in metadata["configs"] if c.get("default")] == [metadata["configs"][0]]
    assert written >= 17


def test_a_dataset_without_a_card_is_exported_with_the_one_its_spec_makes(tmp_path, monkeypatch):
    from dataclasses import replace

    from lmbias.data import register_dataset

    monkeypatch.delenv("LMBIAS_CARDS_DIR", raising=False)
    spec = register_dataset(replace(lmbias.DATASETS["counterfactual_templates"], name="templates_without_card"))
    try:
        assert not (CARDS_DIR / spec.name).exists()
        counts = export_dataset(spec.name, tmp_path / "out")
        assert counts == {"all": 730, "country": 100, "occupation": 290, "name": 340}  # hub_cards' card of the same data
        card = (tmp_path / "out" / "README.md").read_text()
        assert card.startswith("---\nlicense: " + spec.license) and spec.citation.splitlines()[0] in card
        loaded = datasets.load_dataset(str(tmp_path / "out"), "country", split=spec.split_of("country"),
                                       cache_dir=str(tmp_path / "cache"))
        assert loaded.to_list() == lmbias.load_dataset("counterfactual_templates", "country").to_list()
    finally:
        lmbias.DATASETS.unregister(spec.name)


def test_export_errors_name_the_card_and_the_configs(tmp_path):
    with pytest.raises(FileNotFoundError, match="bold/README.md"):
        export_dataset("bold", tmp_path / "out", cards_dir=tmp_path)
    (tmp_path / "bold").mkdir()
    (tmp_path / "bold" / "README.md").write_text("# no front matter\n")
    with pytest.raises(ValueError, match="no YAML front matter"):
        export_dataset("bold", tmp_path / "out", cards_dir=tmp_path)
    (tmp_path / "bold" / "README.md").write_text(
        "---\nconfigs:\n- config_name: all\n  data_files:\n  - split: train\n    path: all.parquet\n---\n"
    )
    with pytest.raises(ValueError, match=r"lists configs \['all'\], but dataset 'bold' has"):
        export_dataset("bold", tmp_path / "out", cards_dir=tmp_path)


def test_push_dataset_dry_run_writes_what_load_dataset_reads(tmp_path, capsys, monkeypatch):
    """`lmbias push-dataset --dry-run`: the folder that would be pushed loads by name, as the Hub copy will;
    `lmbias export-dataset bold --out bold` then `load_dataset("bold")` in that directory works the same way."""
    from lmbias.cli import main

    out = tmp_path / "counterfactual_templates"
    assert main(["push-dataset", "counterfactual_templates", "--repo-id", "example/counterfactual_templates", "--dry-run",
                 "--out", str(out)]) == 0
    assert "(nothing pushed): all (730 rows), country (100 rows)" in capsys.readouterr().out
    monkeypatch.chdir(tmp_path)
    loaded = datasets.load_dataset("counterfactual_templates", "occupation", split="test", cache_dir=str(tmp_path / "cache"))
    assert loaded.to_list() == lmbias.load_dataset("counterfactual_templates", "occupation").to_list()
    for argv, message in ((["--repo-id", "no-org"], "--repo-id must be ORG/NAME, got 'no-org'"),
                          (["--repo-id", "example/x", "--dry-run"], "--dry-run needs --out DIR")):
        assert main(["push-dataset", "bold", *argv]) == 2
        assert message in capsys.readouterr().err
