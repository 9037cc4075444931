"""One line registers a benchmark: its package's data module's SPEC and RESOURCES are found through its
``lmbias.benchmarks`` entry point (lmbias.plugins), so that setup.cfg names each built-in benchmark once and a
third-party package needs one entry point too. The entry points are read from distribution metadata written here
(setup.cfg's own groups, or a package's), put first on ``sys.path`` so that they stand for the installed ones."""

from __future__ import annotations

import configparser
import importlib
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from lmbias.benchmarks import REGISTRY as BENCHMARKS
from lmbias.data import DATASETS
from lmbias.resources import REGISTRY as RESOURCES

ROOT = Path(__file__).resolve().parents[1]
# What setup.cfg's lmbias.datasets and lmbias.resources groups named, one line each, before a benchmark's one line did
# (main db0a66b): 17 datasets, and the data files of 13 benchmark packages, the scorers' catalogue and bias-bench's words.
DATASET_NAMES = ["bold", "stereoset", "crows_pairs", "counterfactual_templates", "bbq", "winobias", "winogender",
                 "holistic_bias", "mbbq", "esbbq", "cabbq", "kobbq", "cbbq", "seat", "discrim_eval", "toxigen",
                 "real_toxicity_prompts"]
RESOURCE_MODULES = [*(f"lmbias.benchmarks.{name}.data" for name in (
    "bold", "stereoset", "crows_pairs", "bbq", "winobias", "winogender", "holistic_bias", "mbbq", "esbbq", "kobbq", "cbbq",
    "seat", "toxigen")), "lmbias.scorers.catalogue", "lmbias.debias.attribute_words"]


def write_distribution(folder: Path, name: str, groups: dict) -> None:
    """A distribution's metadata in ``folder``: ``name``'s METADATA and its entry points (group -> lines)."""
    info = folder / f"{name}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("".join(f"[{group}]\n{lines}\n\n" for group, lines in groups.items()))


@pytest.fixture
def reread(monkeypatch):
    """Put a folder first on sys.path and read the registries again (restored afterwards)."""
    def put_first(folder: Path) -> None:
        monkeypatch.syspath_prepend(str(folder))
        importlib.invalidate_caches()
        for registry in (BENCHMARKS, DATASETS, RESOURCES):
            registry.reload()

    yield put_first
    monkeypatch.undo()
    importlib.invalidate_caches()
    for registry in (BENCHMARKS, DATASETS, RESOURCES):
        registry.reload()


def test_setup_cfg_registers_every_dataset_and_data_file_through_one_line_per_benchmark(tmp_path, reread):
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    groups = {group: config["options.entry_points"][group].strip() for group in
              ("lmbias.benchmarks", "lmbias.datasets", "lmbias.resources")}
    assert len(groups["lmbias.benchmarks"].splitlines()) >= 17  # one line per benchmark
    # only what no benchmark package's data module holds as SPEC / RESOURCES: EsBBQ's two specs, the scorers' and
    # bias-bench's files (a benchmark's own line here would be its second)
    assert [line.split(" = ")[1] for line in groups["lmbias.datasets"].splitlines() + groups["lmbias.resources"].splitlines()] \
        == ["lmbias.benchmarks.esbbq.data:ESBBQ_SPEC", "lmbias.benchmarks.esbbq.data:CABBQ_SPEC",
            "lmbias.scorers.catalogue:RESOURCES", "lmbias.debias.attribute_words:RESOURCES"]
    write_distribution(tmp_path, "lmbias", groups)  # stands for the installed lmbias's metadata
    reread(tmp_path)
    assert len(entry_points(group="lmbias.datasets")) == 2  # the metadata written here, not the installed lmbias's
    assert set(DATASET_NAMES) <= set(DATASETS)  # 15 of the 17 through their benchmark's line alone
    expected = {resource.name for module in RESOURCE_MODULES for resource in importlib.import_module(module).RESOURCES}
    assert len(expected) > 100 and expected <= set(RESOURCES)


PACKAGE = '''
from lmbias.benchmarks import Benchmark, HubDataset, MetricSpec
from lmbias.benchmarks.declared import Ask
from lmbias.protocols import LIKELIHOOD

BENCHMARK = Benchmark(name="dice", display_name="Dice", description="dice", dataset="dice_rolls",
                      hub_dataset=HubDataset("x/dice", "Dice", "test"), metrics=(MetricSpec("six", "Sixes", "%", 16.7, None, 1, "s"),),
                      protocols=(Ask(LIKELIHOOD, "score", lambda rows, settings: None),), items=lambda settings, data_dir: [],
                      measure=lambda records, rows, settings, data_dir: {}, data=lambda rows, settings, data_dir: {},
                      counted=lambda rows, settings: {}, records=lambda results: [], summary=lambda results, out: "",
                      report_section=lambda *a: [])
'''
DATA = '''
from lmbias.data.spec import DatasetSpec
from lmbias.resources import Resource

SPEC = DatasetSpec(name="dice_rolls", configs={"all": "every roll"}, split="test", columns={"id": "string"},
                   load_rows=lambda config, data_dir=None: [{"id": "1"}], group_column=None, description="Rolls.",
                   citation="", license="cc0-1.0", homepage="", sizes={"all": 1})
RESOURCES = (Resource("dice/rolls", "dice/rolls.txt", None, "0" * 64, "the rolls"),)
'''


def test_a_third_party_benchmark_brings_its_dataset_and_files_with_its_one_entry_point(tmp_path, reread):
    package = tmp_path / "lmbias_toy_dice"
    package.mkdir()
    (package / "__init__.py").write_text(PACKAGE)
    (package / "data.py").write_text(DATA)
    write_distribution(tmp_path, "lmbias_toy_dice", {"lmbias.benchmarks": "dice = lmbias_toy_dice:BENCHMARK"})
    assert "dice_rolls" not in DATASETS and "dice/rolls" not in RESOURCES
    reread(tmp_path)
    assert DATASETS["dice_rolls"].sizes == {"all": 1} and RESOURCES["dice/rolls"].path == "dice/rolls.txt"
    assert "bold" in DATASETS  # lmbias's own stay
    assert BENCHMARKS["dice"].dataset == "dice_rolls"  # the benchmark itself is found by the same line
