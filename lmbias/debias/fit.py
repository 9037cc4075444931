"""``lmbias debias`` for the methods that do not train: a projection of the final hidden states
(INLP, SentenceDebias, LEACE) or a decoding-time adjustment (Self-Debias), fitted on the training
part of the corpus and saved with the model as a transformers folder whose ``config.json`` records
the adjustment (:mod:`lmbias.lm.adjustments`), so that every benchmark runs it with ``--backend hf``.

``debias.json`` says "fitting" until the folder is complete (then "finished", written last): the
same command on an interrupted fit's folder starts it again (fitting is deterministic), and a
finished model or a folder with other files is never written over.
The held-out perplexity is measured with the saved adjustment read back from the folder, applied to
the weights saved. What would stop the command after the fit (a held-out text longer than the model
takes) is checked before it; ``--max-length`` cuts the fitted texts to at most the model's context.
Each phase prints a line or shows a bar, and ``debias.json`` keeps their seconds (``seconds``).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import time
from collections.abc import Sequence
from pathlib import Path

from .. import progress
from ..benchmarks.counterfactual.data import ATTRIBUTES
from ..checks import check_scalar
from ..errors import InputError
from ..files import read_json, write_atomic
from ..lm.adjustments import CONFIG_KEY, adjustment_record, apply_adjustment, save_projection
from ..run_lock import LOCK_FILE, holds_run_directory
from ..version import __version__
from .attribute_words import check_vocabulary
from .features import fitted_length
from .methods import Preparation, Projection, check_bias_type, get_method, method_options
from .pairs import check_attributes, is_held_out, load_corpus
from .phases import Phases

STATE_FILE = "debias.json"


@holds_run_directory
def fit_adjustment(
    *,
    model: str | None = None,
    method: str = "inlp",
    out="runs/debias",
    bias_type: str | None = None,
    fit_sentences: int = 10000,
    attributes: Sequence[str] = ATTRIBUTES,
    train_file=None,
    train_dataset: str | None = None,
    batch_size: int = 32,
    max_length: int = 128,
    seed: int = 0,
    eval_limit: int | None = None,
    device: str | None = None,
    data_dir=None,
    show_progress: bool = True,
    **options,
) -> dict:
    """Fit ``method`` (a projection or decoding-time method) on ``model`` and save the adjusted model
    to ``out``; returns ``<out>/debias.json``'s content.

    Args:
        bias_type: "gender" (default), "race" or "religion": whose attribute words (or Self-Debias prefix).
        fit_sentences: at most this many sentences per class (INLP, LEACE: bias-bench's 10,000) or
            counterfactual sets (SentenceDebias).
        attributes: the sensitive tokens of the held-out PPL_s (as for the training methods).
        train_file, train_dataset: the corpus (:func:`~lmbias.debias.pairs.load_corpus`); its held-out
            10 % is never fitted on.
        batch_size, max_length: sentences per forward pass, and tokens a sentence is cut to.
        eval_limit: held-out texts for the final PPL (None: all; 0: none).
        options: the method's own options (Self-Debias: ``decay_constant``, ``epsilon``; INLP: ``iterations``).

    Raises:
        InputError: a training method, an option of another method, a bad value, a corpus without
            sentences of a class, or an ``out`` that is not new or empty.
    """
    phases = Phases()  # the whole call, imports included
    from ..lm.loading import detect_model_type, load_causal_lm
    from .perplexity import check_held_out_fits, held_out_perplexity

    chosen = get_method(method)
    if chosen.trains:
        raise InputError(f"--method {chosen.name} trains with a loss term: lmbias.debias.train.debias runs it")
    check_bias_type(chosen, bias_type)
    attributes = check_attributes(attributes)
    for name, value, least in (("fit_sentences", fit_sentences, 2), ("batch_size", batch_size, 1), ("max_length", max_length, 8)):
        check_scalar(value, name, minimum=least)
    if eval_limit is not None:
        check_scalar(eval_limit, "eval_limit", minimum=0)
    settings = {"model": model, "method": chosen.name, "bias_type": bias_type or "gender", "fit_sentences": fit_sentences,
                "attributes": attributes, "train_file": None if train_file is None else str(train_file),
                "train_dataset": train_dataset, "batch_size": batch_size, "max_length": max_length, "seed": seed,
                **method_options(chosen.name, options), "eval_limit": eval_limit}
    out = Path(out)
    _check_out(out)
    kind = None
    with contextlib.suppress(InputError):  # a config that names no head: loading says what is wrong
        kind = detect_model_type(model)
    if kind == "masked":
        raise InputError(f"--model {model} is a masked LM; the debiasing methods here adjust causal LMs")
    with progress.showing(show_progress):
        with phases.phase("corpus", "reading the corpus"):
            texts, source = load_corpus(train_file, train_dataset, data_dir=data_dir)
        with phases.phase("load", f"loading {model or 'the embedded model'}"):
            lm = load_causal_lm(model, dtype="float32", device=device)
        if getattr(lm.model.config, CONFIG_KEY, None):
            raise InputError(f"--model {model} is already adjusted ({getattr(lm.model.config, CONFIG_KEY)['method']}); "
                             "start from the model it was made from")
        if chosen.transform is not None:
            check_vocabulary(lm.tokenizer, settings["bias_type"], model, data_dir)
        if eval_limit != 0:  # what would stop the command after the fit, checked before it
            check_held_out_fits(lm.model, lm.tokenizer, texts, eval_limit, source)
        fitting = {**settings, "max_length": fitted_length(lm.model, lm.tokenizer, max_length)}
        preparation = Preparation(model=lm.model, tokenizer=lm.tokenizer, texts=[t for t in texts if not is_held_out(t)],
                                  settings=fitting, folder=out, device=lm.model.device, data_dir=data_dir)
        with phases.phase("fit"):  # the method's own bars (sentences encoded, classifiers)
            if chosen.transform is not None:
                fitted = chosen.transform(preparation)
                if not isinstance(fitted, Projection):
                    raise InputError(f"debias method {chosen.name!r}: transform returned {type(fitted).__name__}, not a "
                                     "lmbias.debias.methods.Projection")
                record, extra = adjustment_record(chosen.name, "projection", {}), fitted.record
            else:
                record, extra = adjustment_record(chosen.name, "self_debias", chosen.adjust_decoding(preparation)), {}
        with phases.phase("save", f"saving the adjusted model to {out}"):
            _start(out, settings)
            setattr(lm.model.config, CONFIG_KEY, record)
            with progress.quiet_loading():
                lm.model.save_pretrained(out, safe_serialization=True)
                lm.tokenizer.save_pretrained(out)
            if chosen.transform is not None:
                save_projection(out, fitted.matrix, fitted.offset)
        evaluation = None
        if eval_limit != 0:
            with phases.phase("held_out"), progress.showing(progress.enabled(), "debias: held-out perplexity"):
                # The saved adjustment, read back from the folder, on the saved weights (those in memory): the model as it will load.
                apply_adjustment(lm.model, lm.tokenizer, out)
                evaluation = held_out_perplexity(lm.model, lm.tokenizer, texts, attributes, limit=eval_limit,
                                                 batch_size=batch_size, seed=seed)
    state = {"status": "finished", "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "lmbias_version": __version__,
             "settings": settings, "base_model": lm.name, "corpus": source, "adjustment": record, "fit": extra,
             "fit_seconds": phases.seconds["fit"], "seconds": phases.record(), "held_out": evaluation}
    write_atomic(out / "README.md", model_card(state))
    write_atomic(out / STATE_FILE, json.dumps(state, indent=2))  # last: the folder is complete
    return state


def _check_out(out: Path) -> None:
    """``out`` is new, empty, or what an interrupted fit left (``debias.json`` says "fitting"): a
    finished model or any other files are never written over."""
    state_path = out / STATE_FILE
    if state_path.is_file():
        state = read_json(state_path, fix="it is not an lmbias debias run's state: choose another --out")
        if state.get("status") != "fitting":
            raise InputError(f"--out {out} holds a {'finished debiased model' if state.get('status') == 'finished' else 'debias run'}; "
                             "it is never overwritten: choose another --out")
    elif out.exists():
        others = sorted(p.name for p in out.iterdir() if p.name != LOCK_FILE)
        if others:
            raise InputError(f"--out {out} holds other files ({', '.join(others[:5])}); give a new or empty folder")


def _start(out: Path, settings: dict) -> None:
    """Empty what an interrupted fit left in ``out`` (fitting is deterministic: it starts again) and
    mark the folder as a fit in progress until ``debias.json`` says "finished"."""
    if out.exists():
        for path in out.iterdir():
            if path.name != LOCK_FILE:
                shutil.rmtree(path) if path.is_dir() else path.unlink()
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / STATE_FILE, json.dumps({"status": "fitting", "settings": settings}, indent=2))


def model_card(state: dict) -> str:
    """The adjusted model's README.md: what it is, what it was fitted on, and how to evaluate it."""
    from .perplexity import describe

    s, method = state["settings"], get_method(state["settings"]["method"])
    held = state.get("held_out") or {}
    rows = [("method", f"{method.name}: {method.description}"), ("bias type", s["bias_type"]), ("corpus", state["corpus"]),
            *[(key.replace("_", " "), json.dumps(value) if isinstance(value, dict) else value)
              for key, value in state["fit"].items() if not isinstance(value, list)],
            *state["adjustment"]["settings"].items(),
            ("held-out PPL", describe(held["ppl"]) if held else "not measured")]
    base = [f"base_model: {s['model']}"] if s["model"] and "/" in s["model"] and not Path(s["model"]).exists() else []
    lines = ["---", "tags:", "- lmbias", "- debiasing", *base, "---", "",
             f"# {state['base_model']} with {method.name} ({s['bias_type']})", "",
             f"Made with `lmbias debias` {state['lmbias_version']}. The weights are the base model's; `config.json` records "
             f"the {state['adjustment']['kind'].replace('_', '-')} adjustment (`{CONFIG_KEY}`), which lmbias's hf backend "
             "applies when it loads this folder (other backends refuse it).", "",
             "| setting | value |", "|---|---|", *[f"| {key} | {value} |" for key, value in rows], "",
             "Evaluate it with, for example: `lmbias run stereoset --model <this folder>`."]
    return "\n".join(lines) + "\n"
