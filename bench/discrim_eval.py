"""DiscrimEval: lmbias against lm-evaluation-harness's ``discrim_eval`` task on the same built items and model.

    .venv/bin/python bench/discrim_eval.py [--questions 3] [--model DIR] [--out DIR]

Builds ``--questions`` scenarios' full grids (135 people each) in the Hub layout (tests/discrim_eval_items.py), runs
``lmbias run discrim_eval`` (likelihood, the paper's prompt and surface forms) and lm-eval 0.4.13's task (through
bench/lm_eval_discrim.py, its own environment) with the same model on the same items, and prints three tables:

1. the same arithmetic: lmbias's fit on lm-eval's own per-item log-likelihoods, coded as lm-eval codes them
   (yes + Yes against no + No, age z-scored, no mass filter) against lm-eval's reported scores;
2. the two protocols: lmbias's scores (the paper's "Human: ... Assistant: ..." prompt, every surface form, age bands)
   beside lm-eval's (its own prompt, four forms, one age slope reported as an absolute value), with the mass on the
   answers and the decisions (p(yes) normalised > 0.5) they agree on;
3. time: lmbias's scoring against lm-eval's whole evaluation (model loading included in both).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

LM_EVAL_NAMES = {"black": "black_bias", "asian": "asian_bias", "hispanic": "hispanic_bias",
                 "native_american": "native_american_bias", "female": "female_bias", "non_binary": "non_binary_bias",
                 "age": "age_bias"}


def main() -> None:
    """Build the items, run both, print the tables, write everything to ``--out``/discrim_eval.json."""
    from discrim_eval_items import write_items

    from lmbias.benchmarks import save_run
    from lmbias.benchmarks.declared import run_task
    from lmbias.benchmarks.discrim_eval import BENCHMARK
    from lmbias.benchmarks.discrim_eval.measure import discrim_scores, yes_no
    from lmbias.lm.gguf import embedded_model_dir
    from lmbias.lm.spec import ModelSpec

    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=3)
    parser.add_argument("--model", help="a causal LM folder (default: the embedded SmolLM2-135M-Instruct)")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--out", type=Path, default=Path(tempfile.mkdtemp(prefix="discrim-bench-")))
    args = parser.parse_args()
    data = args.out / "data"
    items = write_items(data, questions=args.questions)

    started = time.perf_counter()
    ours = run_task(BENCHMARK, model=ModelSpec(args.model, device="cpu"), out=args.out / "lmbias", data_dir=data,
                    batch_size=args.batch_size, progress=False)
    ours_seconds = time.perf_counter() - started
    save_run(ours)
    model = args.model or str(embedded_model_dir())  # converted by the run above when it was not yet
    peer_file = args.out / "lm_eval.json"
    subprocess.run([sys.executable, str(ROOT / "bench" / "lm_eval_discrim.py"), "--items", str(items), "--model", model,
                    "--out", str(peer_file), "--batch-size", str(args.batch_size)], check=True, stdout=subprocess.DEVNULL,
                   stderr=(args.out / "lm_eval.log").open("w"))  # its progress and statsmodels' warnings
    peer = json.loads(peer_file.read_text())

    rows = [{"question": int(p["decision_question_id"]), "age": int(p["age"]), "gender": p["gender"], "race": p["race"]}
            for p in peer["per_item"]]
    records = [{"yes": [p["loglik"]["yes"], p["loglik"]["Yes"]], "no": [p["loglik"]["no"], p["loglik"]["No"]]}
               for p in peer["per_item"]]
    same = discrim_scores(records, rows, protocol="likelihood", min_mass=0.0, age="linear")
    print("1. The same arithmetic: lmbias's fit on lm-eval's log-likelihoods (yes+Yes / no+No, age z-scored)\n")
    print("| score | lmbias | lm-eval | difference |\n|---|---|---|---|")
    for term, name in LM_EVAL_NAMES.items():
        mine = same["scores"][term]["estimate"]
        mine = abs(mine) if term == "age" else mine  # lm-eval reports |age|
        print(f"| {name} | {mine:+.6f} | {peer['metrics'][name]:+.6f} | {mine - peer['metrics'][name]:+.1e} |")

    body = ours.results
    scored = [json.loads(line) for line in (args.out / "lmbias" / "scores.jsonl").read_text().splitlines()]
    mine = yes_no([r["yes"] for r in scored], [r["no"] for r in scored])
    theirs = yes_no([r["yes"] for r in records], [r["no"] for r in records])
    agree = float(np.mean((mine["p_norm"] > 0.5) == (theirs["p_norm"] > 0.5)))
    print("\n2. The two protocols on the same items and model\n")
    print("| score | lmbias (paper's prompt, 12 forms, age bands) | lm-eval (its prompt, 4 forms) |\n|---|---|---|")
    for term, name in LM_EVAL_NAMES.items():
        if term == "age":
            shown = ", ".join(f"{t} {body['scores'][t]['estimate']:+.3f}" for t in ("age_younger", "age_older"))
        else:
            s = body["scores"][term]
            shown = f"{s['estimate']:+.3f} [{s['ci'][0]:+.3f}, {s['ci'][1]:+.3f}]"
        print(f"| {name} | {shown} | {peer['metrics'][name]:+.3f} |")
    print(f"| mass on the answers (mean) | {body['mass']['mean']:.3f} | {theirs['mass'].mean():.3f} |")
    print(f"| yes decisions (p(yes) normalised > 0.5) | {np.mean(mine['p_norm'] > 0.5):.1%} | "
          f"{np.mean(theirs['p_norm'] > 0.5):.1%} |")
    print(f"\nThe two agree on {agree:.1%} of the {len(rows)} decisions.")
    print("\n3. Time (model loading included in both)\n\n| | seconds |\n|---|---|")
    print(f"| lmbias (run_task, {len(rows)} prompts x 12 forms) | {ours_seconds:.1f} |")
    print(f"| lm-eval (its evaluation, {len(rows)} prompts x 4 forms) | {peer['seconds']['lm_eval_subprocess']:.1f} |")
    (args.out / "discrim_eval.json").write_text(json.dumps({
        "same_arithmetic": {t: same["scores"][t] for t in LM_EVAL_NAMES}, "lmbias": body["scores"],
        "lm_eval": peer["metrics"], "agreement": agree, "seconds": {"lmbias": ours_seconds, "lm_eval": peer["seconds"]}},
        indent=1))
    print(f"\nwritten: {args.out / 'discrim_eval.json'}")


if __name__ == "__main__":
    main()
