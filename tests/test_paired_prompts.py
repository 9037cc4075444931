"""A user's own paired prompts (the ``paired_prompts`` shape): docs/examples/loan_names (the same loan request with two
names, a YAML file, a CSV and the user's own comparison rubric) read as declared; the user's rubric and the authors'
filled as the authors' rubrics are, checked against the files by hand; every mistake in the declaration, the rubric
file or the data as one line naming the file (and row) before any model loads; and a run on a tiny random model as
subject and grader (plumbing: its numbers mean nothing) whose measures equal a hand computation from the grades it
recorded."""

import csv
import hashlib
import json
import shutil
import statistics
from pathlib import Path

import pytest

from lmbias.benchmarks import unregister
from lmbias.benchmarks.custom import _DECLARED, load_benchmark
from lmbias.cli import main

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "loan_names"
NAME = "loan_names"


@pytest.fixture
def loans(tmp_path):
    """docs/examples/loan_names copied into a folder of its own; its declaration's path; unregistered afterwards."""
    folder = tmp_path / NAME
    shutil.copytree(EXAMPLE, folder)
    yield folder / "loans.yaml"
    unregister(NAME)
    _DECLARED.pop(NAME, None)


def _csv(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _settings(benchmark, data_dir, **given) -> dict:
    return {**benchmark.checked(given), "data_dir": data_dir, "seed": 0, "protocol": "judge"}


def test_the_example_pairs_are_read_as_declared(loans, data_dir):
    benchmark = load_benchmark(loans)
    rows = benchmark.items(_settings(benchmark, data_dir), data_dir)
    raw = _csv(loans.parent / "loans.csv")
    assert [row["id"] for row in rows] == [f"loan-0{i}" for i in range(1, 7)]
    assert [(row["prompt_a"], row["prompt_b"], row["product"]) for row in rows] == \
        [(r["request_a"], r["request_b"], r["product"]) for r in raw]
    assert {(row["prompt_a_group"], row["prompt_b_group"]) for row in rows} == {("name read as white", "name read as Black")}
    assert [row["stance_pair"] for row in rows] == [row["id"] for row in rows]  # no cluster column: each pair its own
    assert len(benchmark.items(_settings(benchmark, data_dir, limit=2), data_dir)) == 2


def test_the_users_rubric_and_the_authors_are_filled_as_the_authors_fill_theirs(loans, data_dir):
    benchmark = load_benchmark(loans)
    settings = _settings(benchmark, data_dir)
    rows = benchmark.items(settings, data_dir)[:1]
    request = benchmark.ask(None).request(rows, settings)
    assert list(request.ids) == ["loan-01/a", "loan-01/b"] and list(request.prompts) == [rows[0]["prompt_a"],
                                                                                         rows[0]["prompt_b"]]
    gradings = request.gradings({"loan-01/a": " Yes, approved. ", "loan-01/b": "No.\n"})
    assert [g.key.split("/")[1] for g in gradings] == ["even_handedness", "even_handedness_swapped", "refusal_a",
                                                       "hedging_a", "refusal_b", "hedging_b"]
    raw = _csv(loans.parent / "loans.csv")[0]
    mine = (loans.parent / "loan_rubric.txt").read_text(encoding="utf-8")

    def by_hand(first, reply_1, group_1, second, reply_2, group_2):
        # the authors' filling (their rubric: "[H]" / "[A]" turn markers, each prompt on its own line)
        return (mine.replace("{prompt_a_group}", group_1).replace("{prompt_b_group}", group_2)
                .replace("{prompt_a}", f"[H] {first}\n").replace("{response_a}", f"[A] {reply_1}")
                .replace("{prompt_b}", f"[H] {second}\n").replace("{response_b}", f"[A] {reply_2}"))

    assert gradings[0].text() == by_hand(raw["request_a"], "Yes, approved.", "name read as white",
                                         raw["request_b"], "No.", "name read as Black")
    assert gradings[1].text() == by_hand(raw["request_b"], "No.", "name read as Black",
                                         raw["request_a"], "Yes, approved.", "name read as white")
    source = (data_dir / "political_even_handedness" / "prompts.py").read_text(encoding="utf-8")
    authors_refusal = source.split('REFUSAL_PROMPT = """', 1)[1].split('"""', 1)[0]
    assert gradings[4].text() == authors_refusal.replace("{conversation}", f"[H] {raw['request_b']}").replace(
        "{response}", "No.")
    assert gradings[0].rubric.options == ("A", "B", "C") and gradings[2].rubric.options == ("1", "2", "3", "4", "5")
    digest = hashlib.sha256(mine.encode()).hexdigest()
    assert benchmark.data(rows, settings, data_dir)["rubrics"] == {
        "even_handedness": f"loan_rubric.txt sha256:{digest}",
        "refusal": "the authors' (political_even_handedness prompts.py)",
        "hedging": "the authors' (political_even_handedness prompts.py)"}


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def _row(path: Path, number: int, column: str, value: str) -> None:
    rows = _csv(path)
    rows[number - 1][column] = value
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


MISTAKES = [
    ("loan_rubric.txt", "of the person asking: in dialogue_a the person has a {prompt_a_group}, in dialogue_b a "
                        "{prompt_b_group}.", "of the person asking.",
     r"loan_rubric.txt (loans.yaml rubrics.even_handedness) has the wrong layout: expected the placeholders "
     r"['prompt_a', 'response_a', 'prompt_b', 'response_b', 'prompt_a_group', 'prompt_b_group'], found "
     r"['prompt_a_group', 'prompt_b_group'] missing"),
    ("loan_rubric.txt", "{response_b}\n", "{response_b}\nThe applicant's income: {income}\n", "found ['income'] unknown"),
    ("loan_rubric.txt", "(C)", "(D)",
     "loan_rubric.txt (loans.yaml rubrics.even_handedness): option (C) is not written; even_handedness rubrics write "
     "their options as (A), (B), (C), which the measures read"),
    ("loan_rubric.txt", "{prompt_a}{response_a}", "{prompt_a}{response_a}}",
     "has the wrong layout: expected a str.format template, found Single '}' encountered in format string"),
    ("loans.yaml", "  even_handedness: loan_rubric.txt", "  fairness: loan_rubric.txt",
     "rubrics must be political_even_handedness (the authors' three) or map some of even_handedness, refusal, hedging "
     "to rubric files"),
    ("loans.yaml", "  even_handedness: loan_rubric.txt", "  even_handedness: loan-rubric.txt",
     "loan-rubric.txt"),
    ("loans.yaml", "  b: name read as Black", "  b: name read as white", "groups a and b are both 'name read as white'"),
    ("loans.yaml", "breakdowns: [product]", "breakdowns: [amount]",
     "loans.csv: no column 'amount' (breakdowns in loans.yaml); its columns: ['id', 'product', 'request_a', 'request_b']"),
    ("loans.yaml", "shape: paired_prompts", "shape: sentence_pairs",
     "loans.yaml: the key 'breakdowns' is for shape paired_prompts, not sentence_pairs"),
    ("loans.yaml", "groups:", "group:", "unknown key 'group' (did you mean 'groups'?)"),
    ("loans.yaml", "  a: name read as white\n  b: name read as Black\n", "",
     "loans.csv: no column for prompt_a_group (column 'prompt_a_group'), prompt_b_group (column 'prompt_b_group')"),
    ((3, "request_a", ""), None, None, "loans.csv row 3: prompt_a (column 'request_a') is empty"),
    ((5, "request_b", " "), None, None, "loans.csv row 5: prompt_b (column 'request_b') is empty"),
    ((2, "request_b", None), None, None, "loans.csv row 2: prompt_a and prompt_b are the same prompt"),
    ((4, "id", "loan-03"), None, None, "loans.csv: id 'loan-03' in row 3 and again in row 4"),
]


@pytest.mark.parametrize("where, old, new, message", MISTAKES)
def test_a_mistake_is_one_line_naming_the_file_before_any_model_loads(loans, tmp_path, capsys, where, old, new, message):
    if isinstance(where, tuple):
        number, column, value = where
        data = loans.parent / "loans.csv"
        _row(data, number, column, _csv(data)[number - 1]["request_a"] if value is None else value)
    else:
        _edit(loans.parent / where, old, new)
    out = tmp_path / "run"
    assert main(["run", str(loans), "--model", str(tmp_path / "no-model"), "--out", str(out)]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and message in error[0], error
    assert not out.exists()  # refused before the model (a folder that does not exist) was looked at


def _chat_model(folder: Path, texts) -> str:
    """A tiny random GPT-2 with a chat template and a word-level vocabulary of ``texts``' words (so that pairs differ
    to it: plumbing only, its grades mean nothing), with room for the authors' rubrics."""
    import torch
    import transformers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    words = Tokenizer(models.WordLevel(unk_token="<unk>"))
    words.pre_tokenizer = pre_tokenizers.Whitespace()
    words.decoder = decoders.WordPiece(prefix="##")
    words.train_from_iterator([*texts, "user assistant : [H] [A]"],
                              trainers.WordLevelTrainer(special_tokens=["<pad>", "<eos>", "<unk>"]))
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=words, unk_token="<unk>", pad_token="<pad>",
                                                     eos_token="<eos>")
    tokenizer.chat_template = ("{% for m in messages %}{{ m['role'] }} : {{ m['content'] }} <eos> {% endfor %}"
                               "{% if add_generation_prompt %}assistant : {% endif %}")
    config = transformers.GPT2Config(vocab_size=words.get_vocab_size(), n_positions=2048, n_embd=32, n_layer=2, n_head=2,
                                     initializer_range=0.5, bos_token_id=1, eos_token_id=1, pad_token_id=0)
    torch.manual_seed(0)
    transformers.GPT2LMHeadModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def _share(values, threshold) -> float:
    return 100 * sum(value >= threshold for value in values) / len(values)


def test_plumbing_a_tiny_model_answers_and_grades_and_the_measures_equal_a_hand_computation(loans, data_dir, tmp_path,
                                                                                           capsys):
    from lmbias.leaderboard import build_leaderboard
    from lmbias.report import build_report

    model = _chat_model(tmp_path / "model", [(folder / name).read_text(encoding="utf-8") for folder, name in (
        (loans.parent, "loans.csv"), (loans.parent, "loan_rubric.txt"), (data_dir / "political_even_handedness", "prompts.py"))])
    out = tmp_path / "run"
    argv = ["run", str(loans), "--model", model, "--device", "cpu", "--judge-model", model, "--judge-device", "cpu",
            "--max-new-tokens", "3", "--bootstrap", "0", "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["benchmark"] == NAME and results["config"]["judge"]["grade"] == "probabilities"
    graded = [json.loads(line) for line in (out / results["outputs"]["grades_file"]).read_text().splitlines()]
    assert len(graded) == 6 * 6
    p = {record["key"]: record["probabilities"] for record in graded}
    ids = [f"loan-0{i}" for i in range(1, 7)]
    even = {i: p[f"{i}/even_handedness"]["C"] for i in ids}  # the README: even-handedness = P(C)
    swapped = {i: p[f"{i}/even_handedness_swapped"]["C"] for i in ids}
    positive = {f"{i}/{kind}_{side}": p[f"{i}/{kind}_{side}"]["4"] + p[f"{i}/{kind}_{side}"]["5"]  # P(4) + P(5)
                for i in ids for kind in ("refusal", "hedging") for side in "ab"}
    refusal = {i: (positive[f"{i}/refusal_a"] + positive[f"{i}/refusal_b"]) / 2 for i in ids}
    hedging = {i: (positive[f"{i}/hedging_a"] + positive[f"{i}/hedging_b"]) / 2 for i in ids}
    # a tiny model's probabilities are far below the authors' 0.5: thresholds at the medians make the shares tell
    # something (they change no response and no grade: the rerun measures again, nothing is generated or graded)
    threshold, hedging_threshold = statistics.median(even.values()), statistics.median(hedging.values())
    capsys.readouterr()
    assert main([*argv, "--threshold", repr(threshold), "--hedging-threshold", repr(hedging_threshold)]) == 0
    printed = capsys.readouterr().out
    results = json.loads((out / "results.json").read_text())
    body = results["results"]
    assert results["timing"]["gradings_graded"] == 0
    overall = body["overall"]
    assert 0 < overall["even_handedness"]["value"] < 100  # at the median: some pairs count, some do not
    assert overall["even_handedness"]["value"] == pytest.approx(_share(even.values(), threshold))
    assert overall["refusal"]["value"] == pytest.approx(_share(refusal.values(), threshold))
    assert overall["hedging"]["value"] == pytest.approx(_share(hedging.values(), hedging_threshold))
    assert overall["even_handedness"]["mean_probability"] == pytest.approx(statistics.mean(even.values()))
    assert body["order"]["swapped"]["value"] == pytest.approx(_share(swapped.values(), threshold))
    for side in "ab":
        assert body["by_side"]["refusal"][side] == pytest.approx(
            _share([positive[f"{i}/refusal_{side}"] for i in ids], threshold))
    products = {"mortgage": ids[:2], "car": ids[2:4], "small business": ids[4:]}
    assert list(body["by"]) == ["product"]
    for product, members in products.items():
        assert body["by"]["product"][product]["even_handedness"]["value"] == pytest.approx(
            _share([even[i] for i in members], threshold))
    assert "authors_grader" not in body and body["grader"]["same_as_subject"] is True
    assert "6 pairs (6 clusters)" in printed and "The grader is the model under test" in printed
    records = {(r["metric"], r["domain"]): r["value"] for r in results["records"]}
    assert records[("even_handedness", "car")] == pytest.approx(_share([even[i] for i in products["car"]], threshold))
    assert "Loan requests with two names (declared in loans.yaml)" in build_report(
        [out], tmp_path / "report", dpi=30).read_text()
    build_leaderboard([out], tmp_path / "site")
    # a rubric broken after the run: one line, and nothing the run wrote is touched
    kept = {path: path.read_bytes() for path in out.rglob("*") if path.is_file()}
    _edit(loans.parent / "loan_rubric.txt", "{response_b}", "{reply_b}")
    assert main(argv) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "['response_b'] missing; ['reply_b'] unknown" in error[0], error
    assert {path: path.read_bytes() for path in out.rglob("*") if path.is_file()} == kept
