"""The BOLD section (Dhamala et al. 2021): sentiment (Figures 3-5), toxicity, regard, the profession
gender skew (Figure 2, Table 3) and psycholinguistic-norm differences (Tables 4 and 6).

Every model is shown next to the Wikipedia baseline, the human-written sentences the prompts were
cut from; each figure and table names the run's significance test and the group sizes.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Mapping

from ... import stats
from ...errors import InputError
from ...render import html, plots
from ...render.common import Figures, number, p_value, statistic, test_line
from ...scorers.stand_in import STAND_IN
from .data import DOMAINS

GENDER_METHODS = ("unigram", "wavg", "max")


def parse_compare(compare: None | Iterable[str] | Mapping[str, tuple]) -> dict:
    """``{domain: (group_a, group_b)}`` from ``DOMAIN:GROUP_A:GROUP_B`` strings (or such a dict).

    Raises:
        ValueError: a string not of that form, or a domain BOLD does not have.
    """
    if compare is None:
        return {}
    items = compare.items() if isinstance(compare, Mapping) else []
    if not isinstance(compare, Mapping):
        if isinstance(compare, str):
            compare = [compare]
        for text in compare:
            parts = text.split(":")
            if len(parts) != 3 or not all(parts):
                raise InputError(f"--compare expects DOMAIN:GROUP_A:GROUP_B, e.g. gender:American_actors:American_actresses; got {text!r}")
            items.append((parts[0], (parts[1], parts[2])))
    pairs = {}
    for domain, (a, b) in items:
        if domain not in DOMAINS:
            raise InputError(f"--compare: unknown BOLD domain {domain!r}; choose from {list(DOMAINS)}")
        pairs[domain] = (a, b)
    return pairs


# BOLD Tables 4 and 6 compare two groups; these are the paper's pairs and the same idea elsewhere.
DEFAULT_COMPARE = {"gender": ("American_actors", "American_actresses"),
                   "race": ("European_Americans", "African_Americans"),
                   "religious_ideology": ("christianity", "islam"),
                   "political_ideology": ("left-wing", "right-wing")}


def sources(runs, labels) -> list:
    """``(name, SCORES)`` for each model, then the Wikipedia baseline (one entry when the runs share it)."""
    models = [(label, run.results["results"]["model"]) for run, label in zip(runs, labels) if "model" in run.results["results"]]
    wikis: list = []
    for run, label in zip(runs, labels):
        scores = run.results["results"].get("wikipedia")
        if scores and all(scores["metrics"] != seen["metrics"] for _, seen in wikis):
            wikis.append((label, scores))
    if len(wikis) == 1:
        return models + [("Wikipedia", wikis[0][1])]
    return models + [(f"Wikipedia (prompts of {label})", scores) for label, scores in wikis]


def _blocks(sources, metric: str, domain: str, method: str | None = None) -> list:
    """``(name, BLOCK)`` of each source that has ``metric`` in ``domain``."""
    found = []
    for name, scores in sources:
        entry = scores["metrics"].get(metric, {})
        entry = entry.get("methods", {}).get(method, {}) if method else entry
        if domain in entry.get("domains", {}):
            found.append((name, entry["domains"][domain]))
    return found


def _domains(sources, metric: str, method: str | None = None) -> list:
    entries = [scores["metrics"].get(metric, {}) for _, scores in sources]
    if method:
        entries = [entry.get("methods", {}).get(method, {}) for entry in entries]
    return list(dict.fromkeys(domain for entry in entries for domain in entry.get("domains", {})))


def _groups(blocks) -> list:
    return list(dict.fromkeys(group for _, block in blocks for group in block["per_group"]))


def _tests_table(blocks, labels, caption: str) -> html.Raw:
    """Per source: the test's method and, per label, its statistic and p-value (BLOCK ``test``)."""
    rows = []
    for name, block in blocks:
        test = block.get("test")
        if not test:
            rows.append([name, "no test (fewer than two groups)", *["" for _ in labels], ""])
            continue
        cells = [statistic(test["per_label"][label]) if label in test["per_label"] else "n/a" for label in labels]
        overall = statistic(test["overall"]) if test.get("overall") else "n/a"
        rows.append([name, f"{test['method']} over {len(test['groups'])} groups", *cells, overall])
    return html.table(["source", "test per label", *labels, "all labels (chi-square, groups x labels)"], rows, caption)


def _stacked(sources, metric: str, what: str, figures: Figures) -> list:
    """One figure per domain: per source a panel of stacked label shares per group (Figures 3-5)."""
    parts = []
    for domain in _domains(sources, metric):
        blocks = _blocks(sources, metric, domain)
        labels = next(scores["metrics"][metric]["label_names"] for _, scores in sources if metric in scores["metrics"])
        groups = _groups(blocks)
        figure = plots.new_figure(1.8 + 3.4 * len(blocks), plots.bar_height(len(groups)) + 1.0)
        axes = figure.subplots(1, len(blocks), sharey=True, squeeze=False)[0]
        rows = []
        for ax, (name, block) in zip(axes, blocks):
            per_group = block["per_group"]
            series = {label: [100 * per_group[g][label] if g in per_group else None for g in groups] for label in labels}
            plots.bars(ax, groups, series, stacked=True, min_label=8, fmt="{:.0f}".format)
            for j, group in enumerate(groups):
                ax.text(101, j, f"n={per_group[group]['n']}" if group in per_group else "absent", va="center", fontsize=7)
            ax.set_xlim(0, 100)
            ax.set_xlabel("Share of texts (%)", fontsize=8)
            ax.set_title(plots.wrap(f"{name}\n" + test_line(block.get("test"), sep="\n"), 3.2, 8), fontsize=8)
            rows += [[name, g, per_group[g]["n"], *[number(100 * per_group[g][label]) for label in labels]]
                     for g in groups if g in per_group]
        figure.suptitle(f"{what}: {domain.replace('_', ' ')} domain", fontsize=11)
        plots.legend(figure, axes[0], len(labels))
        caption = ["Share of each group's texts per label, in percent (segments under 8% unlabelled); "
                   "n = texts per group. Panel titles: the chi-square test of the groups x labels table; per label, "
                   "is its share the same across groups (table below)."]
        data = html.table(["source", "group", "n", *[f"{label} (%)" for label in labels]], rows)
        parts += [figures.add(figure, f"bold-{metric}-{domain}", f"{what}: {domain.replace('_', ' ')} domain", caption, data),
                  _tests_table(blocks, labels, f"Significance tests, {what.lower()}, {domain.replace('_', ' ')} domain")]
    return parts


def _grouped(blocks, groups, value, *, name: str, title: str, xlabel: str, test_labels, figures: Figures,
             caption: str, zero_line: str | None = None) -> html.Raw:
    """One figure of grouped bars, a bar per source and group: ``value(per_group_entry)`` with n."""
    series = {source: [value(block["per_group"][g]) if g in block["per_group"] else None for g in groups]
              for source, block in blocks}
    notes = {source: [f"n={block['per_group'][g]['n']}" if g in block["per_group"] else "absent" for g in groups]
             for source, block in blocks}
    tests = [f"{source}: " + test_line(block.get("test"), test_labels) for source, block in blocks]
    figure = plots.new_figure(8.5, plots.bar_height(len(groups), len(blocks)) + 0.8 + 0.3 * len(tests))
    ax = figure.subplots()
    plots.bars(ax, groups, series, notes=notes)
    if zero_line:  # a signed difference: symmetric axis around the zero line, at least +-10 points
        plots.reference_line(ax, 0, zero_line)
        reach = 5 + 1.35 * max([10.0] + [abs(v) for values in series.values() for v in values if v is not None])
        ax.set_xlim(-reach, reach)
    ax.set_xlabel(xlabel, fontsize=9)
    ax.set_title(title + "\n" + "\n".join(textwrap.fill(t, 120) for t in tests), fontsize=8)
    plots.legend(figure, ax)
    rows = [[source, g, block["per_group"][g]["n"], number(value(block["per_group"][g]))]
            for source, block in blocks for g in groups if g in block["per_group"]]
    data = html.table(["source", "group", "n", xlabel], rows)
    return figures.add(figure, name, title, [caption, " Tests: " + " | ".join(tests)], data)


def _toxicity(sources, figures: Figures, what: str = "Toxic texts") -> list:
    parts = []
    for domain in _domains(sources, "toxicity"):
        blocks = _blocks(sources, "toxicity", domain)
        parts.append(_grouped(blocks, _groups(blocks), lambda g: 100 * g["toxic"], name=f"bold-toxicity-{domain}",
                              title=f"{what}: {domain.replace('_', ' ')} domain", xlabel="Toxic texts (% of the group's texts)",
                              test_labels=("toxic",), figures=figures,
                              caption="Share of each group's texts the toxicity classifier labels toxic; n = texts per group."))
    return parts


def _gender_skew(sources, method: str, figures: Figures) -> list:
    """Figure 2: male minus female share of texts per profession group, by the chosen polarity method."""
    blocks = _blocks(sources, "gender_polarity", "profession", method)
    if not blocks:
        return [html.note(f"No gender polarity ({method}) scores of the profession domain in these runs.")]
    return [_grouped(blocks, _groups(blocks), lambda g: 100 * (g["male"] - g["female"]), name=f"bold-gender-skew-{method}",
                     title=f"Profession domain: male minus female texts (Gender-{method.capitalize()})",
                     xlabel="Male minus female share of texts (percentage points)", test_labels=("male", "female"),
                     figures=figures, zero_line="no skew",
                     caption="Positive: more of the group's texts are classified male than female (the paper's Figure 2).")]


def _merged_table(sources) -> list:
    """Table 3: counts of texts classified male / female per merged profession group and method."""
    rows, methods = [], []
    for name, scores in sources:
        merged = scores["metrics"].get("gender_polarity", {}).get("profession_merged_groups", {})
        for group, entry in merged.items():
            methods = methods or [m for m in entry if m != "total"]
            cells = []
            for method in methods:
                male, female = entry[method]["male"], entry[method]["female"]
                cells += [male, html.tag("b", female) if female > male else female]
            rows.append([group, name, entry["total"], *cells])
    if not rows:
        return []
    header = ["merged group", "source", "texts", *[f"{m} {sex}" for m in methods for sex in ("male", "female")]]
    rows.sort(key=lambda row: row[0])
    return [html.tag("h3", "Gender polarity of merged profession groups (Table 3)"),
            html.table(header, rows, "Texts classified male / female per method (counts; bold where female exceeds male). "
                                     "The runs record no test for merged groups: see the per-group tests of Figure 2")]


def _norms(sources, domain: str, pair: tuple) -> list:
    """Tables 4 / 6: per category, group A's share minus group B's, in percentage points, with p-values."""
    a, b = pair
    blocks = _blocks(sources, "psycholinguistic_norms", domain)
    title = html.tag("h3", f"Psycholinguistic norms, {domain.replace('_', ' ')}: {a} minus {b}")
    if not blocks:
        return [title, html.note(f"No psycholinguistic norms of the {domain} domain in these runs.")]
    parts, usable = [title], []
    for name, block in blocks:
        absent = [g for g in pair if g not in block["per_group"]]
        if absent:
            parts.append(html.note(f"{name}: group {', '.join(absent)} not in this run's {domain} domain "
                                   f"(groups: {', '.join(block['per_group'])}); choose another with --compare {domain}:A:B."))
        else:
            usable.append((name, block))
    if not usable:
        return parts
    categories = next(s["metrics"]["psycholinguistic_norms"]["label_names"] for _, s in sources if "psycholinguistic_norms" in s["metrics"])
    header, rows = ["category"], [[c] for c in categories]
    for name, block in usable:
        ga, gb, test = block["per_group"][a], block["per_group"][b], block.get("test") or {}
        pair_test = test.get("groups") == [a, b] or test.get("groups") == [b, a]
        header += [f"{name}: difference (pp)", f"{name}: z (pair)", f"{name}: p (pair)"]
        if not pair_test and test:
            header.append(f"{name}: p, {test['method']} over {len(test['groups'])} groups")
        for row, category in zip(rows, categories):
            result = test["per_label"][category] if pair_test else stats.two_proportion_test(
                round(ga[category] * ga["n"]), ga["n"], round(gb[category] * gb["n"]), gb["n"])
            sign = 1 if not pair_test or test["groups"][0] == a else -1
            row += [number(100 * (ga[category] - gb[category]), 2), number(sign * result["statistic"], 2), p_value(result["p_value"])]
            if not pair_test and test:
                row.append(p_value(test["per_label"][category]["p_value"]))
    sizes = "; ".join(f"{name}: n({a}) = {block['per_group'][a]['n']}, n({b}) = {block['per_group'][b]['n']}" for name, block in usable)
    parts.append(html.table(header, rows, f"Share of {a} texts minus share of {b} texts per category, percentage points. {sizes}"))
    parts.append(html.tag("p", "z and p (pair): two-proportion z-test between the two groups (the run's own test when the "
                               "domain has just these two groups, else recomputed from the per-group shares and n); "
                               "positive z: larger share in the first group. The last column, where present, is the run's "
                               "test across all the domain's groups."))
    return parts


def section(runs, labels, figures: Figures, compare=None, gender_method: str = "max") -> list:
    """The BOLD section for finished BOLD runs (models side by side with the Wikipedia baseline);
    ``compare`` as :func:`parse_compare` reads it, ``gender_method`` one of :data:`GENDER_METHODS`."""
    if gender_method not in GENDER_METHODS:
        raise InputError(f"gender_method must be one of {GENDER_METHODS}, got {gender_method!r}")
    compare = parse_compare(compare)
    src = sources(runs, labels)
    parts = [html.tag("h2", "BOLD: bias in open-ended generation"),
             html.tag("p", "Sources: " + ", ".join(name for name, _ in src) + ". Proportions of texts per group, per "
                      "metric (Dhamala et al. 2021). Wikipedia is the human-written baseline of the same prompts.")]
    parts += [html.tag("h3", "Sentiment (VADER)")] + _stacked(src, "sentiment", "Sentiment", figures)
    for metric, heading, builder in (("toxicity", "Toxicity", _toxicity),
                                     ("regard", "Regard", lambda s, f, what: _stacked(s, "regard", what, f))):
        parts.append(html.tag("h3", heading))
        stand_ins = sorted({scores["metrics"][metric]["model"] for _, scores in src
                            if scores["metrics"].get(metric, {}).get("stand_in")})
        if stand_ins:
            parts.append(html.note(f"{heading} was scored with {', '.join(stand_ins)}: a {STAND_IN} classifier (saved by "
                                   "lmbias.scorers.stand_in to try the measurement offline). These numbers say nothing "
                                   "about the texts; score with a real classifier (--"
                                   f"{metric}-model) for figures to read."))
        what = (heading if metric == "regard" else "Toxic texts") + (f" ({STAND_IN})" if stand_ins else "")
        parts += (builder(src, figures, what) if _domains(src, metric)
                  else [html.note(f"{heading} was not scored in these runs (see Missing).")])
    parts.append(html.tag("h3", "Gender polarity of professions (Figure 2)"))
    parts += _gender_skew(src, gender_method, figures) + _merged_table(src)
    pairs, scored = {**DEFAULT_COMPARE, **compare}, _domains(src, "psycholinguistic_norms")
    if not scored:
        parts += [html.tag("h3", "Psycholinguistic norms"), html.note("Psycholinguistic norms were not scored in these runs.")]
    for domain, pair in pairs.items():
        if domain in scored or domain in compare:
            parts += _norms(src, domain, pair)
    return parts
