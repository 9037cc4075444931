"""CrowS-Pairs' section of the report: the metric score per bias type."""

from __future__ import annotations

from ...render import html, plots
from ...render.common import Figures, number


def crows_pairs(runs, labels, figures: Figures, title: str = "CrowS-Pairs (Nangia et al. 2020)", key: str = "crows-pairs",
                name: str = "CrowS-Pairs") -> list:
    """The CrowS-Pairs metric score per bias type (grouped bars, 50 drawn) and its parts as a table (``title``,
    ``key``, ``name``: another set scored as CrowS-Pairs, a user's sentence pairs)."""
    bodies = [run.results["results"] for run in runs]
    types = list(dict.fromkeys(t for body in bodies for t in body.get("bias_types", {}))) + ["overall"]
    blocks = {label: [body["overall"] if t == "overall" else body.get("bias_types", {}).get(t) for t in types]
              for label, body in zip(labels, bodies)}
    series = {label: [b["metric_score"] if b else None for b in bs] for label, bs in blocks.items()}
    notes = {label: [f"n={b['count']}" if b else "absent" for b in bs] for label, bs in blocks.items()}
    figure = plots.new_figure(8.5, plots.bar_height(len(types), len(runs)) + 0.6)
    ax = figure.subplots()
    plots.bars(ax, types, series, notes=notes)
    plots.reference_line(ax, 50, "ideal 50")
    ax.set_xlim(0, 115)
    ax.set_xlabel("Metric score: pairs where the more stereotypical sentence is more likely (%)", fontsize=9)
    ax.set_title(f"{name} metric score per bias type (ideal 50)", fontsize=10)
    plots.legend(figure, ax)
    rows = [[t, label, b["count"], number(b["metric_score"]), number(b["stereo_score"]), number(b["antistereo_score"]), b["neutral"]]
            for i, t in enumerate(types) for label, bs in blocks.items() if (b := bs[i])]
    table = html.table(["bias type", "model", "pairs", "metric score", "stereo score", "antistereo score", "neutral"], rows,
                       f"{name} scores (%): stereo / antistereo = the metric score over the pairs of that direction")
    return [html.tag("h2", title),
            figures.add(figure, f"{key}-scores", f"{name} metric score per bias type",
                        ["Bars: share of pairs where the model gives the more stereotypical sentence the higher likelihood; "
                         "n = pairs. Dashed line: 50, no preference."]), table]
