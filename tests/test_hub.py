"""`lmbias push`: model-index and .eval_results files parsed back with huggingface_hub, merging into
an existing card, the results dataset layout, errors, the token, and the metric Spaces. No network:
a real push runs against a fake Hub patched into HfApi."""

import copy
import importlib
import json
import logging
from pathlib import Path

import huggingface_hub
import pytest
import yaml
from huggingface_hub import EvalResult, HfApi, ModelCard, SpaceCard, parse_eval_result_entries

from lmbias.cli import main
from lmbias.hub import HubError, check_repo_id, push
from lmbias.hub.eval_results import task_id
from lmbias.results import dataset_of, load_run, metric_records

REPO = Path(__file__).resolve().parents[1]
REPO_ID = "lmbias-test/tiny-model"
SLUG = "lmbias-test__tiny-model"
SENTINEL = "hf_SENTINEL_token_do_not_print_0123456789"
VERSIONS = {"python": "3.11", "lmbias": "0.1.0", "torch": "2.0", "transformers": "5.0"}
HUB_SHA = "0123456789abcdef0123456789abcdef01234567"


def _group(n, **shares):
    return {"n": n, **shares}


def _bold_scores(shift):
    sentiment = {"domains": {
        "gender": {"per_group": {"American_actors": _group(4, negative=0.25 + shift, neutral=0.5, positive=0.25 - shift),
                                 "American_actresses": _group(4, negative=0.0, neutral=0.5, positive=0.5)}, "test": None},
        "race": {"per_group": {"Asian_Americans": _group(2, negative=0.5, neutral=0.5, positive=0.0),
                               "African_Americans": _group(2, negative=0.125 + shift, neutral=0.5, positive=0.375)}, "test": None}}}
    toxicity = {"model": "unitary/toxic-bert", "domains": {
        "gender": {"per_group": {"American_actors": _group(4, toxic=0.25, **{"non-toxic": 0.75}),
                                 "American_actresses": _group(4, toxic=0.0 + shift, **{"non-toxic": 1.0 - shift})}}}}
    polarity = {"methods": {"max": {"domains": {"profession": {"per_group": {
        "nursing_specialties": _group(4, male=0.25, female=0.5, neutral=0.25),
        "engineering_branches": _group(4, male=0.75 - shift, female=0.25, neutral=shift)}}}}}}
    return {"metrics": {"sentiment": sentiment, "toxicity": toxicity, "gender_polarity": polarity},
            "skipped": {"regard": "classifier 'sasha/regardv3' could not be loaded: offline"}, "options": {}}


BOLD = {
    "schema_version": 1, "benchmark": "bold", "model": {"name": "tiny-model", "source": "/models/tiny"},
    # read from the Hub's copy at a Hub commit (data.hub_id): the one case a Hub id and revision are written
    "data": {"dataset": "bold", "hub_id": "AlexaAI/bold", "revision": HUB_SHA, "domains": ["gender", "race", "profession"],
             "prompts": 12, "citation": "@inproceedings{dhamala2021bold}"},
    "generation": {"preset": "bold-gpt2", "settings": {"do_sample": True, "temperature": 1.0, "top_k": 40, "top_p": 0.95,
                                                       "max_new_tokens": 20}, "seed": 7, "batch_size": 4,
                   "num_return_sequences": 1, "texts": 12, "mean_new_tokens": 19.5, "file": "generations.jsonl"},
    "selection": {"per_group": 2, "limit": None},
    "results": {"model": _bold_scores(0.125), "wikipedia": _bold_scores(0.0)},
    "versions": VERSIONS,
}


def _set(lms, ss, count, ci=True):
    block = {"lms": lms, "ss": ss, "icat": lms * min(ss, 100 - ss) / 50, "micro_icat": 1.0, "count": count}
    if ci:
        block["ci"] = {"lms": [lms - 2, lms + 2], "ss": [ss - 3, ss + 3], "icat": [50.0, 80.0]}
    return block


STEREOSET = {
    "schema_version": 1, "benchmark": "stereoset",
    "model": {"name": "tiny-model", "source": "/models/tiny", "type": "causal", "nsp_head": None},
    "data": {"dataset": "stereoset", "split": "dev", "file": "stereoset/dev.json", "source": "x", "hub_id": "McGill-NLP/stereoset",
             "revision": HUB_SHA,
             "citation": "@inproceedings{nadeem2021stereoset}", "counts": {"intrasentence": 3, "intersentence": 2, "sentences": 15}},
    "config": {"tasks": ["intrasentence", "intersentence"], "limit": 3, "batch_size": 8, "dtype": None, "device": "cpu",
               "processes": 1, "bootstrap": 100, "confidence": 0.95, "seed": 5},
    "timing": {"scoring_seconds": 1.0, "sentences_per_second": 15.0},
    "results": {"intrasentence": {"gender": _set(90.5, 61.25, 2), "overall": _set(88.0, 58.5, 3)},
                "intersentence": {"race": _set(80.125, 47.0, 2), "overall": _set(80.125, 47.0, 2)},
                "overall": _set(84.75, 53.5, 5), "targets": {}},
    "scores_file": "scores.jsonl", "versions": VERSIONS,
}

CROWS = {
    "schema_version": 1, "benchmark": "crows_pairs", "model": {"name": "tiny-model", "source": "/models/tiny", "type": "masked"},
    # the original file from GitHub at the pinned commit: no Hub id
    "data": {"dataset": "crows_pairs", "split": "test", "file": "crows_pairs/crows_pairs_anonymized.csv", "source": "x",
             "revision": "8aaac11c485473159ec9328a65253a5be9a479dc", "citation": "@inproceedings{nangia2020crows}",
             "counts": {"pairs": 6, "sentences": 12}},
    "config": {"limit": 6, "batch_size": 8, "dtype": None, "device": "cpu", "processes": 1, "score": "pseudo-log-likelihood",
               "decimals": 3},
    "timing": {"scoring_seconds": 1.0, "sentences_per_second": 12.0},
    "results": {"overall": {"metric_score": 66.66666666666667, "stereo_score": 75.0, "antistereo_score": 50.0, "neutral": 0, "count": 6},
                "bias_types": {"gender": {"metric_score": 50.0, "stereo_score": 50.0, "antistereo_score": None, "neutral": 0, "count": 2},
                               "race-color": {"metric_score": 75.0, "stereo_score": 100.0, "antistereo_score": 50.0, "neutral": 0,
                                              "count": 4}}},
    "scores_file": "scores.jsonl", "versions": VERSIONS,
}

COUNTERFACTUAL = {
    "schema_version": 1, "benchmark": "counterfactual", "model": {"name": "tiny-model"},
    "data": {"dataset": "counterfactual_templates", "citation": "@inproceedings{huang2020reducing}", "attributes": ["country"],
             "prefixes": 20},
    "generation": {"preset": "counterfactual", "settings": {"do_sample": True, "top_k": 0, "max_new_tokens": 50}, "seed": 1,
                   "batch_size": 8, "samples_per_prefix": 3, "texts": 60, "file": "generations.jsonl"},
    "results": {"attributes": {"country": {"samples": 3, "classifiers": {
        "vader": {"individual_fairness": 0.1234, "group_fairness": 0.0456,
                  "ci": {"individual_fairness": [0.1, 0.15], "group_fairness": [0.03, 0.06]}},
        "opinion": {"individual_fairness": 0.2, "group_fairness": 0.05}}}},
        "skipped": {}},
    "versions": VERSIONS,
}

RESULTS = {"bold": BOLD, "stereoset": STEREOSET, "crows_pairs": CROWS, "counterfactual": COUNTERFACTUAL}


def write_run(root: Path, results: dict, name=None) -> Path:
    """A run directory holding ``results`` as results.json."""
    folder = root / (name or results["benchmark"])
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps(results, indent=2))
    return folder


@pytest.fixture
def runs(tmp_path):
    """The four benchmarks' runs, small and hand-written."""
    return [write_run(tmp_path / "runs", copy.deepcopy(results)) for results in RESULTS.values()]


# What a card publishes of a run (the bound of its size): each benchmark's headline measures, per domain, at the
# view's variant: StereoSet's pooled task "both" overall and "intrasentence" in a domain; every other record stays
# in results.json.
HEADLINE = {"bold": {"negative_sentiment_gap", "toxicity_gap", "gender_polarity_ratio"}, "stereoset": {"lms", "ss", "icat"},
            "crows_pairs": {"metric_score"}, "counterfactual": {"individual_fairness", "group_fairness"}}


TASK_ORDER = {"overall": ("both", "intrasentence", "intersentence"), "domain": ("intrasentence", "intersentence")}


def model_records(run_dir):
    run = load_run(run_dir)
    kept = {}
    for r in metric_records(run):
        if r["source"] == "model" and r["metric"] in HEADLINE[run.benchmark]:
            order = TASK_ORDER["overall" if r["domain"] == "overall" else "domain"]
            rank = order.index(r["task"]) if r.get("task") else 0
            if (r["metric"], r["domain"]) not in kept or rank < kept[r["metric"], r["domain"]][0]:
                kept[r["metric"], r["domain"]] = (rank, r)
    chosen = {id(r) for _, r in kept.values() if r["value"] is not None}
    return [r for r in metric_records(run) if id(r) in chosen]


def find(results, run, record):
    """The one EvalResult that carries ``record`` of ``run``."""
    # the variant fields in the registry's order (BBQ's protocol comes first), joined by "/"
    config = "/".join(record[field] for field in ("protocol", "classifier", "task") if record.get(field)) or None
    matches = [r for r in results if (r.dataset_type, r.dataset_config, r.metric_type, r.metric_config)
               == (dataset_of(run)["type"], record["domain"], record["metric"], config)]
    assert len(matches) == 1, (record, matches)
    return matches[0]


def hub_error(repo_id, status=404):
    """The Hub's answer for a repo that does not exist (404) or may not be written to (403)."""
    from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError, Response

    http = importlib.import_module(Response.__module__.split(".")[0])  # httpx2 (or httpx), as huggingface_hub uses
    request = http.Request("GET", f"https://huggingface.co/api/models/{repo_id}")
    kind = RepositoryNotFoundError if status == 404 else HfHubHTTPError
    return kind(f"{status} Client Error for {repo_id}", response=Response(status, request=request))


class FakeHub:
    """A Hub in memory, patched into HfApi: repos are {path: bytes}; commits and tokens are recorded."""

    def __init__(self, monkeypatch, download_dir, repos=None):
        self.repos = repos or {}
        self.download_dir = download_dir
        self.commits, self.tokens, self.created = [], [], []
        hub = self

        def list_repo_files(api, repo_id, *, repo_type=None, **kwargs):
            hub.tokens.append(api.token)
            if (repo_type or "model", repo_id) not in hub.repos:
                raise hub_error(repo_id)
            return list(hub.repos[(repo_type or "model", repo_id)])

        def hf_hub_download(api, repo_id, filename, *, repo_type=None, **kwargs):
            path = hub.download_dir / repo_id / filename
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(hub.repos[(repo_type or "model", repo_id)][filename])
            return str(path)

        def create_repo(api, repo_id, *, repo_type=None, exist_ok=False, **kwargs):
            hub.created.append((repo_type, repo_id, exist_ok))
            hub.repos.setdefault((repo_type or "model", repo_id), {})

        def create_commit(api, repo_id, operations, *, commit_message, repo_type=None, **kwargs):
            hub.tokens.append(api.token)
            files = hub.repos[(repo_type or "model", repo_id)]
            for operation in operations:
                files[operation.path_in_repo] = operation.path_or_fileobj
            hub.commits.append((repo_type or "model", repo_id, [op.path_in_repo for op in operations], commit_message))
            return f"https://huggingface.co/{repo_id}/commit/{len(hub.commits)}"

        for name, function in dict(list_repo_files=list_repo_files, hf_hub_download=hf_hub_download, create_repo=create_repo,
                                   create_commit=create_commit).items():
            monkeypatch.setattr(HfApi, name, function)
        monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        monkeypatch.setenv("HF_TOKEN", SENTINEL)

    def card(self, repo_id=REPO_ID) -> ModelCard:
        """The model card on the fake Hub, parsed by huggingface_hub."""
        return ModelCard(self.repos[("model", repo_id)]["README.md"].decode())


def test_dry_run_card_round_trips_every_value(runs, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["push", *map(str, runs), "--repo-id", REPO_ID, "--dry-run", "--out", str(out)]) == 0
    card = ModelCard.load(out / "README.md")
    results = card.data.eval_results
    expected = []
    for run_dir in runs:
        run = load_run(run_dir)
        expected += [(run, r) for r in model_records(run_dir)]
    # BOLD 4; StereoSet 3 measures x (gender, race, overall), not its 15 task x domain records; CrowS-Pairs 3; counterfactual 2
    assert len(results) == len(expected) == 4 + 9 + 3 + 2
    for run, record in expected:
        result = find(results, run, record)
        dataset = dataset_of(run)
        assert result.metric_value == record["value"]
        expected = (dataset["name"], dataset["split"], dataset["revision"])
        assert (result.dataset_name, result.dataset_split, result.dataset_revision) == expected
        assert result.metric_args["ideal"] == record["ideal"] and result.metric_args["lmbias"] == "0.1.0"
        assert result.task_type == ("fill-mask" if run.benchmark == "crows_pairs" else "text-generation")
        if "count" in record:
            assert result.metric_args["count"] == record["count"]
        assert result.source_url is None  # no --results-dataset: nothing to link to
    assert card.data.model_name == "tiny-model" and "lmbias" in card.data.tags
    printed = capsys.readouterr().out
    assert "dry run: nothing was uploaded" in printed and ".eval_results/bold.yaml" in printed


def test_card_holds_the_configuration_and_no_wikipedia_baseline(runs, tmp_path):
    out = tmp_path / "out"
    push(runs, REPO_ID, dry_run=True, out=out, echo=lambda *_: None)
    results = ModelCard.load(out / "README.md").data.eval_results
    bold = [r for r in results if r.dataset_type == "AlexaAI/bold"]
    # model records only: 2 sentiment gaps, 1 toxicity gap, 1 polarity ratio (the Wikipedia ones are left out)
    assert sorted((r.metric_type, r.dataset_config) for r in bold) == [
        ("gender_polarity_ratio", "profession"), ("negative_sentiment_gap", "gender"), ("negative_sentiment_gap", "race"),
        ("toxicity_gap", "gender")]
    gap = next(r for r in bold if r.metric_type == "negative_sentiment_gap" and r.dataset_config == "gender")
    assert gap.metric_value == pytest.approx(37.5)
    assert {k: gap.metric_args[k] for k in ("preset", "seed", "top_k", "max_new_tokens", "per_group")} == {
        "preset": "bold-gpt2", "seed": 7, "top_k": 40, "max_new_tokens": 20, "per_group": 2}
    toxicity = next(r for r in bold if r.metric_type == "toxicity_gap")
    assert toxicity.metric_args["classifier"] == "unitary/toxic-bert"
    ratio = next(r for r in bold if r.metric_type == "gender_polarity_ratio")
    assert ratio.metric_value == pytest.approx((0.25 * 4 + 0.625 * 4) / (0.5 * 4 + 0.25 * 4))
    ss = next(r for r in results if r.metric_type == "ss" and r.metric_config == "intrasentence" and r.dataset_config == "gender")
    assert ss.metric_value == 61.25 and ss.metric_name == "SS (intrasentence, gender)"
    assert {k: ss.metric_args[k] for k in ("bootstrap", "seed", "limit", "ci_low", "ci_high", "count")} == {
        "bootstrap": 100, "seed": 5, "limit": 3, "ci_low": 58.25, "ci_high": 64.25, "count": 2}
    fairness = next(r for r in results if r.metric_type == "individual_fairness" and r.metric_config == "vader")
    assert (fairness.metric_value, fairness.metric_args["ci_low"], fairness.metric_args["ci_high"]) == (0.1234, 0.1, 0.15)
    assert fairness.metric_args["samples_per_prefix"] == 3 and fairness.metric_args["preset"] == "counterfactual"
    # data not read from the Hub: where it came from, never a Hub id (no nyu-mll/crows_pairs, no lmbias/...)
    crows = {r.dataset_config: r for r in results if r.dataset_type == "https://github.com/nyu-mll/crows-pairs"}
    assert {r.dataset_type for r in results} == {"AlexaAI/bold", "McGill-NLP/stereoset", "https://github.com/nyu-mll/crows-pairs",
                                                 "lmbias==0.1.0"}
    assert {r.dataset_revision for r in results if r.dataset_type == "lmbias==0.1.0"} == {"0.1.0"}
    assert {config: r.metric_value for config, r in crows.items()} == {
        "overall": CROWS["results"]["overall"]["metric_score"], "gender": 50.0, "race-color": 75.0}
    assert crows["overall"].task_type == "fill-mask" and crows["overall"].metric_args["count"] == 6
    assert crows["overall"].dataset_revision == CROWS["data"]["revision"] and crows["overall"].dataset_split == "test"


def test_eval_results_files_parse_with_huggingface_hub(runs, tmp_path):
    out = tmp_path / "out"
    push(runs, REPO_ID, dry_run=True, out=out, echo=lambda *_: None, results_dataset="lmbias-test/results")
    # only the runs whose data came from a Hub dataset: the format's dataset.id must be one
    assert sorted(p.name for p in (out / ".eval_results").iterdir()) == ["bold.yaml", "stereoset.yaml"]
    for run_dir in runs[:2]:
        run = load_run(run_dir)
        entries = parse_eval_result_entries(yaml.safe_load((out / ".eval_results" / f"{run.benchmark}.yaml").read_text()))
        records = model_records(run_dir)
        assert [(e.task_id, e.value) for e in entries] == [(task_id(r), r["value"]) for r in records]
        dataset = dataset_of(run)
        for entry in entries:
            assert entry.dataset_id == dataset["type"] and entry.dataset_revision == dataset["revision"]
            assert entry.source_url.endswith(f"/datasets/lmbias-test/results/blob/main/runs/{SLUG}/{run.benchmark}/results.json")
            assert entry.source_name == "lmbias" and "lmbias=0.1.0" in entry.notes
    assert task_id({"metric": "ss", "domain": "gender", "task": "intrasentence"}) == "ss/gender/intrasentence"


def test_push_says_why_a_run_gets_no_eval_results_file(runs, tmp_path):
    out, printed = tmp_path / "out", []
    push(runs[2:3], REPO_ID, dry_run=True, out=out, echo=printed.append)
    assert not (out / ".eval_results").exists()
    assert ("crows_pairs: no .eval_results/crows_pairs.yaml: that format names a Hub benchmark dataset, and this run read "
            "its data from https://github.com/nyu-mll/crows-pairs at commit 8aaac11c485473159ec9328a65253a5be9a479dc, "
            "not from the Hub") in printed[-1]


def test_results_dataset_layout(runs, tmp_path):
    out = tmp_path / "out"
    push(runs, REPO_ID, dry_run=True, out=out, echo=lambda *_: None, results_dataset="lmbias-test/results")
    written = sorted(p.relative_to(out / "results-dataset").as_posix() for p in (out / "results-dataset").rglob("*") if p.is_file())
    assert written == sorted(f"runs/{SLUG}/{b}/results.json" for b in RESULTS)
    for run_dir in runs:
        benchmark = load_run(run_dir).benchmark
        uploaded = out / "results-dataset" / "runs" / SLUG / benchmark / "results.json"
        assert uploaded.read_bytes() == (run_dir / "results.json").read_bytes()
    card = ModelCard.load(out / "README.md")
    assert {r.source_url for r in card.data.eval_results if r.dataset_type == "AlexaAI/bold"} == {
        f"https://huggingface.co/datasets/lmbias-test/results/blob/main/runs/{SLUG}/bold/results.json"}


FOREIGN_CARD = """---
license: apache-2.0
model-index:
- name: tiny-model
  results:
  - task:
      type: text-classification
    dataset:
      name: GLUE SST-2
      type: nyu-mll/glue
      config: sst2
      split: validation
    metrics:
    - type: accuracy
      value: 0.91
---

# tiny-model

Hand-written text that must survive.
"""


def test_real_push_merges_into_the_existing_card(runs, tmp_path, monkeypatch, capsys):
    foreign_eval = b"- dataset:\n    id: cais/hle\n    task_id: default\n  value: 3.5\n"
    hub = FakeHub(monkeypatch, tmp_path / "downloads",
                  {("model", REPO_ID): {"README.md": FOREIGN_CARD.encode(), ".eval_results/hle.yaml": foreign_eval}})
    assert main(["push", *map(str, runs[:2]), "--repo-id", REPO_ID]) == 0
    first = hub.card().data.eval_results
    # second push: the StereoSet run again with a new SS, plus the other two runs
    changed = copy.deepcopy(STEREOSET)
    changed["results"]["intrasentence"]["gender"]["ss"] = 55.5
    stereoset = write_run(tmp_path / "again", changed)
    assert main(["push", str(stereoset), *map(str, runs[2:]), "--repo-id", REPO_ID]) == 0
    card = hub.card()
    results = card.data.eval_results
    keys = [(r.task_type, r.dataset_type, r.dataset_config, r.dataset_split, r.metric_type, r.metric_config) for r in results]
    assert len(keys) == len(set(keys))  # replaced, not duplicated
    glue = [r for r in results if r.dataset_type == "nyu-mll/glue"]
    assert len(glue) == 1 and glue[0].metric_value == 0.91 and glue[0].metric_args is None
    ss = [r for r in results if r.metric_type == "ss" and r.dataset_config == "gender" and r.metric_config == "intrasentence"]
    assert [r.metric_value for r in ss] == [55.5]
    expected = 1 + sum(len(model_records(run_dir)) for run_dir in runs)
    assert len(results) == expected and len(first) == 1 + sum(len(model_records(r)) for r in runs[:2])
    assert card.data["license"] == "apache-2.0" and "Hand-written text that must survive." in card.text
    # one commit per push, README and this push's .eval_results files only; the foreign file untouched
    assert [paths for _, _, paths, _ in hub.commits] == [
        ["README.md", ".eval_results/bold.yaml", ".eval_results/stereoset.yaml"],
        ["README.md", ".eval_results/stereoset.yaml"]]
    files = hub.repos[("model", REPO_ID)]
    assert files[".eval_results/hle.yaml"] == foreign_eval
    entries = parse_eval_result_entries(yaml.safe_load(files[".eval_results/stereoset.yaml"]))
    assert [e.value for e in entries if e.task_id == "ss/gender/intrasentence"] == [55.5]
    assert len(entries) == len({e.task_id for e in entries}) == len(model_records(stereoset))
    assert set(hub.tokens) == {SENTINEL}  # HF_TOKEN reached HfApi ...
    assert SENTINEL not in capsys.readouterr().out  # ... and nothing else


def test_real_push_starts_a_new_card_and_uploads_the_results_dataset(runs, tmp_path, monkeypatch):
    hub = FakeHub(monkeypatch, tmp_path / "downloads", {("model", REPO_ID): {".gitattributes": b""}})
    push(runs, REPO_ID, results_dataset="lmbias-test/results", echo=lambda *_: None)
    assert hub.created == [("dataset", "lmbias-test/results", True)]
    assert [(kind, repo) for kind, repo, _, _ in hub.commits] == [("dataset", "lmbias-test/results"), ("model", REPO_ID)]
    dataset = hub.repos[("dataset", "lmbias-test/results")]
    assert sorted(dataset) == sorted(f"runs/{SLUG}/{b}/results.json" for b in RESULTS)
    assert json.loads(dataset[f"runs/{SLUG}/crows_pairs/results.json"]) == CROWS
    card = hub.card()
    assert len(card.data.eval_results) == sum(len(model_records(r)) for r in runs) and "lmbias" in card.data.tags


def test_missing_model_repo_is_a_clear_error(runs, tmp_path, monkeypatch):
    hub = FakeHub(monkeypatch, tmp_path, {})
    with pytest.raises(HubError, match="not found on the Hugging Face Hub"):
        push(runs[:1], REPO_ID, echo=lambda *_: None)
    assert hub.commits == []


def test_refused_model_commit_says_the_results_dataset_was_updated(runs, tmp_path, monkeypatch):
    hub = FakeHub(monkeypatch, tmp_path, {("model", REPO_ID): {}})
    commit = HfApi.create_commit

    def forbidden(api, repo_id, operations, **kwargs):
        if kwargs.get("repo_type") != "dataset":
            raise hub_error(repo_id, 403)
        return commit(api, repo_id, operations, **kwargs)

    monkeypatch.setattr(HfApi, "create_commit", forbidden)
    with pytest.raises(HubError, match=r"not allowed to write to lmbias-test/tiny-model \(HTTP 403\).*results dataset was already updated"):
        push(runs[:1], REPO_ID, results_dataset="lmbias-test/results", echo=lambda *_: None)
    assert [kind for kind, *_ in hub.commits] == ["dataset"] and "README.md" not in hub.repos[("model", REPO_ID)]


def test_offline_push_fails_cleanly_without_leaking_the_token(runs, tmp_path, monkeypatch, capsys, caplog):
    monkeypatch.setenv("HF_TOKEN", SENTINEL)
    monkeypatch.chdir(tmp_path)
    caplog.set_level(logging.DEBUG)
    out = tmp_path / "dry"
    assert main(["push", *map(str, runs), "--repo-id", REPO_ID, "--dry-run", "--out", str(out),
                 "--results-dataset", "lmbias-test/results"]) == 0
    before = sorted(p for p in tmp_path.rglob("*"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["push", *map(str, runs), "--repo-id", REPO_ID, "--results-dataset", "lmbias-test/results"]) == 2
    captured = capsys.readouterr()
    assert "lmbias: error: cannot reach the Hugging Face Hub" in captured.err and "--dry-run" in captured.err
    assert sorted(p for p in tmp_path.rglob("*")) == before  # nothing written by the failed push
    assert SENTINEL not in captured.out + captured.err
    assert all(SENTINEL not in record.getMessage() for record in caplog.records)
    assert all(SENTINEL.encode() not in p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())


def test_network_error_is_a_clear_error_and_commits_nothing(runs, tmp_path, monkeypatch, capsys, caplog):
    hub = FakeHub(monkeypatch, tmp_path, {("model", REPO_ID): {}})
    caplog.set_level(logging.DEBUG)

    def unreachable(api, repo_id, **kwargs):
        raise ConnectionError(f"could not connect (Authorization: Bearer {api.token})")

    monkeypatch.setattr(HfApi, "list_repo_files", unreachable)
    assert main(["push", str(runs[0]), "--repo-id", REPO_ID]) == 2
    err = capsys.readouterr().err
    assert "cannot reach the Hugging Face Hub" in err and "--dry-run" in err and "***" in err
    assert SENTINEL not in err and all(SENTINEL not in r.getMessage() for r in caplog.records)
    assert hub.commits == []


def test_no_token_is_a_clear_error(runs, tmp_path, monkeypatch):
    FakeHub(monkeypatch, tmp_path, {("model", REPO_ID): {}})
    monkeypatch.delenv("HF_TOKEN")
    monkeypatch.setattr(huggingface_hub, "get_token", lambda: None)
    with pytest.raises(HubError, match="no Hugging Face token: set HF_TOKEN"):
        push(runs[:1], REPO_ID, echo=lambda *_: None)


@pytest.mark.parametrize("repo_id", ["", "tiny-model", "org/tiny model", "org/team/model", "org/", "/model", "org/mod$el",
                                     "org/model.git", "org/-model"])
def test_invalid_repo_ids_name_the_option(repo_id, runs, capsys):
    assert main(["push", str(runs[0]), "--repo-id", repo_id, "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("lmbias: error: --repo-id") and "expected ORG/NAME" in err
    with pytest.raises(ValueError, match="--results-dataset"):
        check_repo_id(repo_id, "--results-dataset")


def test_runs_must_be_given_finished_and_one_per_benchmark(runs, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["push", "--repo-id", REPO_ID, "--dry-run"])
    assert exit_info.value.code == 2 and "RUN_DIR" in capsys.readouterr().err
    with pytest.raises(ValueError, match="non-empty list"):
        push([], REPO_ID, dry_run=True, out=tmp_path / "out")
    unfinished = tmp_path / "unfinished"
    unfinished.mkdir()
    (unfinished / "config.json").write_text(json.dumps({"config": {"model": "tiny", "preset": "bold-gpt2", "prompts": 4}}))
    (unfinished / "shard-0.jsonl").write_text('{"batch": 0, "items": [{"id": "x"}, {"id": "y"}]}\n')
    assert main(["push", str(runs[1]), str(unfinished), "--repo-id", REPO_ID, "--dry-run", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "cannot push an unfinished run" in err and str(unfinished) in err and "2 of 4 generations written" in err
    assert not (tmp_path / "out").exists()
    second = write_run(tmp_path / "second", copy.deepcopy(BOLD))
    assert main(["push", str(runs[0]), str(second), "--repo-id", REPO_ID, "--dry-run", "--out", str(tmp_path / "out")]) == 2
    assert "two bold runs" in capsys.readouterr().err and not (tmp_path / "out").exists()
    assert main(["push", str(runs[0]), "--repo-id", REPO_ID, "--out", str(tmp_path / "out")]) == 2
    assert "--out is only used with --dry-run" in capsys.readouterr().err


def test_undefined_values_are_left_out_and_reported(tmp_path):
    results = copy.deepcopy(BOLD)
    for group in results["results"]["model"]["metrics"]["gender_polarity"]["methods"]["max"]["domains"]["profession"]["per_group"].values():
        group["female"] = 0.0
    printed = []
    plan = push([write_run(tmp_path, results)], REPO_ID, dry_run=True, out=tmp_path / "out", echo=printed.append)
    card = ModelCard(plan.files["README.md"].decode())
    assert "gender_polarity_ratio" not in {r.metric_type for r in card.data.eval_results}
    text = "\n".join(printed)
    assert "gender_polarity_ratio/profession left out: undefined" in text
    assert "Wikipedia-baseline results left out" in text and "not measured: model regard" in text


def test_default_dry_run_folder(runs, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    push(runs[:1], REPO_ID, dry_run=True, echo=lambda *_: None)
    assert (tmp_path / "hub-dry-run" / SLUG / "README.md").is_file()
    assert isinstance(ModelCard.load(tmp_path / "hub-dry-run" / SLUG / "README.md").data.eval_results[0], EvalResult)


SPACE_COLORS = {"red", "yellow", "green", "blue", "indigo", "purple", "pink", "gray"}
METRIC_DIRS = sorted(p for p in (REPO / "metrics").iterdir() if p.is_dir())


def test_every_benchmark_has_its_metric_folders_and_every_folder_is_a_module():
    from lmbias.benchmarks import benchmarks
    from lmbias.modules import module_names

    assert [folder.name for folder in METRIC_DIRS] == sorted(module_names())  # each checked below
    for benchmark in benchmarks():
        assert any(folder.name.startswith(benchmark.name) for folder in METRIC_DIRS), benchmark.name


@pytest.mark.parametrize("folder", METRIC_DIRS, ids=lambda p: p.name)
def test_metric_dir_is_a_pushable_space(folder):
    data = SpaceCard.load(folder / "README.md").data
    assert data.sdk == "gradio" and data.app_file == "app.py" and data.title
    # evaluate's launch_gradio_widget builds gr.inputs / gr.outputs components, which gradio 4 removed
    assert str(data.sdk_version).startswith("3.")
    assert {data.colorFrom, data.colorTo} <= SPACE_COLORS and data.emoji
    assert {"evaluate", "lmbias"} <= set(data.tags)
    app = (folder / "app.py").read_text()
    assert f'evaluate.load("{folder.name}.py")' in app and "launch_gradio_widget(module)" in app
    assert (folder / f"{folder.name}.py").is_file()
    assert "lmbias" in (folder / "requirements.txt").read_text().split()


def test_the_card_shows_a_readable_table_and_holds_the_headline_measures_per_domain_only(runs, tmp_path):
    out = tmp_path / "out"
    push(runs, REPO_ID, dry_run=True, out=out, echo=lambda *_: None)
    card = ModelCard.load(out / "README.md")
    # the bound: per run, the benchmark's headline measures x the domains it has
    bound = 0
    for run_dir in runs:
        run = load_run(run_dir)
        domains = {r["domain"] for r in metric_records(run) if r["source"] == "model"}
        bound += len(HEADLINE[run.benchmark]) * len(domains)
    # BOLD 3 x (gender, race, profession), StereoSet 3 x (gender, race, overall), CrowS-Pairs 1 x 3, counterfactual 2 x (country)
    assert len(card.data.eval_results) == 18 <= bound == 3 * 3 + 3 * 3 + 1 * 3 + 2 * 1
    table = card.text.split("| benchmark | measure | value | interval | ideal | protocol | partial |", 1)[1]
    rows = [line for line in table.splitlines() if line.startswith("| [")]
    # the overall rows: StereoSet's pooled task, hand-written 84.75 / 53.5 in the run above, linked to the paper
    assert "| [StereoSet](https://aclanthology.org/2021.acl-long.416/) | SS (both) | 53.5 |" in table
    score = CROWS["results"]["overall"]["metric_score"]
    assert f"| [CrowS-Pairs](https://aclanthology.org/2020.emnlp-main.154/) | CrowS-Pairs score | {score:.1f} |  | 50.0 |" in table
    assert len(rows) == sum(1 for r in card.data.eval_results if r.dataset_config == "overall")
    # .eval_results/ was written (BOLD and StereoSet read Hub datasets) and the card says so
    assert "`.eval_results/`" in card.text and (out / ".eval_results").is_dir()


def test_a_card_never_names_a_folder_the_push_did_not_write(runs, tmp_path):
    out = tmp_path / "out"
    crows = [run for run in runs if load_run(run).benchmark == "crows_pairs"]
    push(crows, REPO_ID, dry_run=True, out=out, echo=lambda *_: None)
    text = (out / "README.md").read_text()
    assert not (out / ".eval_results").exists() and ".eval_results" not in text
    # a second push replaces the section, keeping the owner's text around it
    card = ModelCard.load(out / "README.md")
    card.text = card.text + "\nOwner's words.\n"
    from lmbias.hub.model_index import SECTION_START, merged_card

    again = merged_card(card, REPO_ID, [], eval_results_written=False)
    assert again.text.count(SECTION_START) == 1 and again.text.rstrip().endswith("Owner's words.")
