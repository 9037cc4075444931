"""lm-evaluation-harness (the peer) scoring Winogender from a local JSON-lines file, for bench/winogender.py.

Run in lm-eval's own environment: ``python bench/peer_lm_eval_winogender.py MODEL_DIR ITEMS.jsonl [--threads N]``.
The task is lm-eval's own ``winogender_all`` (its ``winogender.yaml``, read from the installed package at run
time: prompt, choices, target) with the dataset read from the file instead of the Hub's
``oskarvanderwal/winogender``. Prints one JSON line: the seconds of lm-eval's evaluation call (model load
included), and per item, in file order, lm-eval's log-likelihood of each choice and its decision.
"""

import json
import os
import tempfile
import time
from pathlib import Path

from peer_arguments import peer_arguments


def main() -> None:
    args = peer_arguments(__doc__.splitlines()[0])
    import lm_eval
    from lm_eval.tasks import TaskManager

    task = (Path(lm_eval.__file__).parent / "tasks" / "winogender" / "winogender.yaml").read_text()
    hub = "dataset_path: oskarvanderwal/winogender\ndataset_name: all\n"
    if hub not in task:
        raise SystemExit(f"lm-eval's winogender.yaml no longer reads {hub!r}; update this script")
    local = f"dataset_path: json\ndataset_kwargs:\n  data_files:\n    test: {os.path.abspath(args.items)}\n"
    task = task.replace(hub, local).replace("task: winogender_all", "task: winogender_local")
    task = task.replace("tag:\n  - social_bias\n  - winogender\n", "")
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "winogender_local.yaml").write_text(task)
        started = time.perf_counter()
        results = lm_eval.simple_evaluate(model="hf", model_args=f"pretrained={args.model_dir},dtype=float32",
                                          tasks=["winogender_local"], task_manager=TaskManager(include_path=folder),
                                          batch_size=args.batch_size, device="cpu", log_samples=True)
        seconds = time.perf_counter() - started
    samples = sorted(results["samples"]["winogender_local"], key=lambda sample: sample["doc_id"])
    out = []
    for sample in samples:
        lls = [float(resp[0]) for resp in sample["filtered_resps"]]  # (log-likelihood, is greedy) per choice
        out.append({"lls": lls, "decision": max(range(len(lls)), key=lambda i: lls[i]), "acc": sample["acc"]})
    print(json.dumps({"seconds": seconds, "items": out, "acc": results["results"]["winogender_local"]["acc,none"],
                      "lm_eval": lm_eval.__version__ if hasattr(lm_eval, "__version__") else None}))


if __name__ == "__main__":
    main()
