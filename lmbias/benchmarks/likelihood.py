"""What the two likelihood benchmarks (StereoSet, CrowS-Pairs) share on the command line, in their
summaries and in their records."""

from __future__ import annotations

from ..lm.loading import MODEL_TYPES
from ..render.text import markdown_table
from .base import model_named
from .sentence_choice import add_protocol_arguments


def add_likelihood_arguments(parser, fields: str = "") -> None:
    """``--model-type``, ``--limit``, ``--protocol`` and ``--prompt-template``, the options of every
    likelihood run (``fields``: the placeholders a template may have besides ``{options}``, for the help)."""
    parser.add_argument("--model-type", choices=MODEL_TYPES, default="auto", help="default: from the config's architectures")
    parser.add_argument("--limit", type=int, help="only the first N items (StereoSet: of each task)")
    add_protocol_arguments(parser, fields)


def invalid_rate(results: dict) -> float | None:
    """A generative run's share of replies that named no sentence, in % (None for a likelihood run)."""
    body = results["results"]
    if results["config"].get("protocol") != "generate" or not body.get("answers"):
        return None
    return 100.0 * body["invalid"] / body["answers"]


def likelihood_summary(results: dict, scored: str, rows: list, out, unit: str = "items") -> str:
    """The model line and the table of a likelihood run's summary (``scored``: what the run covers;
    a resumed run says how many ``unit`` this session scored and how many an earlier one did); a
    generative run's line says so, with its invalid replies."""
    timing = results["timing"]
    if results["config"].get("protocol") == "generate":
        body = results["results"]
        left_out = f", {body['items_left_out']:,} items left out" if body.get("items_left_out") else ""
        # the seconds are this session's: a resumed run generated only what was missing
        header = (f"model: {model_named(results)}; {scored}, generative multiple choice: {body['answers']:,} questions, "
                  f"{body['invalid']:,} replies naming no sentence ({invalid_rate(results):.1f} %{left_out}, not counted); "
                  f"{timing['generation_seconds']:.1f} s this session; results in {out}/results.json")
        return "\n".join([header, "", markdown_table(rows, list(rows[0]))])
    seconds = f"{timing['scoring_seconds']:.1f} s"
    if timing.get("items_resumed"):
        done = (f"{scored} in all: {timing['items_scored']:,} {unit} scored in {seconds} now, "
                f"{timing['items_resumed']:,} before the run was resumed")
    else:
        done = f"{scored} scored in {seconds}"
    header = f"model: {model_named(results)} ({results['model']['type']}); {done}; results in {out}/results.json"
    return "\n".join([header, "", markdown_table(rows, list(rows[0]))])
