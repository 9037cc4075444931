"""How a benchmark's items are put to a model: the protocols, each written once.

* ``likelihood`` (:mod:`lmbias.protocols.likelihood`): the sequences or options of each item
  scored by the model's log-probabilities, in saved batches over the processes (resumable).
* ``generate`` (:mod:`lmbias.protocols.choice`): generative multiple choice, for models without
  log-probabilities: lettered options in a seeded order, a greedy reply read as one option, a reply
  that names none or several counted as invalid.
* ``continue`` (:mod:`lmbias.protocols.continuation`): each item's prompt continued (sampled, resumable), then
  the benchmark's named scorers applied to every continuation (BOLD, counterfactual, ToxiGen, RealToxicityPrompts,
  the declared ``prompts`` and ``templates`` shapes). It is no ``--protocol`` choice: a benchmark that continues
  text names it as its protocol.
* ``embed`` (:mod:`lmbias.protocols.embedding`): each item's texts represented by the model's mean
  final hidden state (SEAT), every distinct text encoded once, in batches.
* ``judge`` (:mod:`lmbias.protocols.judge`): each prompt answered by the model (in its chat template), then a
  grader model (any backend: ``--judge-model``, ``--judge-backend``) asked a rubric about the answers: each
  option's token probability, or the one option its reply names. Like continue and embed, no ``--protocol``
  choice; its options (:data:`lmbias.protocols.judge.OPTIONS`) are declared by the benchmark that names it.

``--protocol`` chooses between the protocols of :data:`PROTOCOLS` (a multiple-choice benchmark's); a
benchmark that supports one protocol only (continue, embed) takes no ``--protocol``.

A benchmark names the protocols it supports, by object, and per protocol its request (what to score, or
which question to ask), its wording and what its run records (one :class:`lmbias.benchmarks.declared.Ask`
each); it asks the :class:`Protocol` what it needs to know (whether replies are read and may be invalid,
whether a chat run can be scored) and never compares protocol names nor keys a table by them. Nothing here
names a benchmark. The options
``--protocol`` and ``--prompt-template`` are declared here once (:func:`add_protocol_arguments`) and
checked here once (:func:`check_protocol`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..checks import check_choice
from ..errors import InputError
from . import choice, continuation, embedding, judge, likelihood


@dataclass(frozen=True)
class Protocol:
    """One way of putting items to a model.

    Attributes:
        name: its ``--protocol`` value and results.json's ``config.protocol``.
        reads_replies: whether answers are generated replies read as options (a reply that names no
            option is invalid: counted, left out of the measures).
        scores_raw_text: whether it scores raw text, so that a chat run needs a benchmark that scores
            in the chat template (``chat_scoring``), else is refused before anything loads.
        takes_template: whether ``--prompt-template`` applies.
        verb: what its progress bar says the run is doing ("scoring", "answering").
        answer: ``answer(spec, rows, request, *, out, benchmark, run_config, batch_size, seed, progress,
            label, check_only=False)`` -> ``(records, model, placement, timing)`` (all None on processes other than the
            main one, and with ``check_only``: the protocol's check, which stops once the model's spec, the request and
            the run folder are checked, before anything is loaded or written); ``request`` is the protocol's own
            (:class:`~lmbias.protocols.likelihood.Scoring`,
            :class:`~lmbias.protocols.choice.Questions`, :class:`~lmbias.protocols.continuation.Continuations`,
            :class:`~lmbias.protocols.embedding.Embeddings`, :class:`~lmbias.protocols.judge.Judged`).
        finish: ``finish(out, result, records)``: the run with its per-item file (scores or answers; embed: none).
        records_file: that per-item file's name in a finished run's folder (None: it writes none).
        refuse_model: ``refuse_model(spec, benchmark)``: a model the protocol cannot put items to whatever the
            options (raises :class:`~lmbias.errors.InputError`; ``benchmark``: its display name), before it is
            checked or loaded.
    """

    name: str
    reads_replies: bool
    scores_raw_text: bool
    takes_template: bool
    verb: str
    answer: Callable[..., tuple]
    finish: Callable[[Any, Any, list], Any]
    records_file: str | None
    refuse_model: Callable[[Any, str], None] = lambda spec, benchmark: None

    def refuse_chat(self, spec, benchmark: str, chat_scoring: bool = False) -> None:
        """A one-line error for a chat run (``--chat``, or a server that applies the template) of a
        protocol that scores raw text, unless the benchmark scores in the chat template; raised
        before any model is checked or loaded."""
        if self.scores_raw_text and not chat_scoring and (spec.chat is True or spec.engine.chat == "server"):
            raise InputError(f"--chat: {benchmark}'s likelihood scoring runs on raw text; run it with --protocol generate "
                             "for a chat model")


LIKELIHOOD = Protocol("likelihood", reads_replies=False, scores_raw_text=True, takes_template=False, verb="scoring",
                      answer=likelihood.answer, finish=likelihood.with_scores, records_file=likelihood.SCORES_FILE)
GENERATE = Protocol("generate", reads_replies=True, scores_raw_text=False, takes_template=True, verb="answering",
                    answer=choice.answer, finish=lambda out, result, records: choice.with_answers(result, records),
                    records_file=choice.ANSWERS_FILE)
CONTINUE = Protocol("continue", reads_replies=False, scores_raw_text=False, takes_template=False, verb="generating",
                    answer=continuation.answer, finish=continuation.finish, records_file=continuation.GENERATIONS_FILE)
EMBED = Protocol("embed", reads_replies=False, scores_raw_text=False, takes_template=False, verb="embedding",
                 answer=embedding.answer, finish=embedding.finish, records_file=None, refuse_model=embedding.refuse_model)
JUDGE = Protocol("judge", reads_replies=False, scores_raw_text=False, takes_template=False, verb="answering",
                 answer=judge.answer, finish=judge.finish, records_file=None)
REGISTRY = {protocol.name: protocol for protocol in (LIKELIHOOD, GENERATE, CONTINUE, EMBED, JUDGE)}
# the protocols of a benchmark whose items are options to choose among, in the order --protocol lists them (the
# first is the default); a benchmark that continues text or embeds it names its one protocol
PROTOCOLS = (LIKELIHOOD.name, GENERATE.name)


def get_protocol(name: str) -> Protocol:
    """The :class:`Protocol` called ``name`` (a one-line error names the valid ones)."""
    check_choice(name, list(REGISTRY), "protocol")
    return REGISTRY[name]


def add_protocol_arguments(parser: argparse.ArgumentParser, described: Mapping[str, str], *,
                           template_fields: str | None = None) -> None:
    """``--protocol`` (the protocols ``described`` names, each with what it does for this benchmark)
    and, with ``template_fields`` (the placeholders a wording may have, for the help), ``--prompt-template``."""
    parser.add_argument("--protocol", choices=list(described), default=next(iter(described)),
                        help="; ".join(f"{name}: {text}" for name, text in described.items()))
    if template_fields is not None:
        parser.add_argument("--prompt-template", help=f"generate: another wording, with {template_fields}")


def check_protocol(protocol: Protocol, template: str | None, *, default: str | None = None,
                   fields: Sequence[str] = ()) -> str | None:
    """The wording a run of ``protocol`` uses: ``default`` (the benchmark's for the protocol; None: the
    benchmark picks one per item), or ``template`` checked (placeholders ``fields`` and ``{options}``)
    where the protocol takes one; a template given to a protocol that takes none is refused."""
    if template is not None and not protocol.takes_template:
        raise InputError(f"--prompt-template applies to --protocol generate (--protocol {protocol.name} asks no question in words "
                         "of the user's choosing)")
    if template is None:
        return default
    return choice.check_template(template, fields, "--prompt-template")
