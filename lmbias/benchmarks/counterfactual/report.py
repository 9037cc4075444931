"""The counterfactual-sentiment section of the report: score distributions per subgroup (Figure 1),
I.F. / G.F. with bootstrap intervals, and a debiased model's perplexity beside its run."""

from __future__ import annotations

from ...errors import InputError
from ...files import read_json
from ...render import html, plots
from ...render.common import Figures, misses_note, number, with_ci


def counterfactual(runs, labels, figures: Figures, title: str = "Counterfactual sentiment bias (Huang et al. 2020)",
                   key: str = "counterfactual") -> list:
    """Sentiment distributions per subgroup (Figure 1) and I.F. / G.F. with intervals, and S.S. / S.S.c."""
    bodies = [run.results["results"].get("attributes", {}) for run in runs]
    attributes = list(dict.fromkeys(a for body in bodies for a in body))
    classifiers = list(dict.fromkeys(c for body in bodies for block in body.values() for c in block["classifiers"]))
    parts = [html.tag("h2", title)]
    if not attributes or not classifiers:
        return parts + [html.note("No attribute was scored with any sentiment classifier in these runs (see Missing).")]
    for attribute in attributes:
        parts.append(html.tag("h3", f"Sentiment distributions: {attribute}"))
        recorded = [(label, c) for label, body in zip(labels, bodies) for c in classifiers
                    if "histogram" in body.get(attribute, {}).get("classifiers", {}).get(c, {})]
        unrecorded = [label for label, body in zip(labels, bodies)
                      if attribute in body and all(shown_label != label for shown_label, _ in recorded)]
        parts += [html.note(f"{label}: distribution not recorded in this run (it predates the score histograms).") for label in unrecorded]
        if not recorded:
            continue
        shown = [(label, body) for label, body in zip(labels, bodies) if label not in unrecorded and attribute in body]
        figure = plots.new_figure(4.3 * len(classifiers), 3.2 * len(shown) + 0.5)
        axes = figure.subplots(len(shown), len(classifiers), squeeze=False)
        for row, (label, body) in zip(axes, shown):
            for ax, classifier in zip(row, classifiers):
                fairness = body[attribute]["classifiers"].get(classifier)
                if not fairness or "histogram" not in fairness:
                    ax.text(0.5, 0.5, "not scored" if not fairness else "distribution not recorded\nin this run",
                            ha="center", va="center", transform=ax.transAxes)
                    ax.set_axis_off()
                else:
                    plots.densities(ax, fairness["histogram"]["edges"], fairness["histogram"]["subgroups"])
                ax.set_title(plots.wrap(f"{label}\nclassifier: {classifier}", 4.0, 8), fontsize=8)
        figure.suptitle(f"Sentiment of the continuations per {attribute} subgroup", fontsize=11)
        parts.append(figures.add(figure, f"{key}-distribution-{attribute}", f"Sentiment distributions: {attribute}",
                                 ["Density of the sentiment scores of each subgroup's continuations (20 bins); n = continuations. "
                                  "Distributions that differ between subgroups are what I.F. and G.F. measure."]))
    parts.append(html.tag("h3", "Individual and group fairness"))
    pairs = [(label, c) for label in labels for c in classifiers]
    series_name = (lambda label, c: c) if len(runs) == 1 else (lambda label, c: f"{label} / {c}")
    figure = plots.new_figure(12, plots.bar_height(len(attributes), len(pairs)) + 0.8)
    for ax, (key, name) in zip(figure.subplots(1, 2), (("individual_fairness", "I.F."), ("group_fairness", "G.F."))):
        blocks = {series_name(label, c): [body.get(a, {}).get("classifiers", {}).get(c) for a in attributes]
                  for label, body in zip(labels, bodies) for c in classifiers}
        plots.bars(ax, attributes, {s: [b[key] if b else None for b in bs] for s, bs in blocks.items()},
                   errors={s: [(b.get("ci") or {}).get(key) if b else None for b in bs] for s, bs in blocks.items()},
                   fmt="{:.3f}".format)
        ax.set_xlabel(f"{name}: mean Wasserstein-1 distance (ideal 0)", fontsize=8)
        ax.set_title(f"{name} per attribute (lower is fairer)", fontsize=9)
    plots.legend(figure, ax, 4)
    has_ci = any("ci" in f for body in bodies for block in body.values() for f in block["classifiers"].values())
    perplexities = [perplexity_of(run) for run in runs]
    made = [how_debiased(run) for run in runs]
    with_ppl = any(perplexities)
    rows, checked = [], []
    for attribute in attributes:
        for label, body, ppl, how in zip(labels, bodies, perplexities, made):
            block = body.get(attribute)
            if not block:
                continue
            similarity = block.get("semantic_similarity")
            for classifier, f in block["classifiers"].items():
                ci = f.get("ci") or {}
                checked += [(f[key], ci.get(key)) for key in ("individual_fairness", "group_fairness")]
                rows.append([attribute, label + (f" ({how})" if how else ""), classifier, block["samples"],
                             with_ci(f["individual_fairness"], ci.get("individual_fairness"), 4),
                             with_ci(f["group_fairness"], ci.get("group_fairness"), 4),
                             number(similarity["ss"]) if similarity else "not scored",
                             number(similarity["ssc"]) if similarity else "not scored"]
                            + (([number(ppl["ppl"]["ppl"], 2), number(ppl["ppl_s"]["ppl"], 2)] if ppl else ["", ""]) if with_ppl else []))
    parts += [figures.add(figure, f"{key}-fairness", "I.F. and G.F. per attribute and classifier",
                          ["I.F.: distance between the sentiment of counterfactual pairs of the same template; G.F.: between a "
                           "subgroup's sentiment and everyone's. " + ("Error bars: bootstrap confidence intervals." if has_ci
                                                                      else "No bootstrap intervals in these runs."),
                           misses_note(checked)]),
              html.table(["attribute", "model", "classifier", "samples", "I.F.", "G.F.", "S.S. (%)", "S.S.c (%)"]
                         + (["PPL", "PPL_s"] if with_ppl else []), rows,
                         "I.F. / G.F." + (" [bootstrap confidence interval]" if has_ci else "")
                         + " and semantic similarity of the continuations to the attribute (S.S.; S.S.c: counterfactual pairs)"
                         + ("; PPL / PPL_s: perplexity on held-out text and on its texts with a sensitive token "
                            "(`lmbias perplexity --out RUN_DIR`), as the paper's Figures 4 and 5 compare a baseline with "
                            "debiased models" if with_ppl else ""))]
    return parts


def perplexity_of(run) -> dict | None:
    """``<run>/perplexity.json`` (written by ``lmbias perplexity --out RUN_DIR``), if there is one; a
    damaged one is an error naming it."""
    path = run.path / "perplexity.json"
    if not path.is_file():
        return None
    saved = read_json(path, f"rerun `lmbias perplexity --out {run.path}`, or move the file away")
    if not all(isinstance(saved, dict) and isinstance(saved.get(key), dict) for key in ("ppl", "ppl_s")):
        raise InputError(f"{path} is not what `lmbias perplexity` writes (expected objects 'ppl' and 'ppl_s'); "
                         f"rerun `lmbias perplexity --out {run.path}`, or move the file away")
    return saved


def how_debiased(run) -> str:
    """"embedding, λ = 10" when the run's model folder was made by ``lmbias debias``, else ""."""
    from pathlib import Path

    source = (run.results or {}).get("model", {}).get("source")
    state = Path(str(source)) / "debias.json" if source else None
    if not state or not state.is_file():
        return ""
    saved = read_json(state, "it is not the file `lmbias debias` wrote; move it away or rerun the debias command")
    settings = saved.get("settings") if isinstance(saved, dict) else None
    if not isinstance(settings, dict):
        raise InputError(f"{state} has no 'settings' object; it is not the file `lmbias debias` wrote: move it away "
                         "or rerun the debias command")
    return f"{settings.get('method')}, λ = {settings.get('lam'):g}" if settings.get("lam") else "λ = 0 control"
