"""lm-evaluation-harness (the peer) scoring CrowS-Pairs from lmbias's local CSV, for bench/backends.py.

Run in lm-eval's own environment: ``python bench/peer_lm_eval.py MODEL_DIR CSV [--limit N]``.
Prints one JSON line: the seconds of lm-eval's evaluation call, and per pair (in file order) the two
log-likelihoods (sent_more, sent_less). The task is lm-eval's ``crows_pairs_english`` (empty
context, each sentence scored after the start token) with the dataset read from the CSV.
"""

import argparse
import json
import tempfile
import time
from pathlib import Path

TASK = """task: crows_pairs_local
dataset_path: csv
dataset_kwargs:
  data_files:
    test: {csv}
test_split: test
output_type: multiple_choice
doc_to_text: ""
doc_to_target: 0
doc_to_choice: "{{{{[sent_more, sent_less]}}}}"
target_delimiter: ""
metric_list:
  - metric: acc
"""


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("model_dir")
    parser.add_argument("csv")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    import lm_eval
    from lm_eval.tasks import TaskManager

    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "crows_pairs_local.yaml").write_text(TASK.format(csv=Path(args.csv).resolve()))
        started = time.perf_counter()
        out = lm_eval.simple_evaluate(
            model="hf", model_args=f"pretrained={args.model_dir},dtype=float32,device={args.device}", tasks=["crows_pairs_local"],
            task_manager=TaskManager(include_path=folder), batch_size=args.batch_size, limit=args.limit, log_samples=True)
        seconds = time.perf_counter() - started
    samples = sorted(out["samples"]["crows_pairs_local"], key=lambda s: s["doc_id"])
    pairs = [[float(r[0]) for r in sample["filtered_resps"]] for sample in samples]
    print(json.dumps({"seconds": seconds, "pairs": pairs, "lm_eval": lm_eval.__version__}))


if __name__ == "__main__":
    main()
