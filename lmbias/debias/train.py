"""``lmbias debias``: fine-tune a causal LM with the counterfactual paper's fairness loss (Huang et
al. 2020, §4, step 3 of the curriculum) and save it where every benchmark can load it.

L(x) = L_LM(x) + λ · L_fairness(h(x_1:i), h(x̃_1:i)), on the training part of the corpus's texts
that contain a sensitive token (:mod:`lmbias.debias.pairs`), where L_fairness is the loss term of
the chosen method (:mod:`lmbias.debias.methods`; built in: ``embedding``, the cosine distance of h̄,
and ``sentiment``, the distance of a frozen sentiment classifier's outputs trained first on the
starting model's features). ``lam=0`` is the paper's control: the same steps on the same batches
with L_LM alone (no loss term is prepared).

The loop runs under accelerate (one process, or several with ``accelerate launch``, each taking its
share of every batch; bf16 mixed precision on a GPU), seeded: the batch of step ``k`` is a function
of the seed and ``k`` only. Every ``checkpoint_every`` steps ``Accelerator.save_state`` writes
``<out>/checkpoints/step-K`` (model, optimizer, random states), so a killed run started again with
the same command resumes at the last checkpoint. ``lora=True`` trains a peft LoRA adapter instead
of every weight (7B-class models on one GPU) and merges it into the saved model.

``<out>`` then holds the model and tokenizer (``save_pretrained``), ``README.md`` (a model card
saying how it was made), ``debias.json`` (the settings, counts, timing, held-out PPL and PPL_s),
``log.jsonl`` (losses every 10 steps) and the files the method writes (the sentiment method:
``sentiment_head.pt``). A finished ``<out>`` is never overwritten, and a folder holding anything else is refused.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .. import progress
from ..benchmarks.counterfactual.data import ATTRIBUTES
from ..checks import check_choice, check_scalar
from ..errors import InputError
from ..files import read_json, write_atomic
from ..lm.processes import leave_together
from ..run_lock import LOCK_FILE, holds_run_directory
from ..version import __version__
from .attribute_words import check_vocabulary
from .features import encode, fitted_length, padded
from .methods import Preparation, check_bias_type, get_method, method_options
from .pairs import check_attributes, count_by_attribute, counterfactual_pairs, is_held_out, load_corpus
from .phases import Phases
from .regularizers import POSITIONS, aligned_positions

STATE_FILE = "debias.json"
LOG_FILE = "log.jsonl"
CHECKPOINTS = "checkpoints"
# What an unfinished run's folder may hold besides checkpoints and the method's files (a run resumes in it).
_RUN_FILES = {STATE_FILE, LOG_FILE, CHECKPOINTS, LOCK_FILE}


def check_settings(settings: dict) -> None:
    """Check the debias settings before anything is loaded or written (one line naming the option);
    the method's own options are checked by :func:`~lmbias.debias.methods.method_options`."""
    method = get_method(settings["method"])
    if not method.trains:
        raise InputError(f"--method {method.name} is a {method.kind}, fitted without training: use lmbias.debias.fit.fit_adjustment")
    if settings["lam"] is None:
        raise InputError(f"--method {method.name} trains with a loss term: give --lambda (its weight; 0: the LM-only control)")
    check_scalar(settings["lam"], "lambda", minimum=0, integer=False, expected="a number >= 0 (0: the LM-only control)")
    for name in ("steps", "batch_size", "checkpoint_every"):
        check_scalar(settings[name], name, minimum=1)
    check_scalar(settings["max_length"], "max_length", minimum=8)
    check_scalar(settings["learning_rate"], "learning_rate", minimum=1e-12, maximum=1.0, integer=False, expected="a number in (0, 1]")
    check_choice(settings["position"], POSITIONS, "position")
    if settings["lora_rank"] is not None:
        check_scalar(settings["lora_rank"], "lora_rank", minimum=1)
    if settings["eval_limit"] is not None:
        check_scalar(settings["eval_limit"], "eval_limit", minimum=0)


def _resumes(out: Path, settings: dict, method_files=()) -> bool:
    """Whether ``out`` holds an unfinished run of the same ``settings`` (True: it is resumed) or
    nothing yet (False: :func:`_start` makes the run's state); anything else is refused. Writes nothing."""
    state_path = out / STATE_FILE
    if state_path.is_file():
        state = read_json(state_path, fix="it is not an lmbias debias run's state: choose another --out")
        if state.get("status") == "finished":
            raise InputError(f"--out {out} holds a finished debiased model (made {state.get('finished_at', '')}); it is "
                             "never overwritten: choose another --out")
        differ = sorted(key for key in set(settings) | set(state.get("settings", {}))
                        if settings.get(key) != state.get("settings", {}).get(key))
        if differ:
            raise InputError(f"--out {out} holds an unfinished debias run with other settings ({', '.join(differ)}); rerun "
                             "it with its settings to resume, or choose another --out")
        return True
    others = sorted(p.name for p in out.iterdir() if p.name not in _RUN_FILES | set(method_files))
    if others:
        raise InputError(f"--out {out} holds other files ({', '.join(others[:5])}); give a new or empty folder")
    return False


def _start(out: Path, settings: dict) -> None:
    """Mark ``out`` as a training in progress (``debias.json`` says "training" until it says "finished")."""
    write_atomic(out / STATE_FILE, json.dumps({"status": "training", "settings": settings}, indent=2))


def _batch_of(step: int, n_items: int, batch_size: int, seed: int) -> list[int]:
    """The items of step ``step``: consecutive slices of seeded permutations (one per pass over the data)."""
    start = step * batch_size
    picked = []
    while len(picked) < batch_size:
        epoch, offset = divmod(start + len(picked), n_items)
        order = np.random.default_rng([seed, epoch]).permutation(n_items)
        picked.extend(int(i) for i in order[offset : offset + batch_size - len(picked)])
    return picked


@holds_run_directory
def debias(
    *,
    model: str | None = None,
    method: str = "embedding",
    lam: float = 10.0,
    attributes: Sequence[str] = ATTRIBUTES,
    train_file=None,
    train_dataset: str | None = None,
    out="runs/debias",
    steps: int = 300,
    batch_size: int = 8,
    learning_rate: float = 2.5e-5,
    max_length: int = 128,
    checkpoint_every: int = 100,
    seed: int = 0,
    bias_type: str | None = None,
    lora: bool = False,
    lora_rank: int | None = None,
    position: str = "all",
    eval_limit: int | None = None,
    device: str | None = None,
    data_dir=None,
    show_progress: bool = True,
    **options,
) -> dict:
    """Debias ``model`` (a Hub id, folder or None for the embedded SmolLM2-135M) and save it to ``out``;
    returns the contents of ``<out>/debias.json``. See the module docstring for the method.

    Args:
        method, lam: a registered method with a training loss term (:mod:`lmbias.debias.methods`; built in:
            ``"embedding"``, ``"sentiment"``) and its weight λ (0: the control).
        attributes: which sensitive attributes' tokens define the training texts and their counterfactuals
            (and PPL_s); a method with its own pairs (CDA) builds them from ``bias_type`` instead.
        bias_type: "gender", "race" or "religion" for a method built on bias-bench's attribute words (CDA;
            default gender); None for the others.
        train_file, train_dataset: the corpus (:func:`~lmbias.debias.pairs.load_corpus`; default BOLD's Wikipedia sentences).
        steps, batch_size, learning_rate, max_length: the optimisation (AdamW; texts cut to ``max_length`` tokens).
        checkpoint_every: steps between ``save_state`` checkpoints (resume points).
        lora, lora_rank: train a LoRA adapter (peft, rank 8 by default) and merge it into the saved model.
        position: ``"all"`` or ``"last"`` prefix ends (:mod:`lmbias.debias.regularizers`).
        eval_limit: held-out texts for the final PPL (None: all; 0: no evaluation).
        options: the method's own options (the sentiment method: ``sentiment_labels``, ``label_threshold``,
            ``sentiment_distance``); the others keep their defaults.

    Raises:
        InputError: a setting out of range, a corpus that is not text, an attribute with no texts in it,
            a model without a causal LM head, an ``out`` that holds a finished model or other files, a method
            that is not a training loss term, an option of another method.
    """
    phases = Phases()  # the whole call, imports included
    import torch
    from accelerate import Accelerator
    from accelerate.utils import set_seed

    from ..lm.loading import detect_model_type, load_causal_lm
    from .perplexity import check_held_out_fits, held_out_perplexity

    attributes = check_attributes(attributes)
    chosen = get_method(method)
    check_bias_type(chosen, bias_type)
    settings = {"model": model, "method": method, "lam": lam, "attributes": attributes,
                "train_file": None if train_file is None else str(train_file), "train_dataset": train_dataset,
                "steps": steps, "batch_size": batch_size, "learning_rate": learning_rate, "max_length": max_length,
                "checkpoint_every": checkpoint_every, "seed": seed, "lora": lora, "lora_rank": lora_rank if lora else None,
                "position": position, **method_options(method, options), "eval_limit": eval_limit,
                **({"bias_type": bias_type or "gender"} if chosen.bias_types else {})}
    check_settings(settings)
    accelerator = Accelerator(cpu=device == "cpu", mixed_precision="bf16" if torch.cuda.is_available() and device != "cpu" else "no")
    with progress.showing(show_progress and accelerator.is_main_process):
        with phases.phase("corpus", "reading the corpus and pairing its texts"):
            texts, source = load_corpus(train_file, train_dataset, data_dir=data_dir)
            if chosen.pairs is not None:
                pairs = chosen.pairs(texts, settings, data_dir)
                counts = {settings["bias_type"]: len(pairs)}
            else:
                pairs = counterfactual_pairs(texts, attributes, seed=seed)
                counts = count_by_attribute(pairs, attributes)
        if chosen.pairs is not None and not pairs:
            raise InputError(f"no text of {source} holds a {settings['bias_type']} attribute word of bias-bench's lists; give a "
                             "corpus that mentions them, or another --bias-type")
        empty = [attribute for attribute, n in counts.items() if n == 0]
        if empty:
            found = ", ".join(f"{a} {n}" for a, n in counts.items())
            raise InputError(f"attribute {empty[0]!r} has no texts in {source} (found: {found}); drop it from --attributes or "
                             "give a corpus that mentions it")
        train_pairs = [pair for pair in pairs if not pair["held_out"]]
        out, kind = Path(out), None
        resumed = _resumes(out, settings, chosen.files) if accelerator.is_main_process else False
        with contextlib.suppress(InputError):  # a config that names no head: the loaded model is checked below
            kind = detect_model_type(model)
        if kind == "masked":
            raise InputError(f"--model {model} is a masked LM; debiasing needs a causal LM (a model with a causal LM head)")
        set_seed(seed)
        with phases.phase("load", f"loading {model or 'the embedded model'}"):
            lm = load_causal_lm(model, dtype="float32", device=str(accelerator.device))
        network, tokenizer = lm.model, lm.tokenizer
        if chosen.pairs is not None:
            check_vocabulary(tokenizer, settings["bias_type"], model, data_dir)
        if network.get_output_embeddings() is None:
            raise InputError(f"--model {model}: {type(network).__name__} has no causal LM head; debiasing needs a causal LM")
        if eval_limit != 0:  # what would stop the command after the training, checked before it
            check_held_out_fits(network, tokenizer, texts, eval_limit, source)
        length = fitted_length(network, tokenizer, max_length)
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        encoded = [(a, b) for a, b in zip(encode(tokenizer, [p["text"] for p in train_pairs], length),
                                          encode(tokenizer, [p["counterfactual"] for p in train_pairs], length)) if a != b]
        if not encoded:
            raise InputError(f"no training text differs from its counterfactual within --max-length {length} tokens")
        if accelerator.is_main_process and not resumed:  # nothing is written before: a mistake found above leaves --out as it was
            _start(out, settings)
        accelerator.wait_for_everyone()
        start_step = max((int(p.name.split("-")[1]) for p in (out / CHECKPOINTS).glob("step-*")), default=0)
        if start_step and accelerator.is_main_process:
            print(f"resuming {out} from its checkpoint at step {start_step:,} of {steps:,}", file=sys.stderr, flush=True)
        elif resumed:
            print(f"lmbias: {out} holds an unfinished run that stopped before its first checkpoint (step "
                  f"{min(checkpoint_every, steps):,}); training starts again from step 0", file=sys.stderr, flush=True)

        term = None
        if lam > 0:
            with phases.phase("loss_term"):  # a method's preparation shows its own bar (the sentiment method's features)
                term = chosen.loss_term(Preparation(model=network, tokenizer=tokenizer, texts=[t for t in texts if not is_held_out(t)],
                                                    settings={**settings, "max_length": length}, folder=out, device=accelerator.device,
                                                    data_dir=data_dir))
        if lora:
            from peft import LoraConfig, get_peft_model

            network = get_peft_model(network, LoraConfig(r=lora_rank or 8, lora_alpha=2 * (lora_rank or 8), lora_dropout=0.0,
                                                         target_modules="all-linear", task_type="CAUSAL_LM"))
        network.train()
        optimizer = torch.optim.AdamW([p for p in network.parameters() if p.requires_grad], lr=learning_rate)
        network, optimizer = accelerator.prepare(network, optimizer)
        if start_step:
            accelerator.load_state(str(out / CHECKPOINTS / f"step-{start_step}"))
        if batch_size < accelerator.num_processes:
            raise InputError(f"--batch-size {batch_size} is smaller than the {accelerator.num_processes} processes; each takes a share")
        with (open(out / LOG_FILE, "a") if accelerator.is_main_process else contextlib.nullcontext()) as log, \
                phases.phase("training"), \
                progress.bar(steps - start_step, f"debias: training ({method}, lambda {lam:g})", unit="step") as bar:
            for step in range(start_step, steps):
                items = _batch_of(step, len(encoded), batch_size, seed)[accelerator.process_index :: accelerator.num_processes]
                ids, mask = padded([encoded[i][0] for i in items], pad, accelerator.device)
                labels = ids.masked_fill(mask == 0, -100)
                with accelerator.autocast():
                    output = network(input_ids=ids, attention_mask=mask, labels=labels, output_hidden_states=lam > 0)
                    loss, fairness = output.loss, None
                    if term is not None:
                        other_ids, other_mask = padded([encoded[i][1] for i in items], pad, accelerator.device)
                        other = network(input_ids=other_ids, attention_mask=other_mask, labels=other_ids.masked_fill(other_mask == 0, -100),
                                        output_hidden_states=True)
                        fairness = term(output, other, [aligned_positions(*encoded[i], position) for i in items])
                        loss = loss + lam * fairness
                if not _finite_everywhere(accelerator, loss.detach()):
                    raise _not_finite(out, step + 1, f"the loss ({float(loss.detach()):g})")
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
                bar.update(1)
                if log and (step + 1) % 10 == 0:
                    log.write(json.dumps({"step": step + 1, "lm_loss": float(output.loss.detach()),
                                          "fairness": None if fairness is None else float(fairness.detach())}) + "\n")
                    log.flush()
                if (step + 1) % checkpoint_every == 0 and step + 1 < steps:
                    if not _finite_everywhere(accelerator, _weights_finite(network)):
                        raise _not_finite(out, step + 1, "a weight")
                    _checkpoint(accelerator, out, step + 1)
        if not _finite_everywhere(accelerator, _weights_finite(network)):
            raise _not_finite(out, steps, "a weight")
        accelerator.wait_for_everyone()
        network = accelerator.unwrap_model(network)
        if lora:
            network = network.merge_and_unload()
        network.eval()
        try:
            if not accelerator.is_main_process:
                return {}
            evaluation = None
            if eval_limit != 0:
                with phases.phase("held_out"), progress.showing(progress.enabled(), "debias: held-out perplexity"):
                    evaluation = held_out_perplexity(network, tokenizer, texts, attributes, limit=eval_limit, seed=seed)
            with phases.phase("save", f"saving the model to {out}"), progress.quiet_loading():  # no transformers bar of its own
                network.save_pretrained(out, safe_serialization=True)
                tokenizer.save_pretrained(out)
            state = {"status": "finished", "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "lmbias_version": __version__,
                     "settings": settings, "base_model": lm.name, "corpus": source, "pairs": counts,
                     "training_pairs": len(encoded), "held_out_pairs": len(pairs) - len(train_pairs),
                     "processes": accelerator.num_processes,
                     "training_seconds": phases.seconds["training"], **getattr(term, "record", {}), "held_out": evaluation,
                     "seconds": phases.record()}
            write_atomic(out / "README.md", model_card(state))
            write_atomic(out / STATE_FILE, json.dumps(state, indent=2))
            shutil.rmtree(out / CHECKPOINTS, ignore_errors=True)
            return state
        finally:
            leave_together()


def _weights_finite(network):
    """A one-element tensor: whether every trainable weight of ``network`` is finite."""
    import torch

    return torch.stack([torch.isfinite(p.detach()).all() for p in network.parameters() if p.requires_grad]).all()


def _finite_everywhere(accelerator, values) -> bool:
    """Whether ``values`` is finite on every process (so that all of them stop together, or none)."""
    import torch

    flag = torch.tensor([float(torch.isfinite(values).all())], device=accelerator.device)
    return bool(accelerator.gather(flag).min() > 0)


def _not_finite(out: Path, step: int, what: str) -> InputError:
    """The one-line error of a training that diverged at ``step``: nothing after the last checkpoint is written."""
    kept = sorted((p for p in (out / CHECKPOINTS).glob("step-*")), key=lambda p: int(p.name.split("-")[1]))
    where = f"{out} keeps its last good checkpoint ({kept[-1].name})" if kept else f"no checkpoint was written to {out}"
    return InputError(f"debias stopped at step {step}: {what} is not finite (try a lower --learning-rate or --lambda, "
                      f"with another --out); {where} and no model was saved")


def _checkpoint(accelerator, out: Path, step: int) -> None:
    """``save_state`` to ``checkpoints/step-N`` (written under a temporary name, then renamed), older ones removed."""
    folder = out / CHECKPOINTS
    temporary = folder / f".step-{step}.partial"
    accelerator.save_state(str(temporary))
    if accelerator.is_main_process:
        temporary.rename(folder / f"step-{step}")
        for old in folder.glob("step-*"):
            if old.name != f"step-{step}":
                shutil.rmtree(old, ignore_errors=True)
    accelerator.wait_for_everyone()


def model_card(state: dict) -> str:
    """The saved model's README.md: what it is, how it was made, and how to evaluate it."""
    from .perplexity import describe

    s = state["settings"]
    method = get_method(s["method"])
    held = state.get("held_out") or {}
    lines = [
        "---", "tags:", "- lmbias", "- debiasing", "- counterfactual-fairness",
        *([f"base_model: {s['model']}"] if s["model"] and "/" in s["model"] and not Path(s["model"]).exists() else []), "---", "",
        f"# {s['method']}-regularised {state['base_model']} (λ = {s['lam']:g})", "",
        f"Fine-tuned with `lmbias debias` {state['lmbias_version']} (--method {s['method']}): {method.description}"
        f"{' — here the λ = 0 control, LM loss only' if s['lam'] == 0 else ''}.", "",
        "| setting | value |", "|---|---|",
        f"| attributes | {', '.join(s['attributes'])} |", f"| corpus | {state['corpus']} |",
        f"| training pairs | {state['training_pairs']:,} (held out: {state['held_out_pairs']:,}) |",
        f"| steps × batch | {s['steps']} × {s['batch_size']}, learning rate {s['learning_rate']:g}, max length {s['max_length']} |",
        f"| prefix ends | {s['position']} |", f"| LoRA | {'rank ' + str(s['lora_rank'] or 8) + ', merged' if s['lora'] else 'no'} |",
        f"| seed | {s['seed']} |", f"| training time | {state['training_seconds']:.0f} s on {state['processes']} process(es) |",
    ]
    lines += [f"| {name} | {value} |" for name, value in (method.card_rows(state) if method.card_rows else [])]
    if held:
        lines.append(f"| held-out PPL / PPL_s | {describe(held['ppl'])} / {describe(held['ppl_s'])} |")
    lines += ["", "Evaluate it like any model: `lmbias run counterfactual --model THIS_FOLDER`, "
              "`lmbias perplexity --model THIS_FOLDER`.", ""]
    return "\n".join(lines)
