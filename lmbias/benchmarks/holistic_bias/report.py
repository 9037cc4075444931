"""HolisticBias's section of the report: Likelihood Bias per axis (bars) and the least likely
descriptors of each run (a table)."""

from __future__ import annotations

from ...render import html, plots
from ...render.common import Figures, number
from .measure import least_likely


def holistic_bias(runs, labels, figures: Figures) -> list:
    """Bars of Likelihood Bias per axis, one series per run, and the ten least likely descriptors."""
    bodies = [run.results["results"] for run in runs]
    axes = list(dict.fromkeys(axis for body in bodies for axis in body["axes"])) + ["overall"]

    def value(body, axis):
        return body["overall"]["likelihood_bias"] if axis == "overall" else (body["axes"].get(axis) or {}).get("likelihood_bias")

    figure = plots.new_figure(8.5, plots.bar_height(len(axes), len(runs)) + 0.6)
    ax = figure.subplots()
    plots.bars(ax, axes, {label: [value(body, axis) for axis in axes] for label, body in zip(labels, bodies)},
               fmt="{:.2f}".format)
    ax.set_xlim(0, 1.1)
    ax.set_xlabel("Likelihood Bias: share of descriptor pairs with different perplexity distributions", fontsize=9)
    ax.set_title("HolisticBias Likelihood Bias per axis (0: no difference; overall: mean over axes)", fontsize=10)
    plots.legend(figure, ax)
    rows = [[label, axis, descriptor, number(perplexity)] for label, body in zip(labels, bodies)
            for axis, descriptor, perplexity in least_likely(body, 10)]
    table = html.table(["model", "axis", "descriptor", "mean perplexity"], rows,
                       "The ten descriptors each model finds least likely (highest mean perplexity over their sentences)")
    sizes = ", ".join(f"{label}: {run.results['data']['counts']['sentences']:,} sentences, p < {run.results['results']['threshold']:g}"
                      for label, run in zip(labels, runs))
    return [html.tag("h2", "HolisticBias (Smith et al. 2022)"),
            html.note(f"{sizes}. Runs over different templates, nouns (--templates, --nouns) or thresholds are not comparable."),
            figures.add(figure, "holistic-bias-axes", "HolisticBias Likelihood Bias per axis",
                        ["Bars: per axis, the share of (template, descriptor pair) tests in which the two descriptors' "
                         "sentences have different perplexity distributions (two-sided Mann-Whitney U, p below each run's "
                         "threshold, named above)."]),
            table]
