"""Does `lmbias debias` reduce what it regularises, on text it never saw, at what cost in perplexity?

The embedded SmolLM2-135M on this CPU, debiased on BOLD's Wikipedia sentences (all three attributes)
for ``--steps`` steps several ways with the same batches (``--runs``; by default the λ = 0 control,
embedding regularisation (λ = 10) and sentiment regularisation (λ = 1; at λ = 10 f_s saturates)).
Then, on the counterfactual templates (never trained on), for every pair of prefixes of one template
that differ only in the sensitive token:

* the embedding distance d(h̄(x), h̄(x̃)) at the prefix's last token (cosine distance of the mean of
  the last two layers), averaged over the pairs;
* the sentiment-classifier gap |f_s(h(x)) − f_s(h(x̃))| (P(positive) of the f_s trained in the
  sentiment run's step 2 on the starting model), averaged over the pairs, beside the spread (standard
  deviation) of that P(positive) over all prefixes, since a saturated f_s has no gap to show;

and PPL / PPL_s on the first ``--eval-limit`` held-out texts. The issue's goal: each method halves its
own measure relative to the control while PPL rises by at most 10 %.

Usage: ``LMBIAS_DATA_DIR=../shared/data .venv/bin/python bench/debias.py [--steps 300] [--out runs/debias-bench]
[--runs control embedding:10 sentiment:10 sentiment:1 sentiment:10:probability]``
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import time
from pathlib import Path

import numpy as np
import torch

import lmbias
from lmbias.debias.features import last_token_features
from lmbias.debias.methods.sentiment import load_sentiment_head
from lmbias.debias.pairs import load_corpus
from lmbias.debias.perplexity import held_out_perplexity
from lmbias.debias.sentiment_head import DISTANCES
from lmbias.debias.train import debias
from lmbias.lm.loading import load_causal_lm
from lmbias.render.text import markdown_table

RUNS = ("control", "embedding:10", "sentiment:1")


def parse_run(spec: str) -> tuple[str, str, float, str]:
    """``(label, method, λ, sentiment distance)`` of a run spec: ``control`` (the λ = 0 control) or
    ``METHOD:LAMBDA[:DISTANCE]``, e.g. ``embedding:10``, ``sentiment:1``, ``sentiment:10:probability``."""
    if spec == "control":
        return "control (λ = 0)", "embedding", 0.0, "hidden"
    method, lam, distance = (spec.split(":") + ["hidden"])[:3]
    if method not in ("embedding", "sentiment") or distance not in DISTANCES or not lam.replace(".", "", 1).isdigit():
        raise SystemExit(f"--runs: expected control or METHOD:LAMBDA[:DISTANCE] (embedding|sentiment, {'|'.join(DISTANCES)}), got {spec!r}")
    suffix = f", {distance} distance" if method == "sentiment" and distance != "hidden" else ""
    return f"{method}, λ = {float(lam):g}{suffix}", method, float(lam), distance


def template_gaps(model, tokenizer, head) -> dict:
    """Mean embedding distance and sentiment gap over the template prefix pairs (one token apart), and
    the spread (standard deviation) of f_s's P(positive) over all prefixes: near 0, f_s is saturated and
    a small gap says nothing."""
    rows = lmbias.load_rows("counterfactual_templates")
    features = last_token_features(model, tokenizer, [row["prefix"] for row in rows])
    groups: dict = {}
    for index, row in enumerate(rows):
        groups.setdefault((row["attribute"], row["template_id"]), []).append(index)
    pairs = np.array([pair for members in groups.values() for pair in itertools.combinations(members, 2)])
    a, b = features[pairs[:, 0]], features[pairs[:, 1]]
    with torch.no_grad():
        distance = (1 - torch.nn.functional.cosine_similarity(a, b, dim=-1)).mean().item()
        positive = head.positive_probability(features)  # once per prefix, not once per pair member
    gap = (positive[pairs[:, 0]] - positive[pairs[:, 1]]).abs().mean().item()
    return {"pairs": len(pairs), "embedding distance": distance, "sentiment gap": gap, "P(positive) spread": positive.std().item()}


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--runs", nargs="+", default=list(RUNS),
                        help="control and METHOD:LAMBDA[:DISTANCE] specs; the first is the control the others are compared to")
    parser.add_argument("--learning-rate", type=float, default=1e-4, help="higher than the paper's 2.5e-5: a few hundred CPU steps")
    parser.add_argument("--eval-limit", type=int, default=500, help="held-out texts for PPL")
    parser.add_argument("--out", default="runs/debias-bench", help="folder for the runs' models (a finished one is reused)")
    args = parser.parse_args()
    runs = [parse_run(spec) for spec in args.runs]
    if runs[0][2] != 0:
        raise SystemExit("--runs: the first run must be the control (λ = 0), which the others are compared to")
    if not any(method == "sentiment" and lam for _, method, lam, _ in runs):
        raise SystemExit("--runs: at least one sentiment run is needed (its f_s measures the sentiment gap)")
    texts, _ = load_corpus()
    folders, seconds = {}, {}
    for label, method, lam, distance in runs:
        folder = Path(args.out) / (f"{method}-{lam:g}" + (f"-{distance}" if distance != "hidden" else ""))
        state_file = folder / "debias.json"
        if not (state_file.is_file() and json.loads(state_file.read_text()).get("status") == "finished"):
            debias(method=method, lam=lam, out=folder, steps=args.steps, batch_size=args.batch_size, max_length=64,
                   learning_rate=args.learning_rate, sentiment_distance=distance,
                   checkpoint_every=args.steps, eval_limit=0, device="cpu", show_progress=False)
        folders[label] = folder
        seconds[label] = json.loads(state_file.read_text())["training_seconds"]
    # f_s of step 2 is trained on the starting model with a fixed seed: the same head for every sentiment run
    head = load_sentiment_head(next(folders[label] for label, method, lam, _ in runs if method == "sentiment" and lam))
    rows = []
    for label, folder in (("starting model", None), *folders.items()):
        lm = load_causal_lm(None if folder is None else str(folder), dtype="float32", device="cpu")
        lm.model.eval()
        gaps = template_gaps(lm.model, lm.tokenizer, head)
        held = held_out_perplexity(lm.model, lm.tokenizer, texts, ["country", "occupation", "name"], limit=args.eval_limit)
        rows.append({"model": label, "training s": f"{seconds[label]:.0f}" if label in seconds else "",
                     "embedding distance": gaps["embedding distance"], "sentiment gap": gaps["sentiment gap"],
                     "P(positive) spread": f"{gaps['P(positive) spread']:.3f}",
                     "PPL": held["ppl"]["ppl"], "PPL_s": held["ppl_s"]["ppl"]})
    control = dict(rows[1])
    for row in rows:
        for key in ("embedding distance", "sentiment gap", "PPL"):
            row[f"{key} vs control"] = f"{row[key] / control[key]:.2f}x"
    for row in rows:
        for key in ("embedding distance", "sentiment gap"):
            row[key] = f"{row[key]:.4f}"
        row["PPL"], row["PPL_s"] = f"{row['PPL']:.2f}", f"{row['PPL_s']:.2f}"
    print(f"machine: {platform.machine()}, {len(os.sched_getaffinity(0))} CPUs, torch {torch.__version__}; embedded SmolLM2-135M "
          f"float32; {args.steps} steps x {args.batch_size} texts, max length 64, AdamW {args.learning_rate:g}; template pairs: "
          f"{gaps['pairs']}; PPL on {args.eval_limit} held-out texts\n")
    print(markdown_table(rows, ["model", "training s", "embedding distance", "embedding distance vs control", "sentiment gap",
                                "sentiment gap vs control", "P(positive) spread", "PPL", "PPL vs control", "PPL_s"]))


if __name__ == "__main__":
    started = time.perf_counter()
    main()
    print(f"\n{time.perf_counter() - started:.0f} s in all")
