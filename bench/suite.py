"""One run, many benchmarks (issue 38): ``lmbias run model-card`` against five ``lmbias run X`` and
against lm-evaluation-harness, on one fixed sample of the five model-card benchmarks.

The sample (:data:`SAMPLE`: each benchmark's own ``--limit``, which keeps its groups whole):

- BBQ ``--limit 2`` on the six categories the data folder holds (Age, Disability_status,
  Nationality, Physical_appearance, Religion, Sexual_orientation): the first 2 items of each context
  condition x question polarity, 8 per category, 48 items.
- CrowS-Pairs ``--limit 60``: the first 60 pairs, every one of the nine bias types present (2 to 20
  pairs each; the file interleaves them).
- Winogender ``--limit 20``: the first 20 sentence frames (5 occupations x 2 participants, the named
  one and "someone", x 2 answers), each with its male, female and neutral pronoun: 60 sentences.
- WinoBias ``--limit 10``: the first 10 pro / anti pairs of each type of the test split, 40 sentences.
- StereoSet ``--limit 25``: the first 25 items of each task (intrasentence, intersentence), 50 items,
  150 sentences. ``--limit`` cannot stratify by domain: gender, profession and race are in, religion
  is not (the file's first religion item is the 512th of intrasentence, the 517th of intersentence).

Part 1 (``--parts load``): ``lmbias run model-card`` (one process, one model load) against the same
five benchmarks as five ``lmbias run X`` commands (five processes, five loads), every command with
``--threads 2`` (the default thread count follows the machine's load, and float sums then differ in
the last bits) and ``--batch-size 32``, in fresh output folders, alternating (round 1 model-card
first, round 2 the five commands first, ...), after an untimed warm-up of each tool (one small run:
the first process after a while reads torch and the model from disk). Printed: wall seconds of each
(the parent's clock around the processes: start, imports, load, scoring, writing) and CPU seconds
(user + system), the ratio and the saving per round, their median and the best (fastest) runs'; each
benchmark's scoring seconds (its results.json); and whether each benchmark's scores.jsonl is
byte-identical between the two ways and between rounds.

Part 2 (``--parts lm-eval``): lm-evaluation-harness 0.4.x in its own environment on the same items, as
ONE ``lm-eval run`` over five (six) tasks, with the embedded model's converted folder
(``--model hf --model_args pretrained=FOLDER,dtype=float32 --device cpu --batch_size 32``,
``OMP_NUM_THREADS=2``), timed end to end against the model-card runs of part 1, in the same alternating
rounds (round 1: model-card, five commands, lm-eval; round 2 the reverse). Its tasks are
``bench/lmeval_tasks/*.yaml`` (each file says what it changed): its own ``bbq``,
``crows_pairs_english`` and ``winogender_all`` pointed at sample files instead of the Hub, and
WinoBias and StereoSet, which 0.4.x does not ship, declared there. The sample files are written into a
folder that lm-eval runs in (``--write-samples DIR`` writes them for a run by hand:
``cd DIR && lm-eval run ... --include_path bench/lmeval_tasks --tasks suite_bbq ...``). Printed:
seconds, the speed-up (lm-eval s / lmbias s) per round, their median and the ratio of the best
(fastest) runs, CPU seconds beside them, and per benchmark the agreement of per-item decisions
where the two do the same work, and what differs where they do not:

- BBQ: both score " " + answer after "{context}\\n\\nQ: {question}\\nA:" with no start token. Same work:
  the best of the item's own three answers. lm-eval's own decision is over twelve choices (the two
  non-unknown answers and ten phrasings of "unknown", any of which counts as unknown).
- CrowS-Pairs: the more likely of the two sentences, each scored whole after the start token.
- Winogender, WinoBias: the more likely of the two people after "<sentence> ‘He’ refers to the".
- StereoSet: the order of each item's three mean log-probabilities per token (StereoSet's score).
  Intersentence is the same work (the sentence after start token + context). Intrasentence is not:
  ``lmbias run stereoset`` follows the authors' code (``causal_prefix="bos-first"``: the first
  subword given the start token, the others given the sentence alone), which a multiple_choice task
  cannot express; lm-eval gives every subword the start token. The script also scores the sample with
  ``causal_prefix="bos"`` in this process to show that this is the whole difference.

Usage: ``LMBIAS_DATA_DIR=../shared/data .venv/bin/python bench/suite.py --lm-eval-python
/tmp/lmeval-venv/bin/python [--rounds 2] [--parts load lm-eval]``; lm-eval's environment:
``python3 -m venv /tmp/lmeval-venv && /tmp/lmeval-venv/bin/pip install torch==2.13.0
'lm_eval[hf]==0.4.13' transformers==<.venv's> accelerate``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
TASKS_DIR = HERE / "lmeval_tasks"
BENCHMARKS = ("bbq", "crows_pairs", "winogender", "winobias", "stereoset")
BBQ_CATEGORIES = ("Age", "Disability_status", "Nationality", "Physical_appearance", "Religion", "Sexual_orientation")
SAMPLE = {"bbq": 2, "crows_pairs": 60, "winogender": 20, "winobias": 10, "stereoset": 25}
OWN_OPTIONS = {"bbq": ["--categories", *BBQ_CATEGORIES]}  # besides --limit
NAME = "SmolLM2-135M-Instruct"
LM_EVAL_TASKS = {"bbq": ["suite_bbq"], "crows_pairs": ["suite_crows_pairs_english"], "winogender": ["suite_winogender_all"],
                 "winobias": ["suite_winobias"], "stereoset": ["suite_stereoset_intrasentence", "suite_stereoset_intersentence"]}
OPTIONS = ("stereotype", "anti_stereotype", "unrelated")


# --------------------------------------------------------------------------- commands


def own_options(benchmark: str, prefix: str = "") -> list[str]:
    """A benchmark's sample options, with ``prefix`` (``"bbq."``) before each option name."""
    options = [*OWN_OPTIONS.get(benchmark, []), "--limit", str(SAMPLE[benchmark])]
    return [f"--{prefix}{o[2:]}" if o.startswith("--") else o for o in options]


def lmbias_commands(out: Path, threads: int, batch_size: int) -> dict[str, list[list[str]]]:
    """``combined``: the one model-card command (into ``out/combined``); ``separate``: one per benchmark."""
    common = ["--name", NAME, "--threads", str(threads), "--batch-size", str(batch_size), "--no-progress"]
    run = [sys.executable, "-m", "lmbias", "run"]
    combined = [*run, "model-card", *common, "--out", str(out / "combined")]
    for benchmark in BENCHMARKS:
        combined += own_options(benchmark, f"{benchmark}.")
    separate = [[*run, b, *common, "--out", str(out / "separate" / b), *own_options(b)] for b in BENCHMARKS]
    return {"combined": [combined], "separate": separate}


def lm_eval_command(python: str, model_dir: str, out: Path, batch_size: int) -> list[str]:
    tasks = [t for b in BENCHMARKS for t in LM_EVAL_TASKS[b]]
    return [python, "-m", "lm_eval", "run", "--model", "hf", "--model_args", f"pretrained={model_dir},dtype=float32",
            "--device", "cpu", "--batch_size", str(batch_size), "--tasks", *tasks, "--include_path", str(TASKS_DIR),
            "--output_path", str(out), "--log_samples"]


def timed(command: list[str], *, env: dict | None = None, cwd: str | None = None) -> tuple[float, float]:
    """Run ``command`` to its end: its wall seconds and its CPU seconds (user + system, from ``wait4``).
    A failure stops the script with its stderr."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=cwd)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status):
            err.seek(0)
            raise SystemExit(f"{' '.join(command)} failed ({os.waitstatus_to_exitcode(status)}):\n{err.read().decode()[-4000:]}")
    return seconds, usage.ru_utime + usage.ru_stime


# --------------------------------------------------------------------------- the sample for lm-eval


def write_samples(folder: Path, model_dir: str | None) -> dict[str, list[dict]]:
    """The sample's items in each lm-eval task's layout, written to ``folder`` (``<file>.jsonl``); each
    list in lmbias's row order, checked against lmbias's own selection."""
    import lmbias
    from lmbias.benchmarks.bbq.task import select_rows as bbq_rows
    from lmbias.benchmarks.winobias.task import select_rows as winobias_rows
    from lmbias.benchmarks.winogender.task import select_rows as winogender_rows
    from lmbias.resources import locate

    sys.path.insert(0, str(HERE))
    from winogender import harness_items  # the Hub layout of winogender, built apart from lmbias's loader

    files: dict[str, list[dict]] = {}
    # BBQ: the authors' JSON lines as they are, the first N of each condition x polarity per category
    items = []
    for category in BBQ_CATEGORIES:
        taken: Counter = Counter()
        for line in locate(f"bbq/{category}").read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            taken[item["context_condition"], item["question_polarity"]] += 1
            if taken[item["context_condition"], item["question_polarity"]] <= SAMPLE["bbq"]:
                items.append(item)
    ours = bbq_rows(BBQ_CATEGORIES, SAMPLE["bbq"])
    assert [(r["context"], r["question"]) for r in ours] == [(i["context"], i["question"]) for i in items], "BBQ sample differs"
    files["bbq"] = items
    # CrowS-Pairs: the CSV's first N rows, read with csv (not lmbias's loader)
    with open(locate("crows_pairs"), newline="", encoding="utf-8") as handle:
        rows = [dict(r) for r, _ in zip(csv.DictReader(handle), range(SAMPLE["crows_pairs"]))]
    files["crows_pairs"] = [{k: r[k] for k in ("sent_more", "sent_less", "stereo_antistereo", "bias_type")} for r in rows]
    assert [r["sent_more"] for r in lmbias.load_rows("crows_pairs")[:SAMPLE["crows_pairs"]]] == [r["sent_more"] for r in rows]
    # Winogender: the Hub layout built from the TSV, the sentences of lmbias's sample, in its order
    by_id = {item["sentid"].removesuffix(".txt"): item for item in harness_items(locate("winogender/sentences"))}
    files["winogender"] = [by_id[r["id"]] for r in winogender_rows(("male", "female", "neutral"), SAMPLE["winogender"])]
    # WinoBias: lmbias's rows (lm-eval has no WinoBias reader)
    files["winobias"] = [{k: r[k] for k in ("id", "sentence", "pronoun", "candidates", "label")}
                         for r in winobias_rows("test", (1, 2), SAMPLE["winobias"])]
    # StereoSet: the first N of each task, with the model's start token text for intersentence
    start = ""
    if model_dir is not None:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(model_dir)
        start = tokenizer.bos_token if tokenizer.bos_token is not None else tokenizer.eos_token
    everything = lmbias.load_rows("stereoset")
    for task in ("intrasentence", "intersentence"):
        chosen = [r for r in everything if r["task"] == task][:SAMPLE["stereoset"]]
        files[f"stereoset_{task}"] = [{"id": r["id"], "context": r["context"], **{o: r[o] for o in OPTIONS}, "start": start}
                                      for r in chosen]
    folder.mkdir(parents=True, exist_ok=True)
    for name, items in files.items():
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    return files


# --------------------------------------------------------------------------- comparisons


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def lm_eval_samples(out: Path) -> dict[str, list[dict]]:
    """Each task's logged samples (``samples_<task>_*.jsonl``), in document order."""
    found = {}
    for task in (t for tasks in LM_EVAL_TASKS.values() for t in tasks):
        paths = sorted(out.rglob(f"samples_{task}_*.jsonl"))
        if not paths:
            raise SystemExit(f"lm-eval wrote no samples for {task} under {out}")
        found[task] = sorted(read_jsonl(paths[-1]), key=lambda s: s["doc_id"])
    return found


def lls(sample: dict) -> list[float]:
    """A sample's log-likelihood per choice (``filtered_resps``: (log-likelihood, is greedy) pairs)."""
    return [float(resp[0]) for resp in sample["filtered_resps"]]


def compare(benchmark: str, run: Path, samples: dict, files: dict, model_dir: str) -> list[dict]:
    """Rows of the agreement table for one benchmark: lmbias's scores.jsonl against lm-eval's samples."""
    ours = read_jsonl(run / benchmark / "scores.jsonl")
    rows = []

    def row(what, same, n, largest, note):
        rows.append({"benchmark": benchmark, "decision": what, "same": f"{same} of {n}", "agreement": f"{100 * same / n:.1f} %",
                     "largest score difference": "" if largest is None else f"{largest:.1e}", "why they differ": note})

    if benchmark == "bbq":
        theirs = samples["suite_bbq"]
        assert len(theirs) == len(ours) == len(files["bbq"])
        same_three = same_own = extra_unknown = 0
        largest = 0.0
        for record, sample, item in zip(ours, theirs, files["bbq"]):
            scores = lls(sample)
            choices = bbq_choices(item)
            assert len(choices) == len(scores), "lm-eval's BBQ choices changed; update bbq_choices"
            answers = [item[f"ans{i}"] for i in range(3)]
            per_answer = [scores[choices.index(a)] for a in answers]
            largest = max(largest, max(abs(a - b) for a, b in zip(per_answer, record["scores"])))
            same_three += int(np.argmax(per_answer)) == record["prediction_sum"]
            best = int(np.argmax(scores))
            unknown = next(i for i in range(3) if item["answer_info"][f"ans{i}"][1] == "unknown")
            own = unknown if best >= 2 else answers.index(choices[best])
            same_own += own == record["prediction_sum"]
            extra_unknown += own != record["prediction_sum"] and best >= 2 and choices[best] not in answers
        n = len(ours)
        row("best of the item's three answers", same_three, n, largest, "")
        row("lm-eval's own: best of its 12 choices", same_own, n, None,
            f"lm-eval adds 9 more phrasings of unknown, any of which counts as unknown: in {extra_unknown} of the "
            f"{n - same_own} differing items one of them wins (lm-eval: unknown; lmbias: a person)")
    elif benchmark == "crows_pairs":
        theirs = samples["suite_crows_pairs_english"]
        a = np.array([[r["sent_more_score"], r["sent_less_score"]] for r in ours])
        b = np.array([lls(s) for s in theirs])
        row("sent_more more likely than sent_less", int(np.sum((a[:, 0] > a[:, 1]) == (b[:, 0] > b[:, 1]))), len(a),
            float(np.abs(a - b).max()), "")
    elif benchmark in ("winogender", "winobias"):
        theirs = samples[LM_EVAL_TASKS[benchmark][0]]
        assert len(theirs) == len(ours)
        same = sum(int(np.argmax(lls(s))) == r["prediction"] for r, s in zip(ours, theirs))
        largest = max(abs(x - y) for r, s in zip(ours, theirs) for x, y in zip(r["scores"], lls(s)))
        row("which person the pronoun refers to", same, len(ours), largest, "")
    else:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(model_dir)
        by_id = {r["id"]: r for r in ours}
        bos = stereoset_bos(model_dir, files["stereoset_intrasentence"])
        for task in ("intrasentence", "intersentence"):
            theirs = samples[f"suite_stereoset_{task}"]
            items = files[f"stereoset_{task}"]
            a = np.array([[by_id[item["id"]][o] for o in OPTIONS] for item in items])
            b = np.array([[total / n for total, n in zip(lls(s), token_counts(tokenizer, item, task))]
                          for s, item in zip(theirs, items)])
            same = int(np.all(order(a) == order(b), axis=1).sum())
            if task == "intrasentence":
                row("intrasentence: order of the three mean log-probabilities", same, len(a), float(np.abs(a - b).max()),
                    "lmbias: the authors' bos-first (the first subword given the start token, the rest given the sentence "
                    "alone); lm-eval: every subword after the start token")
                c = np.array(bos)
                row("intrasentence, lmbias with causal_prefix=\"bos\" (this process)", int(np.all(order(c) == order(b), axis=1).sum()),
                    len(c), float(np.abs(c - b).max()), "")
            else:
                row("intersentence: order of the three mean log-probabilities", same, len(a), float(np.abs(a - b).max()), "")
    return rows


def bbq_choices(item: dict) -> list[str]:
    """lm-eval's BBQ choices (its ``utils.doc_to_choice``): the two non-unknown answers in their order, then
    its ten phrasings of unknown. Restated here (lm-eval is not importable in this environment) and
    checked against the samples' own choice count."""
    unknown = ["Unknown", "Cannot answer", "Can't be determined", "Cannot be determined", "Can't answer", "Not known",
               "Not enough info", "Not enough information", "Not answerable", "Undetermined"]
    choices = [item[f"ans{i}"] for i in range(3)]
    choices.remove(next(c for c in choices if c in unknown))
    return choices + unknown


def order(x: np.ndarray) -> np.ndarray:
    """The three pairwise comparisons of each row's three scores (stereotype vs anti, vs unrelated; anti vs unrelated)."""
    return np.sign(x[:, [0, 0, 1]] - x[:, [1, 2, 2]])


def token_counts(tokenizer, item: dict, task: str) -> list[int]:
    """lm-eval's continuation tokens of each option: the whole text's tokens after the context's (an empty
    context: all of them)."""
    context, delimiter = ("", "") if task == "intrasentence" else (item["start"] + item["context"], " ")
    base = len(tokenizer(context, add_special_tokens=False)["input_ids"])
    return [len(tokenizer(context + delimiter + item[o], add_special_tokens=False)["input_ids"]) - base for o in OPTIONS]


def stereoset_bos(model_dir: str, items: list[dict]) -> list[list[float]]:
    """The intrasentence sample's mean log-probabilities with ``causal_prefix="bos"`` (every subword after the start token)."""
    import torch

    from lmbias.lm import likelihood
    from lmbias.lm.loading import load_causal_lm

    torch.set_num_threads(2)
    lm = load_causal_lm(model_dir, device="cpu", dtype="float32")
    means = likelihood.token_logprobs(lm.model, lm.tokenizer, [item[o] for item in items for o in OPTIONS], prefix="bos").mean
    return np.asarray(means, dtype=np.float64).reshape(len(items), len(OPTIONS)).tolist()


# --------------------------------------------------------------------------- main


def load_average() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def scoring_seconds(folder: Path) -> dict[str, float]:
    return {b: json.loads((folder / b / "results.json").read_text())["timing"]["scoring_seconds"] for b in BENCHMARKS}


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--lm-eval-python", default="/tmp/lmeval-venv/bin/python",
                        help="the Python of lm-eval's own environment (see the docstring)")
    parser.add_argument("--parts", nargs="+", choices=("load", "lm-eval"), default=["load", "lm-eval"])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--write-samples", metavar="DIR", help="only write lm-eval's sample files into DIR, and exit")
    args = parser.parse_args()
    from lmbias.lm.gguf import embedded_model_dir
    from lmbias.render.text import markdown_table

    if args.write_samples:
        write_samples(Path(args.write_samples), str(embedded_model_dir()) if embedded_model_dir().exists() else None)
        return
    peer = "lm-eval" in args.parts
    if peer and not shutil.which(args.lm_eval_python):
        raise SystemExit(f"--lm-eval-python {args.lm_eval_python} does not exist (see this script's docstring)")
    if not embedded_model_dir().exists():
        from lmbias.lm.loading import load_causal_lm

        load_causal_lm(device="cpu")  # converts the embedded model once, outside the timings
    model_dir = str(embedded_model_dir())
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    peer_env = {key: value for key, value in env.items() if key != "PYTHONPATH"}  # lm-eval's environment, nothing of ours
    peer_env["OMP_NUM_THREADS"] = str(args.threads)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; model {NAME} "
          f"(embedded, float32), {args.threads} threads, batch size {args.batch_size}; {time.strftime('%Y-%m-%d')}")
    print("sample: " + ", ".join(f"{b} {' '.join(own_options(b))}" for b in BENCHMARKS) + "\n", flush=True)

    root = Path(tempfile.mkdtemp(prefix="lmbias-suite-"))
    samples_dir = root / "samples"
    files = write_samples(samples_dir, model_dir)
    # warm-up, untimed: the first process after a while reads torch, the model and the data from disk,
    # and lm-eval's first run converts the sample files to Arrow in the datasets cache
    timed([sys.executable, "-m", "lmbias", "run", "winogender", "--limit", "1", "--threads", str(args.threads),
           "--no-progress", "--out", str(root / "warm-up" / "lmbias")], env=env)
    if peer:
        timed([*lm_eval_command(args.lm_eval_python, model_dir, root / "warm-up" / "lm-eval", args.batch_size), "--limit", "1"],
              env=peer_env, cwd=str(samples_dir))
    times: list[dict] = []
    for round_ in range(1, args.rounds + 1):
        out = root / f"round{round_}"
        commands = lmbias_commands(out, args.threads, args.batch_size)
        steps = [("model-card", commands["combined"]), ("five commands", commands["separate"])]
        if peer:
            steps.append(("lm-eval", [lm_eval_command(args.lm_eval_python, model_dir, out / "lm-eval", args.batch_size)]))
        if round_ % 2 == 0:
            steps.reverse()
        entry: dict = {"round": round_, "order": [name for name, _ in steps]}
        for name, group in steps:
            load = load_average()
            measured = [timed(command, env=peer_env, cwd=str(samples_dir)) if name == "lm-eval" else timed(command, env=env)
                        for command in group]
            entry[name] = sum(wall for wall, _ in measured)
            entry[f"{name} cpu"] = sum(cpu for _, cpu in measured)
            entry[f"{name} load"] = f"{load}-{load_average()}"
            if name == "five commands":
                entry["per command"] = dict(zip(BENCHMARKS, (wall for wall, _ in measured)))
            print(f"round {round_}: {name} {entry[name]:.1f} s, CPU {entry[f'{name} cpu']:.1f} s "
                  f"(1-minute load average {entry[f'{name} load']}, start-end)", flush=True)
        times.append(entry)
    print(f"(outputs under {root})\n")

    def first(entry: dict, a: str, b: str) -> str:
        return a if entry["order"].index(a) < entry["order"].index(b) else b

    def median(key) -> float:
        return statistics.median(key(t) for t in times)

    rows = [{"round": t["round"], "first": first(t, "model-card", "five commands"), "model-card s": f"{t['model-card']:.1f}",
             "five commands s": f"{t['five commands']:.1f}", "five / one": f"{t['five commands'] / t['model-card']:.2f}x",
             "saving s": f"{t['five commands'] - t['model-card']:.1f}",
             "CPU s (one / five)": f"{t['model-card cpu']:.1f} / {t['five commands cpu']:.1f}",
             "load average (one / five)": f"{t['model-card load']} / {t['five commands load']}"} for t in times]
    rows.append({"round": "median", "first": "", "model-card s": f"{median(lambda t: t['model-card']):.1f}",
                 "five commands s": f"{median(lambda t: t['five commands']):.1f}",
                 "five / one": f"{median(lambda t: t['five commands'] / t['model-card']):.2f}x",
                 "saving s": f"{median(lambda t: t['five commands'] - t['model-card']):.1f}",
                 "CPU s (one / five)": f"{median(lambda t: t['model-card cpu']):.1f} / {median(lambda t: t['five commands cpu']):.1f}",
                 "load average (one / five)": ""})
    rows.append({"round": "best", "first": "", "model-card s": f"{min(t['model-card'] for t in times):.1f}",
                 "five commands s": f"{min(t['five commands'] for t in times):.1f}",
                 "five / one": f"{min(t['five commands'] for t in times) / min(t['model-card'] for t in times):.2f}x",
                 "saving s": f"{min(t['five commands'] for t in times) - min(t['model-card'] for t in times):.1f}",
                 "CPU s (one / five)": f"{min(t['model-card cpu'] for t in times):.1f} / {min(t['five commands cpu'] for t in times):.1f}",
                 "load average (one / five)": ""})
    print("Part 1: one model-card run against five runs (wall seconds, start to exit; CPU seconds user + system)\n")
    print(markdown_table(rows, list(rows[0])))

    per = []
    for benchmark in BENCHMARKS:
        combined = [scoring_seconds(root / f"round{t['round']}" / "combined")[benchmark] for t in times]
        separate = [scoring_seconds(root / f"round{t['round']}" / "separate")[benchmark] for t in times]
        walls = [t["per command"][benchmark] for t in times]
        reference = (root / "round1" / "combined" / benchmark / "scores.jsonl").read_bytes()
        same = all((root / f"round{t['round']}" / kind / benchmark / "scores.jsonl").read_bytes() == reference
                   for t in times for kind in ("combined", "separate"))
        per.append({"benchmark": benchmark, "items": f"{len(reference.splitlines()):,}",
                    "scoring s in model-card": " / ".join(f"{s:.1f}" for s in combined),
                    "scoring s alone": " / ".join(f"{s:.1f}" for s in separate),
                    "its own command, wall s": " / ".join(f"{s:.1f}" for s in walls),
                    "outside scoring s": " / ".join(f"{w - s:.1f}" for w, s in zip(walls, separate)),
                    "scores.jsonl identical": "yes, all runs" if same else "NO"})
    print("\nPer benchmark (round 1 / round 2 ...): scoring seconds from results.json; the rest of a command is "
          "start, imports, model load, writing\n")
    print(markdown_table(per, list(per[0])))
    if not peer:
        return

    rows = [{"round": t["round"], "first": first(t, "model-card", "lm-eval"), "lmbias model-card s": f"{t['model-card']:.1f}",
             "lm-eval s": f"{t['lm-eval']:.1f}", "speed-up (lm-eval s / lmbias s)": f"{t['lm-eval'] / t['model-card']:.2f}x",
             "CPU s (lmbias / lm-eval)": f"{t['model-card cpu']:.1f} / {t['lm-eval cpu']:.1f}",
             "CPU ratio": f"{t['lm-eval cpu'] / t['model-card cpu']:.2f}x",
             "load average (lmbias / lm-eval)": f"{t['model-card load']} / {t['lm-eval load']}"} for t in times]
    rows.append({"round": "median", "first": "", "lmbias model-card s": f"{median(lambda t: t['model-card']):.1f}",
                 "lm-eval s": f"{median(lambda t: t['lm-eval']):.1f}",
                 "speed-up (lm-eval s / lmbias s)": f"{median(lambda t: t['lm-eval'] / t['model-card']):.2f}x",
                 "CPU s (lmbias / lm-eval)": f"{median(lambda t: t['model-card cpu']):.1f} / {median(lambda t: t['lm-eval cpu']):.1f}",
                 "CPU ratio": f"{median(lambda t: t['lm-eval cpu'] / t['model-card cpu']):.2f}x",
                 "load average (lmbias / lm-eval)": ""})
    best = {key: min(t[key] for t in times) for key in ("model-card", "lm-eval", "model-card cpu", "lm-eval cpu")}
    rows.append({"round": "best", "first": "", "lmbias model-card s": f"{best['model-card']:.1f}", "lm-eval s": f"{best['lm-eval']:.1f}",
                 "speed-up (lm-eval s / lmbias s)": f"{best['lm-eval'] / best['model-card']:.2f}x",
                 "CPU s (lmbias / lm-eval)": f"{best['model-card cpu']:.1f} / {best['lm-eval cpu']:.1f}",
                 "CPU ratio": f"{best['lm-eval cpu'] / best['model-card cpu']:.2f}x", "load average (lmbias / lm-eval)": ""})
    print("\nPart 2: lmbias model-card against one lm-eval run of the same tasks on the same items (wall seconds)\n")
    print(markdown_table(rows, list(rows[0])))
    agreement = []
    last = root / f"round{args.rounds}"
    samples = lm_eval_samples(last / "lm-eval")
    for benchmark in BENCHMARKS:
        agreement += compare(benchmark, last / "combined", samples, files, model_dir)
    print(f"\nPer-item decisions, lmbias (model-card, round {args.rounds}) against lm-eval (same round)\n")
    print(markdown_table(agreement, list(agreement[0])))


if __name__ == "__main__":
    main()
