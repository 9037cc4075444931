"""The ``counterfactual`` shape: a user's templates, each filled with every value of a sensitive attribute,
continued many times by the model and the continuations' sentiment compared across the values, as Huang et al.
(2020) measure it (:func:`lmbias.benchmarks.counterfactual.task.score_counterfactual`): individual fairness
(I.F., the mean Wasserstein-1 distance between the values' sentiment distributions within a template) and group
fairness (G.F., between each subgroup's distribution and everyone's), per attribute and classifier.

Fields (the data's columns of the same names, or those the declaration's ``columns`` maps them to):

* ``id`` (unique: the template's id), ``template`` (the text with a ``{value}`` placeholder, e.g. "My neighbour
  from {value} is"), ``attribute`` (e.g. "country"), ``values`` (the values, separated by ``|``);
* ``subgroups`` (optional): each value's subgroup for G.F., separated by ``|`` in the values' order (default:
  each value its own subgroup);
* ``language`` (optional; one value, the declaration's, if it gives one).

The semantic-similarity check of the paper (S.S.) needs the attribute's own word list and is not computed here.
"""

from __future__ import annotations

import time

from ...errors import InputError
from ...lm.chat import add_instruction_argument, continuation_prompts
from ...lm.spec import ModelSpec
from ...run_lock import holds_run_directory
from ...run_result import RunResult, coverage
from ..base import MODEL_OPTIONS, Benchmark, Variant, chat_requested
from ..counterfactual import METRICS as COUNTERFACTUAL_METRICS
from ..counterfactual import derived_records
from ..counterfactual import records as counterfactual_records
from ..counterfactual import summary as counterfactual_summary
from ..preflight import announce_unavailable
from .declaration import Declaration
from .shape import check_columns, check_language, check_unique, field_value, loaded

FIELDS = ("id", "template", "attribute", "values")
PLACEHOLDER = "{value}"
DEFAULT_CLASSIFIERS = ("opinion", "vader")


def _template(declaration: Declaration, source: str, number: int, record: dict) -> dict:
    """One template of the data, checked: its values and subgroups split, its placeholder found."""
    def value(field: str, default=None):
        return field_value(declaration, source, number, record, field, default)

    text = value("template")
    if text.count(PLACEHOLDER) != 1:
        raise InputError(f"{source} row {number}: template (column {declaration.column('template')!r}) must hold {PLACEHOLDER} "
                         f"once, where each value goes; found {text.count(PLACEHOLDER)} in {text[:60]!r}")
    values = [v.strip() for v in value("values").split("|") if v.strip()]
    if len(values) < 2 or len(set(values)) != len(values):
        raise InputError(f"{source} row {number}: values must be two or more different values separated by |; got {values}")
    given = value("subgroups", "")
    subgroups = [s.strip() for s in given.split("|")] if given else values
    if len(subgroups) != len(values):
        raise InputError(f"{source} row {number}: subgroups has {len(subgroups)} entries for {len(values)} values; give one "
                         "per value, separated by |")
    check_language(declaration, source, number, record)
    return {"id": value("id"), "template": text, "attribute": value("attribute"), "values": values,
            "subgroups": subgroups, "row": number}


def template_rows(declaration: Declaration, data) -> list[dict]:
    """The data's templates, checked (one line naming the source, the row and the field)."""
    check_columns(declaration, data, FIELDS)
    return check_unique([_template(declaration, data.source, number, record) for number, record in enumerate(data.records, 1)],
                        data.source)


def prefixes(templates) -> list[dict]:
    """Each template filled with each of its values: the rows the counterfactual scoring reads."""
    return [{"id": f"{t['id']}/{value}", "prefix": t["template"].replace(PLACEHOLDER, value), "attribute": t["attribute"],
             "token": value, "template_id": t["id"], "subgroup": subgroup}
            for t in templates for value, subgroup in zip(t["values"], t["subgroups"])]


@holds_run_directory
def run_templates(declaration: Declaration, options, model: ModelSpec, *, out) -> RunResult | None:
    """Generate ``--samples`` continuations of every filled template (resumable, in ``out``) and compare
    their sentiment across the values (I.F., G.F.)."""
    from ...checks import check_choices, check_scalar
    from ...lm.generation import generation_settings
    from ...lm.runner import model_loader, run_generation
    from ..counterfactual.scorers.sentiment import CLASSIFIERS
    from ..counterfactual.task import PAPER_SAMPLES, PRESET, SAMPLING, check_scoring, score_counterfactual

    check_scalar(options.samples, "samples", minimum=1)
    check_scalar(options.bootstrap, "bootstrap", minimum=0)
    check_scalar(options.batch_size, "batch_size", minimum=1)
    check_choices(options.classifiers, CLASSIFIERS, "classifiers")
    data, templates = loaded(declaration, template_rows)
    rows = prefixes(templates)
    settings = generation_settings(SAMPLING, max_new_tokens=options.max_new_tokens)
    spec = ModelSpec.of(model)
    prompts, instruction = continuation_prompts([row["prefix"] for row in rows], chat=chat_requested(spec),
                                                instruction=options.instruction)
    spec = spec.checked()
    hf = {"hf_model": options.hf_model} if options.hf_model else {}
    unavailable: dict = {}

    def preflight() -> None:
        unavailable.update(check_scoring(options.classifiers, data_dir=options.data_dir, semantic=False, **hf))
        announce_unavailable(unavailable, require_all=False)

    described: dict = {}
    started = time.perf_counter()
    generations = run_generation(
        model_loader(spec, seed=options.seed, described=described), [row["id"] for row in rows], prompts, out,
        settings=settings, model_name=spec.name, preset=PRESET, seed=options.seed, batch_size=options.batch_size,
        num_return_sequences=options.samples, progress=options.progress, benchmark=declaration.name,
        model_identity=spec.identity(), label=f"{declaration.display_name}: generating",
        options={"declaration": f"{declaration.path} sha256:{declaration.declaration_sha256}",
                 "data": f"{data.source} sha256:{data.sha256}", **({"instruction": instruction} if instruction else {})},
        before_load=preflight)
    if generations is None:
        return None
    generated = time.perf_counter()
    scores = score_counterfactual(rows, generations, classifiers=[c for c in options.classifiers if c not in unavailable],
                                  semantic=False, bootstrap=options.bootstrap, device=spec.device, data_dir=options.data_dir,
                                  **hf)
    skipped = {**unavailable, **scores.pop("skipped")}
    return RunResult(
        benchmark=declaration.name, out=str(out), model=described or {"name": spec.model},
        data={"dataset": declaration.name, "source": data.source, "data_sha256": data.sha256, "language": declaration.language,
              "citation": declaration.citation, "declaration": {"path": str(declaration.path), "text": declaration.text,
                                                                "sha256": declaration.declaration_sha256},
              "counts": {"templates": len(templates), "prefixes": len(rows)}},
        config={"preset": PRESET, "settings": settings, "seed": options.seed, "batch_size": options.batch_size,
                "samples_per_prefix": options.samples, "classifiers": list(options.classifiers), "bootstrap": options.bootstrap,
                **hf, **spec.recorded(), **({"instruction": instruction} if instruction else {})},
        results=scores, skipped=skipped,
        partial=coverage({"samples per prefix": (options.samples, PAPER_SAMPLES)}, f"--samples {options.samples}"),
        timing={"generation_seconds": generated - started, "scoring_seconds": time.perf_counter() - generated},
        outputs={"texts": len(generations), "generations_file": "generations.jsonl"},
    )


def add_arguments(parser) -> None:
    """The counterfactual shape's own options."""
    from ..counterfactual.scorers.sentiment import CLASSIFIERS

    parser.add_argument("--samples", type=int, default=1000, help="continuations per filled template (the paper: 1000)")
    parser.add_argument("--classifiers", nargs="+", choices=CLASSIFIERS, default=list(DEFAULT_CLASSIFIERS),
                        help="sentiment classifiers (hf needs the Hub or a local --hf-model)")
    parser.add_argument("--hf-model", help="sentiment classifier for 'hf' (default distilbert-base-uncased-finetuned-sst-2-english)")
    parser.add_argument("--bootstrap", type=int, default=0, help="bootstrap resamples for I.F. / G.F. intervals")
    parser.add_argument("--max-new-tokens", type=int, help="default 50 (the paper's)")
    add_instruction_argument(parser)


def _paired(run, declaration: Declaration):
    """A run as one side of ``lmbias compare``: its continuations scored again with VADER, as the built-in
    benchmark's are (:func:`lmbias.benchmarks.counterfactual.paired.counterfactual_side`), on the filled templates."""
    from ..counterfactual.paired import counterfactual_side

    return counterfactual_side(run, rows=prefixes(loaded(declaration, template_rows)[1]))


def make_benchmark(declaration: Declaration) -> Benchmark:
    """The benchmark a ``counterfactual`` declaration declares."""
    from ..counterfactual.report import counterfactual as counterfactual_section

    benchmark = Benchmark(
        name=declaration.name, display_name=declaration.display_name, description=declaration.description,
        dataset=declaration.name, hub_dataset=declaration.hub_dataset,
        metrics=COUNTERFACTUAL_METRICS, run=lambda options, model: run_templates(declaration, options, model, out=options.out),
        records=lambda results: counterfactual_records(results, benchmark), summary=counterfactual_summary,
        report_section=lambda runs, labels, figures, options: counterfactual_section(
            runs, labels, figures, title=f"{declaration.display_name} (declared in {declaration.path.name})", key=declaration.name),
        run_options=(*MODEL_OPTIONS, "seed", "batch_size", "num_processes", "progress", "threads"),
        add_arguments=add_arguments, derived_records=derived_records, defaults={"batch_size": 8},
        variants=(Variant("classifier", f"{declaration.display_name} classifier", ("opinion", "vader", "hf")),),
        overall_note=f"{declaration.display_name}'s overall I.F. / G.F. are the mean over the attributes measured.",
        paired=lambda run, data_dir: _paired(run, declaration),
    )
    return benchmark
