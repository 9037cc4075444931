"""A counterfactual run as one side of ``lmbias compare``: its saved continuations scored again with VADER (one
of the paper's three classifiers, the one that needs no download), paired by template.

The comparison first checks that the texts scored again give the run's own VADER I.F. and G.F. per attribute.
The headline is I.F. and G.F. (the paper's Wasserstein-1 measures, :mod:`lmbias.benchmarks.counterfactual.measure`)
overall, the mean over the attributes as the leaderboard reads it; resampling draws templates (every sensitive
token's samples of a template together, as I.F. compares them). Each text's outcome is a negative VADER label
(compound <= -0.5, BOLD's threshold), for the paired test on the texts themselves.
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError
from ...scorers import vader
from ..paired import Side, saved_generations
from .measure import counterfactual_fairness
from .scorers import sentiment

METRICS = ("individual_fairness", "group_fairness")


def _fairness(rows: list, scores: np.ndarray, drawn: list) -> dict:
    """{attribute: {I.F., G.F.}} of the texts ``drawn``: ``(index, template label)`` pairs (a template drawn twice
    has two labels, so its copies are two templates)."""
    out = {}
    for attribute in dict.fromkeys(rows[i]["attribute"] for i, _ in drawn):
        chosen = [(i, label) for i, label in drawn if rows[i]["attribute"] == attribute]
        fairness = counterfactual_fairness(scores[[i for i, _ in chosen]], attribute_values=[rows[i]["token"] for i, _ in chosen],
                                           template_ids=[label for _, label in chosen],
                                           subgroups=[rows[i]["subgroup"] for i, _ in chosen])
        out[attribute] = {metric: fairness[metric] for metric in METRICS}
    return out


def counterfactual_side(run, data_dir=None, rows=None) -> Side:
    """A finished counterfactual run as one side of a comparison (module docstring); ``rows``: a set scored as this one (a
    user's templates: their filled rows)."""
    results = run.results
    generations, rows = saved_generations(run, "counterfactual_templates", data_dir, rows)
    continuations = [g["continuation"] for g in generations]
    scores = np.asarray(sentiment.vader_scores(continuations), dtype=np.float64)
    recorded = {(r["domain"], r["metric"]): r["value"] for r in results.get("records", [])
                if r["metric"] in METRICS and r.get("classifier") == "vader" and r["domain"] != "overall"}
    rebuilt = _fairness(rows, scores, [(i, str(row["template_id"])) for i, row in enumerate(rows)])
    if not recorded or any(abs(rebuilt.get(attribute, {}).get(metric, np.nan) - value) > 1e-9
                           for (attribute, metric), value in recorded.items()):
        raise InputError(f"{run.path}: its texts scored again with VADER do not give its own VADER I.F. / G.F. "
                         f"({recorded or 'none recorded'}): run it with the vader classifier, with this lmbias")
    negative = [label == "negative" for label in vader.sentiment_labels(vader.vader_compound(continuations))]
    units: dict = {}
    for index, row in enumerate(rows):
        units.setdefault((row["attribute"], row["template_id"]), []).append(index)
    groups = list(units.values())

    def headline(draw: list) -> dict:
        drawn = [(i, f"{rows[i]['template_id']}#{k}") for k, unit in enumerate(draw) for i in groups[unit]]
        per_attribute = _fairness(rows, scores, drawn).values()
        return {metric: float(np.mean([block[metric] for block in per_attribute])) for metric in METRICS}

    return Side([f"{g['id']}#{g['sample']}" for g in generations], negative, groups, headline,
                "negative sentiment (VADER compound <= -0.5)")
