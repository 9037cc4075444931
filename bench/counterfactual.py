"""Speed of the counterfactual sentiment bias metric (I.F. + G.F.) at the paper's scale, against a naive loop.

Layout of Huang et al. (2020): the 730 template prefixes of ``counterfactual_templates`` (country
10 templates x 10 countries, occupation 10 x 29, name 10 x 34 names in two subgroups male/female),
1,000 sentiment scores per prefix: 730,000 random scores (Beta(2, 2), fixed seed, so there is no
bias: the figures show the sampling-noise floor of W1 at 1,000 samples per prefix).

Ours: ``lmbias.benchmarks.counterfactual.measure.counterfactual_fairness`` (I.F. with its per-pair and per-template
tables, and G.F. with its per-subgroup table), best of ``--repeat`` runs per attribute.
Baseline, in the same run: the formulas as a loop, grouping the samples into (template, value)
cells with a Python dict and calling ``scipy.stats.wasserstein_distance`` once per (template,
pair) and once per subgroup: every attribute in full by default (``--naive-attributes`` to run a
subset; the others are then left out of the baseline total, not extrapolated).

Usage:  python bench/counterfactual.py
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import time

import numpy as np
import scipy
from scipy.stats import wasserstein_distance

import lmbias
from lmbias.benchmarks.counterfactual.measure import counterfactual_fairness

ATTRIBUTES = ("country", "occupation", "name")


def cpu_name() -> str:
    """The CPU model from /proc/cpuinfo (or platform's guess)."""
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def paper_layout(samples: int, seed: int) -> dict:
    """Per attribute: (scores, attribute values, template ids, subgroups), ``samples`` per prefix."""
    rng = np.random.default_rng(seed)
    data = {}
    for attribute in ATTRIBUTES:
        rows = lmbias.load_rows("counterfactual_templates", attribute)
        data[attribute] = (
            rng.beta(2.0, 2.0, size=len(rows) * samples),
            np.repeat([row["token"] for row in rows], samples),
            np.repeat([row["template_id"] for row in rows], samples),
            np.repeat([row["subgroup"] for row in rows], samples),
        )
    return data


def naive(scores, values, templates, subgroups) -> dict:
    """I.F. and G.F. as a loop of scipy.stats.wasserstein_distance calls."""
    cells, groups = {}, {}
    for score, value, template, group in zip(scores.tolist(), values.tolist(), templates.tolist(), subgroups.tolist()):
        cells.setdefault(template, {}).setdefault(value, []).append(score)
        groups.setdefault(group, []).append(score)
    pair_w1 = []
    for by_value in cells.values():
        arrays = [np.array(cell) for cell in by_value.values()]
        pair_w1 += [wasserstein_distance(a, b) for a, b in itertools.combinations(arrays, 2)]
    group_w1 = [wasserstein_distance(np.array(group), scores) for group in groups.values()]
    return {"individual_fairness": float(np.mean(pair_w1)), "group_fairness": float(np.mean(group_w1))}


def timed(function, *args, **kwargs):
    """(seconds, result) of one call."""
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1000, help="samples per prefix (paper: 1000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="runs of ours per attribute (best is reported)")
    parser.add_argument("--naive-attributes", nargs="*", default=list(ATTRIBUTES), choices=ATTRIBUTES)
    parser.add_argument("--bootstrap", type=int, default=5, help="resamples timed for the bootstrap line (0: skip)")
    parser.add_argument("--classifier-texts", type=int, default=730_000, help="texts for the classifier timings (0: skip)")
    args = parser.parse_args()

    data = paper_layout(args.samples, args.seed)
    total_scores = sum(len(d[0]) for d in data.values())
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, {cpu_name()}, CPU only; Python {platform.python_version()}, "
        f"numpy {np.__version__}, scipy {scipy.__version__}"
    )
    print(f"scores: {total_scores:,} ({args.samples:,} per prefix, 730 prefixes, Beta(2, 2), seed {args.seed})\n")
    print(
        "| attribute | templates x values | scores | ours (s) | naive scipy loop (s) | speed-up "
        "| max abs diff I.F. / G.F. | I.F. | G.F. |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    ours_total = naive_total = ours_naive_part = 0.0
    for attribute, (scores, values, templates, subgroups) in data.items():
        best, result = min(
            (timed(counterfactual_fairness, scores, values, templates, subgroups) for _ in range(args.repeat)), key=lambda x: x[0]
        )
        ours_total += best
        shape = f"{len(result['templates'])} x {len(set(values.tolist()))}"
        cells = [f"{attribute} | {shape} | {len(scores):,} | {best:.3f}"]
        if attribute in args.naive_attributes:
            slow, reference = timed(naive, scores, values, templates, subgroups)
            naive_total += slow
            ours_naive_part += best
            diff_if = abs(reference["individual_fairness"] - result["individual_fairness"])
            diff_gf = abs(reference["group_fairness"] - result["group_fairness"])
            cells.append(f"{slow:.3f} | {slow / best:.1f}x | {diff_if:.1e} / {diff_gf:.1e}")
        else:
            cells.append("- | - | -")
        cells.append(f"{result['individual_fairness']:.4f} | {result['group_fairness']:.4f}")
        print("| " + " | ".join(cells) + " |")
    naive_cell = f"{naive_total:.3f} | {naive_total / ours_naive_part:.1f}x" if ours_naive_part else "- | -"
    if set(args.naive_attributes) != set(ATTRIBUTES):
        naive_cell += f" (naive on {', '.join(args.naive_attributes)} only)"
    print(f"| all three | | {total_scores:,} | {ours_total:.3f} | {naive_cell} | | | |")

    if args.bootstrap:
        seconds = sum(
            timed(counterfactual_fairness, *d, bootstrap=args.bootstrap)[0] - timed(counterfactual_fairness, *d)[0]
            for d in data.values()
        )
        per_resample = seconds / args.bootstrap
        print(f"\nbootstrap: {per_resample:.3f} s per resample of all three attributes ({args.bootstrap} resamples timed)")

    if args.classifier_texts:
        classifier_timings(args.classifier_texts)


def classifier_timings(n: int) -> None:
    """Time the opinion-word and VADER scorers on ``n`` texts (BOLD Wikipedia sentences, repeated)."""
    import lmbias
    from lmbias.benchmarks.counterfactual.scorers import sentiment

    sentences = [row["wikipedia"] for row in lmbias.load_rows("bold")]
    texts = (sentences * (n // len(sentences) + 1))[:n]
    lexicon = sentiment.opinion_lexicon()
    print(f"\nsentiment classifiers on {n:,} texts (BOLD Wikipedia sentences, repeated):\n")
    print("| classifier | seconds | texts/s |")
    print("|---|---:|---:|")
    for name, score in (
        ("opinion words (Hu & Liu)", lambda: sentiment.opinion_scores(texts, lexicon)),
        ("VADER, all cores", lambda: sentiment.vader_scores(texts)),
    ):
        seconds, _ = timed(score)
        print(f"| {name} | {seconds:.1f} | {n / seconds:,.0f} |")


if __name__ == "__main__":
    main()
