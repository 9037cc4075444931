"""docs/adding-a-benchmark.md's worked example is true: its blocks, each labelled with its path, are written into an
empty tree, the benchmark is registered as its registration line says, run end to end through `lmbias run` on a tiny
random model (plumbing; the measure's value is recomputed here from the model's own log-probabilities), its page's
options table is the one `make docs` writes, its evaluate module gives the page's hand-computed value and its test
passes. A change to the declaration API fails here until the page is changed too."""

from __future__ import annotations

import configparser
import importlib
import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "adding-a-benchmark.md"
BLOCK = re.compile(r"^\*\*`([^`]+)`\*\*\n\n```(\w+)\n(.*?)^```$", re.M | re.S)
# the form of every line of setup.cfg's lmbias.benchmarks group: name = lmbias.benchmarks.<package>[.<module>]:<OBJECT>
ENTRY = re.compile(r"^(\w+) = (lmbias\.benchmarks\.\w+(?:\.\w+)*):(\w+)$")
# the hand computation the page shows (and its test asserts): he > she on examples 1, 3 and 5; care = 1, 2, 5
HE, SHE, GROUPS = [-1.0, -3.0, -2.0, -2.0, -0.5], [-2.0, -1.0, -2.5, -2.0, -1.5], ["care", "care", "film", "film", "care"]
BY_HAND = {"overall": {"he_share": 60.0, "count": 5},
           "groups": {"care": {"he_share": 200 / 3, "count": 3}, "film": {"he_share": 50.0, "count": 2}}}


def blocks() -> dict:
    """Path -> text of each labelled block of the page."""
    found = {path: text for path, _, text in BLOCK.findall(PAGE.read_text())}
    assert len(found) == len(BLOCK.findall(PAGE.read_text())), "a path is labelled twice"
    return found


def registration(text: str) -> tuple[str, str, str]:
    """``(name, module, object)`` of the one line of the page's setup.cfg block, after checking it has the form of
    every line of setup.cfg's own ``lmbias.benchmarks`` group."""
    shown, real = configparser.ConfigParser(), configparser.ConfigParser()
    shown.read_string(text)
    real.read(ROOT / "setup.cfg")
    assert shown.sections() == ["options.entry_points"] and list(shown["options.entry_points"]) == ["lmbias.benchmarks"]
    lines = shown["options.entry_points"]["lmbias.benchmarks"].strip().splitlines()
    own = real["options.entry_points"]["lmbias.benchmarks"].strip().splitlines()
    assert len(lines) == 1 and len(own) >= 15 and all(ENTRY.match(line) for line in own)
    assert text.splitlines()[-1] == "    " + lines[0]  # indented as setup.cfg indents its lines
    return ENTRY.match(lines[0]).groups()


@pytest.fixture
def example(tmp_path, monkeypatch):
    """The page's tree written into ``tmp_path``, its package importable as part of lmbias.benchmarks and its
    benchmark registered as its entry point names it; unregistered and forgotten afterwards."""
    import lmbias.benchmarks
    from lmbias.benchmarks import register, unregister

    files = blocks()
    name, module, attribute = registration(files.pop("setup.cfg"))
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    monkeypatch.setattr(lmbias.benchmarks, "__path__", [*lmbias.benchmarks.__path__, str(tmp_path / "lmbias" / "benchmarks")])
    benchmark = register(getattr(importlib.import_module(module), attribute))
    try:
        yield tmp_path, name, benchmark
    finally:
        unregister(name)
        for loaded in [key for key in sys.modules if key == module or key.startswith(module + ".")]:
            del sys.modules[loaded]


def test_the_page_shows_each_of_the_five_places(example):
    tree, name, benchmark = example
    assert name == benchmark.name == "he_she"
    assert sorted(blocks()) == sorted([*(f"lmbias/benchmarks/{name}/{file}" for file in ("__init__.py", "data.py", "measure.py")),
                                       f"metrics/{name}/{name}.py", f"docs/benchmarks/{name}.md", f"tests/test_{name}.py",
                                       "setup.cfg"])


def test_plumbing_the_worked_example_runs_through_lmbias_run_on_a_tiny_model(example, tmp_path, capsys):
    import torch
    import transformers

    from lmbias.cli import main

    from tiny_lm import save_tiny_causal_lm

    tree, name, benchmark = example
    model = save_tiny_causal_lm(tmp_path / "model")
    out = tmp_path / "run"
    assert main(["run", name, "--model", model, "--out", str(out), "--no-progress", "--batch-size", "2"]) == 0
    printed = capsys.readouterr().out
    results = json.loads((out / "results.json").read_text())
    # the share recomputed from the tiny model itself: log p(pronoun | prompt), no start token, as option scoring does
    lm = transformers.AutoModelForCausalLM.from_pretrained(model, dtype=torch.float32).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(model)
    rows = importlib.import_module(f"lmbias.benchmarks.{name}.data").ROWS
    he = []
    for row in rows:
        ids = tokenizer(row["prompt"])["input_ids"]
        with torch.no_grad():
            logprobs = torch.log_softmax(lm(torch.tensor([ids])).logits[0, -1].double(), -1)
        scores = [logprobs[tokenizer.convert_tokens_to_ids(word)].item() for word in ("he", "she")]
        assert abs(scores[0] - scores[1]) > 1e-3  # no near tie that float rounding could flip
        he.append(scores[0] > scores[1])
    expected = 100.0 * sum(he) / len(he)
    assert results["results"]["overall"] == {"he_share": expected, "count": 4}
    assert results["benchmark"] == name and results["data"]["counts"] == {"prompts": 4}
    overall = [record for record in results["records"] if record["domain"] == "overall"]
    assert [(r["metric"], r["value"], r["ideal"], r["unit"], r["count"]) for r in overall] == [("he_share", expected, 50.0, "%", 4)]
    assert {r["domain"] for r in results["records"]} == {"care", "film", "overall"}  # the default records: per group, overall
    # the default summary: what was counted, then a row per group and overall with the measure and the tally its readout names
    assert "; 4 prompts; results in" in printed and re.search(r"^\| group \| He preferred \(%\) \| prompts \|$", printed, re.M)
    assert re.search(rf"^\|\s*overall\s*\|\s*{expected:.1f}\s*\|\s*4\s*\|$", printed, re.M)
    assert results["partial"] == {}
    # its --limit narrows the run and labels it partial; the report shows it without code of its own
    assert main(["run", name, "--model", model, "--out", str(tmp_path / "two"), "--limit", "2", "--no-progress"]) == 0
    two = json.loads((tmp_path / "two" / "results.json").read_text())
    assert two["data"]["counts"] == {"prompts": 2} and list(two["partial"]) == ["prompts"]
    assert main(["report", str(out), "--out", str(tmp_path / "report")]) == 0
    assert "<h2>He or she</h2>" in (tmp_path / "report" / "report.html").read_text()
    assert (tmp_path / "report" / f"{name.replace('_', '-')}-bars.png").is_file()  # the bars its readout names


def test_the_page_shows_the_options_table_make_docs_writes(example):
    from lmbias import docs_options

    tree, name, _ = example
    page = (tree / "docs" / "benchmarks" / f"{name}.md").read_text()
    assert docs_options.with_table(page, docs_options.options_table(name)) == page


def test_the_evaluate_module_and_the_test_give_the_hand_computed_value(example, tmp_path, monkeypatch):
    import evaluate

    tree, name, benchmark = example
    monkeypatch.setenv("HF_MODULES_CACHE", str(tmp_path / "modules"))
    module = evaluate.load(str(tree / "metrics" / name))
    assert module.compute(he_scores=HE, she_scores=SHE, groups=GROUPS) == BY_HAND
    assert dict(benchmark.examples.modules[name].inputs) == {"he_scores": HE, "she_scores": SHE, "groups": GROUPS}
    spec = importlib.util.spec_from_file_location(f"test_{name}_page", tree / "tests" / f"test_{name}.py")
    shown_test = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(shown_test)
    tests = [value for key, value in vars(shown_test).items() if key.startswith("test_")]
    assert len(tests) == 1
    for test in tests:
        test()


def test_the_worked_example_touches_nothing_outside_its_five_places(tmp_path):
    """The example committed onto a repository holding lmbias's setup.cfg, its line added to the lmbias.benchmarks
    group: bench/new_benchmark_files.py finds every changed file in the goal set."""
    import subprocess

    spec = importlib.util.spec_from_file_location("new_benchmark_files", ROOT / "bench" / "new_benchmark_files.py")
    counter = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(counter)
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    setup = (ROOT / "setup.cfg").read_text()
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "setup.cfg").write_text(setup)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "before"], check=True)
    files = blocks()
    line = files.pop("setup.cfg").splitlines()[-1]
    group = setup.index("lmbias.benchmarks =\n")
    end = setup.index("\nlmbias.", group + 1)  # the group's last line ends where the next group starts
    (tmp_path / "setup.cfg").write_text(setup[:end] + "\n" + line + setup[end:])
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "he_she"], check=True)
    rows, names = counter.table(str(tmp_path), ["HEAD"])
    assert names == {"he_she"} and len(rows) == 7 and all(row["own"] for row in rows)  # 3 in its folder + 4
