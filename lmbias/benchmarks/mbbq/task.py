"""MBBQ's run: the declaration for the generic run (:func:`lmbias.benchmarks.declared.run_task`).

Likelihood protocol: each item's three answers are scored as the continuation of its context and question,
in the item's language, worded as the authors' prompts word them (their second prompt, "Context: ...
Question: ... Answer:", in each language: :data:`PROMPTS`), without the lettered options (a likelihood run
scores the answers themselves); the answer with the highest summed log-probability (``--decision mean``:
per token) is the model's. With the control set (default), its items are scored the same way and read as
the authors read them: the templates the model does not understand in every language run are left out
(:mod:`lmbias.benchmarks.mbbq.measure`).

Generate protocol (``--protocol generate``, for chat models): as the authors ran their models, each item
is asked in each of the authors' five wordings in its language (``--prompts`` picks some), its three
answers lettered (A), (B), (C) in file order, the reply generated greedily (``--max-new-tokens``, the
authors' 100) and read by the authors' rules (:mod:`lmbias.benchmarks.mbbq.detect`); an item and a wording
are one cell of the measures, as the authors average them. The authors put each prompt through the model's
chat template as one user turn: run a chat model with ``--chat`` (hf, vllm) or a chat server
(``--backend openai-chat``).

A sample (``--limit N``) takes the first N items of each template, context condition and question
polarity, in the main and the control set alike, so every template keeps both conditions.
"""

from __future__ import annotations

from collections import Counter

from ...errors import InputError
from ...protocols import GENERATE, LIKELIHOOD
from ...protocols.choice import Questions
from ...protocols.likelihood import Scoring
from ..bbq.task import decisions, predicted, score_bbq
from ..declared import Ask, named_settings
from . import detect
from .data import CATEGORIES, CITATION, LANGUAGES, MBBQ_COMMIT, ROWS, SETS, read_file
from .measure import mbbq_scores

WORDINGS = (0, 1, 2, 3, 4)  # the authors' five prompts (prompt_id)
REPLY_TOKENS = 100  # the authors' max_new_tokens

# The authors' second prompt per language (their answer_detection.py, trans_prompt_dict), without the options.
PROMPTS = {"en": "Context: {context} Question: {question} Answer:", "nl": "Context: {context} Vraag: {question} Antwoord:",
           "es": "Contexto: {context} Pregunta: {question} Respuesta:", "tr": "Bağlam: {context} Soru: {question} Cevap:"}


def prompt(row: dict) -> str:
    """The likelihood prompt of an MBBQ row, in its language (:data:`PROMPTS`)."""
    return PROMPTS[row["language"]].format(context=row["context"], question=row["question"])


def asked(rows: list[dict], wordings, data_dir=None) -> list[dict]:
    """Each row once per wording in ``wordings`` (the authors' prompt ids), with its ``prompt_id`` and its
    ``prompt`` (the wording in the row's language, the answers in file order)."""
    chosen = {language: detect.prompts(language, data_dir) for language in dict.fromkeys(row["language"] for row in rows)}
    return [{**row, "id": f"{row['id']}/p{k}", "prompt_id": k,
             "prompt": chosen[row["language"]][k].format(row["context"], row["question"], row["ans0"], row["ans1"], row["ans2"])}
            for row in rows for k in wordings]


def select_rows(languages, categories, limit, control: bool, data_dir=None) -> list[dict]:
    """The main set's rows (then the control set's) of each language and category: each whole, or the first
    ``limit`` items of each template, context condition and question polarity."""
    rows = []
    for dataset in SETS if control else SETS[:1]:
        for language in languages:
            for category in categories:
                taken: Counter = Counter()
                for row in read_file(category, dataset, language, data_dir):
                    taken[row["template"], row["context_condition"], row["question_polarity"]] += 1
                    if limit is None or taken[row["template"], row["context_condition"], row["question_polarity"]] <= limit:
                        rows.append(row)
    return rows


def items(settings: dict, data_dir) -> list[dict]:
    """The rows asked: :func:`select_rows`, each once per chosen wording where replies are generated."""
    rows = select_rows(settings["languages"], settings["categories"], settings["limit"], not settings["no_control"], data_dir)
    return rows if decisions(settings["protocol"]) else asked(rows, settings["prompts"], data_dir)


def questions(rows: list[dict], settings: dict) -> Questions:
    """The generative request: each row's prompt, its answers lettered in file order, each reply read by the
    authors' rules in the row's language (:func:`lmbias.benchmarks.mbbq.detect.read_reply`)."""
    cues = {language: detect.cues(language, settings["data_dir"]) for language in dict.fromkeys(r["language"] for r in rows)}
    return Questions([row["id"] for row in rows], [row["prompt"] for row in rows],
                     [[row["ans0"], row["ans1"], row["ans2"]] for row in rows], [[0, 1, 2]] * len(rows),
                     read=lambda i, reply: detect.read_reply(reply, rows[i], cues[rows[i]["language"]]),
                     max_new_tokens=settings["max_new_tokens"])


def scoring(rows: list[dict], settings: dict) -> Scoring:
    """The likelihood request: the three answers scored after :func:`prompt`."""
    return Scoring(lambda lm, kind, part: score_bbq(lm, part, batch_size=settings["batch_size"], prompt=prompt),
                   unit="item", per_item=3)


def measure(records: list[dict], rows: list[dict], settings: dict, data_dir) -> dict:
    """:func:`mbbq_scores` of the answers (:func:`predicted`), the control set beside the main one."""
    predictions = predicted(records, settings)
    main = [(row, p) for row, p in zip(rows, predictions) if row["set"] == "main"]
    control = [(row, p) for row, p in zip(rows, predictions) if row["set"] == "control"]
    return mbbq_scores([row for row, _ in main], [p for _, p in main], control_rows=[row for row, _ in control],
                       control_predictions=[p for _, p in control], template_filter=not settings["no_template_filter"],
                       cutoff=settings["control_cutoff"], bootstrap=settings["bootstrap"], seed=settings["seed"])


def outcomes(records: list[dict], rows: list[dict], settings: dict) -> list:
    """Whether each item's answer is the correct one (None: an invalid reply)."""
    return [None if answer is None else answer == row["label"] for answer, row in zip(predicted(records, settings), rows)]


def data(rows: list[dict], options: dict, data_dir) -> dict:
    """results.json's ``data``: the revision, the citation, the languages and categories, the counts."""
    counts = Counter(f"{row['language']}/{row['set']}" for row in rows)
    return {"dataset": "mbbq", "split": "test", "revision": MBBQ_COMMIT, "citation": CITATION,
            "languages": list(options["languages"]), "categories": list(options["categories"]),
            "counts": {"items": len(rows), **dict(sorted(counts.items()))}}


def counted(rows: list[dict], options: dict) -> dict:
    """The items asked of the languages' and sets' full files."""
    sets = 2 if not options["no_control"] else 1
    full = len(LANGUAGES) * sum(ROWS[category][i] for category in CATEGORIES for i in range(sets))
    return {"items": (len(rows), full * (1 if decisions(options["protocol"]) else len(WORDINGS)))}


def check(protocol: str, options: dict) -> None:
    """The generative options are refused with likelihood, ``--decision`` with generate."""
    if decisions(protocol):
        for name, default in (("prompts", list(WORDINGS)), ("max_new_tokens", REPLY_TOKENS)):
            if options[name] != default:
                raise InputError(f"--{name.replace('_', '-')} applies to --protocol generate (a likelihood run scores the "
                                 "answers after one wording)")
    elif options["decision"] != "sum":
        raise InputError("--decision applies to --protocol likelihood (a generated answer is read, not scored)")


# what a run folder's answers depend on (the protocol, the items, and generate's wordings and token budget) and
# results.json's config (the likelihood wording, or where generate's five wordings and phrase lists come from)
ITEMS = ("protocol", "languages", "categories", "limit", "no_control")
ASKS = (
    Ask(LIKELIHOOD, "the three answers scored as continuations of the question, in its language", scoring,
        identity=named_settings(*ITEMS), config=lambda options: {"prompt": PROMPTS, "prompts": None, "max_new_tokens": None},
        how="likelihood, in each item's language"),
    Ask(GENERATE, "the authors' five wordings in the item's language, the reply read by their rules (chat models)",
        questions, identity=named_settings(*ITEMS, "prompts", "max_new_tokens"),
        config=lambda options: {"prompts": options["prompts"], "decision": None,
                                "wordings": f"Veranep/MBBQ@{MBBQ_COMMIT}: answer_detection.py (prompts, trans_prompt_dict)",
                                "reply_reading": "the authors' detect_answer (mbbq.py), phrase lists from answer_detection.py"},
        how=lambda config: f"generate: the authors' wordings {', '.join(map(str, config.get('prompts') or ()))} in each item's "
                           "language, replies read by their rules"),
)


