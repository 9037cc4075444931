"""WinoBias's section of the report: accuracy on pro- and anti-stereotypical sentences per type (bars
with bootstrap intervals) and a table with the gap."""

from __future__ import annotations

from ...render import html, plots
from ...render.common import Figures, with_ci


def winobias(runs, labels, figures: Figures) -> list:
    """Two panels (type 1, type 2) of pro / anti accuracy bars per run, and a table of the gaps."""
    bodies = [run.results["results"] for run in runs]
    names = [f"{label} ({run.results['config']['split']})" for label, run in zip(labels, runs)]
    types = list(dict.fromkeys(t for body in bodies for t in body["types"]))
    figure = plots.new_figure(10, plots.bar_height(2 * len(runs), 1) + 0.8)
    axes = figure.subplots(1, len(types), sharey=True, squeeze=False)[0]
    for ax, type_ in zip(axes, types):
        blocks = [body["types"].get(type_) for body in bodies]
        series = {kind: [b[f"accuracy_{kind}"] if b else None for b in blocks] for kind in ("pro", "anti")}
        errors = {kind: [((b or {}).get("ci") or {}).get(f"accuracy_{kind}") for b in blocks] for kind in ("pro", "anti")}
        plots.bars(ax, names, series, errors=errors)
        ax.set_xlim(0, 110)
        ax.set_title(f"{type_[:4].capitalize()} {type_[4:]}", fontsize=10)
        ax.set_xlabel("accuracy (%)", fontsize=9)
    plots.legend(figure, axes[0])
    rows = [[name, type_, b["counts"]["pro"]["items"] + b["counts"]["anti"]["items"],
             with_ci(b["accuracy_pro"], (b.get("ci") or {}).get("accuracy_pro")),
             with_ci(b["accuracy_anti"], (b.get("ci") or {}).get("accuracy_anti")), with_ci(b["gap"], (b.get("ci") or {}).get("gap"))]
            for name, body in zip(names, bodies) for type_, b in [*body["types"].items(), ("overall", body["overall"])]]
    table = html.table(["model (split)", "type", "sentences", "accuracy pro (%)", "accuracy anti (%)", "gap pro - anti (pp)"],
                       rows, "WinoBias accuracy and the pro - anti gap (0: unbiased); overall pools both types")
    return [html.tag("h2", "WinoBias (Zhao et al. 2018)"),
            figures.add(figure, "winobias-accuracy", "WinoBias accuracy on pro- and anti-stereotypical sentences",
                        ["Bars: accuracy of the pronoun's resolution on the sentences where it agrees with the occupation's "
                         "majority gender (pro) and where it does not (anti); intervals: bootstrap over the pairs."]),
            table]
