"""What the BBQ-family measures built on per-template counts share (EsBBQ / CaBBQ, KoBBQ, CBBQ): a block of
measures with its intervals, scaled for reading, and a bootstrap draw of templates within a category."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def measure_block(names: Sequence[str], scales: Sequence[float], values, interval, items: int, invalid: int) -> dict:
    """``{name: value x scale}`` (None for NaN), ``ci`` (the interval's two bounds, scaled) when given, ``items`` and
    ``invalid``."""
    block = {name: None if np.isnan(value) else float(value * scale) for name, value, scale in zip(names, values, scales)}
    if interval is not None:
        block["ci"] = {name: None if np.isnan(low) else [float(low * scale), float(high * scale)]
                       for name, low, high, scale in zip(names, interval[0], interval[1], scales)}
    return {**block, "items": items, "invalid": invalid}


def resampled(counts: np.ndarray, bootstrap: int, rng) -> np.ndarray:
    """``bootstrap`` draws of a category's templates with replacement: the summed counts of each draw, shape
    (bootstrap, counts) from ``counts`` of shape (templates, counts)."""
    return rng.multinomial(len(counts), np.full(len(counts), 1 / len(counts)), bootstrap) @ counts
