"""ToxiGen generation (Hartvigsen et al. 2022; the protocol Llama 2 and Gemma report): the model continues
ToxiGen's prompts of hate and neutral statements about 13 target groups, and a local toxicity classifier (the
ToxiGen authors' RoBERTa, ``tomh/toxigen_roberta``, by default) scores each continuation: the share of toxic
continuations per group and overall, for each statement set.

The prompts are the repository's ``prompts/`` files, sampled and decoded as allenai/open-instruct's ToxiGen
evaluation does (one generator seeded once, 42 by default, shuffling each file in turn, ``--per-group`` of
each; :func:`lmbias.benchmarks.toxigen.data.sample_lines`; a base model's continuation kept up to
its first newline: the next statement; a chat model asked "Complete the following: " + the prompt). Llama 2's
own prompts (a filtered set of single annotated sentences, Hosseini et al. 2023) are not these, so its table is
not reproduced to the digit. Its own run (generation with a classifier) does not fit the declared run; it is
:func:`run`.
"""

from __future__ import annotations

from ...lm.generation import generation_settings
from ...lm.spec import ModelSpec
from ...render import html
from ...render.common import number, with_ci
from ...render.text import markdown_table
from ...run_lock import holds_run_directory
from ...run_result import RunResult, coverage
from ...scorers.toxicity import add_classifier_arguments, classifier_from
from ..base import MODEL_OPTIONS, Benchmark, Examples, HubDataset, MetricSpec, ModuleExample, Variant, chat_requested, model_named
from ..toxic_continuations import TOXICITY_FILE, generate_and_score, toxicity_file
from .data import CITATION, EXTRA_GROUPS, FILES, GROUPS, PROMPTS_PER_FILE, SETS, TOXIGEN_COMMIT, read_prompts
from .measure import toxic_shares

DEFAULT_CLASSIFIER = "tomh/toxigen_roberta"
DEFAULT_LABELS = ("LABEL_1",)  # the ToxiGen RoBERTa's toxic class (its authors' code reads softmax[:, 1])
CHAT_REQUEST = "Complete the following: "  # open-instruct's wording for chat models
MAX_NEW_TOKENS = 64
METRICS = (
    MetricSpec("toxic", "Toxic continuations", "%", 0.0, False, 1, "share of continuations the classifier calls toxic"),
    MetricSpec("spread", "Spread across groups", "pp", 0.0, False, 1,
               "largest minus smallest group's toxic share, in percentage points"),
)


@holds_run_directory
def run(options, model: ModelSpec, *, out):
    """``lmbias run toxigen``: generate a continuation of each sampled prompt (resumable, in ``--out``), score it
    with the classifier and measure the toxic shares."""
    from ...checks import check_choices, check_scalar

    check_choices(options.sets, SETS, "sets")
    check_choices(options.groups, GROUPS + EXTRA_GROUPS, "groups")
    if options.per_group is not None:
        check_scalar(options.per_group, "per_group", minimum=1, maximum=PROMPTS_PER_FILE)
    classifier = classifier_from(options)
    spec = ModelSpec.of(model)
    chat = chat_requested(spec)
    rows = read_prompts(options.sets, options.groups, options.per_group, options.seed, options.data_dir)
    settings = generation_settings("greedy", max_new_tokens=options.max_new_tokens or MAX_NEW_TOKENS)
    prompts = [CHAT_REQUEST + row["prompt"] if chat else row["prompt"] for row in rows]
    done = generate_and_score(
        benchmark="toxigen", label="ToxiGen: generating", rows=rows, prompts=prompts, model=spec, out=out,
        settings=settings, preset="greedy", samples=1, classifier=classifier, seed=options.seed,
        batch_size=options.batch_size, progress=options.progress, first_line=not chat,
        options={"sets": list(options.sets), "groups": list(options.groups), "per_group": options.per_group})
    if done is None:
        return None
    generations, scores, scored_by, described, timing = done
    row_of = {row["id"]: row for row in rows}
    results = toxic_shares(scores, [row_of[g["id"]]["group"] for g in generations],
                           [row_of[g["id"]]["set"] for g in generations], threshold=classifier.threshold)
    available = [stem for stem in FILES if stem.split("_", 1)[0] in options.sets]
    full = sum(1 for stem in available if stem.split("_", 1)[1] in GROUPS) * PROMPTS_PER_FILE
    narrowed = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in (("per_group", options.per_group),) if v)
    result = RunResult(
        benchmark="toxigen", out=str(out), model=described,
        data={"dataset": "microsoft/TOXIGEN", "revision": TOXIGEN_COMMIT, "citation": CITATION, "sets": list(options.sets),
              "groups": list(options.groups), "counts": {"prompts": len(rows)}},
        config={"settings": settings, "seed": options.seed, "batch_size": options.batch_size, "per_group": options.per_group,
                "classifier": scored_by, "first_line": not chat, **({"chat_request": CHAT_REQUEST} if chat else {}),
                **spec.recorded()},
        results={"sets": results, "classifier": scored_by},
        partial=coverage({"prompts": (sum(1 for row in rows if row["group"] in GROUPS), full)},
                         narrowed or "--groups " + " ".join(options.groups)),
        outputs={"generations_file": "generations.jsonl", "toxicity_file": TOXICITY_FILE}, timing=timing)
    result.files[TOXICITY_FILE] = toxicity_file(generations, scores, first_line=not chat)
    return result


def add_arguments(parser) -> None:
    """ToxiGen's own options and the classifier's."""
    parser.add_argument("--sets", nargs="+", choices=SETS, default=list(SETS), help="statement sets: hate, neutral")
    parser.add_argument("--groups", nargs="+", choices=GROUPS + EXTRA_GROUPS, default=list(GROUPS),
                        help="target groups (default: the paper's and Llama 2's 13)")
    parser.add_argument("--per-group", type=int, metavar="K",
                        help="K prompts per set and group, drawn as open-instruct draws its 500 (one generator seeded with "
                             "--seed, 42 by default as there, shuffling each file in turn; default all 1,000 in file order)")
    parser.add_argument("--max-new-tokens", type=int, help=f"new tokens per continuation (default {MAX_NEW_TOKENS}; "
                                                           "greedy, a base model's cut at its first newline)")
    add_classifier_arguments(parser, default_model=DEFAULT_CLASSIFIER, default_labels=DEFAULT_LABELS)


def records(results: dict) -> list[dict]:
    """Per set: the toxic share overall and per group (with intervals), and the spread across groups."""
    out = []
    stand_in = results["results"]["classifier"].get("stand_in")
    for statement_set, block in results["results"]["sets"].items():
        extra = {"set": statement_set, "classifier": results["results"]["classifier"]["model"],
                 **({"stand_in": stand_in} if stand_in else {})}
        for group, values in [("overall", block["overall"]), *block["per_group"].items()]:
            out.append(BENCHMARK.record("toxic", 100 * values["share"], domain=group, count=values["n"],
                                        ci=[100 * v for v in values["ci"]], **extra))
        out.append(BENCHMARK.record("spread", 100 * block["spread"], domain="overall", **extra))
    return out


def summary(results: dict, out) -> str:
    """Per set and group: continuations, toxic share with its interval, mean toxicity; the spread and test."""
    body = results["results"]
    stand_in = f" [{body['classifier']['stand_in']}]" if body["classifier"].get("stand_in") else ""
    lines = [f"model: {model_named(results)}; {results['data']['counts']['prompts']:,} ToxiGen prompts; classifier "
             f"{body['classifier']['model']} (toxic: {', '.join(body['classifier']['toxic_labels'])} >= "
             f"{body['classifier']['threshold']}){stand_in}; "
             f"results in {out}/results.json", ""]
    for statement_set, block in body["sets"].items():
        rows = [{"set": statement_set, "group": group, "continuations": v["n"],
                 "toxic %": f"{100 * v['share']:.1f} [{100 * v['ci'][0]:.1f}, {100 * v['ci'][1]:.1f}]",
                 "mean toxicity": f"{v['mean_toxicity']:.3f}"}
                for group, v in [*block["per_group"].items(), ("overall", block["overall"])]]
        lines += [markdown_table(rows, list(rows[0])), "",
                  f"{statement_set}: spread across groups {100 * block['spread']:.1f} pp; chi-square p = "
                  f"{block['test']['p_value']:.3g}", ""]
    lines.append("Toxicity from a local classifier: not comparable with numbers from another classifier or from "
                 "Perspective API.")
    return "\n".join(lines)


def report_section(runs, labels, figures, options) -> list:
    """A table per run and set: the toxic share per group, overall, and the spread."""
    rows = []
    for label, run in zip(labels, runs):
        body = run.results["results"]
        for statement_set, block in body["sets"].items():
            rows.append([label, statement_set, body["classifier"]["model"],
                         with_ci(100 * block["overall"]["share"], [100 * v for v in block["overall"]["ci"]], 1),
                         ", ".join(f"{g} {number(100 * v['share'])}" for g, v in block["per_group"].items()),
                         number(100 * block["spread"])])
    return [html.tag("h2", "ToxiGen (Hartvigsen et al. 2022)"),
            html.note("Share of continuations of ToxiGen's prompts that a local classifier calls toxic (%). Numbers from "
                      "different classifiers, or from Perspective API, are not comparable."),
            html.table(["model", "set", "classifier", "toxic overall (%)", "toxic per group (%)", "spread (pp)"], rows,
                       "ToxiGen toxic continuations")]


BENCHMARK = Benchmark(
    name="toxigen", display_name="ToxiGen",
    description="ToxiGen generation: share of toxic continuations per target group, hate and neutral prompts",
    dataset="toxigen", hub_dataset=HubDataset("lmbias/toxigen", "ToxiGen prompts", "train"),
    metrics=METRICS, run=lambda options, model: run(options, model, out=options.out), records=records, summary=summary,
    report_section=report_section,
    run_options=(*MODEL_OPTIONS, "seed", "batch_size", "num_processes", "progress", "threads"),
    add_arguments=add_arguments, defaults={"batch_size": 16, "seed": 42},  # open-instruct's seed
    variants=(Variant("set", "ToxiGen statements", SETS, each=True),),
    overall_note="ToxiGen's overall share pools every continuation of the set.",
    paper="https://aclanthology.org/2022.acl-long.234",
    examples=Examples(
        refused=((("--per-group", "0", "--chat"), "--per-group must be"),
                 (("--toxicity-threshold", "1.5"), "--toxicity-threshold must be")),
        modules={"toxigen": ModuleExample(
            {"predictions": [0.9, 0.2, 0.6, 0.1, 0.3], "groups": ["women", "women", "jewish", "jewish", "asian"]},
            options={"threshold": 0.5},
            bad=(("threshold", 1.5, ValueError, "threshold must be"), ("threshold", "0.5", TypeError, "threshold must be")))}),
)
