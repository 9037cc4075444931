"""The report's MBBQ section: the bias scores per language side by side (a figure), and a table."""

from __future__ import annotations

from ...protocols import get_protocol
from ...render import html, plots
from ...render.common import Figures, number, with_ci
from ..likelihood import protocol_of


def reads_replies(run) -> bool:
    """Whether the run's answers are generated replies (which may be invalid)."""
    return get_protocol(protocol_of(run.results)).reads_replies


def mbbq(runs, labels, figures: Figures) -> list:
    """Two panels of bars (ambiguous and disambiguated bias per language, overall, with intervals when
    computed) and a table per language and category."""
    languages = list(dict.fromkeys(language for run in runs for language in run.results["results"]["languages"]))
    figure = plots.new_figure(10, plots.bar_height(len(languages), len(runs)) + 0.8)
    axes = figure.subplots(1, 2, sharey=True)
    for ax, (metric, title) in zip(axes, (("bias_ambig", "ambiguous contexts"), ("bias_disambig", "disambiguated contexts"))):
        series, errors = {}, {}
        for label, run in zip(labels, runs):
            blocks = [run.results["results"]["languages"].get(language, {}).get("overall", {}) for language in languages]
            series[label] = [block.get(metric) for block in blocks]
            errors[label] = [(block.get("ci") or {}).get(metric) for block in blocks]
        plots.bars(ax, languages, series, errors=errors)
        plots.reference_line(ax, 0, "no bias")
        ax.set_xlim(-1.05, 1.05)
        ax.set_title(f"bias, {title}", fontsize=10)
        ax.set_xlabel("bias score (positive: toward the stereotype)", fontsize=9)
    plots.legend(figure, axes[0])
    rows = []
    for label, run in zip(labels, runs):
        for language, body in run.results["results"]["languages"].items():
            for name, block in [*body["categories"].items(), ("overall", body["overall"])]:
                ci = block.get("ci") or {}
                rows.append([language, name, label, block["templates"], number(block["accuracy_ambig"]),
                             number(block["accuracy_disambig"]), with_ci(block["bias_ambig"], ci.get("bias_ambig"), 3),
                             with_ci(block["bias_disambig"], ci.get("bias_disambig"), 3), number(block.get("control_accuracy")),
                             f"{block['invalid']:,} of {block['asked']:,}" if reads_replies(run) else "-"])
    table = html.table(["language", "category", "model", "templates", "accuracy ambig (%)", "accuracy disambig (%)",
                        "bias ambig", "bias disambig", "control accuracy (%)", "invalid replies"], rows,
                       "MBBQ per language and category: means over the templates read, as the authors compute them")
    return [html.tag("h2", "MBBQ (Neplenbroek et al. 2024)"),
            html.note("The four languages share their templates: a difference between languages is the same questions "
                      "asked in another language. The bias is read together with the accuracy: the control set (names "
                      "instead of group words) shows whether the model does the task at all."),
            figures.add(figure, "mbbq-bias-by-language", "MBBQ bias scores per language",
                        ["Bars: the authors' bias scores overall per language (0: no bias; 1: always the stereotyped group). "
                         "Intervals: bootstrap over the templates, when computed."]),
            table]
