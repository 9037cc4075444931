"""Are the protocols interchangeable? The same StereoSet and CrowS-Pairs items, on the embedded
instruction-tuned model (SmolLM2-135M-Instruct), under four protocols:

* likelihood, raw text (the papers' protocol);
* likelihood, chat template (``--chat``: each sentence scored as the assistant's reply);
* generative multiple choice, chat template (``--chat --protocol generate``: how chat-only APIs are
  measured, as HELM and inspect_evals do);
* generative multiple choice, raw text (``--protocol generate``).

Prints each metric under each protocol with the invalid-reply rate, the share of valid replies
that chose the option shown first ("A": a model that answers by position shows near 0 or 100) and
the seconds, and the agreement of item decisions between every two protocols: a CrowS-Pairs decision is whether the
more stereotypical sentence wins, a StereoSet decision whether the first sentence of each of the
three comparisons (stereotype vs anti-stereotype, each vs the unrelated one) wins. Agreement is over
the decisions both protocols made (an invalid reply makes none); 50 % is what two coin flips give.

    LMBIAS_DATA_DIR=../shared/data .venv/bin/python bench/protocols.py --crows-pairs 300 --stereoset 100

Runs go to ``--out`` (default runs/bench-protocols) and resume there.
"""

from __future__ import annotations

import argparse
import itertools
import json
from functools import partial
from pathlib import Path

from lmbias.benchmarks import save_run
from lmbias.benchmarks.crows_pairs import BENCHMARK as CROWS_PAIRS
from lmbias.benchmarks.declared import run_task
from lmbias.benchmarks.stereoset.task import COMPARISONS, run_stereoset
from lmbias.lm.spec import ModelSpec

PROTOCOLS = {  # name -> (chat, protocol)
    "likelihood, raw": (False, "likelihood"),
    "likelihood, chat": (True, "likelihood"),
    "generative, chat": (True, "generate"),
    "generative, raw": (False, "generate"),
}


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def crows_decisions(out: Path) -> dict:
    """Pair id -> whether the more stereotypical sentence wins (None: an invalid reply)."""
    if (out / "answers.jsonl").is_file():
        return {a["id"]: None if a["prediction"] is None else a["prediction"] == 0 for a in _lines(out / "answers.jsonl")}
    return {str(r["id"]): round(r["sent_more_score"], 3) > round(r["sent_less_score"], 3) for r in _lines(out / "scores.jsonl")}


def stereoset_decisions(out: Path) -> dict:
    """``item/first-second`` -> whether the first sentence wins (None: an invalid reply)."""
    if (out / "answers.jsonl").is_file():
        return {a["id"]: None if a["prediction"] is None else a["prediction"] == 0 for a in _lines(out / "answers.jsonl")}
    return {f"{r['id']}/{first}-{second}": r[first] > r[second] for r in _lines(out / "scores.jsonl") for first, second in COMPARISONS}


def first_letter_share(out: Path) -> str:
    """The share (%) of a generative run's valid replies that chose the option shown as "A"; "-" for a likelihood run."""
    if not (out / "answers.jsonl").is_file():
        return "-"
    valid = [a for a in _lines(out / "answers.jsonl") if a["prediction"] is not None]
    return f"{100.0 * sum(a['order'][0] == str(a['prediction']) for a in valid) / len(valid):.1f}"


def agreement(a: dict, b: dict) -> tuple[float, int]:
    """The share (%) of the decisions both made that are the same, and how many both made."""
    both = [key for key in a if a[key] is not None and b.get(key) is not None]
    return (100.0 * sum(a[key] == b[key] for key in both) / len(both) if both else float("nan")), len(both)


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    parser.add_argument("--crows-pairs", type=int, default=300, help="the first N CrowS-Pairs pairs")
    parser.add_argument("--stereoset", type=int, default=100, help="the first N StereoSet items of each task")
    parser.add_argument("--out", default="runs/bench-protocols")
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()
    root = Path(args.out)
    metrics, decisions = [], {"CrowS-Pairs": {}, "StereoSet": {}}
    for name, (chat, protocol) in PROTOCOLS.items():
        spec = ModelSpec(chat=chat)
        slug = name.replace(", ", "-")
        for benchmark, run, limit, read in (("CrowS-Pairs", partial(run_task, CROWS_PAIRS), args.crows_pairs, crows_decisions),
                                            ("StereoSet", run_stereoset, args.stereoset, stereoset_decisions)):
            out = root / f"{benchmark.lower()}-{slug}"
            if not (out / "results.json").is_file():
                save_run(run(model=spec, out=out, limit=limit, protocol=protocol, batch_size=args.batch_size, progress=False))
            results = json.loads((out / "results.json").read_text())
            body, timing = results["results"], results["timing"]
            seconds = timing.get("generation_seconds") or timing.get("scoring_seconds")
            invalid = f"{100 * body['invalid'] / body['answers']:.1f}" if protocol == "generate" else "-"
            scores = (f"{body['overall']['metric_score']:.1f}" if benchmark == "CrowS-Pairs" else
                      " / ".join(f"{body['overall'][key]:.1f}" for key in ("lms", "ss", "icat")))
            metrics.append([benchmark, name, scores, invalid, first_letter_share(out), str(body["overall"]["count"]),
                            f"{seconds:.0f}"])
            decisions[benchmark][name] = read(out)
    print("| benchmark | protocol | score (CrowS-Pairs: metric score; StereoSet: LMS / SS / ICAT) | invalid replies % | "
          "chose A % | items scored | seconds |")
    print("|---|---|---|---|---|---|---|")
    for row in metrics:
        print("| " + " | ".join(row) + " |")
    print("\n| benchmark | protocol A | protocol B | same decision % | decisions compared |")
    print("|---|---|---|---|---|")
    for benchmark, by_protocol in decisions.items():
        for a, b in itertools.combinations(by_protocol, 2):
            share, n = agreement(by_protocol[a], by_protocol[b])
            print(f"| {benchmark} | {a} | {b} | {share:.1f} | {n:,} |")


if __name__ == "__main__":
    main()
