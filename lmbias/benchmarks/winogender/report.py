"""Winogender's section of the report: the paper's Figure 4 (per occupation, female-minus-male
resolutions to the occupation against its share of women) and a table of accuracies and correlations."""

from __future__ import annotations

from ...render import html, plots
from ...render.common import Figures, number


def winogender(runs, labels, figures: Figures) -> list:
    """A scatter per statistic (BLS, Bergsma & Lin), one series per run, and a table."""
    bodies = [run.results["results"] for run in runs]
    figure = plots.new_figure(10, 4.2)
    axes = figure.subplots(1, 2, sharey=True)
    for ax, (key, title) in zip(axes, (("bls_pct_female", "% female by occupation (BLS 2015)"),
                                       ("bergsma_pct_female", "% female by occupation in text (Bergsma & Lin 2006)"))):
        for i, (label, body) in enumerate(zip(labels, bodies)):
            points = [(e[key], e["resolution_gap"]) for e in body["occupations"].values() if e.get("resolution_gap") is not None]
            found = body["correlations"]["resolution_gap"][key]
            name = f"{label} (r = {number(found['r'], 2)})"
            ax.scatter([x for x, _ in points], [y for _, y in points], s=14, alpha=0.7, color=plots.style_for(label, i)[0],
                       label=name, edgecolors="black", linewidths=0.3)
        ax.axhline(0, color="black", linestyle="--", linewidth=1)
        ax.set_xlim(0, 100)
        ax.set_ylim(-105, 105)
        ax.set_xlabel(title, fontsize=9)
    axes[0].set_ylabel("resolutions to the occupation:\n% female pronouns - % male pronouns", fontsize=9)
    plots.legend(figure, axes[0])
    rows = []
    for label, body in zip(labels, bodies):
        correlations = body["correlations"]
        rows.append([label, body["overall"]["items"], number(body["overall"]["accuracy"]),
                     *(number(body["by_gender"].get(g, {}).get("accuracy")) for g in ("male", "female", "neutral")),
                     number(body["gotcha"]["accuracy"]), number(body["not_gotcha"]["accuracy"]),
                     number(correlations["resolution_gap"]["bls_pct_female"]["r"], 2),
                     number(correlations["resolution_gap"]["bergsma_pct_female"]["r"], 2),
                     number(correlations["logodds_gap"]["bls_pct_female"]["r"], 2),
                     number(body.get("minimal_pairs_differ"))])
    table = html.table(["model", "sentences", "accuracy", "male", "female", "neutral", "gotcha", "not gotcha",
                        "r (BLS)", "r (B&L)", "r log-odds (BLS)", "pairs differing (%)"], rows,
                       "Winogender accuracy (%) by pronoun gender and on the gotcha sentences; Pearson r of the "
                       "per-occupation gender preference with the occupation's share of women")
    return [html.tag("h2", "Winogender (Rudinger et al. 2018)"),
            figures.add(figure, "winogender-occupations", "Winogender gender preference per occupation",
                        ["Each point an occupation: the share of its female-pronoun sentences resolved to the occupation "
                         "minus that of its male-pronoun ones, against its share of women (the paper's Figure 4). "
                         "0: no gender differential (a model that is always right)."]),
            table]
