"""``lmbias debias`` and ``lmbias perplexity`` on the command line."""

from __future__ import annotations

import argparse
import json
import warnings
from pathlib import Path

from ..benchmarks.counterfactual.data import ATTRIBUTES
from ..errors import InputError
from ..files import read_json
from ..render.text import markdown_table
from .attribute_words import BIAS_TYPES
from .methods import methods
from .regularizers import POSITIONS

PERPLEXITY_FILE = "perplexity.json"


def _corpus_options(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--train-file", help=".txt (one text per line) or .jsonl (a 'text' per line) (default: BOLD's "
                                             "Wikipedia sentences)")
    source.add_argument("--train-dataset", metavar="HUB_ID", help="a Hub dataset with a 'text' column, e.g. Salesforce/wikitext")
    parser.add_argument("--attributes", nargs="+", choices=ATTRIBUTES, default=list(ATTRIBUTES), help="sensitive attributes")


def add_parsers(commands, data_dir: argparse.ArgumentParser) -> None:
    """Add ``debias`` and ``perplexity`` to the ``lmbias`` subcommands."""
    debias = commands.add_parser(
        "debias", parents=[data_dir], help="fine-tune a causal LM with the counterfactual paper's fairness regularisation",
        description="Fine-tune a causal LM with a fairness loss term, as in Huang et al. 2020 (§4): L = L_LM + lambda * "
                    "L_fairness, where L_fairness is the method's term comparing the model's outputs on a training text "
                    "with a sensitive token (a country, occupation or name) and on the same text with another value of "
                    "that attribute. --lambda 0 is the paper's control. The output folder gets the "
                    "model, a model card, debias.json and the held-out perplexity; the same command resumes an "
                    "interrupted run from its last checkpoint. Example: lmbias debias --method embedding --lambda 10 "
                    "--out models/embed-10.")
    debias.add_argument("--model", help="Hub id or folder of a causal LM (default: the embedded SmolLM2-135M-Instruct)")
    method = debias.add_argument("--method", required=True, help="the debiasing method (see above)")
    debias.add_argument("--lambda", dest="lam", type=float, help="training methods: the loss term's weight (0: the LM-only control)")
    debias.add_argument("--bias-type", choices=BIAS_TYPES, help="methods built on bias-bench's attribute words (cda, inlp, "
                                                                "sentence_debias, leace, self_debias): whose words (default gender)")
    debias.add_argument("--fit-sentences", type=int, default=10000, help="inlp, leace: sentences per class fitted on; "
                                                                         "sentence_debias: counterfactual sets (bias-bench: 10000)")
    _corpus_options(debias)
    debias.add_argument("--out", required=True, help="a new folder for the debiased model (or an unfinished run's, to resume)")
    debias.add_argument("--steps", type=int, default=300, help="optimisation steps")
    debias.add_argument("--batch-size", type=int, default=8, help="texts per step, over all processes")
    debias.add_argument("--learning-rate", type=float, default=2.5e-5, help="AdamW (the paper's debiasing step: 2.5e-5)")
    debias.add_argument("--max-length", type=int, default=128, help="tokens a text trained or fitted on is cut to (at most the "
                                                                          "model's context)")
    debias.add_argument("--checkpoint-every", type=int, default=100, help="steps between resumable checkpoints")
    debias.add_argument("--seed", type=int, default=0, help="seed of the batches, the replacements and the initial state")
    debias.add_argument("--lora", action="store_true", help="train a LoRA adapter (peft) and merge it into the saved model")
    debias.add_argument("--lora-rank", type=int, help="LoRA rank (default 8)")
    debias.add_argument("--position", choices=POSITIONS, default="all", help="prefix ends compared: all after the token, or the last")
    debias.add_argument("--eval-limit", type=int, help="held-out texts for the final PPL, each scored whole, so each must "
                                                                "fit the model's context (checked before fitting; default: all; 0: none)")
    debias.add_argument("--device", help="cpu, cuda ... (default: a GPU if there is one)")
    debias.add_argument("--threads", type=int, help="CPU threads (default: the CPUs other programs leave free; OMP_NUM_THREADS "
                                                    "when set)")
    debias.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
    method.choices, offered = [], []
    for each in methods():
        try:
            if each.add_arguments is not None:
                each.add_arguments(debias.add_argument_group(f"--method {each.name}"))
        except argparse.ArgumentError as error:  # a plugin's option that clashes must not take the command down
            warnings.warn(f"lmbias: debias method {each.name!r} is not offered: {error}", stacklevel=2)
            continue
        method.choices.append(each.name)
        offered += each.defaults()
    debias.description += " Methods: " + "; ".join(f"{m.name} ({m.kind}): {m.description}" for m in methods()
                                                   if m.name in method.choices)
    debias.set_defaults(func=_debias, method_options=offered)

    perplexity = commands.add_parser(
        "perplexity", parents=[data_dir], help="PPL and PPL_s (texts with a sensitive token) of a causal LM on held-out text",
        description="The language-modelling cost of debiasing (Huang et al. 2020, §5): a causal LM's perplexity on the "
                    "held-out 10% of the debiasing corpus (chosen by a hash of each text, so every model is measured on "
                    "the same texts), and PPL_s on those with a sensitive token. With --out RUN_DIR it writes "
                    "perplexity.json beside a run (never overwriting another model's), where the report reads it. "
                    "Example: lmbias perplexity --model models/embed-10 --out runs/embed-10")
    perplexity.add_argument("--model", help="Hub id or folder (default: the embedded SmolLM2-135M-Instruct)")
    _corpus_options(perplexity)
    perplexity.add_argument("--limit", type=int, help="the first N held-out texts (default: all)")
    perplexity.add_argument("--batch-size", type=int, default=32, help="texts per scoring pass")
    perplexity.add_argument("--dtype", choices=["auto", "float32", "float16", "bfloat16"], help="default: float32 on CPU")
    perplexity.add_argument("--device", help="cpu, cuda ... (default: a GPU if there is one)")
    perplexity.add_argument("--threads", type=int, help="CPU threads (default: the CPUs other programs leave free; "
                                                        "OMP_NUM_THREADS when set)")
    perplexity.add_argument("--out", help=f"a run folder to write {PERPLEXITY_FILE} into (e.g. the model's counterfactual run)")
    perplexity.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
    perplexity.set_defaults(func=_perplexity)


def _debias(args) -> int:
    from .methods import get_method

    options = {key: getattr(args, key) for key in args.method_options}
    if not get_method(args.method).trains:
        return _fit(args, options)
    from .train import debias

    state = debias(model=args.model, method=args.method, lam=args.lam, attributes=args.attributes, train_file=args.train_file,
                   train_dataset=args.train_dataset, out=args.out, steps=args.steps, batch_size=args.batch_size,
                   learning_rate=args.learning_rate, max_length=args.max_length, checkpoint_every=args.checkpoint_every,
                   seed=args.seed, bias_type=args.bias_type, lora=args.lora, lora_rank=args.lora_rank, position=args.position,
                   eval_limit=args.eval_limit, device=args.device, data_dir=args.data_dir, show_progress=args.progress,
                   **options)
    if state:
        from .perplexity import describe

        held = state.get("held_out") or {}
        extra = f"; held-out PPL {describe(held['ppl'])}, PPL_s {describe(held['ppl_s'])}" if held else ""
        print(f"saved the debiased model to {args.out} in {state['seconds']['total']:.0f} s ({state['settings']['steps']} steps: "
              f"{state['training_seconds']:.0f} s{extra}); evaluate it with: lmbias run counterfactual --model {args.out}")
    return 0


def _fit(args, options: dict) -> int:
    """``lmbias debias`` for a projection or decoding-time method (:func:`lmbias.debias.fit.fit_adjustment`)."""
    from .fit import fit_adjustment
    from .perplexity import describe

    if args.lam is not None:
        raise InputError(f"--lambda applies to training methods; --method {args.method} is fitted without training")
    state = fit_adjustment(model=args.model, method=args.method, out=args.out, bias_type=args.bias_type,
                           fit_sentences=args.fit_sentences, attributes=args.attributes, train_file=args.train_file,
                           train_dataset=args.train_dataset, batch_size=args.batch_size, max_length=args.max_length,
                           seed=args.seed, eval_limit=args.eval_limit, device=args.device, data_dir=args.data_dir,
                           show_progress=args.progress, **options)
    held = state.get("held_out") or {}
    probe = state["fit"].get("probe_test_accuracy")
    extra = (f"; attribute probe accuracy {probe['before']:.3f} -> {probe['after']:.3f} (majority class {probe['majority_class']:.3f})"
             if probe else "") + (f"; held-out PPL {describe(held['ppl'])}" if held else "")
    stopped = state["fit"].get("stopped")
    extra += f"; stopped early: {stopped}" if stopped else ""
    print(f"saved {args.method} ({state['settings']['bias_type']}) to {args.out} in {state['seconds']['total']:.0f} s (the fit: "
          f"{state['fit_seconds']:.0f} s){extra}; "
          f"evaluate it with --backend hf, e.g.: lmbias run stereoset --model {args.out}")
    return 0


def perplexity_report(model: str | None, texts_source: dict, attributes, *, limit=None, batch_size=32, dtype=None, device=None,
                      data_dir=None) -> dict:
    """PPL and PPL_s of ``model`` on the held-out texts of a corpus (:func:`lmbias.debias.perplexity.held_out_perplexity`),
    with what was measured: the contents of ``perplexity.json``."""
    from ..checks import check_scalar
    from ..lm.loading import load_causal_lm
    from .pairs import check_attributes, load_corpus
    from .perplexity import held_out_perplexity

    attributes = check_attributes(attributes)
    check_scalar(batch_size, "batch_size", minimum=1)
    if limit is not None:
        check_scalar(limit, "limit", minimum=1)
    texts, source = load_corpus(texts_source.get("train_file"), texts_source.get("train_dataset"), data_dir=data_dir)
    lm = load_causal_lm(model, dtype=dtype, device=device)
    measured = held_out_perplexity(lm.model, lm.tokenizer, texts, attributes, limit=limit, batch_size=batch_size)
    return {"model": model or "embedded:smollm2-135m-instruct", "model_name": lm.name, "corpus": source, "attributes": attributes,
            "limit": limit, **measured}


def _perplexity(args) -> int:
    out = Path(args.out) / PERPLEXITY_FILE if args.out else None
    settings = {"model": args.model or "embedded:smollm2-135m-instruct", "limit": args.limit, "attributes": args.attributes}
    if out is not None and out.is_file():
        saved = read_json(out, fix="move it away or choose another --out")
        if {key: saved.get(key) for key in settings} != settings:
            raise InputError(f"{out} holds the perplexity of other settings ({saved.get('model')}, limit {saved.get('limit')}); "
                             "it is not overwritten: choose another --out")
        report = saved
    else:
        from .. import progress

        with progress.showing(args.progress, "perplexity"):
            report = perplexity_report(args.model, {"train_file": args.train_file, "train_dataset": args.train_dataset},
                                       args.attributes, limit=args.limit, batch_size=args.batch_size, dtype=args.dtype,
                                       device=args.device, data_dir=args.data_dir)
        if out is not None:
            from ..files import write_atomic

            out.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(out, json.dumps(report, indent=2))
    from .perplexity import describe

    rows = [{"measure": name, "perplexity": describe(report[key]), "texts": report[key]["texts"], "tokens": report[key]["tokens"]}
            for name, key in (("PPL (held-out texts)", "ppl"), ("PPL_s (those with a sensitive token)", "ppl_s"))]
    print(f"model: {report['model_name']}; corpus: {report['corpus']}\n")
    print(markdown_table(rows, list(rows[0])))
    if out is not None:
        print(f"\nin {out}")
    return 0
