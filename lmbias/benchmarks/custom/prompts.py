"""The ``prompts`` shape: a user's prompts about groups, continued by the model and the continuations scored by
BOLD's scorers (:func:`lmbias.benchmarks.bold.task.score_bold`: VADER sentiment, toxicity, regard,
psycholinguistic norms, gender polarity), per domain and group, with BOLD's headline gaps (the largest minus
the smallest share across a domain's groups, in percentage points).

Fields (the data's columns of the same names, or those the declaration's ``columns`` maps them to):

* ``id`` (unique), ``prompt`` (the text the model continues), ``group`` (who the prompt is about);
* ``domain`` (optional; default "all"): the groups compared with each other;
* ``reference`` (optional): a human-written text for the same prompt (as BOLD's Wikipedia sentences), scored the
  same way as a baseline;
* ``language`` (optional; one value, the declaration's, if it gives one).

The texts scored are prompt + continuation, as BOLD scores them, not anonymised (a user's prompts name no
person BOLD's way). Generation is resumable (:func:`lmbias.lm.runner.run_generation`) and the run's identity
holds the declaration's and the data's digests.
"""

from __future__ import annotations

import time
from collections import Counter

from ...lm.chat import add_instruction_argument, continuation_prompts, scored_text
from ...lm.spec import ModelSpec
from ...render import html
from ...render.common import number
from ...render.text import markdown_table
from ...run_lock import holds_run_directory
from ...run_result import RunResult, coverage
from ..base import MODEL_OPTIONS, Baseline, Benchmark, chat_requested, model_named
from ..bold import GAPS, derived_records
from ..bold import METRICS as BOLD_METRICS
from ..bold import records as bold_records
from ..preflight import announce_unavailable
from .declaration import Declaration
from .shape import check_columns, check_language, check_unique, field_value, loaded

FIELDS = ("id", "prompt", "group")
DEFAULT_METRICS = ("sentiment", "toxicity", "regard")


def _prompt(declaration: Declaration, source: str, number: int, record: dict) -> dict:
    """One record of the data as a row BOLD's scorers read, checked."""
    def value(field: str, default=None):
        return field_value(declaration, source, number, record, field, default)

    check_language(declaration, source, number, record)
    return {"id": value("id"), "prompt": value("prompt"), "group": value("group"), "domain": value("domain", "all"),
            "name": "", "reference": value("reference", "") or None, "row": number}


def prompt_rows(declaration: Declaration, data) -> list[dict]:
    """The data's rows as prompts, checked (one line naming the source, the row and the field)."""
    check_columns(declaration, data, FIELDS)
    return check_unique([_prompt(declaration, data.source, number, record) for number, record in enumerate(data.records, 1)],
                        data.source)


def select(rows, per_group: int | None, limit: int | None) -> list[dict]:
    """All rows, the first ``per_group`` of each group, or the first ``limit``."""
    if limit is not None:
        return [dict(row) for row in rows[:limit]]
    taken: Counter = Counter()
    chosen = []
    for row in rows:
        taken[row["domain"], row["group"]] += 1
        if per_group is None or taken[row["domain"], row["group"]] <= per_group:
            chosen.append(dict(row))
    return chosen


@holds_run_directory
def run_prompts(declaration: Declaration, options, model: ModelSpec, *, out) -> RunResult | None:
    """Generate a continuation of each prompt (resumable, in ``out``), score prompt + continuation with
    BOLD's scorers, and the references where the data give them."""
    from ...checks import check_choices, check_scalar
    from ...lm.generation import generation_settings
    from ...lm.runner import model_loader, run_generation
    from ..bold.task import METRICS, check_scoring, score_bold

    for name in ("per_group", "limit"):
        if getattr(options, name) is not None:
            check_scalar(getattr(options, name), name, minimum=1)
    check_choices(options.metrics, METRICS, "metrics")
    check_scalar(options.batch_size, "batch_size", minimum=1)
    data, every = loaded(declaration, prompt_rows)
    rows = select(every, options.per_group, options.limit)
    settings = generation_settings(options.preset, max_new_tokens=options.max_new_tokens)
    spec = ModelSpec.of(model)
    prompts, instruction = continuation_prompts([row["prompt"] for row in rows], chat=chat_requested(spec),
                                                instruction=options.instruction)
    spec = spec.checked()
    scoring = {key: getattr(options, key) for key in ("toxicity_model", "regard_model") if getattr(options, key)}
    unavailable: dict = {}

    def preflight() -> None:
        unavailable.update(check_scoring(options.metrics, data_dir=options.data_dir, **scoring))
        announce_unavailable(unavailable, require_all=False)

    described: dict = {}
    started = time.perf_counter()
    generations = run_generation(
        model_loader(spec, seed=options.seed, described=described), [row["id"] for row in rows], prompts, out,
        settings=settings, model_name=spec.name, preset=options.preset, seed=options.seed, batch_size=options.batch_size,
        progress=options.progress, benchmark=declaration.name, model_identity=spec.identity(),
        label=f"{declaration.display_name}: generating",
        options={"per_group": options.per_group, "limit": options.limit,
                 "declaration": f"{declaration.path} sha256:{declaration.declaration_sha256}",
                 "data": f"{data.source} sha256:{data.sha256}", **({"instruction": instruction} if instruction else {})},
        before_load=preflight)
    if generations is None:
        return None
    generated = time.perf_counter()
    row_of = {row["id"]: row for row in rows}
    texts = [scored_text(row_of[g["id"]]["prompt"], g["continuation"], spec.chat) for g in generations]
    metrics = [metric for metric in options.metrics if metric not in unavailable]
    common = {"metrics": metrics, "anonymize": False, "regard_all_groups": True, "data_dir": options.data_dir,
              "batch_size": options.score_batch_size, **scoring}
    classifiers: dict = {}
    results = {"model": score_bold([row_of[g["id"]] for g in generations], texts, loaded=classifiers, **common)}
    referenced = [row for row in rows if row["reference"]]
    if referenced:
        results["reference"] = score_bold(referenced, [row["reference"] for row in referenced], loaded=classifiers, **common)
    for scores in results.values():
        scores["skipped"] = {**unavailable, **scores["skipped"]}
    narrowed = " ".join(f"--{key.replace('_', '-')} {value}" for key, value in (("per_group", options.per_group),
                                                                               ("limit", options.limit)) if value)
    return RunResult(
        benchmark=declaration.name, out=str(out), model=described or {"name": spec.model},
        data={"dataset": declaration.name, "source": data.source, "data_sha256": data.sha256, "language": declaration.language,
              "citation": declaration.citation, "declaration": {"path": str(declaration.path), "text": declaration.text,
                                                                "sha256": declaration.declaration_sha256},
              "counts": {"prompts": len(rows), "references": len(referenced)}},
        config={"preset": options.preset, "settings": settings, "seed": options.seed, "batch_size": options.batch_size,
                "per_group": options.per_group, "limit": options.limit, "metrics": list(options.metrics), **scoring,
                **spec.recorded(), **({"instruction": instruction} if instruction else {})},
        results=results, skipped={f"{source} {metric}": reason for source, scores in results.items()
                                  for metric, reason in scores["skipped"].items()},
        partial=coverage({"prompts": (len(rows), len(every))}, narrowed), outputs={"texts": len(generations),
                                                                                  "generations_file": "generations.jsonl"},
        timing={"generation_seconds": generated - started, "scoring_seconds": time.perf_counter() - generated},
    )


def add_arguments(parser) -> None:
    """The prompts shape's own options."""
    from ...lm.generation import PRESETS
    from ..bold.task import METRICS

    size = parser.add_mutually_exclusive_group()
    size.add_argument("--per-group", type=int, metavar="K", help="K counts prompts per group: the first K of each group")
    size.add_argument("--limit", type=int, metavar="N", help="N counts prompts: the first N")
    parser.add_argument("--preset", choices=list(PRESETS), default="bold-gpt2", help="generation settings (BOLD's by default)")
    parser.add_argument("--max-new-tokens", type=int, help="new tokens per continuation (default: the preset's)")
    parser.add_argument("--metrics", nargs="+", choices=METRICS, default=list(DEFAULT_METRICS), help="BOLD's scorers to use")
    parser.add_argument("--toxicity-model", help="toxicity classifier (Hub id or folder; default unitary/toxic-bert)")
    parser.add_argument("--regard-model", help="regard classifier (Hub id or folder; default sasha/regardv3)")
    parser.add_argument("--score-batch-size", type=int, default=32, help="texts per classifier batch")
    add_instruction_argument(parser)


def summary(results: dict, out) -> str:
    """Per domain and group, each scored label's share of the model's texts (and the references')."""
    lines = [f"model: {model_named(results)}; {results['data']['counts']['prompts']:,} prompts; results in "
             f"{out}/results.json", ""]
    for source, scores in results["results"].items():
        rows = []
        for _, key, label in GAPS:
            for domain, block in scores["metrics"].get(key, {}).get("domains", {}).items():
                for group, shares in block["per_group"].items():
                    if label in shares:
                        rows.append({"source": source, "measure": f"{key}: {label}", "domain": domain, "group": group,
                                     "share": f"{shares[label]:.3f}", "texts": shares.get("n")})
        if rows:
            lines += [markdown_table(rows, list(rows[0])), ""]
    lines.append("The gaps (largest minus smallest share across a domain's groups, pp) are the headline records; "
                 "skipped scorers are named in results.json.")
    return "\n".join(lines)


def _report(runs, labels, figures, declaration: Declaration) -> list:
    """A table per run: each scored label's share per domain and group, and the gap."""
    rows = []
    for label, run in zip(labels, runs):
        for source, scores in run.results["results"].items():
            for _, key, name in GAPS:
                for domain, block in scores["metrics"].get(key, {}).get("domains", {}).items():
                    shares = {group: s[name] for group, s in block["per_group"].items() if name in s}
                    if shares:
                        rows.append([label, source, f"{key}: {name}", domain,
                                     ", ".join(f"{group} {number(100 * v)}" for group, v in shares.items()),
                                     number(100 * (max(shares.values()) - min(shares.values())))])
    return [html.tag("h2", f"{declaration.display_name} (declared in {declaration.path.name})"),
            html.note("Shares of the texts per group (%), scored by BOLD's scorers; the gap is the largest minus the "
                      "smallest share across a domain's groups."),
            html.table(["model", "source", "measure", "domain", "share per group (%)", "gap (pp)"], rows,
                       f"{declaration.display_name}: shares per group")]


def _paired(run, declaration: Declaration):
    """A run as one side of ``lmbias compare``: its texts scored again for sentiment, as BOLD's runs are
    (:func:`lmbias.benchmarks.bold.paired.bold_side`), on the declaration's prompts."""
    from ..bold.paired import bold_side

    return bold_side(run, rows=list(loaded(declaration, prompt_rows)[1]))


def make_benchmark(declaration: Declaration) -> Benchmark:
    """The benchmark a ``prompts`` declaration declares."""
    benchmark = Benchmark(
        name=declaration.name, display_name=declaration.display_name, description=declaration.description,
        dataset=declaration.name, hub_dataset=declaration.hub_dataset,
        metrics=BOLD_METRICS[:3], run=lambda options, model: run_prompts(declaration, options, model, out=options.out),
        records=lambda results: bold_records(results, benchmark), summary=summary,
        report_section=lambda runs, labels, figures, options: _report(runs, labels, figures, declaration),
        run_options=(*MODEL_OPTIONS, "seed", "batch_size", "num_processes", "progress", "threads"),
        add_arguments=add_arguments, derived_records=derived_records,
        baseline=Baseline("reference", "Reference texts", "the data's reference texts, scored with the same scorers",
                          size=lambda results: (results.get("data", {}).get("counts") or {}).get("references") or 0),
        overall_note=f"{declaration.display_name}'s gaps are the mean of the per-domain gaps over the domains measured.",
        paired=lambda run, data_dir: _paired(run, declaration),
    )
    return benchmark
