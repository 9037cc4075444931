"""SEAT's section of the report: each test's effect size (bars, one series per run), a table of
effect sizes and p-values, and the mean |effect size| per bias type."""

from __future__ import annotations

from ...render import html, plots
from ...render.common import Figures, number, p_value


def seat(runs, labels, figures: Figures) -> list:
    """Bars of the effect size per test, the tests' table and the per-bias-type table."""
    bodies = [run.results["results"] for run in runs]
    tests = list(dict.fromkeys(test for body in bodies for test in body["tests"]))
    figure = plots.new_figure(8.5, plots.bar_height(len(tests), len(runs)) + 0.6)
    ax = figure.subplots()
    plots.bars(ax, tests, {label: [(body["tests"].get(test) or {}).get("effect_size") for test in tests]
                           for label, body in zip(labels, bodies)}, fmt="{:.2f}".format)
    ax.axvline(0, color="black", linewidth=1)
    ax.set_xlabel("effect size (0: no association; positive: targ1 nearer attr1, targ2 nearer attr2)", fontsize=9)
    ax.set_title("SEAT effect size per test", fontsize=10)
    plots.legend(figure, ax)
    rows = [[label, test, block["bias_type"] or "-", number(block["effect_size"], 3), p_value(block["p_value"]),
             f"{block['permutation']} ({block['partitions']:,})", ", ".join(str(n) for n in block["n"].values())]
            for label, body in zip(labels, bodies) for test, block in body["tests"].items()]
    tests_table = html.table(["model", "test", "bias type", "effect size", "p-value", "permutation", "n (targ1, targ2, attr1, attr2)"],
                             rows, "SEAT tests: effect size and one-sided permutation p-value (ties counted as more extreme)")
    kinds = list(dict.fromkeys(kind for body in bodies for kind in body["bias_types"])) + ["overall"]

    def mean(body, kind):
        block = body["overall"] if kind == "overall" else body["bias_types"].get(kind)
        return "n/a" if block is None else f"{number(block['mean_abs_effect_size'], 3)} ({block['tests']})"

    means_table = html.table(["model", *kinds], [[label, *(mean(body, kind) for kind in kinds)] for label, body in zip(labels, bodies)],
                             "Mean |effect size| per bias type (bias-bench's grouping) and over every test run (tests)")
    return [html.tag("h2", "SEAT (May et al. 2019)"),
            html.note("Sentence embeddings: the mean of the base model's last hidden state over the tokens, unit length "
                      "(bias-bench's encoding). Runs over other tests (--tests) have other overall means."),
            figures.add(figure, "seat-effect-sizes", "SEAT effect size per test",
                        ["Bars: per test, (mean association of targ1 - that of targ2) / their standard deviation, an "
                         "association being a sentence's mean cosine with attr1 minus that with attr2."]),
            means_table, tests_table]
