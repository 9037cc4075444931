"""Meade et al. 2022's comparison on the embedded model: every debiasing method beside its control,
measured the same way, with what it costs in language modelling.

The models (``--models DIR``, made by ``lmbias debias``; see RESULTS.md for the commands): the
starting model (the control of the methods that do not train: Self-Debias, INLP, SentenceDebias,
LEACE) and, for CDA, the λ = 0 control trained on the same texts and batches. Each is measured on
the same held-out sets:

* StereoSet (dev, the first ``--stereoset-limit`` items of each task) SS / LMS / ICAT, gender domain
  and overall, with bootstrap intervals (``--bootstrap``);
* CrowS-Pairs (all 1,508 pairs; gender and overall), with a paired bootstrap interval of each
  method's difference from its control (the same pairs resampled for both);
* SEAT: bias-bench's mean |effect size| per bias type (17 tests; Self-Debias has no hidden states of
  its own to test, so none);
* the counterfactual paper's I.F. / G.F. (VADER sentiment; ``--attributes``, ``--samples`` per prefix);
* perplexity on the first ``--ppl-limit`` held-out BOLD texts (never fitted or trained on).

Then ``lmbias report`` of the StereoSet runs draws the trade-off figure (|SS - 50| against LMS,
the Pareto front marked). The anchor for direction is bias-bench's GPT-2: StereoSet SS 59.90, 58.20
with Self-Debias, 59.05 with CDA.

Usage: ``LMBIAS_DATA_DIR=../shared/data .venv/bin/python bench/debias_methods.py --models /tmp/dm/models --out /tmp/dm/runs``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

import lmbias
from lmbias.benchmarks import get_benchmark
from lmbias.cli import main
from lmbias.render.text import markdown_table

# name -> (model folder under --models, its control's name); None: the embedded starting model.
MODELS = {
    "starting model": (None, None),
    "CDA control (λ = 0)": ("control", None),
    "CDA (λ = 1)": ("cda", "CDA control (λ = 0)"),
    "Self-Debias": ("self_debias", "starting model"),
    "INLP": ("inlp", "starting model"),
    "SentenceDebias": ("sentence_debias", "starting model"),
    "LEACE": ("leace", "starting model"),
}


def run(arguments: list) -> float:
    """``lmbias`` with ``arguments`` in this process (``lmbias run`` without its progress bar); its
    seconds (a failure stops the script)."""
    started = time.perf_counter()
    if main([*arguments, *(["--no-progress"] if arguments[0] == "run" else [])]) != 0:
        raise SystemExit(f"lmbias {' '.join(arguments)} failed")
    return time.perf_counter() - started


def crows_indicators(folder: Path) -> dict:
    """Pair id -> (1 when the pair counts as the authors' metric counts it, else 0; its bias type): sent_more
    scores strictly higher than sent_less, both rounded to 3 decimals
    (:func:`lmbias.benchmarks.crows_pairs.measure.crows_pairs_scores`), so the mean is the metric score."""
    found = {}
    for line in (folder / "scores.jsonl").read_text().splitlines():
        row = json.loads(line)
        found[row["id"]] = (int(round(row["sent_more_score"], 3) > round(row["sent_less_score"], 3)), row["bias_type"])
    return found


def paired_difference(method: dict, control: dict, bias_type: str | None, resamples: int, seed: int = 0) -> tuple:
    """The method's CrowS-Pairs metric score minus its control's (points), with a 95 % paired bootstrap interval."""
    ids = [i for i in method if bias_type is None or method[i][1] == bias_type]
    delta = np.array([method[i][0] - control[i][0] for i in ids], dtype=float)
    rng = np.random.default_rng(seed)
    means = delta[rng.integers(0, len(delta), (resamples, len(delta)))].mean(1)
    return 100 * delta.mean(), 100 * np.percentile(means, 2.5), 100 * np.percentile(means, 97.5)


def value(results: dict, benchmark: str, metric: str, domain: str, **match):
    """A record's value (and its interval) from a run's results."""
    for record in get_benchmark(benchmark).records(results):
        if record["metric"] == metric and record["domain"] == domain and all(record.get(k) == v for k, v in match.items()):
            return record["value"], record.get("ci")
    return None, None


def cell(found, digits=1) -> str:
    number, ci = found if isinstance(found, tuple) else (found, None)
    if number is None:
        return "-"
    return f"{number:.{digits}f}" + (f" [{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]" if ci else "")


def main_() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=Path, required=True, help="folder of the debiased models (control, cda, inlp ...)")
    parser.add_argument("--out", type=Path, required=True, help="folder for the runs")
    parser.add_argument("--stereoset-limit", type=int, default=400, help="StereoSet items per task")
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--ppl-limit", type=int, default=300)
    parser.add_argument("--attributes", nargs="+", default=["country"])
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--only", nargs="+", choices=[folder or "start" for folder, _ in MODELS.values()],
                        help="evaluate these models now (the others when their folders are ready); a model whose runs are "
                             "complete (seconds.json) is not evaluated again")
    args = parser.parse_args()
    seconds, rows = {}, []
    for name, (folder, _) in MODELS.items():
        model = [] if folder is None else ["--model", str(args.models / folder)]
        runs = args.out / (folder or "start")
        if (runs / "seconds.json").is_file():
            seconds[name] = json.loads((runs / "seconds.json").read_text())
            continue
        if args.only and (folder or "start") not in args.only:
            continue
        took = {}
        took["stereoset"] = run(["run", "stereoset", *model, "--limit", str(args.stereoset_limit), "--bootstrap", str(args.bootstrap),
                                 "--out", str(runs / "stereoset")])
        took["crows_pairs"] = run(["run", "crows_pairs", *model, "--out", str(runs / "crows_pairs")])
        if folder != "self_debias":
            took["seat"] = run(["run", "seat", *model, "--out", str(runs / "seat")])
        took["counterfactual"] = run(["run", "counterfactual", *model, "--attributes", *args.attributes, "--samples",
                                      str(args.samples), "--max-new-tokens", "20", "--classifiers", "vader", "--no-similarity",
                                      "--bootstrap", str(args.bootstrap), "--out", str(runs / "counterfactual")])
        took["perplexity"] = run(["perplexity", *model, "--limit", str(args.ppl_limit), "--out", str(runs / "stereoset")])
        seconds[name] = took
        (runs / "seconds.json").write_text(json.dumps(took))
    if len(seconds) < len(MODELS):
        print(f"evaluated {', '.join(seconds)}; the table comes when every model is")
        return
    for name, (folder, control) in MODELS.items():
        runs = args.out / (folder or "start")
        read = {b: json.loads((runs / b / "results.json").read_text()) for b in ("stereoset", "crows_pairs", "counterfactual")}
        seat = json.loads((runs / "seat" / "results.json").read_text()) if (runs / "seat").is_dir() else None
        ppl = json.loads((runs / "stereoset" / "perplexity.json").read_text())
        row = {"model": name,
               "StereoSet SS (gender, intrasentence)": cell(value(read["stereoset"], "stereoset", "ss", "gender", task="intrasentence")),
               "SS (overall)": cell(value(read["stereoset"], "stereoset", "ss", "overall", task="both")),
               "LMS (overall)": cell(value(read["stereoset"], "stereoset", "lms", "overall", task="both")),
               "ICAT (overall)": cell(value(read["stereoset"], "stereoset", "icat", "overall", task="both")),
               "CrowS-Pairs (gender)": cell(value(read["crows_pairs"], "crows_pairs", "metric_score", "gender")),
               "CrowS-Pairs (overall)": cell(value(read["crows_pairs"], "crows_pairs", "metric_score", "overall")),
               "SEAT mean abs d (gender)": cell(value(seat, "seat", "mean_abs_effect_size", "gender"), 3) if seat else "n/a",
               "SEAT (all 17)": cell(value(seat, "seat", "mean_abs_effect_size", "overall"), 3) if seat else "n/a",
               "I.F.": cell(value(read["counterfactual"], "counterfactual", "individual_fairness", args.attributes[0],
                                  classifier="vader"), 4),
               "G.F.": cell(value(read["counterfactual"], "counterfactual", "group_fairness", args.attributes[0],
                                  classifier="vader"), 4),
               "PPL": f"{ppl['ppl']['ppl']:.2f}"}
        if control is not None:
            mine = crows_indicators(runs / "crows_pairs")
            theirs = crows_indicators(args.out / (MODELS[control][0] or "start") / "crows_pairs")
            row["CrowS gender vs control"] = "{:+.1f} [{:+.1f}, {:+.1f}]".format(*paired_difference(mine, theirs, "gender", args.bootstrap))
            row["CrowS overall vs control"] = "{:+.1f} [{:+.1f}, {:+.1f}]".format(*paired_difference(mine, theirs, None, args.bootstrap))
        rows.append(row)
    columns = list(dict.fromkeys(key for row in rows for key in row))
    print(f"lmbias {lmbias.__version__}; {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; "
          f"StereoSet {args.stereoset_limit} items per task, bootstrap {args.bootstrap}, PPL on {args.ppl_limit} held-out texts, "
          f"counterfactual {', '.join(args.attributes)} x {args.samples} samples")
    print(markdown_table([{c: row.get(c, "") for c in columns} for row in rows], columns))
    print()
    print(markdown_table([{"model": name, "seat": "n/a", **{k: f"{v:.0f}" for k, v in took.items()}} for name, took in seconds.items()],
                         ["model", "stereoset", "crows_pairs", "seat", "counterfactual", "perplexity"]))
    report = args.out / "report"
    run(["report", *[str(args.out / (folder or "start") / "stereoset") for folder, _ in MODELS.values()], "--out", str(report)])
    print(f"report with the trade-off figure: {report}/report.html")


if __name__ == "__main__":
    main_()
