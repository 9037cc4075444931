"""Where an ``lmbias debias`` call spends its time: each phase without steps of its own to count
(loading the corpus, the model, saving) prints one line on stderr when it starts, while progress is
shown (:func:`lmbias.progress.showing`; the phases with steps show a bar), and every phase's seconds
are kept for ``debias.json`` (``seconds``, with ``total``: the whole call)."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator

from .. import progress


class Phases:
    """The clock of one debias call: started when made; :meth:`phase` times a phase."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.seconds: dict[str, float] = {}

    @contextlib.contextmanager
    def phase(self, name: str, line: str | None = None) -> Iterator[None]:
        """Time the block as phase ``name`` (added up if it comes again); ``line``: what to print
        when it starts (``"debias: <line>"``, while progress is shown), None for a phase with a bar."""
        if line is not None and progress.enabled():
            print(f"debias: {line}", file=sys.stderr, flush=True)
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = round(self.seconds.get(name, 0.0) + time.perf_counter() - started, 1)

    def record(self) -> dict:
        """Each phase's seconds and ``total``, the seconds since the clock started."""
        return {**self.seconds, "total": round(time.perf_counter() - self.started, 1)}
