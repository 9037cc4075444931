"""Progress bars for the long loops after generation: likelihood scoring (StereoSet, CrowS-Pairs), the
text classifiers (toxicity, regard, sentiment) and the sentence encoder.

Library calls are quiet; a run turns the bars on around its scoring with :func:`showing` (on its
main process, unless ``--no-progress``), so no function needs a ``progress`` argument of its own.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

_shown = {"enabled": False, "label": ""}


@contextlib.contextmanager
def showing(enabled: bool = True, label: str = "") -> Iterator[None]:
    """Within the block, :func:`bar` shows a tqdm bar (``label`` prefixes its description)."""
    saved = dict(_shown)
    _shown.update(enabled=bool(enabled), label=label)
    try:
        yield
    finally:
        _shown.update(saved)


def enabled() -> bool:
    """Whether bars are on (inside ``showing(True)``)."""
    return _shown["enabled"]


def bar(total: int, description: str, unit: str = "text"):
    """A tqdm bar of ``total`` steps, shown only within ``showing(True)``; use it as a context manager."""
    from tqdm.auto import tqdm

    label = f"{_shown['label']}: " if _shown["label"] else ""
    return tqdm(total=total, desc=label + description, unit=unit, disable=not _shown["enabled"] or total == 0)


@contextlib.contextmanager
def quiet_loading():
    """No transformers "Loading weights" bar inside the block: lmbias loads models on every run."""
    from transformers.utils import logging as transformers_logging

    shown = transformers_logging.is_progress_bar_enabled()
    transformers_logging.disable_progress_bar()
    try:
        yield
    finally:
        if shown:
            transformers_logging.enable_progress_bar()
