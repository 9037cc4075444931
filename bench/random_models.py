"""Random-weight stand-ins for timing on a machine without the real weights (the GPU machine: no network).

``python bench/random_models.py --config-dir DIR --out OUT`` writes:

- ``OUT/causal``: a causal LM with the architecture and tokenizer in ``DIR`` (its ``config.json`` and
  tokenizer files, e.g. the embedded SmolLM2-135M's) and random weights (seed 0);
- ``OUT/toxicity`` and ``OUT/regard``: random BERT-base (or ``--classifier-size tiny``) classifiers (``bench/classifiers.py``) with
  unitary/toxic-bert's six sigmoid labels and the regard classifier's four softmax labels, over a
  word-level vocabulary of the BOLD Wikipedia sentences' 30,000 most frequent words.

Timing depends on the architecture and the token counts, not on the weights, with one exception: a
random LM rarely emits its end-of-sequence token, so generation runs to the token limit (an upper bound).
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import torch
import transformers
from classifiers import build_classifier

import lmbias

REGARD_LABELS = ["negative", "neutral", "positive", "other"]


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--config-dir", required=True, help="a folder with config.json and the tokenizer files")
    parser.add_argument("--out", required=True)
    parser.add_argument("--causal-only", action="store_true", help="only the causal LM (no BOLD data needed)")
    parser.add_argument("--classifier-size", choices=["base", "tiny"], default="base",
                        help="BERT-base, or a 2-layer, 64-wide BERT (memory runs on a CPU)")
    parser.add_argument("--shape", type=json.loads, default={},
                        help='config overrides for a larger causal LM, e.g. \'{"hidden_size": 2048, "num_hidden_layers": 22}\'')
    args = parser.parse_args()
    out = Path(args.out)
    causal = out / "causal"
    causal.mkdir(parents=True, exist_ok=True)
    for item in Path(args.config_dir).iterdir():
        if item.suffix in (".json", ".jinja", ".txt", ".model") and item.name != "model.safetensors.index.json":
            shutil.copy(item, causal / item.name)
    config = transformers.AutoConfig.from_pretrained(causal, **args.shape)
    torch.manual_seed(0)
    transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float32).save_pretrained(causal)
    if args.causal_only:
        return print(f"wrote {causal}")
    texts = [row["wikipedia"] for row in lmbias.load_rows("bold")]
    for name in ("toxicity", "regard"):
        folder = out / name
        folder.mkdir(exist_ok=True)
        build_classifier(str(folder), args.classifier_size, texts)
    config_path = out / "regard" / "config.json"
    config = json.loads(config_path.read_text())
    config.update(id2label=dict(enumerate(REGARD_LABELS)), label2id={label: i for i, label in enumerate(REGARD_LABELS)},
                  problem_type="single_label_classification")
    config_path.write_text(json.dumps(config, indent=2))
    torch.manual_seed(1)
    model = transformers.BertForSequenceClassification(transformers.BertConfig.from_pretrained(out / "regard"))
    model.save_pretrained(out / "regard")
    print(f"wrote {causal}, {out / 'toxicity'}, {out / 'regard'}")


if __name__ == "__main__":
    main()
