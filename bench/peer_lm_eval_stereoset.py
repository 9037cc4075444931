"""lm-evaluation-harness (the peer) scoring StereoSet from a local JSON-lines file, for bench/likelihood_peer.py.

Run in lm-eval's own environment: ``python bench/peer_lm_eval_stereoset.py MODEL_DIR ITEMS.jsonl [--threads N]``.
lm-eval has no StereoSet task, so two are declared here as ``multiple_choice`` over the item's three
sentences (stereotype, anti-stereotype, unrelated): intrasentence with an empty context (each sentence
after the start token, as lm-eval scores an empty context), intersentence with the start token's text
and the item's context as the context and a space before each sentence. That is lmbias's
``score_stereoset(..., causal_prefix="bos")``. Prints one JSON line: the seconds of lm-eval's
evaluation call (model load included) and per item, in file order, the three summed log-likelihoods and
the three continuations' token counts (lm-eval's own split of context and continuation), so that the
caller can take StereoSet's mean per token.
"""

import json
import tempfile
import time
from pathlib import Path

from peer_arguments import peer_arguments

TASK = """task: {name}
dataset_path: json
dataset_kwargs:
  data_files:
    test: {items}
test_split: test
output_type: multiple_choice
doc_to_text: "{text}"
doc_to_target: 0
doc_to_choice: "{{{{[stereotype, anti_stereotype, unrelated]}}}}"
target_delimiter: "{delimiter}"
metric_list:
  - metric: acc
"""


def main() -> None:
    args = peer_arguments(__doc__.splitlines()[0], device=True)
    import lm_eval
    from lm_eval.tasks import TaskManager
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(args.model_dir)
    start = tokenizer.bos_token if tokenizer.bos_token is not None else tokenizer.eos_token
    rows = [json.loads(line) for line in Path(args.items).read_text().splitlines()]
    with tempfile.TemporaryDirectory() as folder:
        for task in ("intrasentence", "intersentence"):
            part = Path(folder, f"{task}.jsonl")
            part.write_text("".join(json.dumps(r) + "\n" for r in rows if r["task"] == task))
            text = "" if task == "intrasentence" else start.replace('"', '\\"') + "{{context}}"
            Path(folder, f"stereoset_{task}.yaml").write_text(TASK.format(
                name=f"stereoset_{task}", items=part, text=text, delimiter="" if task == "intrasentence" else " "))
        started = time.perf_counter()
        out = lm_eval.simple_evaluate(
            model="hf", model_args=f"pretrained={args.model_dir},dtype=float32,device={args.device}",
            tasks=["stereoset_intrasentence", "stereoset_intersentence"], task_manager=TaskManager(include_path=folder),
            batch_size=args.batch_size, log_samples=True)
        seconds = time.perf_counter() - started

    def counts(context: str, sentences: list[str], delimiter: str) -> list[int]:
        """lm-eval's continuation tokens: the whole text's tokens after the context's (an empty context: all of them)."""
        context_ids = tokenizer(context, add_special_tokens=False)["input_ids"]
        return [len(tokenizer(context + delimiter + s, add_special_tokens=False)["input_ids"]) - len(context_ids)
                for s in sentences]

    scored = {}
    for task in ("intrasentence", "intersentence"):
        for sample in out["samples"][f"stereoset_{task}"]:
            doc = sample["doc"]
            sentences = [doc["stereotype"], doc["anti_stereotype"], doc["unrelated"]]
            context, delimiter = ("", "") if task == "intrasentence" else (start + doc["context"], " ")
            scored[doc["id"]] = {"sums": [float(r[0]) for r in sample["filtered_resps"]],
                                 "counts": counts(context, sentences, delimiter)}
    print(json.dumps({"seconds": seconds, "items": [scored[r["id"]] for r in rows], "lm_eval": lm_eval.__version__}))


if __name__ == "__main__":
    main()
