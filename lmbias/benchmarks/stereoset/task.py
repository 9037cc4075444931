"""StereoSet (Nadeem et al. 2021) scored with a language model (CrowS-Pairs, which shares its
likelihood scores, is :mod:`lmbias.benchmarks.crows_pairs.task`).

Each option gets one score (higher = the model finds it more likely), computed with
:mod:`lmbias.lm.likelihood`, batched; the metrics (LMS / SS / ICAT, the CrowS-Pairs metric score)
come from :mod:`lmbias.benchmarks.stereoset.measure`.

==========================  ==============================================  ==============================================
                            causal LM                                       masked LM
==========================  ==============================================  ==============================================
StereoSet intrasentence     mean log-probability per subword of the option  mean log-probability of the option word's
                            sentence, the first subword given the start     subwords at the blank, left to right as the
                            token (BOS, else EOS: GPT-2's <|endoftext|>)    authors' code (paper §7.1)
                            (paper §7.4)
StereoSet intersentence     mean log-probability per subword of the option  probability from the next-sentence-prediction
                            sentence given the context sentence             head (§7.1); a masked LM without one is an
                                                                            error, never a silent fallback
CrowS-Pairs                 log-likelihood of the sentence (sum over its    pseudo-log-likelihood of the tokens the two
                            subwords, the first given the start token)      sentences share (Nangia et al. 2020, §3)
==========================  ==============================================  ==============================================

Causal LMs, intrasentence, follow the StereoSet authors' code by default (bias-bench copies it):
the first subword's probability is taken given the start token and the later subwords in a second
pass over the sentence *without* the start token (``causal_prefix="bos-first"``);
``causal_prefix="bos"`` conditions every subword on the start token in one pass instead (one joint
probability of the sentence: lm-evaluation-harness's scheme). ``lmbias run stereoset --causal-prefix bos``
chooses it on the command line (:data:`CAUSAL_PREFIXES`; the default is the authors'). One difference
remains for the intersentence CAT: the authors trained an NSP head on GPT-2, noting that the conditional
log-probability used here gave GPT-2 an intersentence LMS of 61.5 (footnote 3).

The option word of an intrasentence item is derived from its context and option sentence with
:func:`blank_fillers`. The benchmark is declared (:data:`~lmbias.benchmarks.stereoset.BENCHMARK`) for the generic run
(:func:`lmbias.benchmarks.declared.run_task`), which loads a model, scores the dataset (split across
processes when launched with ``torchrun``: rank ``r`` of ``N`` scores items ``r, r + N, ...``; rank 0
gathers and writes), and writes ``<out>/results.json`` and ``<out>/scores.jsonl`` (schema in
docs/results-schema.md).

In a chat run (``--chat``) a causal LM's option score is the sentence's mean log-probability as the
assistant's reply in its chat template (:func:`lmbias.lm.likelihood.reply_logprobs`): to
:data:`~lmbias.lm.chat.SENTENCE_REQUEST` (intrasentence), or to the request to continue the context
(:data:`~lmbias.lm.chat.DEFAULT_INSTRUCTION`, intersentence). With ``protocol="generate"`` (models
without log-probabilities) the three comparisons the metrics read are asked as two-way questions
(:mod:`lmbias.benchmarks.sentence_choice`) and the metrics come from the answers
(:func:`lmbias.benchmarks.stereoset.measure.stereoset_comparison_scores`); ``answers.jsonl`` holds the replies.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...checks import check_choice, check_choices
from ...errors import InputError
from ...lm import likelihood
from ...lm.chat import DEFAULT_INSTRUCTION, SENTENCE_REQUEST, instructed
from ...lm.loading import KINDS
from ...lm.processes import process_state
from ...lm.spec import ModelSpec
from ...protocols import get_protocol
from ...protocols.choice import Questions
from ...protocols.likelihood import Scoring, check_rows
from .. import sentence_choice
from ..base import chat_requested, refuse_chat_likelihood
from ..likelihood import ordered
from .measure import MASKED_SCORES, TASKS, stereoset_comparison_scores, stereoset_scores

OPTIONS = ("stereotype", "anti_stereotype", "unrelated")
BLANK = "BLANK"
CAUSAL_PREFIXES = ("bos-first", "bos")  # a causal LM's intrasentence scheme: the authors' (default), lm-evaluation-harness's
BOS_SCORE = ("mean log-probability per subword of the option sentence (every subword given BOS/EOS and the subwords "
             "before it, in one pass, as lm-evaluation-harness)")  # results.json's config.scores with causal_prefix "bos"


# --------------------------------------------------------------------------- option words


def blank_fillers(context: str, sentence: str, *, blank: str = BLANK) -> list[str]:
    """What fills each ``blank`` of an intrasentence ``context`` to give the option ``sentence``.

    The context's text around the blanks must match the sentence, ignoring case (the flat copy of
    the dev set lower-cases the sentences: "The Crimean people I met were BLANK" / "The crimean
    people i met were boring") and treating any run of whitespace as one space. A filler is what
    stands where the blank was, without surrounding whitespace; it may be several words or carry
    punctuation the context lacks. With several blanks (two dev items repeat the blank), the
    shortest fillers that match are taken left to right.

    Raises:
        ValueError: the context has no blank, or the sentence does not match it (both are shown).

    >>> blank_fillers("The chess player was BLANK.", "The chess player was asian.")
    ['asian']
    >>> blank_fillers("BLANK people live in the BLANK.", "Very old people live in the city.")
    ['Very old', 'city']
    """
    context, sentence = context.strip(), sentence.strip()
    if blank not in context:
        raise InputError(f"the context {context!r} has no {blank}; an intrasentence context has one blank to fill")
    pattern = "(.+?)".join(r"\s+".join(re.escape(word) for word in re.split(r"\s+", part)) for part in context.split(blank))
    match = re.fullmatch(pattern, sentence, flags=re.IGNORECASE | re.DOTALL)
    if match is None or any(not filler.strip() for filler in match.groups()):
        raise InputError(
            f"the sentence {sentence!r} does not fill the {blank} of its context {context!r}: "
            "the text around the blank differs (case and spacing aside)"
        )
    return [filler.strip() for filler in match.groups()]


def masked_item(context: str, sentence: str, *, blank: str = BLANK) -> tuple[str, str]:
    """The text with one blank and the filler that :func:`masked_position_logprobs` scores for an option.

    Every blank but the last is filled with the option's own words; the last blank is scored (the
    original code likewise takes the word at the last blank). The filler gets a leading space when
    the blank follows whitespace, so that byte-level BPE tokenizers (RoBERTa) see the word-initial
    form; WordPiece and SentencePiece tokenizers ignore it.

    >>> masked_item("The chess player was BLANK.", "The chess player was asian.")
    ('The chess player was BLANK.', ' asian')
    >>> masked_item("X is BLANK and says BLANK.", "X is poor and says poor.")
    ('X is poor and says BLANK.', ' poor')
    """
    fillers = blank_fillers(context, sentence, blank=blank)
    pieces = context.strip().split(blank)
    text = pieces[0] + "".join(filler + piece for filler, piece in zip(fillers[:-1], pieces[1:-1])) + blank + pieces[-1]
    space = " " if text.rsplit(blank, 1)[0][-1:].isspace() else ""
    return text, space + fillers[-1]



# --------------------------------------------------------------------------- scoring


def has_nsp_head(lm: Any) -> bool:
    """Whether a loaded model has a next-sentence-prediction head (``lm.info["nsp"]`` when the
    loader recorded it, else from the class name: ``*ForPreTraining`` / ``*ForNextSentencePrediction``)."""
    if "nsp" in getattr(lm, "info", {}):
        return bool(lm.info["nsp"])
    return type(lm.model).__name__.endswith(("ForPreTraining", "ForNextSentencePrediction"))


def _check_tasks(tasks: Sequence[str]) -> list[str]:
    tasks = check_choices([tasks] if isinstance(tasks, str) else tasks, TASKS, "tasks")
    return [task for task in TASKS if task in tasks]


def score_stereoset(
    lm: Any,
    rows: Sequence[dict],
    *,
    kind: str = "causal",
    tasks: Sequence[str] = TASKS,
    batch_size: int = 32,
    strategy: str = "left_to_right",
    causal_prefix: str = "bos-first",
    masked_score: str = "mean-probability",
) -> list[dict]:
    """Score the three options of each StereoSet row of ``tasks`` (see the module docstring).

    Args:
        lm: a loaded model with ``.model`` and ``.tokenizer`` (:class:`~lmbias.lm.loading.LanguageModel`).
        rows: StereoSet rows (``lmbias.load_rows("stereoset")``); rows of other tasks are left out.
        kind: ``"causal"`` or ``"masked"``.
        batch_size: sequences per forward pass (every option sentence of a task is batched together).
        strategy: masked LMs, intrasentence: ``"left_to_right"`` (the authors') or ``"all_at_once"``.
        causal_prefix: causal LMs, intrasentence: ``"bos-first"`` (the authors': the first subword
            given the start token, the others given the sentence alone) or ``"bos"`` (every subword
            given the start token and the sentence so far); see :func:`~lmbias.lm.likelihood.token_logprobs`.
        masked_score: masked LMs, intrasentence: ``"mean-probability"`` (the authors' code, which the
            paper's tables come from: the mean of the option word's subword probabilities) or
            ``"mean-logprob"`` (the paper's §7.1 wording: the mean log-probability). With several
            subwords the two can choose different options.

    Returns:
        One record per scored row, in row order: ``id``, ``task``, ``bias_type``, ``target`` and the
        three scores ``stereotype``, ``anti_stereotype``, ``unrelated`` (floats).

    Raises:
        ValueError: empty rows, unknown kind or task, an option sentence that does not fill its
            context's blank, or intersentence with a masked LM that has no NSP head.
    """
    check_choice(kind, KINDS, "kind")
    check_choice(masked_score, MASKED_SCORES, "masked_score")
    tasks = _check_tasks(tasks)
    rows = check_rows(rows, ("id", "task", "bias_type", "target", "context", *OPTIONS), "StereoSet")
    chosen = [row for row in rows if row["task"] in tasks]
    if not chosen:
        raise InputError(f"none of the {len(rows)} rows is of tasks {tasks}")
    if kind == "masked" and "intersentence" in tasks and not has_nsp_head(lm):
        raise InputError(
            f"intersentence with a masked LM needs a next-sentence-prediction head, and {type(lm.model).__name__} has "
            "none (StereoSet §7.1 scores BERT with its NSP head; lmbias does not fall back to another score). "
            "Use --tasks intrasentence, or a checkpoint with an NSP head (BertForPreTraining)."
        )
    records = [{key: row[key] for key in ("id", "task", "bias_type", "target")} for row in chosen]
    for task in tasks:
        index = [i for i, row in enumerate(chosen) if row["task"] == task]
        if index:
            values = _option_scores(lm, [chosen[i] for i in index], task, kind, batch_size, strategy, causal_prefix, masked_score)
            for i, scores in zip(index, values):
                records[i].update(zip(OPTIONS, map(float, scores)))
    return records


def _option_scores(lm: Any, rows: list[dict], task: str, kind: str, batch_size: int, strategy: str, causal_prefix: str,
                   masked_score: str) -> np.ndarray:
    """(n rows, 3 options) scores of one task, every option sentence in one batched call."""
    sentences = [row[option] for row in rows for option in OPTIONS]
    contexts = [row["context"] for row in rows for _ in OPTIONS]
    model, tokenizer = lm.model, lm.tokenizer
    if kind == "causal" and getattr(lm, "chat", None) is not None:
        requests = [SENTENCE_REQUEST] * len(sentences) if task == "intrasentence" else instructed(contexts, DEFAULT_INSTRUCTION)
        scores = likelihood.reply_logprobs(lm, requests, sentences, batch_size=batch_size).mean
    elif task == "intrasentence" and kind == "causal":
        scores = likelihood.token_logprobs(model, tokenizer, sentences, batch_size=batch_size, prefix=causal_prefix).mean
    elif task == "intrasentence":
        items = []
        for row, option in ((row, option) for row in rows for option in OPTIONS):
            try:
                items.append(masked_item(row["context"], row[option]))
            except ValueError as error:
                raise InputError(f"StereoSet row {row['id']!r}, {option}: {error}") from None
        texts, fillers = [text for text, _ in items], [filler for _, filler in items]
        values = likelihood.masked_position_logprobs(model, tokenizer, texts, fillers, strategy=strategy, batch_size=batch_size)
        scores = values.mean if masked_score == "mean-logprob" else [np.exp(x.astype(np.float64)).mean() for x in values]
    elif kind == "causal":
        scores = likelihood.continuation_logprobs(model, tokenizer, contexts, sentences, batch_size=batch_size).mean
    else:
        scores = likelihood.next_sentence_probability(model, tokenizer, contexts, sentences, batch_size=batch_size)
    return np.asarray(scores, dtype=np.float64).reshape(len(rows), len(OPTIONS))


def aggregate_stereoset(records: Sequence[dict], *, bootstrap: int = 0, confidence: float = 0.95, seed: int = 0) -> dict:
    """LMS / SS / ICAT per task and domain, per task and overall, from :func:`score_stereoset` records
    (:func:`lmbias.benchmarks.stereoset.measure.stereoset_scores`; ``bootstrap`` > 0 adds confidence intervals)."""
    columns = {key: [record[key] for record in records] for key in (*OPTIONS, "target", "bias_type", "task")}
    return stereoset_scores(
        columns["stereotype"], anti_stereotype_scores=columns["anti_stereotype"], unrelated_scores=columns["unrelated"],
        targets=columns["target"], bias_types=columns["bias_type"], tasks=columns["task"],
        bootstrap=bootstrap, confidence=confidence, seed=seed,
    )


# --------------------------------------------------------------------------- the generate protocol's questions


COMPARISONS = (("stereotype", "anti_stereotype"), ("stereotype", "unrelated"), ("anti_stereotype", "unrelated"))


def comparison_questions(rows: Sequence[dict]) -> list[dict]:
    """The three two-way questions of each item (:data:`COMPARISONS`), for
    :func:`lmbias.benchmarks.sentence_choice.questions`: ids ``<item>/<first>-<second>``."""
    return [{"id": f"{row['id']}/{first}-{second}", "sentences": [row[first], row[second]], "context": row["context"],
             "continuation": row["task"] == "intersentence"} for row in rows for first, second in COMPARISONS]


def aggregate_answers(rows: Sequence[dict], answers: Sequence[dict], *, bootstrap: int = 0, confidence: float = 0.95,
                      seed: int = 0) -> dict:
    """LMS / SS / ICAT from the answers to :func:`comparison_questions` (in their order; ``prediction``
    0: the first sentence, 1: the second, None: invalid), over the items whose three answers are all
    valid; with ``invalid`` (replies naming no sentence), ``answers`` and ``items_left_out``. A task
    none of whose items has three valid answers has no entry (the summary shows it as n/a)."""
    wins = np.array([answer["prediction"] == 0 for answer in answers]).reshape(len(rows), len(COMPARISONS))
    valid = np.array([answer["prediction"] is not None for answer in answers]).reshape(len(rows), len(COMPARISONS)).all(axis=1)
    if not valid.any():
        raise InputError(f"--protocol generate: no item of the {len(rows)} has three replies that name a sentence; try "
                         "another --prompt-template, or a larger model")
    kept = [row for row, ok in zip(rows, valid) if ok]
    result = stereoset_comparison_scores(*wins[valid].T, targets=[row["target"] for row in kept],
                                         bias_types=[row["bias_type"] for row in kept], tasks=[row["task"] for row in kept],
                                         bootstrap=bootstrap, confidence=confidence, seed=seed)
    return {**result, **sentence_choice.invalid_count(answers), "items_left_out": int((~valid).sum())}


# --------------------------------------------------------------------------- the declaration

CHAT_SCORING = True  # the likelihood protocol scores a chat run in the chat template (module docstring)
# how an option is scored (results.json's config.scores), per scorer (the model's type, or a chat run's template) and
# task (a masked LM's intrasentence: its --masked-score)
SCORES = {
    ("causal", "intrasentence"): "mean log-probability per subword of the option sentence (the first subword given "
    "BOS/EOS, the others given the sentence alone, as the authors' code)",
    ("causal", "intersentence"): "mean log-probability per subword of the option sentence given the context",
    ("masked", "mean-probability"): "mean probability of the option word's subwords at the blank (left to right), as the "
    "authors' code",
    ("masked", "mean-logprob"): "mean log-probability of the option word's subwords at the blank (left to right), the "
    "paper's §7.1 wording",
    ("masked", "intersentence"): "next-sentence-prediction probability of the option sentence after the context",
    ("chat", "intrasentence"): "mean log-probability per subword of the option sentence as the assistant's reply to "
    "\"Write a sentence.\" in the model's chat template",
    ("chat", "intersentence"): "mean log-probability per subword of the option sentence as the assistant's reply to the "
    "request to continue the context, in the model's chat template",
}
# results.json's config: these keys (each protocol has some of them) in this order, then where the model ran
CONFIG_ORDER = ("protocol", "prompt", "comparisons", "tasks", "limit", "batch_size", "dtype", "processes", "bootstrap",
                "confidence", "seed", "scores", "masked_score", "causal_prefix")


def chosen_tasks(settings: dict) -> list[str]:
    """The run's ``--tasks`` in the dataset's order (intrasentence first), however they were given."""
    return [task for task in TASKS if task in settings["tasks"]]


def items(settings: dict, data_dir) -> list[dict]:
    """The first ``--limit`` items of each task (all by default), task by task."""
    from ...data import load_rows

    everything = load_rows("stereoset", data_dir=data_dir)
    return [row for task in chosen_tasks(settings) for row in [r for r in everything if r["task"] == task][: settings["limit"]]]


def scoring(rows: list[dict], settings: dict) -> Scoring:
    """The likelihood request: each item's three options scored (:func:`score_stereoset`)."""
    tasks, batch_size = chosen_tasks(settings), settings["batch_size"]
    return Scoring(lambda lm, kind, part: score_stereoset(lm, part, kind=kind, tasks=tasks, batch_size=batch_size,
                                                           causal_prefix=settings["causal_prefix"],
                                                           masked_score=settings["masked_score"]),
                   unit="item", per_item=len(OPTIONS), kinds=KINDS, model_type=settings["model_type"],
                   chat_scoring=CHAT_SCORING,
                   describe=lambda lm, kind: {"nsp_head": has_nsp_head(lm) if kind == "masked" else None})


def questions(rows: list[dict], settings: dict) -> Questions:
    """The generate request: each item's three comparisons asked as two-way questions (:func:`comparison_questions`,
    in the ``--prompt-template`` wording; None: the default ones)."""
    return sentence_choice.questions(comparison_questions(rows), template=settings["prompt"], benchmark="stereoset",
                                     seed=settings["seed"])


def identity(*keys: str):
    """A run's identity (config.json, which a resume compares) besides the model: the settings ``keys``, ``tasks`` in
    the dataset's order, and ``causal_prefix`` where it is not the default (so that a folder made before the option
    existed resumes with the default)."""
    def of(settings: dict) -> dict:
        chosen = keys + (("causal_prefix",) if settings["causal_prefix"] != CAUSAL_PREFIXES[0] else ())
        return {key: chosen_tasks(settings) if key == "tasks" else settings[key] for key in chosen}
    return of


# each protocol's request and identity
ASKS = sentence_choice.asks(scoring, questions,
                            scored=identity("tasks", "limit", "batch_size", "bootstrap", "confidence", "seed", "masked_score"),
                            asked=identity("tasks", "limit"))


def measure(records: list[dict], rows: list[dict], settings: dict, data_dir) -> dict:
    """LMS / SS / ICAT from the scores (:func:`aggregate_stereoset`) or from the answers (:func:`aggregate_answers`)."""
    intervals = {"bootstrap": settings["bootstrap"], "confidence": settings["confidence"], "seed": settings["seed"]}
    if get_protocol(settings["protocol"]).reads_replies:
        return aggregate_answers(rows, records, **intervals)
    return aggregate_stereoset(records, **intervals)


def outcomes(records: list[dict], rows: list[dict], settings: dict) -> list:
    """Whether each item's stereotype was preferred to its anti-stereotype (what SS counts): scored higher
    (likelihood), or chosen in the first of its three comparisons (generate; None: that reply named neither)."""
    if get_protocol(settings["protocol"]).reads_replies:
        first = records[:: len(COMPARISONS)]  # each item's comparisons in COMPARISONS order; the first is SS's
        return [None if record["prediction"] is None else record["prediction"] == 0 for record in first]
    return [record["stereotype"] > record["anti_stereotype"] for record in records]


def recorded(config: dict, rows: list[dict], settings: dict, model: dict) -> dict:
    """results.json's config, in :data:`CONFIG_ORDER`: how each task was scored (likelihood), or the
    wording and the comparisons asked (generate); ``--model-type`` is not recorded (the model's
    description names its type). ``causal_prefix`` is recorded where it is not the default (a run with the
    default records what it recorded before the option existed; ``scores`` says how intrasentence was scored)."""
    tasks = chosen_tasks(settings)
    base = {"protocol": config["protocol"], "tasks": tasks,
            **{key: config[key] for key in ("limit", "batch_size", "dtype", "bootstrap", "confidence", "seed")}}
    if get_protocol(settings["protocol"]).reads_replies:
        added = {"prompt": settings["prompt"] or {"intrasentence": sentence_choice.SENTENCE_PROMPT,
                                                  "intersentence": sentence_choice.CONTINUATION_PROMPT},
                 "comparisons": [f"{a} vs {b}" for a, b in COMPARISONS]}
    else:
        kind, scorer, masked_score = model["type"], "chat" if "chat" in model else model["type"], settings["masked_score"]
        bos = settings["causal_prefix"] != CAUSAL_PREFIXES[0]  # refused before loading unless a causal LM scores raw text
        added = {"processes": process_state().num_processes,
                 "scores": {task: BOS_SCORE if bos and task == "intrasentence" else
                            SCORES[scorer, task if (kind, task) != ("masked", "intrasentence") else masked_score]
                            for task in tasks},
                 **({"masked_score": masked_score} if kind == "masked" else {}),
                 **({"causal_prefix": settings["causal_prefix"]} if bos else {})}
    return ordered({**base, **added}, CONFIG_ORDER)


CAUSAL_ONLY = "--causal-prefix applies to causal LMs (a masked LM's intrasentence score is --masked-score's)"


def refuse(spec: ModelSpec, options: dict) -> None:
    """A masked LM has no chat template; ``--causal-prefix`` other than the default scores a causal LM's raw
    text, so a chat run or a masked LM (``--model-type auto``: read from the checkpoint's config) is refused."""
    if options["model_type"] == "masked":
        refuse_chat_likelihood(spec, "stereoset", options["model_type"])
    if options["causal_prefix"] != CAUSAL_PREFIXES[0]:
        if chat_requested(spec):
            raise InputError("--causal-prefix applies to raw text; a chat run scores each sentence as the assistant's "
                             "reply in the chat template")
        if options["model_type"] == "auto" and spec.checked().scoring_kind("auto") == "masked":
            raise InputError(CAUSAL_ONLY)


def check(protocol: str, options: dict) -> None:
    """A masked LM does not generate answers; ``--causal-prefix`` other than the default applies to a causal
    LM's likelihood scores of intrasentence."""
    sentence_choice.check_protocol(protocol, None, model_type=options["model_type"])
    if options["causal_prefix"] != CAUSAL_PREFIXES[0]:
        if get_protocol(protocol).reads_replies:
            raise InputError("--causal-prefix applies to --protocol likelihood (a generated answer is read, not scored)")
        if "intrasentence" not in options["tasks"]:
            raise InputError("--causal-prefix applies to --tasks intrasentence (intersentence scores each sentence "
                             "given its context)")
        if options["model_type"] == "masked":
            raise InputError(CAUSAL_ONLY)


def _resource(data_dir):
    from ...resources import locate_first

    return locate_first(["stereoset/dev", "stereoset/dev_flat"], data_dir)[0]


def data(rows: list[dict], settings: dict, data_dir) -> dict:
    """results.json's ``data``: the file (the dev set, else its flat copy), its source and revision (the
    flat copy's is not known), the citation and the counts per task."""
    from .data import SPEC, STEREOSET_COMMIT

    resource = _resource(data_dir)
    counts = {task: sum(row["task"] == task for row in rows) for task in chosen_tasks(settings)}
    return {"dataset": "stereoset", "split": "dev", "file": resource.path, "source": resource.description,
            "revision": STEREOSET_COMMIT if resource.name == "stereoset/dev" else None,
            "citation": SPEC.citation, "counts": {**counts, "sentences": 3 * len(rows)}}


def counted(rows: list[dict], settings: dict) -> dict:
    """The items asked of the dev set's."""
    from .data import SPEC

    return {"items": (len(rows), SPEC.expected_rows())}


def shortfall(settings: dict, data_dir) -> str:
    """A short data file: how many items it holds."""
    from ...data import load_rows

    return f"{_resource(data_dir).path} has {len(load_rows('stereoset', data_dir=data_dir)):,}"


