"""What the benchmarks that continue text (the continue protocol, :mod:`lmbias.protocols.continuation`) share:
the ``--instruction`` option, the prompts a chat run sends (:func:`lmbias.lm.chat.continuation_prompts`) and the
timing they record."""

from __future__ import annotations

from ..lm.chat import INSTRUCTION_HELP, continuation_prompts
from .declared import Option

INSTRUCTION = Option("instruction", INSTRUCTION_HELP, metavar="TEMPLATE")


def prompted(prompts: list, settings: dict) -> tuple[list, dict]:
    """What a run sends for ``prompts`` (each put in the instruction in a chat run, as they are otherwise) and the
    instruction it records, ``{"instruction": ...}`` in a chat run, else ``{}``; an instruction given to a raw run is
    refused in one line (``settings``: :func:`~lmbias.benchmarks.declared.run_task`'s, with ``chat`` and
    ``instruction``)."""
    sent, instruction = continuation_prompts(prompts, chat=settings["chat"], instruction=settings["instruction"])
    return sent, ({"instruction": instruction} if instruction else {})


def generation_timing(timing: dict, continued, seconds: float) -> dict:
    """results.json's ``timing`` of a run that records two clocks: the generation (the model's load included) and
    the scoring, in seconds (a benchmark's ``timing``; the measure's ``seconds`` are not recorded)."""
    return {"generation_seconds": timing["model_load_seconds"] + timing["generation_seconds"],
            "scoring_seconds": timing["scoring_seconds"]}
