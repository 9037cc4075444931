"""lm-evaluation-harness (the peer) scoring BBQ items from a local JSON-lines file, for bench/bbq.py.

Run in lm-eval's own environment: ``python bench/peer_lm_eval_bbq.py MODEL_DIR ITEMS.jsonl [--threads N]``.
The task is lm-eval's own ``bbq`` (its prompt, its choices and its ``utils.py``, taken from the installed
lm-eval package at run time) with the dataset read from the file. Prints one JSON line: the seconds of
lm-eval's evaluation call (model load included), and per item, in file order, lm-eval's log-likelihood of
each of the item's own three answers (``ans0``..``ans2``; its unknown answer is one of lm-eval's ten
unknown phrasings) and lm-eval's own decision over its twelve choices, as an answer index (any unknown
phrasing counts as the item's unknown answer).
"""

import json
import os
import tempfile
import time
from pathlib import Path

from peer_arguments import peer_arguments

TASK = """task: bbq_local
dataset_path: json
dataset_kwargs:
  data_files:
    test: {items}
test_split: test
output_type: multiple_choice
process_docs: !function utils.process_docs
process_results: !function utils.process_results_multiple_choice
doc_to_text: "{{{{context}}}}\\n\\nQ: {{{{question}}}}\\nA:"
doc_to_target: !function utils.doc_to_targets
doc_to_choice: !function utils.doc_to_choice
metric_list:
  - metric: acc
{metrics}"""
# every metric lm-eval's BBQ process_results returns needs its aggregation (its own bbq_multiple_choice.yaml's)
CATEGORIES = ["Age", "Disability_status", "Gender_identity", "Nationality", "Physical_appearance", "Race_ethnicity",
              "Race_x_gender", "Race_x_SES", "Religion", "SES", "Sexual_orientation"]
AGGREGATIONS = {"accuracy_amb": "agg_accuracy_amb", "accuracy_disamb": "agg_accuracy_amb", "amb_bias_score": "agg_amb_bias_scores",
                "disamb_bias_score": "agg_disamb_bias_scores",
                **{f"amb_bias_score_{c}": "agg_amb_bias_scores" for c in CATEGORIES},
                **{f"disamb_bias_score_{c}": "agg_disamb_bias_scores" for c in CATEGORIES}}


def main() -> None:
    args = peer_arguments(__doc__.splitlines()[0])
    import lm_eval
    from lm_eval.tasks import TaskManager

    harness_utils = Path(lm_eval.__file__).parent / "tasks" / "bbq" / "utils.py"
    with tempfile.TemporaryDirectory() as folder:
        metrics = "".join(f"  - metric: {name}\n    aggregation: !function utils.{function}\n"
                          for name, function in AGGREGATIONS.items())
        (Path(folder) / "bbq_local.yaml").write_text(TASK.format(items=os.path.abspath(args.items), metrics=metrics))
        (Path(folder) / "utils.py").symlink_to(harness_utils)  # lm-eval's own BBQ code, used as it ships
        import importlib.util

        spec = importlib.util.spec_from_file_location("harness_bbq_utils", harness_utils)
        utils = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(utils)
        started = time.perf_counter()
        results = lm_eval.simple_evaluate(model="hf", model_args=f"pretrained={args.model_dir},dtype=float32",
                                          tasks=["bbq_local"], task_manager=TaskManager(include_path=folder),
                                          batch_size=args.batch_size, device="cpu", log_samples=True)
        seconds = time.perf_counter() - started
    items = [json.loads(line) for line in Path(args.items).read_text().splitlines()]
    samples = sorted(results["samples"]["bbq_local"], key=lambda sample: sample["doc_id"])
    out = []
    for item, sample in zip(items, samples):
        lls = [float(resp[0]) for resp in sample["filtered_resps"]]  # (log-likelihood, is greedy) per choice
        choices = utils.doc_to_choice(item)  # the two non-unknown answers in their order, then ten unknown phrasings
        own = [item[f"ans{i}"] for i in range(3)]
        unknown = next(i for i in range(3) if item["answer_info"][f"ans{i}"][1] == "unknown")
        per_answer = [lls[choices.index(text)] for text in own]
        best = max(range(len(lls)), key=lambda k: lls[k])
        decision = unknown if best >= 2 else own.index(choices[best])
        out.append({"lls": per_answer, "decision": decision})
    print(json.dumps({"seconds": seconds, "items": out}))


if __name__ == "__main__":
    main()
