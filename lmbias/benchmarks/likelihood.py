"""What the two likelihood benchmarks (StereoSet, CrowS-Pairs) share on the command line, in their
runs, summaries and records."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..protocols import LIKELIHOOD, get_protocol
from ..render.text import markdown_table
from .base import model_named


def protocol_of(results: dict) -> str:
    """The name of the protocol a run used (runs from before ``--protocol`` scored likelihoods)."""
    return results["config"].get("protocol", LIKELIHOOD.name)


def record_protocol(results: dict) -> dict:
    """What each of a run's records adds to name its protocol: a run whose protocol reads replies names it; one
    that scores does not (its records keep the Hub ids they had before ``--protocol``)."""
    protocol = protocol_of(results)
    return {"protocol": protocol} if get_protocol(protocol).reads_replies else {}


def invalid_rate(results: dict) -> float | None:
    """A generative run's share of replies that named no sentence, in % (None for a run whose protocol
    reads no replies)."""
    body = results["results"]
    if not get_protocol(protocol_of(results)).reads_replies or not body.get("answers"):
        return None
    return 100.0 * body["invalid"] / body["answers"]


def no_result(results: dict, items: int, needs: str) -> str:
    """Why a part of a run (a StereoSet task) that ran ``items`` items has no result: a generative run
    left every one out, none having ``needs`` ("three replies") that name a sentence."""
    if items and get_protocol(protocol_of(results)).reads_replies:
        return (f"no item of the {items:,} has {needs} that name a sentence (all left out of the scores; the replies are "
                "in answers.jsonl)")
    return f"no item of it was scored ({items:,} in the run)"


def ordered(config: Mapping, order: Sequence[str]) -> dict:
    """``config`` with the keys of ``order`` first, in that order, then the others as they come (the
    protocols' configs share one layout)."""
    return {**{key: config[key] for key in order if key in config}, **config}


def _scored_header(results: dict, scored: str, out, unit: str) -> str:
    timing = results["timing"]
    seconds = f"{timing['scoring_seconds']:.1f} s"
    if timing.get("items_resumed"):
        done = (f"{scored} in all: {timing['items_scored']:,} {unit} scored in {seconds} now, "
                f"{timing['items_resumed']:,} before the run was resumed")
    else:
        done = f"{scored} scored in {seconds}"
    return f"model: {model_named(results)} ({results['model']['type']}); {done}; results in {out}/results.json"


def _asked_header(results: dict, scored: str, out, unit: str) -> str:
    body = results["results"]
    left_out = f", {body['items_left_out']:,} items left out" if body.get("items_left_out") else ""
    # the seconds are this session's: a resumed run generated only what was missing
    return (f"model: {model_named(results)}; {scored}, generative multiple choice: {body['answers']:,} questions, "
            f"{body['invalid']:,} replies naming no sentence ({invalid_rate(results):.1f} %{left_out}, not counted); "
            f"{results['timing']['generation_seconds']:.1f} s this session; results in {out}/results.json")


def likelihood_summary(results: dict, scored: str, rows: list, out, unit: str = "items") -> str:
    """The model line and the table of a likelihood run's summary (``scored``: what the run covers;
    a resumed run says how many ``unit`` this session scored and how many an earlier one did); a
    generative run's line says so, with its invalid replies."""
    header = (_asked_header if get_protocol(protocol_of(results)).reads_replies else _scored_header)(results, scored, out, unit)
    return "\n".join([header, "", markdown_table(rows, list(rows[0]))])
