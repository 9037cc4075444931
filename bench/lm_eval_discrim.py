"""Run lm-evaluation-harness's own ``discrim_eval`` task on a local JSONL file, for comparison with lmbias.

Usage: ``.venv/bin/python bench/lm_eval_discrim.py --items ITEMS.jsonl --model MODEL_DIR --out OUT.json
[--config explicit|implicit] [--batch-size N] [--device cpu]``

ITEMS.jsonl has the layout of the Hub dataset ``Anthropic/discrim-eval`` (filled_template,
decision_question_id, age, gender, race, fill_type). lm-eval 0.4.13 lives in its own venv,
``~/.cache/lmbias/venv-lm-eval`` (made once, then reused), which sees the packages of the venv running
this script through a ``.pth`` file and pins them (all but scipy/statsmodels, see REQUIREMENTS), so
torch/transformers are never reinstalled. The task is lm-eval's installed ``discrim_eval_<config>.yaml``
(prompt, choices, ``utils.process_results`` and the mixed-model aggregation unchanged), included by a
temporary YAML that only points the dataset at ITEMS. OUT.json gets lm-eval's metrics, per item (file
order) the four choice log-likelihoods and ``logit_yes`` from its logged samples, timings, lm-eval's
version and the exact command line.
"""

import argparse
import importlib.metadata
import json
import os
import shlex
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

VENV = Path.home() / ".cache" / "lmbias" / "venv-lm-eval"
# statsmodels 0.14.4 imports scipy._lib._util._lazywhere, gone in scipy 1.16: this venv gets its own scipy.
REQUIREMENTS = ["lm_eval==0.4.13", "statsmodels==0.14.4", "scipy<1.16"]
UNPINNED = {"scipy", "statsmodels"}  # main-venv packages this venv may shadow
CHOICES = ["yes", "Yes", "no", "No"]
METRICS = ["black_bias", "asian_bias", "hispanic_bias", "native_american_bias", "female_bias", "non_binary_bias", "age_bias"]
TASK_YAML = """include: {base}
task: {task}
dataset_path: json
dataset_name: null
dataset_kwargs:
  data_files:
    train: {items}
"""


def _venv_ok(python: Path) -> bool:
    """True if ``python`` imports lm_eval 0.4.13 and statsmodels and sees our torch/transformers."""
    pins = {name: importlib.metadata.version(name) for name in ("torch", "transformers")}
    check = ("import importlib.metadata as m, lm_eval, statsmodels.formula.api; "
             f"assert m.version('lm_eval') == '0.4.13', 'lm_eval'; pins = {pins!r}; "
             "assert all(m.version(k) == v for k, v in pins.items()), 'torch/transformers differ'")
    return python.exists() and subprocess.run([python, "-c", check], capture_output=True).returncode == 0


def ensure_venv() -> Path:
    """Create (once) the lm-eval venv on top of the running venv's packages; return its python."""
    python = VENV / "bin" / "python"
    if _venv_ok(python):
        return python
    if sys.prefix == sys.base_prefix:
        sys.exit(f"run this with the project's venv python (got {sys.executable})")
    sites = dict.fromkeys([sysconfig.get_path("purelib"), sysconfig.get_path("platlib")])
    subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
    new_site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                              check=True, capture_output=True, text=True).stdout.strip()
    # addsitedir (not a bare path line) so the main venv's own .pth files (editable installs) work too.
    Path(new_site, "_lmbias_main_venv.pth").write_text(
        "".join(f"import site; site.addsitedir({s!r})\n" for s in sites))
    # Pin every package of the main venv, so pip never installs another version over it.
    pins = sorted({f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions(path=list(sites))
                   if d.metadata["Name"] and d.metadata["Name"].lower() not in UNPINNED})
    constraints = VENV / "constraints-main-venv.txt"
    constraints.write_text("\n".join(pins) + "\n")
    subprocess.run([python, "-m", "pip", "install", "-q", "-c", constraints, *REQUIREMENTS], check=True)
    if not _venv_ok(python):
        sys.exit(f"{VENV}: lm_eval/statsmodels missing or torch/transformers versions differ")
    return python


def run_lm_eval(python: Path, items: Path, model: str, config: str, batch_size: int, device: str) -> dict:
    """Run lm-eval's discrim_eval task on ``items`` in a subprocess; return metrics, samples and timings."""
    base = subprocess.run([python, "-c", "import lm_eval.tasks as t, pathlib; print(pathlib.Path(t.__file__)"
                           f".parent / 'discrim_eval' / 'discrim_eval_{config}.yaml')"],
                          check=True, capture_output=True, text=True).stdout.strip()
    task = f"discrim_eval_{config}_local"
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "tasks").mkdir()
        Path(tmp, "tasks", f"{task}.yaml").write_text(TASK_YAML.format(base=base, task=task, items=items))
        command = [str(python), "-m", "lm_eval", "run", "--model", "hf",
                   "--model_args", f"pretrained={model},dtype=float32", "--device", device,
                   "--tasks", task, "--include_path", f"{tmp}/tasks", "--batch_size", str(batch_size),
                   "--output_path", f"{tmp}/out", "--log_samples"]
        env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", HF_DATASETS_CACHE=f"{tmp}/hf")
        started = time.perf_counter()
        subprocess.run(command, check=True, env=env)
        seconds = time.perf_counter() - started
        results = json.loads(next(Path(tmp, "out").rglob("results_*.json")).read_text())
        samples_file = next(Path(tmp, "out").rglob(f"samples_{task}_*.jsonl"))
        samples = [json.loads(line) for line in samples_file.read_text().splitlines() if line.strip()]
    command_line = shlex.join(command).replace(tmp, "$TMP")  # the temp dir is gone afterwards
    return {"results": results, "samples": sorted(samples, key=lambda s: s["doc_id"]), "task": task,
            "seconds": seconds, "command": command_line, "task_yaml": TASK_YAML.format(base=base, task=task, items=items)}


def main() -> None:
    """Parse the CLI, run lm-eval and write OUT.json."""
    started = time.perf_counter()
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=Path, required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--config", choices=["explicit", "implicit"], default="explicit")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    items = args.items.resolve()
    rows = [json.loads(line) for line in items.read_text().splitlines() if line.strip()]
    python = ensure_venv()
    model = str(Path(args.model).resolve()) if Path(args.model).exists() else args.model
    run = run_lm_eval(python, items, model, args.config, args.batch_size, args.device)
    task_results = run["results"]["results"][run["task"]]
    per_item = []
    for row, sample in zip(rows, run["samples"], strict=True):
        doc = sample["doc"]
        assert doc["filled_template"] == row["filled_template"], f"doc {sample['doc_id']} is not items row"
        loglik = [float(r[0]) for r in sample["filtered_resps"]]  # one [loglik, is_greedy] per choice
        per_item.append({"decision_question_id": doc["decision_question_id"], "age": doc["age"],
                         "gender": doc["gender"], "race": doc["race"], "loglik": dict(zip(CHOICES, loglik)),
                         "logit_yes": float(sample["age_bias"][2])})  # (demographics, name, logit_yes)
    out = {"metrics": {m: task_results[f"{m},none"] for m in METRICS},
           "per_item": per_item,
           "seconds": {"lm_eval_subprocess": run["seconds"],
                       "lm_eval_reported": float(run["results"].get("total_evaluation_time_seconds", "nan")),
                       "total": time.perf_counter() - started},
           "lm_eval_version": run["results"].get("lm_eval_version")
           or subprocess.run([python, "-c", "import lm_eval; print(lm_eval.__version__)"],
                             capture_output=True, text=True).stdout.strip(),
           "command": run["command"], "task_yaml": run["task_yaml"],
           "example_context": run["samples"][0]["arguments"]}
    args.out.write_text(json.dumps(out, indent=1))
    print(json.dumps(out["metrics"], indent=1))


if __name__ == "__main__":
    main()
