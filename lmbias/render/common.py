"""What the report's sections share: the figure writer and number / test formatting."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from . import html, plots


class Figures:
    """Writes each figure as ``OUT/<name>.png`` and returns its embedded HTML."""

    def __init__(self, out_dir: Path, dpi: int):
        self.out_dir, self.dpi, self.files = Path(out_dir), dpi, []

    def add(self, figure, name: str, title: str, caption: Sequence, data: html.Raw | None = None) -> html.Raw:
        """Render ``figure``, write it as a PNG named after ``name`` and return the ``<figure>`` HTML.

        ``title`` is the image's alt text; ``caption`` items (text or Raw HTML) go below the image;
        ``data`` is a table of the plotted numbers, shown collapsed under the figure.
        """
        png = plots.png_bytes(figure, self.dpi)
        stem = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
        path = self.out_dir / f"{stem}.png"
        path.write_bytes(png)
        self.files.append(path)
        return html.figure(png, title, [f"{title}. ", *caption, html.Raw(f" <small>(file: <code>{path.name}</code>)</small>")], data)


def number(value, digits: int = 1) -> str:
    """A float with ``digits`` decimals; "n/a" for None or NaN."""
    return "n/a" if value is None or value != value else f"{value:.{digits}f}"


def p_value(p) -> str:
    """A p-value as the papers write it: three decimals, or "< 0.001"."""
    return "n/a" if p is None else ("< 0.001" if p < 0.001 else f"{p:.3f}")


def statistic(result: dict) -> str:
    """``z = 1.15, p = 0.248`` or ``χ² = 8.00 (dof 3), p = 0.046`` for one test result (chi-square ones carry a dof)."""
    name = f"χ² = {result['statistic']:.2f} (dof {result['dof']})" if "dof" in result else f"z = {result['statistic']:.2f}"
    p = p_value(result["p_value"])
    return f"{name}, p {p}" if p.startswith("<") else f"{name}, p = {p}"


def test_line(test: dict | None, labels: Sequence[str] = (), sep: str = ": ") -> str:
    """A BOLD BLOCK's test and result: per label in ``labels``, else the overall chi-square test on groups x labels."""
    if not test:
        return "no test (fewer than two groups)"
    if not labels:
        overall = test.get("overall")
        return "chi-square test, groups x labels" + sep + (statistic(overall) if overall else "not recorded")
    parts = [f"{label}: " + (statistic(test["per_label"][label]) if label in test["per_label"] else "not recorded") for label in labels]
    return test["method"] + sep + "; ".join(parts)


def interval_misses(pairs) -> int:
    """How many ``(value, (low, high))`` pairs have an interval that does not contain the value."""
    return sum(1 for value, ci in pairs if ci and value is not None and not ci[0] <= value <= ci[1])


def with_ci(value, ci, digits: int = 1) -> str:
    """``value [low, high]`` when a confidence interval is present, else the value alone."""
    return number(value, digits) + (f" [{number(ci[0], digits)}, {number(ci[1], digits)}]" if ci else "")


def unique_labels(runs: Sequence) -> list:
    """One display name per run: the model name, with the run folder added where two runs of a
    benchmark share it (and the run's position where even that is shared)."""
    keys = [(run.benchmark, run.model) for run in runs]
    labels = [f"{run.model} ({run.path.name})" if keys.count(key) > 1 else run.model for key, run in zip(keys, runs)]
    keys = [(run.benchmark, label) for run, label in zip(runs, labels)]
    return [f"{label} #{i + 1}" if keys.count(key) > 1 else label for i, (key, label) in enumerate(zip(keys, labels))]


def misses_note(pairs) -> str:
    """A warning when some bootstrap intervals do not contain their estimate (so the bars and the
    intervals disagree), else ""."""
    misses = interval_misses(pairs)
    total = sum(1 for _, ci in pairs if ci)
    return (f" Note: in {misses} of {total} cases the interval does not contain the estimate (resampling biases "
            "some scores, e.g. distances between distributions, upward); the bar is the estimate." if misses else "")
