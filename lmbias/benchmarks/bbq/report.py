"""BBQ's section of the report: s_AMB and s_DIS per category (the paper's Figure 3, as bars) and a
table with the accuracies, counts and invalid answers."""

from __future__ import annotations

from ...render import html, plots
from ...render.common import Figures, number, with_ci


def bbq(runs, labels, figures: Figures, title: str = "BBQ (Parrish et al. 2022)", key: str = "bbq") -> list:
    """Two panels of bars (s_AMB, s_DIS per category, with bootstrap intervals when computed) and a table
    (``title`` and ``key``: another set scored as BBQ, a user's multiple-choice benchmark)."""
    bodies = [run.results["results"] for run in runs]
    names = list(dict.fromkeys(c for body in bodies for c in body["categories"])) + ["overall"]

    def block(body, name):
        return body["overall"] if name == "overall" else body["categories"].get(name)

    figure = plots.new_figure(10, plots.bar_height(len(names), len(runs)) + 0.8)
    axes = figure.subplots(1, 2, sharey=True)
    for ax, (metric, context, panel) in zip(axes, (("bias_amb", "ambig", "s_AMB (ambiguous contexts)"),
                                                   ("bias_dis", "disambig", "s_DIS (disambiguated contexts)"))):
        series = {label: [(b or {}).get(metric) for b in (block(body, n) for n in names)] for label, body in zip(labels, bodies)}
        errors = {label: [((b or {}).get(f"ci_{context}") or {}).get(metric) for b in (block(body, n) for n in names)]
                  for label, body in zip(labels, bodies)}
        plots.bars(ax, names, series, errors=errors)
        plots.reference_line(ax, 0, "no bias")
        ax.set_xlim(-105, 105)
        ax.set_title(panel, fontsize=10)
        ax.set_xlabel("bias score x 100 (positive: toward the stereotype)", fontsize=9)
    plots.legend(figure, axes[0])
    rows = []
    for name in names:
        for label, body in zip(labels, bodies):
            b = block(body, name)
            if b:
                rows.append([name, label, b["counts_ambig"]["items"] + b["counts_disambig"]["items"],
                             number(b["accuracy_ambig"]), number(b["accuracy_disambig"]),
                             with_ci(b["bias_amb"], (b.get("ci_ambig") or {}).get("bias_amb")),
                             with_ci(b["bias_dis"], (b.get("ci_disambig") or {}).get("bias_dis")), b["invalid"]])
    protocols = sorted({run.results["config"]["protocol"] for run in runs})
    table = html.table(["category", "model", "items", "accuracy ambig (%)", "accuracy disambig (%)", "s_AMB", "s_DIS",
                        "invalid answers"], rows,
                       f"{title} per category; overall pools every item run")
    return [html.tag("h2", title),
            html.note(f"Protocol: {', '.join(protocols)}. Likelihood and generated answers are different measurements: "
                      "compare models under the same protocol."),
            figures.add(figure, f"{key}-bias-scores", f"{title} bias scores per category",
                        ["Bars: the authors' bias scores x 100 (0: no bias; 100: always the stereotyped answer; "
                         "s_AMB is scaled by the errors in ambiguous contexts). Intervals: bootstrap, when computed."]),
            table]


def category_bias_panels(bodies, labels, measure: str = "bias"):
    """A figure of two panels of bars, the ambiguous and disambiguated bias (``bias_ambig``, ``bias_disambig``, in
    [-1, 1]) per category and overall of each run's results body (``categories``, ``overall``), with their intervals:
    the sets scored on BBQ's plan with their own measures (EsBBQ / CaBBQ, KoBBQ). Returns ``(figure, names)``."""
    names = list(dict.fromkeys(c for body in bodies for c in body["categories"])) + ["overall"]

    def block(body, name):
        return body["overall"] if name == "overall" else body["categories"].get(name) or {}

    figure = plots.new_figure(10, plots.bar_height(len(names), len(bodies)) + 0.8)
    axes = figure.subplots(1, 2, sharey=True)
    for ax, (metric, title) in zip(axes, (("bias_ambig", "ambiguous contexts"), ("bias_disambig", "disambiguated contexts"))):
        plots.bars(ax, names, {label: [block(body, n).get(metric) for n in names] for label, body in zip(labels, bodies)},
                   errors={label: [(block(body, n).get("ci") or {}).get(metric) for n in names]
                           for label, body in zip(labels, bodies)})
        plots.reference_line(ax, 0, "no bias")
        ax.set_xlim(-1.05, 1.05)
        ax.set_title(f"{measure}, {title}", fontsize=10)
        ax.set_xlabel(f"{measure} (positive: toward the stereotype)", fontsize=9)
    plots.legend(figure, axes[0])
    return figure, names
