"""The report's figures: one bar helper (grouped or stacked horizontal bars) and score densities.

Figures are plain :class:`matplotlib.figure.Figure` objects drawn with the Agg canvas, so nothing
here touches pyplot's global state or needs a display. Every series gets a hatch as well as a
colour and bars carry their values, so the figures read in black and white.
"""

from __future__ import annotations

import io
import math
import textwrap
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # matplotlib loads on the first figure, not with every command (half a second)
    from matplotlib.figure import Figure

# (fill colour, hatch) per series, in order; colours from a colour-blind-safe palette.
STYLES = [("#4477aa", ""), ("#ee6677", "///"), ("#ccbb44", ".."), ("#66ccee", "xx"), ("#aa3377", "\\\\\\"),
          ("#228833", "++"), ("#bbbbbb", "--"), ("#ffffff", "oo")]
# Labels with a fixed look wherever they appear (sentiment, regard).
LABEL_STYLES = {"negative": ("#ee6677", "///"), "neutral": ("#dddddd", ""), "positive": ("#4477aa", ".."),
                "other": ("#ccbb44", "xx")}
LINESTYLES = ["-", "--", ":", "-."]


def style_for(name: str, index: int) -> tuple:
    """(colour, hatch) of a series: the fixed style of a known label, else the index-th of :data:`STYLES`."""
    return LABEL_STYLES.get(name, STYLES[index % len(STYLES)])


def new_figure(width: float, height: float) -> Figure:
    """A figure of ``width`` x ``height`` inches with constrained layout."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def bar_height(categories: int, series: int = 1) -> float:
    """Inches of a horizontal bar panel showing ``categories`` rows of ``series`` bars each."""
    return 0.9 + 0.18 * categories * max(series, 1.5)


def bars(ax, categories: Sequence[str], series: Mapping[str, Sequence[float | None]], *, stacked: bool = False,
         errors: Mapping[str, Sequence] | None = None, notes: Mapping[str, Sequence[str]] | None = None,
         fmt: Callable[[float], str] = "{:.1f}".format, min_label: float = 0.0, styles: Sequence | None = None) -> None:
    """Horizontal bars of ``series`` ({name: one value per category, None if absent}) on ``ax``.

    Grouped (one bar per series, side by side) or ``stacked`` (segments add up along a row).
    ``errors``: per series, ``(low, high)`` or None per category, drawn as interval bars. Every bar
    is labelled with ``fmt(value)`` ("n/a" when absent) plus the series' ``notes`` for that
    category (e.g. "n=40"); stacked segments narrower than ``min_label`` stay unlabelled. The first
    category is drawn at the top.
    """
    positions = np.arange(len(categories), dtype=float)
    width = 0.8 if stacked else 0.8 / max(len(series), 1)
    left = np.zeros(len(categories))
    for i, (name, values) in enumerate(series.items()):
        values = np.array([np.nan if v is None else v for v in values], dtype=float)
        drawn = np.nan_to_num(values)
        colour, hatch = styles[i] if styles else style_for(name, i)
        y = positions if stacked else positions + (i - (len(series) - 1) / 2) * width
        ax.barh(y, drawn, height=width, left=left if stacked else None, color=colour, hatch=hatch, edgecolor="#333333",
                linewidth=0.5, label=name)
        intervals = [tuple(ci) if ci else None for ci in (errors or {}).get(name) or [None] * len(values)]
        for j, ci in enumerate(intervals):  # drawn as given, even where a bootstrap interval misses the estimate
            if ci:
                ax.plot(ci, [y[j], y[j]], color="black", linewidth=0.9, marker="|", markersize=6)
        for j, value in enumerate(values):
            text = "n/a" if math.isnan(value) else fmt(value)
            if notes and notes.get(name):
                text += f" ({notes[name][j]})"
            if stacked:
                if value >= min_label and value > 0:
                    ax.text(left[j] + value / 2, y[j], fmt(value), ha="center", va="center", fontsize=7,
                            bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5, "alpha": 0.8})
                continue
            end = drawn[j] if not intervals[j] else (max(drawn[j], *intervals[j]) if drawn[j] >= 0 else min(drawn[j], *intervals[j]))
            ax.annotate(text, (end, y[j]), xytext=(4 if end >= 0 else -4, 0), textcoords="offset points",
                        ha="left" if end >= 0 else "right", va="center", fontsize=7,
                        bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.3, "alpha": 0.8})
        if stacked:
            left += drawn
    ax.set_yticks(positions, [c.replace("_", " ") for c in categories], fontsize=8)
    ax.set_ylim(len(categories) - 0.5, -0.5)
    ax.tick_params(axis="x", labelsize=8)
    if not stacked:
        ax.margins(x=0.25)
    ax.grid(axis="x", color="#dddddd", linewidth=0.5)
    ax.set_axisbelow(True)


def wrap(text: str, inches: float, fontsize: float) -> str:
    """``text`` broken into lines that fit ``inches`` at ``fontsize`` points (a long model name in a
    panel title would otherwise run off the figure and be clipped); its own line breaks are kept."""
    width = max(12, int(inches * 72 / (fontsize * 0.6)))  # 0.6 em: a wide average character
    return "\n".join(textwrap.fill(line, width, break_on_hyphens=False) or line for line in text.split("\n"))


def legend(figure, ax, columns: int = 3) -> None:
    """The figure's legend (from ``ax``'s series and lines) below the plots, where it hides no bar;
    each entry wrapped to fit its column."""
    handles, labels = ax.get_legend_handles_labels()
    columns = min(columns, len(labels))
    inches = figure.get_figwidth() / max(columns, 1) - 0.5
    labels = [wrap(label, inches, 8) for label in labels]
    figure.legend(handles, labels, loc="outside lower center", ncols=columns, fontsize=8, frameon=False)


def reference_line(ax, x: float, label: str) -> None:
    """A vertical dashed line at ``x`` (an ideal value or zero), named in the legend as ``label``."""
    ax.axvline(x, color="black", linestyle="--", linewidth=1, label=label)


def densities(ax, edges: Sequence[float], subgroups: Mapping[str, Sequence[int]], *, most: int = 5) -> None:
    """Sentiment-score densities per subgroup as step lines (Huang et al. 2020, Figure 1).

    Up to ``most`` subgroups are drawn each in its own line style. With more, every subgroup is a
    thin grey line and the two with the lowest and highest mean score are drawn bold, with the
    pooled distribution of all subgroups dotted, so the spread stays readable.
    """
    edges = np.asarray(edges, dtype=float)
    centres, widths = (edges[:-1] + edges[1:]) / 2, np.diff(edges)

    def density(counts) -> np.ndarray:
        counts = np.asarray(counts, dtype=float)
        return counts / max(counts.sum(), 1) / widths

    def step(counts, label, **style) -> None:
        values = density(counts)
        ax.stairs(values, edges, label=f"{label} (n={int(np.sum(counts))})", **style)

    names = list(subgroups)
    if len(names) <= most:
        for i, name in enumerate(names):
            step(subgroups[name], name, color=STYLES[i][0] if i else "black", linestyle=LINESTYLES[i % 4], linewidth=1.4)
    else:
        means = {name: float(np.dot(centres, subgroups[name]) / max(np.sum(subgroups[name]), 1)) for name in names}
        low, high = min(means, key=means.get), max(means, key=means.get)
        for name in names:
            if name not in (low, high):
                ax.stairs(density(subgroups[name]), edges, color="#bbbbbb", linewidth=0.6)
        ax.plot([], [], color="#bbbbbb", linewidth=0.6, label=f"the other {len(names) - 2} subgroups")
        step(np.sum([subgroups[n] for n in names], axis=0), "all subgroups", color="black", linestyle=":", linewidth=1.4)
        step(subgroups[low], f"{low}: lowest mean", color="#ee6677", linestyle="--", linewidth=1.6)
        step(subgroups[high], f"{high}: highest mean", color="#4477aa", linestyle="-", linewidth=1.6)
    ax.set_xlim(edges[0], edges[-1])
    ax.set_xlabel("Sentiment score (0 negative, 1 positive)", fontsize=8)
    ax.set_ylabel("Density", fontsize=8)
    ax.tick_params(labelsize=8)
    ax.legend(fontsize=6.5, loc="upper left", frameon=False)


def png_bytes(figure: Figure, dpi: int) -> bytes:
    """The figure rendered as PNG."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


def trade_off(ax, labels: Sequence[str], bias: Sequence[float], ability: Sequence[float], front: Sequence[bool], *,
              bias_name: str, ability_name: str) -> None:
    """A scatter of ``ability`` (x, higher better) against ``bias`` (y, lower better), one labelled
    point per model, the Pareto front (``front``) joined by a line and drawn filled."""
    for index, (label, b, a, on_front) in enumerate(zip(labels, bias, ability, front)):
        color = style_for(label, index)[0]
        ax.scatter([a], [b], s=60, color=color if on_front else "white", edgecolors=color, linewidths=1.5, zorder=3)
        ax.annotate(wrap(label, 1.8, 7), (a, b), textcoords="offset points", xytext=(6, 4), fontsize=7)
    chosen = sorted((a, b) for a, b, on_front in zip(ability, bias, front) if on_front)
    if len(chosen) > 1:
        ax.plot([a for a, _ in chosen], [b for _, b in chosen], color="grey", linestyle="--", linewidth=1,
                label="Pareto front (no model is better on both)")
        ax.legend(fontsize=7, loc="upper left")
    ax.set_xlabel(f"{ability_name} (higher: better language modelling)", fontsize=8)
    ax.set_ylabel(f"{bias_name} (lower: less bias)", fontsize=8)
    ax.grid(alpha=0.3)
