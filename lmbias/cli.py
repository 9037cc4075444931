"""The ``lmbias`` command line.

Commands:
    lmbias datasets [--data-dir DIR] [--json]          summary of the four datasets
    lmbias export-dataset NAME --out DIR [--data-dir DIR] [--cards DIR]
    lmbias resources [--data-dir DIR]                  where each data file is found
    lmbias score bold --source wikipedia [--domains ...] [--metrics ...] [--out FILE]
    lmbias run bold [--model M] [--domains ...] [--per-group K | --limit N] [--out DIR] [--num-processes N]
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Optional, Sequence

from . import __version__
from .data import DATASETS, load_rows, summarize
from .data.bold import merged_group_counts
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


def _run(args, argv: Sequence[str]) -> int:
    import os

    if args.num_processes > 1 and int(os.environ.get("WORLD_SIZE", "1")) == 1:
        return _relaunch(args.num_processes, argv)
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
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line; errors about data or arguments print one line and exit with status 2."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    from .lm.loading import ModelLoadError

    try:
        if args.func is _run:
            return _run(args, argv)
        return args.func(args)
    except (ResourceNotFoundError, ResourceError, ValueError, FileNotFoundError, ModelLoadError) as error:
        print(f"lmbias: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
