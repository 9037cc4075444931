"""What the two likelihood benchmarks (StereoSet, CrowS-Pairs) share on the command line."""

from __future__ import annotations

from ..lm.loading import MODEL_TYPES
from ..text import markdown_table


def add_likelihood_arguments(parser) -> None:
    """``--model-type`` and ``--limit``, the options of every likelihood run."""
    parser.add_argument("--model-type", choices=MODEL_TYPES, default="auto", help="default: from the config's architectures")
    parser.add_argument("--limit", type=int, help="only the first N items (StereoSet: of each task)")


def likelihood_summary(results: dict, scored: str, rows: list, out) -> str:
    """The model line and the table of a likelihood run's summary."""
    header = (f"model: {results['model']['name']} ({results['model']['type']}); {scored} scored in "
              f"{results['timing']['scoring_seconds']:.1f} s; results in {out}/results.json")
    return "\n".join([header, "", markdown_table(rows, list(rows[0]))])
