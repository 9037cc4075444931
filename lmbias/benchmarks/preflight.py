"""Before the expensive part of a run: say at once what will be skipped, or stop (``--require-all``)."""

from __future__ import annotations

import sys

from ..errors import RequirementError


def announce_unavailable(unavailable: dict[str, str], *, require_all: bool) -> None:
    """Report the metrics that cannot be scored (``{metric: reason with its fix}``) before generating.

    With ``require_all`` this raises :class:`RequirementError` (nothing generated yet); otherwise the
    main process prints one line per metric to stderr, each reason whole, fix included.
    """
    if not unavailable:
        return
    if require_all:
        raise RequirementError("--require-all: nothing was generated because these cannot be scored: "
                               + "; ".join(f"{metric}: {reason}" for metric, reason in unavailable.items()))
    from ..lm.processes import process_state

    if process_state().is_main_process:
        for metric, reason in unavailable.items():
            print(f"lmbias: will skip {metric}: {reason}", file=sys.stderr, flush=True)
