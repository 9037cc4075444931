"""What the two likelihood benchmarks (StereoSet, CrowS-Pairs) share on the command line."""

from __future__ import annotations

from ..lm.loading import MODEL_TYPES
from ..render.text import markdown_table


def add_likelihood_arguments(parser) -> None:
    """``--model-type`` and ``--limit``, the options of every likelihood run."""
    parser.add_argument("--model-type", choices=MODEL_TYPES, default="auto", help="default: from the config's architectures")
    parser.add_argument("--limit", type=int, help="only the first N items (StereoSet: of each task)")


def likelihood_summary(results: dict, scored: str, rows: list, out, unit: str = "items") -> str:
    """The model line and the table of a likelihood run's summary (``scored``: what the run covers;
    a resumed run says how many ``unit`` this session scored and how many an earlier one did)."""
    timing = results["timing"]
    seconds = f"{timing['scoring_seconds']:.1f} s"
    if timing.get("items_resumed"):
        done = (f"{scored} in all: {timing['items_scored']:,} {unit} scored in {seconds} now, "
                f"{timing['items_resumed']:,} before the run was resumed")
    else:
        done = f"{scored} scored in {seconds}"
    header = f"model: {results['model']['name']} ({results['model']['type']}); {done}; results in {out}/results.json"
    return "\n".join([header, "", markdown_table(rows, list(rows[0]))])
