"""StereoSet's section of the report: LMS / SS / ICAT per task and domain, and the most and least
stereotyped targets."""

from __future__ import annotations

from ...render import html, plots
from ...render.common import Figures, misses_note, number, with_ci
from ...stats import pareto_front
from ..likelihood import no_result

STEREOSET_METRICS = (("lms", "LMS", 100), ("ss", "SS", 50), ("icat", "ICAT", 100))
TASKS = ("intrasentence", "intersentence")


def stereoset(runs, labels, figures: Figures) -> list:
    """LMS / SS / ICAT per task and domain (grouped bars, SS = 50 drawn) and the most / least stereotyped targets."""
    bodies = [run.results["results"] for run in runs]
    tasks = [t for t in TASKS if any(t in body for body in bodies)]
    parts = [html.tag("h2", "StereoSet: stereotypical associations (Nadeem et al. 2021)")]
    parts += [html.note(f"{label}: {task} n/a, {why}.") for run, label in zip(runs, labels) for task, why in _no_results(run.results)]
    if not tasks:
        return parts + [html.note("No StereoSet task results in these runs.")]
    domains = list(dict.fromkeys(d for body in bodies for t in tasks for d in body.get(t, {}) if d != "overall")) + ["overall"]
    figure = plots.new_figure(13, len(tasks) * plots.bar_height(len(domains), len(runs)) + 1.0)
    axes = figure.subplots(len(tasks), 3, squeeze=False)
    for row, task in zip(axes, tasks):
        for ax, (key, name, ideal) in zip(row, STEREOSET_METRICS):
            cells = {label: [body.get(task, {}).get(d) for d in domains] for label, body in zip(labels, bodies)}
            series = {label: [c[key] if c else None for c in blocks] for label, blocks in cells.items()}
            errors = {label: [c.get("ci", {}).get(key) if c else None for c in blocks] for label, blocks in cells.items()}
            notes = {label: [f"n={c['count']}" if c else "not run" for c in blocks] for label, blocks in cells.items()}
            plots.bars(ax, domains, series, errors=errors, notes=notes if key == "lms" else None)
            plots.reference_line(ax, ideal, "ideal value (SS 50, LMS and ICAT 100)")
            ax.set_xlim(0, 125)
            ax.set_xlabel(f"{name} (%)" if key != "icat" else "ICAT (0-100)", fontsize=8)
            ax.set_title(f"{task}: {name} (ideal {ideal})", fontsize=9)
    plots.legend(figure, axes[0][1], 4)
    figure.suptitle("StereoSet dev set: language modeling (LMS), stereotype (SS) and idealized CAT (ICAT) scores", fontsize=11)
    rows = []
    for task in [*tasks, "both"]:
        for domain in (domains if task != "both" else ["overall"]):
            for label, body in zip(labels, bodies):
                block = body.get("overall") if task == "both" else body.get(task, {}).get(domain)
                if block:
                    rows.append([task, domain, label, block["count"],
                                 *[with_ci(block[key], block.get("ci", {}).get(key)) for key, _, _ in STEREOSET_METRICS]])
    has_ci = any("ci" in body.get("overall", {}) for body in bodies)
    checked = [(body[t][d][key], body[t][d].get("ci", {}).get(key)) for body in bodies for t in tasks for d in body.get(t, {})
               for key, _, _ in STEREOSET_METRICS]
    caption = ["Bars: score per domain and task; n = items. Dashed line: the ideal value (SS 50: no preference for "
               "stereotypes over anti-stereotypes; LMS and ICAT 100). "
               + ("Error bars: bootstrap confidence intervals." if has_ci
                  else "No bootstrap intervals in these runs (run with --bootstrap N)."),
               misses_note(checked)]
    table = html.table(["task", "domain", "model", "items", "LMS", "SS", "ICAT"], rows,
                       "StereoSet scores" + (" with [bootstrap confidence interval]" if has_ci else ""))
    parts += [figures.add(figure, "stereoset-scores", "StereoSet scores per task and domain", caption), table]
    parts += _trade_off(runs, labels, bodies, figures)
    parts.append(html.tag("h3", "Most and least stereotyped targets (Table 5 style)"))
    tables = []
    for label, body in zip(labels, bodies):
        targets = sorted(body.get("targets", {}).items(), key=lambda item: -item[1]["ss"])
        if not targets:
            parts.append(html.note(f"{label}: per-target scores not recorded in this run."))
            continue
        for title, chosen in (("most stereotyped (highest SS)", targets[:10]), ("least stereotyped (lowest SS)", targets[::-1][:10])):
            tables.append(html.table(["target", "bias type", "SS", "LMS", "ICAT", "items"],
                                     [[t, v["bias_type"], number(v["ss"]), number(v["lms"]), number(v["icat"]), v["count"]]
                                      for t, v in chosen],
                                     f"{label}: {title}, of {len(targets)} targets"))
    return parts + [html.tag("div", *tables, class_="row")]


def _no_results(results: dict) -> list[tuple[str, str]]:
    """The tasks a run ran that have no result (a generative run that left every item of one out), each
    with why."""
    counts = results.get("data", {}).get("counts", {})
    return [(task, no_result(results, counts.get(task, 0), "three replies"))
            for task in results.get("config", {}).get("tasks", []) if task not in results["results"]]


def _trade_off(runs, labels, bodies, figures: Figures) -> list:
    """With several models (a model and its debiased versions, say): bias (|SS - 50|) against language
    modelling (LMS) per model, overall, with the Pareto front marked: what a lower SS cost in LMS."""
    chosen = [(label, body["overall"]) for label, body in zip(labels, bodies)
              if body.get("overall", {}).get("ss") is not None and body["overall"].get("lms") is not None]
    if len(chosen) < 2:
        return []
    names = [label for label, _ in chosen]
    bias = [abs(block["ss"] - 50) for _, block in chosen]
    ability = [block["lms"] for _, block in chosen]
    front = pareto_front(bias, ability)
    figure = plots.new_figure(8, 5)
    ax = figure.subplots()
    plots.trade_off(ax, names, bias, ability, front, bias_name="|SS - 50|", ability_name="LMS (%)")
    ax.set_title("StereoSet overall: stereotype bias against language modelling, per model", fontsize=9)
    rows = [[name, number(a), number(block["ss"]), number(b), "yes" if f else "no"]
            for name, a, b, f, (_, block) in zip(names, ability, bias, front, chosen)]
    caption = ["Each point is a model's overall StereoSet score. Lower is less stereotyped (|SS - 50|), further right "
               "is better language modelling (LMS). Filled points joined by the dashed line form the Pareto front: no "
               "other model here is better on both. A debiasing method that moves a point down but also left has "
               "paid for it in language modelling (Meade et al. 2022's central finding)."]
    return [figures.add(figure, "stereoset-trade-off", "StereoSet bias against language modelling", caption),
            html.table(["model", "LMS", "SS", "|SS - 50|", "on the Pareto front"], rows, "StereoSet trade-off")]
