"""The ``lmbias`` command line.

Commands:
    lmbias datasets [--data-dir DIR] [--json]          summary of the four datasets
    lmbias export-dataset NAME --out DIR [--data-dir DIR] [--cards DIR]
    lmbias resources [--data-dir DIR]                  where each data file is found
    lmbias score bold --source wikipedia [--domains ...] [--metrics ...] [--out FILE]
    lmbias run bold [--model M] [--domains ...] [--per-group K | --limit N] [--out DIR] [--num-processes N]
    lmbias run stereoset [--model M] [--model-type auto|causal|masked] [--tasks ...] [--bootstrap N] [--limit N] [--out DIR]
    lmbias run crows_pairs [--model M] [--model-type auto|causal|masked] [--limit N] [--out DIR]
    lmbias run counterfactual [--model M] [--attributes ...] [--samples N] [--classifiers ...] [--out DIR]
    lmbias push RUN_DIR [RUN_DIR ...] --repo-id ORG/MODEL [--dry-run [--out DIR]] [--results-dataset ORG/NAME]
    lmbias leaderboard [RUN_DIR ...] --out SITE_DIR [--hub-dataset ORG/NAME | --results-dir DIR]
    lmbias report RUN_DIR [RUN_DIR ...] --out REPORT_DIR [--compare DOMAIN:A:B ...]   self-contained HTML report
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Optional, Sequence

from . import __version__
from .data import DATASETS, load_rows, summarize
from .data.bold import merged_group_counts
from .errors import LmbiasError
from .resources import REGISTRY, ResourceError, ResourceNotFoundError, locate


def markdown_table(records: Sequence[dict], columns: Sequence[str]) -> str:
    """Records as a GitHub-flavoured Markdown table; integers get thousands separators."""

    def cell(value) -> str:
        return f"{value:,}" if isinstance(value, int) else str(value)

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(record[c]) for c in columns) + " |" for record in records]
    return "\n".join(lines)


def _datasets(args) -> int:
    summary = summarize(data_dir=args.data_dir)
    merged = merged_group_counts(load_rows("bold", "profession", data_dir=args.data_dir))
    if args.json:
        print(json.dumps({"datasets": summary, "bold_profession_merged_groups": merged}, indent=2))
        return 0
    print(markdown_table(summary, ["dataset", "config", "split", "rows", "groups", "group_column"]))
    print()
    print("BOLD profession prompts by merged group (Dhamala et al. 2021, Table 3):")
    print()
    print(markdown_table([{"merged group": k, "prompts": v} for k, v in merged.items()], ["merged group", "prompts"]))
    return 0


def _export(args) -> int:
    import datasets

    from .data.export import export_dataset

    datasets.disable_progress_bars()
    counts = export_dataset(args.name, args.out, data_dir=args.data_dir, cards_dir=args.cards)
    for config, rows in counts.items():
        print(f"{args.name}/{config}: {rows:,} rows")
    print(f"wrote Parquet files and README.md to {args.out}; load with datasets.load_dataset({str(args.out)!r}, CONFIG)")
    return 0


def _resources(args) -> int:
    records = []
    for name, resource in REGISTRY.items():
        try:
            where = str(locate(name, args.data_dir, download_missing=False))
        except (ResourceNotFoundError, ResourceError) as error:
            where = "checksum mismatch" if isinstance(error, ResourceError) else "missing"
        records.append({"resource": name, "found at": where})
    print(markdown_table(records, ["resource", "found at"]))
    return 0


def _score(args) -> int:
    from pathlib import Path

    from .tasks.bold import score_bold_source

    options = {
        "metrics": args.metrics,
        "anonymize": not args.no_anonymize,
        "regard_all_groups": args.regard_all_groups,
        "device": args.device,
        "batch_size": args.batch_size,
    }
    if args.toxicity_model:
        options["toxicity_model"] = args.toxicity_model
    if args.regard_model:
        options["regard_model"] = args.regard_model
    result = score_bold_source(args.source, domains=args.domains, per_group=args.per_group, data_dir=args.data_dir, **options)
    text = json.dumps(result, indent=2)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text + "\n")
        print(f"wrote {args.out}: {result['n_texts']:,} texts, metrics {sorted(result['metrics'])}")
    else:
        print(text)
    for metric, reason in result["skipped"].items():
        print(f"skipped {metric}: {reason.splitlines()[0][:300]}", file=sys.stderr)
    return 0


def _run(args) -> int:
    from .tasks.bold import run_bold

    scoring = {"metrics": args.metrics, "anonymize": not args.no_anonymize, "batch_size": args.score_batch_size}
    for key in ("toxicity_model", "regard_model"):
        if getattr(args, key):
            scoring[key] = getattr(args, key)
    result = run_bold(
        model=args.model, out=args.out, domains=args.domains, per_group=args.per_group, limit=args.limit,
        preset=args.preset, max_new_tokens=args.max_new_tokens, seed=args.seed, batch_size=args.batch_size,
        num_return_sequences=args.num_return_sequences, dtype=args.dtype, device=args.device,
        require_all=args.require_all, progress=not args.no_progress, data_dir=args.data_dir, scoring=scoring,
    )
    if result is not None:
        print(summarize_bold(result, args.out))
    return 0


def _relaunch(num_processes: int, argv: Sequence[str]) -> int:
    """Start ``num_processes`` copies of this command under torchrun (gloo on CPU, nccl on GPU)."""
    import socket
    import subprocess

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    rest = [a for i, a in enumerate(argv) if a != "--num-processes" and (i == 0 or argv[i - 1] != "--num-processes")]
    rest = [a for a in rest if not a.startswith("--num-processes=")]
    command = [
        sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", str(num_processes),
        "--master_addr", "127.0.0.1", "--master_port", str(port), "--module", "lmbias", *rest,
    ]
    return subprocess.call(command)


def summarize_bold(result: dict, out) -> str:
    """A short human summary of a BOLD run: per domain, the model's and Wikipedia's share of
    negative and positive sentiment, and of male and female texts (Gender-Max)."""

    def share(block: dict, label: str) -> float:
        groups = block["per_group"].values()
        return sum(g["n"] * g[label] for g in groups) / sum(g["n"] for g in groups)

    lines = [
        f"model: {result['model']['name']}; {result['data']['prompts']:,} prompts, {result['generation']['texts']:,} "
        f"generations (mean {result['generation']['mean_new_tokens']:.1f} new tokens); results in {out}/results.json",
        "",
    ]
    model, wiki = result["results"]["model"]["metrics"], result["results"]["wikipedia"]["metrics"]
    records = []
    for domain, block in model.get("sentiment", {}).get("domains", {}).items():
        record = {"domain": domain, "texts": sum(g["n"] for g in block["per_group"].values())}
        for label in ("negative", "positive"):
            record[f"{label} (model / wiki)"] = f"{share(block, label):.3f} / {share(wiki['sentiment']['domains'][domain], label):.3f}"
        if "gender_polarity" in model:
            gender_model = model["gender_polarity"]["methods"]["max"]["domains"][domain]
            gender_wiki = wiki["gender_polarity"]["methods"]["max"]["domains"][domain]
            for label in ("male", "female"):
                record[f"{label} (model / wiki)"] = f"{share(gender_model, label):.3f} / {share(gender_wiki, label):.3f}"
        records.append(record)
    if records:
        lines.append("Share of texts per domain: sentiment (VADER, BOLD thresholds) and gender polarity (Gender-Max):")
        lines.append("")
        lines.append(markdown_table(records, list(records[0])))
    for metric, reason in result["results"]["model"]["skipped"].items():
        lines.append(f"skipped {metric}: {reason.splitlines()[0][:160]}")
    return "\n".join(lines)


def _run_stereoset(args) -> int:
    from .tasks.stereoset import run_stereoset

    result = run_stereoset(
        model=args.model, model_type=args.model_type, out=args.out, tasks=args.tasks, batch_size=args.batch_size,
        bootstrap=args.bootstrap, seed=args.seed, limit=args.limit, dtype=args.dtype, device=args.device, data_dir=args.data_dir,
    )
    if result is not None:
        print(summarize_stereoset(result, args.out))
    return 0


def _run_crows_pairs(args) -> int:
    from .tasks.crows_pairs import run_crows_pairs

    result = run_crows_pairs(
        model=args.model, model_type=args.model_type, out=args.out, batch_size=args.batch_size, limit=args.limit,
        dtype=args.dtype, device=args.device, data_dir=args.data_dir,
    )
    if result is not None:
        print(summarize_crows_pairs(result, args.out))
    return 0


def _run_counterfactual(args) -> int:
    from .tasks.counterfactual_sentiment import run_counterfactual

    scoring = {"classifiers": args.classifiers, "semantic": not args.no_similarity, "bootstrap": args.bootstrap}
    if args.hf_model:
        scoring["hf_model"] = args.hf_model
    if args.encoder:
        scoring["encoder"] = args.encoder
    result = run_counterfactual(
        model=args.model, out=args.out, attributes=args.attributes, samples=args.samples, max_new_tokens=args.max_new_tokens,
        seed=args.seed, batch_size=args.batch_size, dtype=args.dtype, device=args.device, progress=not args.no_progress,
        data_dir=args.data_dir, scoring=scoring,
    )
    if result is not None:
        print(summarize_counterfactual(result, args.out))
    return 0


def summarize_counterfactual(result: dict, out) -> str:
    """I.F. and G.F. per attribute and classifier, and S.S. / S.S.c per attribute."""
    scores = result["results"]
    records = []
    for attribute, block in scores["attributes"].items():
        relevance = block.get("semantic_similarity", {})
        for classifier, fairness in block["classifiers"].items():
            records.append({
                "attribute": attribute, "classifier": classifier, "samples": block["samples"],
                "I.F.": f"{fairness['individual_fairness']:.4f}", "G.F.": f"{fairness['group_fairness']:.4f}",
                "S.S.": f"{relevance['ss']:.1f}" if relevance else "-", "S.S.c": f"{relevance['ssc']:.1f}" if relevance else "-",
            })
    lines = [f"model: {result['model']['name']}; {result['generation']['texts']:,} continuations "
             f"({result['generation']['samples_per_prefix']} per prefix); results in {out}/results.json", ""]
    if records:
        lines.append(markdown_table(records, list(records[0])))
    for name, reason in scores["skipped"].items():
        lines.append(f"skipped {name}: {reason.splitlines()[0][:160]}")
    return "\n".join(lines)


def summarize_stereoset(result: dict, out) -> str:
    """A short human summary of a StereoSet run: LMS / SS / ICAT and count per task and domain
    (with the bootstrap interval of ICAT when the run computed intervals)."""
    scores = result["results"]
    records = []
    for task in result["config"]["tasks"]:
        for domain, block in scores[task].items():
            records.append({"task": task, "domain": domain, **_stereoset_cells(block)})
    records.append({"task": "all", "domain": "overall", **_stereoset_cells(scores["overall"])})
    return _likelihood_summary(result, f"{result['data']['counts']['sentences']:,} sentences", records, out)


def _likelihood_summary(result: dict, scored: str, records: list, out) -> str:
    """The model line and the table of a StereoSet or CrowS-Pairs run's summary."""
    header = (f"model: {result['model']['name']} ({result['model']['type']}); {scored} scored in "
              f"{result['timing']['scoring_seconds']:.1f} s; results in {out}/results.json")
    return "\n".join([header, "", markdown_table(records, list(records[0]))])


def _stereoset_cells(block: dict) -> dict:
    cells = {"LMS": f"{block['lms']:.1f}", "SS": f"{block['ss']:.1f}", "ICAT": f"{block['icat']:.1f}"}
    if "ci" in block:
        low, high = block["ci"]["icat"]
        cells["ICAT"] += f" [{low:.1f}, {high:.1f}]"
    return {**cells, "count": block["count"]}


def summarize_crows_pairs(result: dict, out) -> str:
    """A short human summary of a CrowS-Pairs run: the metric score (and its stereo / antistereo
    parts) overall and per bias type."""
    scores = result["results"]
    records = [{"bias type": name, **_crows_cells(block)} for name, block in scores["bias_types"].items()]
    records.append({"bias type": "overall", **_crows_cells(scores["overall"])})
    return _likelihood_summary(result, f"{result['data']['counts']['pairs']:,} pairs", records, out)


def _crows_cells(block: dict) -> dict:
    def cell(value) -> str:
        return "n/a" if value is None or value != value else f"{value:.1f}"  # NaN: no pair of that direction

    return {
        "metric score": cell(block["metric_score"]), "stereo": cell(block["stereo_score"]),
        "antistereo": cell(block["antistereo_score"]), "count": block["count"],
    }


def _leaderboard(args) -> int:
    from .leaderboard import leaderboard_command

    print(leaderboard_command(args.run_dirs, args.out, hub_dataset=args.hub_dataset, results_dir=args.results_dir,
                              title=args.title))
    return 0


def _report(args) -> int:
    from .report import build_report

    path = build_report(args.run_dirs, args.out, compare=args.compare, gender_method=args.gender_method, dpi=args.dpi)
    print(f"wrote {path} (self-contained; each figure also as a PNG in {path.parent})")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``lmbias`` command."""
    parser = argparse.ArgumentParser(prog="lmbias", description="Social-bias benchmarks for language models.")
    parser.add_argument("--version", action="version", version=f"lmbias {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    data_dir = argparse.ArgumentParser(add_help=False)
    data_dir.add_argument("--data-dir", help="local data folder (default: LMBIAS_DATA_DIR, the cache, a download)")

    summary = commands.add_parser("datasets", parents=[data_dir], help="summarise the four datasets")
    summary.add_argument("--json", action="store_true", help="print JSON instead of Markdown tables")
    summary.set_defaults(func=_datasets)

    export = commands.add_parser("export-dataset", parents=[data_dir], help="write a dataset as Parquet with its card")
    export.add_argument("name", choices=list(DATASETS))
    export.add_argument("--out", required=True, help="output folder")
    export.add_argument("--cards", help="folder with <name>/README.md card templates (default: hub_cards/)")
    export.set_defaults(func=_export)

    resources = commands.add_parser("resources", parents=[data_dir], help="show where each data file is found")
    resources.set_defaults(func=_resources)

    from .data.bold import DOMAINS
    from .tasks.bold import METRICS, SOURCES

    score = commands.add_parser("score", help="score texts with a benchmark's metrics")
    score_tasks = score.add_subparsers(dest="task", required=True)
    bold = score_tasks.add_parser("bold", parents=[data_dir], help="every BOLD metric, per domain and group")
    bold.add_argument("--source", choices=SOURCES, default="wikipedia", help="texts to score (default: the Wikipedia sentences)")
    bold.add_argument("--domains", nargs="+", choices=DOMAINS, default=list(DOMAINS))
    bold.add_argument("--metrics", nargs="+", choices=METRICS, default=list(METRICS))
    bold.add_argument("--per-group", type=int, help="only the first K rows of each group")
    bold.add_argument("--out", help="write the results JSON here (default: print it)")
    bold.add_argument("--toxicity-model", help="toxicity classifier (Hub id or folder; default unitary/toxic-bert)")
    bold.add_argument("--regard-model", help="regard classifier (Hub id or folder; default sasha/regardv3)")
    bold.add_argument("--regard-all-groups", action="store_true", help="score regard in every group, not only the paper's")
    bold.add_argument("--no-anonymize", action="store_true", help="score the texts as they are (BOLD anonymises them)")
    bold.add_argument("--device", help="cpu, cuda, ... for the classifiers")
    bold.add_argument("--batch-size", type=int, default=32)
    bold.set_defaults(func=_score)

    from .lm.generation import PRESETS

    run = commands.add_parser("run", help="generate with a model and score the generations (the main job)")
    run_tasks = run.add_subparsers(dest="task", required=True)
    run_bold = run_tasks.add_parser("bold", parents=[data_dir], help="BOLD: generate, score, compare with Wikipedia")
    run_bold.add_argument("--model", help="Hub id, local folder or .gguf file (default: the embedded SmolLM2-135M-Instruct)")
    run_bold.add_argument("--domains", nargs="+", choices=DOMAINS, default=list(DOMAINS))
    size = run_bold.add_mutually_exclusive_group()
    size.add_argument("--per-group", type=int, help="the first K prompts of each group")
    size.add_argument("--limit", type=int, help="the first N prompts")
    run_bold.add_argument("--out", default="runs/bold", help="run directory (resumed if it holds the same run)")
    run_bold.add_argument("--preset", choices=list(PRESETS), default="bold-gpt2")
    run_bold.add_argument("--max-new-tokens", type=int)
    run_bold.add_argument("--seed", type=int, default=0)
    run_bold.add_argument("--batch-size", type=int, default=32, help="prompts per generation batch")
    run_bold.add_argument("--num-return-sequences", type=int, default=1)
    run_bold.add_argument("--num-processes", type=int, default=1, help="processes (via torchrun); or launch with accelerate/torchrun")
    run_bold.add_argument("--device", help="cpu, cuda, ... (default: each process's GPU, else cpu)")
    run_bold.add_argument("--dtype", choices=["auto", "float32", "float16", "bfloat16"])
    run_bold.add_argument("--metrics", nargs="+", choices=METRICS, default=list(METRICS))
    run_bold.add_argument("--require-all", action="store_true", help="fail if any metric has to be skipped")
    run_bold.add_argument("--toxicity-model")
    run_bold.add_argument("--regard-model")
    run_bold.add_argument("--no-anonymize", action="store_true")
    run_bold.add_argument("--score-batch-size", type=int, default=32, help="texts per classifier batch")
    run_bold.add_argument("--no-progress", action="store_true")
    run_bold.set_defaults(func=_run)

    from .stereotype_scores import TASKS as STEREOSET_TASKS
    from .lm.loading import MODEL_TYPES

    likelihood = argparse.ArgumentParser(add_help=False, parents=[data_dir])
    likelihood.add_argument("--model", help="Hub id, local folder or .gguf file (default: the embedded SmolLM2-135M-Instruct)")
    likelihood.add_argument("--model-type", choices=MODEL_TYPES, default="auto", help="default: from the config's architectures")
    likelihood.add_argument("--batch-size", type=int, default=32, help="sequences per forward pass")
    likelihood.add_argument("--device", help="cpu, cuda, ... (default: each process's GPU, else cpu)")
    likelihood.add_argument("--dtype", choices=["auto", "float32", "float16", "bfloat16"])
    likelihood.add_argument("--limit", type=int, help="only the first N items (StereoSet: of each task)")
    stereoset = run_tasks.add_parser("stereoset", parents=[likelihood], help="StereoSet dev set: LMS, SS and ICAT")
    stereoset.add_argument("--tasks", nargs="+", choices=STEREOSET_TASKS, default=list(STEREOSET_TASKS))
    stereoset.add_argument("--bootstrap", type=int, default=0, help="bootstrap resamples for confidence intervals (0: none)")
    stereoset.add_argument("--seed", type=int, default=0, help="seed of the bootstrap")
    stereoset.add_argument("--out", default="runs/stereoset", help="output directory")
    stereoset.set_defaults(func=_run_stereoset)
    crows = run_tasks.add_parser("crows_pairs", parents=[likelihood], help="CrowS-Pairs: the metric score per bias type")
    crows.add_argument("--out", default="runs/crows_pairs", help="output directory")
    crows.set_defaults(func=_run_crows_pairs)
    for command in (stereoset, crows):
        command.add_argument("--num-processes", type=int, default=1, help="processes (via torchrun); or launch with torchrun")

    from .data.counterfactual_templates import ATTRIBUTES
    from .scorers.sentiment_scores import CLASSIFIERS

    run_cf = run_tasks.add_parser("counterfactual", parents=[data_dir], help="counterfactual sentiment bias (Huang et al. 2020)")
    run_cf.add_argument("--model", help="Hub id, local folder or .gguf file (default: the embedded SmolLM2-135M-Instruct)")
    run_cf.add_argument("--attributes", nargs="+", choices=ATTRIBUTES, default=list(ATTRIBUTES))
    run_cf.add_argument("--samples", type=int, default=1000, help="continuations per prefix (the paper: 1000)")
    run_cf.add_argument("--classifiers", nargs="+", choices=CLASSIFIERS, default=list(CLASSIFIERS))
    run_cf.add_argument("--hf-model", help="sentiment classifier for 'hf' (default distilbert-base-uncased-finetuned-sst-2-english)")
    run_cf.add_argument("--encoder", help="sentence-transformers model for S.S. (default all-MiniLM-L6-v2)")
    run_cf.add_argument("--no-similarity", action="store_true", help="skip S.S. / S.S.c")
    run_cf.add_argument("--bootstrap", type=int, default=0, help="bootstrap resamples for I.F. / G.F. intervals")
    run_cf.add_argument("--max-new-tokens", type=int, help="default 50 (the paper's)")
    run_cf.add_argument("--out", default="runs/counterfactual")
    run_cf.add_argument("--seed", type=int, default=0)
    run_cf.add_argument("--batch-size", type=int, default=8, help="prompts per batch (x samples sequences)")
    run_cf.add_argument("--num-processes", type=int, default=1)
    run_cf.add_argument("--device")
    run_cf.add_argument("--dtype", choices=["auto", "float32", "float16", "bfloat16"])
    run_cf.add_argument("--no-progress", action="store_true")
    run_cf.set_defaults(func=_run_counterfactual)

    from .hub.push import add_parser as add_push_parser

    add_push_parser(commands)

    board = commands.add_parser("leaderboard", help="a static leaderboard site (index.html) comparing models")
    board.add_argument("run_dirs", nargs="*", metavar="RUN_DIR", help="run directories (grouped by model name)")
    board.add_argument("--out", required=True, help="site folder: index.html, leaderboard.json, models/<slug>/report.html")
    board_source = board.add_mutually_exclusive_group()
    board_source.add_argument("--hub-dataset", metavar="ORG/NAME", help="also read runs/<model>/<benchmark>/results.json of this Hub dataset")
    board_source.add_argument("--results-dir", metavar="DIR", help="also read runs/<model>/<benchmark>/results.json under DIR")
    board.add_argument("--title", default="lmbias leaderboard", help="the page title")
    board.set_defaults(func=_leaderboard)

    report = commands.add_parser("report", help="a self-contained HTML report with the papers' figures for runs")
    report.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="run directories; several = models side by side")
    report.add_argument("--out", required=True, help="report folder: report.html and one PNG per figure")
    report.add_argument("--compare", action="append", metavar="DOMAIN:GROUP_A:GROUP_B",
                        help="BOLD psycholinguistic-norm pair (repeatable; default e.g. gender:American_actors:American_actresses)")
    report.add_argument("--gender-method", choices=["unigram", "wavg", "max"], default="max",
                        help="gender-polarity method of the profession skew figure (default max, the paper's Figure 2)")
    report.add_argument("--dpi", type=int, default=110, help="figure resolution")
    report.set_defaults(func=_report)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line; an :class:`~lmbias.errors.LmbiasError` (a user mistake, a missing resource)
    prints one line and exits with status 2, and any other exception is a bug and keeps its traceback."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    try:
        if getattr(args, "num_processes", 1) > 1 and int(os.environ.get("WORLD_SIZE", "1")) == 1:
            return _relaunch(args.num_processes, argv)
        return args.func(args)
    except LmbiasError as error:
        print(f"lmbias: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
