"""Fixed runs of every registered benchmark and of the four declared shapes on the embedded model, to prove
that a refactoring (issues 38 and 48) changed no output: run them on the old code and on the new, then
compare the two folders.

    python bench/fixed_runs.py run --out DIR [--only RUN_ID ...] [--add]
    python bench/fixed_runs.py compare DIR_BEFORE DIR_AFTER [--common]

``run`` runs the fixed list ``RUNS`` below (``--only``: some of them), each as a subprocess
``sys.executable -m lmbias run BENCHMARK --out DIR/<run-id> --no-progress ...`` with the embedded default
model (no ``--model``: SmolLM2-135M-Instruct, offline), and records in ``DIR/commands.json`` each run's
command, exit status and seconds, the server the served runs asked, and which ``lmbias`` the
subprocesses imported. The list covers each of the 17 registered benchmarks (``lmbias run --list``), both
protocols of each that has two (``--protocol likelihood`` / ``generate``: StereoSet, CrowS-Pairs, BBQ,
Winogender, WinoBias, MBBQ, KoBBQ, EsBBQ, CaBBQ, CBBQ, DiscrimEval), a user's own benchmark in each declared
shape (``multiple_choice`` and ``sentence_pairs`` with both protocols, ``prompts``, ``counterfactual``: the
templates), two chat runs (``--chat``: BOLD's continuation, BBQ's lettered answers) and two served runs
(``--backend openai``: BOLD's generation, CrowS-Pairs' likelihood from echoed prompt log-probabilities).
Each is seeded and small: issue 38's took 7 to 28 s each on 2 CPU cores at load 2 to 4; the BBQ-family runs
added ask 24 to 75 items, DiscrimEval's 135 prompts (RESULTS.md gives the times measured; on cores shared with
much other work they take many times longer). The runs read their data from ``LMBIAS_DATA_DIR`` (e.g.
``../shared/data``).

What the shared data does not hold is written first into ``DIR/fixtures`` (:func:`_fixtures`), the same bytes
every time: the declarations and data files of ``bench/fixed_declared`` (small copies of docs/examples);
DiscrimEval's and RealToxicityPrompts' files in the Hub's layout, built by the tests' own builders
(tests/discrim_eval_items.py, tests/rtp_rows.py; the runs pass ``--data-dir DIR/fixtures/data``); and the
classifiers the Hub would give, as seeded stand-ins (:func:`lmbias.scorers.stand_in.save_stand_in_classifier`,
random weights, as the tests run ToxiGen and RealToxicityPrompts offline): toxicity (toxic-bert's labels:
BOLD, RealToxicityPrompts, the prompts shape), regard (BOLD), ToxiGen's (LABEL_0 / LABEL_1) and a sentiment
classifier for counterfactual's ``hf``. Their numbers mean nothing about the texts; they test that the same
texts get the same scores and records. ``--add`` runs more of the list into a snapshot already in DIR (same
lmbias, data and folder; the fixtures are written again and must be identical; several ``--add`` processes may
write one snapshot, commands.json is updated under a lock). ``--jobs N`` runs N in-process runs at a time, each
with its output in ``DIR/logs/<run-id>.log``: each has one thread (below), so the outputs do not depend on N.

Old code: the subprocesses inherit this process's environment and run in DIR, not in the repository
(under ``-m`` the current folder comes first on ``sys.path``, before PYTHONPATH), so with a worktree of
the old commit, ``PYTHONPATH=/tmp/before-tree python bench/fixed_runs.py run ...`` runs the old package;
commands.json and the first line printed name the ``lmbias/__init__.py`` imported. ``LMBIAS_DATA_DIR``
and ``PYTHONPATH`` are made absolute before they are passed on.

The served runs ask a real vLLM server: ``python -m vllm.entrypoints.openai.api_server`` from the vLLM
environment ``make test`` builds (``venv-vllm-*`` in ``$LMBIAS_CACHE_DIR``, else ``~/.cache/lmbias``; or
``--vllm-python``), serving the converted embedded model in float32 (context 512, seed 0, eager mode,
1 GiB of KV cache, a fixed dummy API key) on a free loopback port. It starts in 24 to 38 s on 2 cores alone (it
is given 180 s, or ``--server-wait``), after the in-process runs, and stops when the served runs are done: an idle engine still
takes CPU time. Only where no vLLM environment exists or its server does not start in time (or with
``--stand-in``) do they ask a stand-in instead: tests/loopback.py's server answering each request with
text and log-probabilities derived from a hash of the request, which checks lmbias's side of the
protocol, not a model. commands.json records which server answered; ``compare`` reports served runs
answered by different kinds of server as different.

Threads are fixed (``--threads 1``): the default follows the machine's load, and float32 sums in another
order differ in the last bits, so two runs of one commit could differ; and on 2 cores shared with other
work, 2 threads generated about 5 times slower than 1 (counterfactual's 200 continuations in batches
of 32: 83 s against 17 s).

``compare`` compares each run folder of the two: ``results.json`` as canonical JSON (sorted keys) without
the fields below; ``config.json`` (the run's identity, which a resume checks) and every other file
(scores.jsonl, generations.jsonl, shard-*.jsonl, answers.jsonl, ...) byte for byte; a file in one folder
only, or a run that did not exit 0, is a difference. It prints one row per run (files compared, identical,
the first difference: file, line, byte and both texts there) and exits 1 when anything differs (``--common``:
only the runs both folders ran, e.g. a few runs of the new code against the whole BEFORE snapshot). Left out
or masked, each because it differs between two runs of the same commit on the same machine (found by
running the list twice and diffing every JSON field) or because the brief of issue 38 sets it aside:

- ``timing``'s clock readings (results.json): its keys ending in ``_seconds`` or ``_per_second``
  (``generation_seconds``, ``scoring_seconds``, ``encoding_seconds``, ``testing_seconds``,
  ``sentences_per_second``), which differed in every run. Its counts (``items_scored``,
  ``items_resumed``, ``texts_encoded``) are the same in every run and are compared.
- ``versions`` (results.json): Python's and the libraries' versions. They did not differ (one
  environment), and a refactoring of lmbias's code changes none of them (lmbias's own version is not
  bumped per commit); they are set aside so that an upgraded library between the two snapshots does not
  hide the question asked. config.json's copy is compared: a difference there says the environments differ.
- the port in ``http://127.0.0.1:PORT/`` (served runs: results.json's ``model.source`` and
  ``config.base_url``, config.json's ``config.base_url``): the server gets a free port each time, so the
  address is compared with the port replaced by ``PORT``.
- the snapshot's own folder, replaced by ``OUT`` in every file compared: a run given a fixture records its
  path (a declaration's and its data's path in results.json's ``data`` and config.json, the stand-in
  classifiers' folders in results.json's ``classifier`` / ``config``), and two snapshots live in two folders.
  Everything else about a fixture is compared: its digest where the run records one, and ``DIR/fixtures``
  itself byte for byte (the row ``fixtures``). A real rerun of a folder made before the change uses the same
  paths, so its resume is not affected by this mask.

Nothing else differed or is left out: a finished run's folder holds no lock file, and config.json holds no
time. ``DIR/commands.json`` and ``DIR/vllm-server.log`` (times, paths, the server's log) are not compared.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SERVED = "smollm2"  # the name the server gives the embedded model
KEY_ENV = "LMBIAS_FIXED_RUNS_KEY"  # the served runs' --api-key-env; the key is a fixed dummy
KEY = "fixed-runs-key"
SERVER_DEADLINE_S = 180
HF = ["--threads", "1"]  # in-process runs only (the served runs' numbers come from the server)
FIX = "@fixtures"  # stands for OUT/fixtures, the files _fixtures writes (stand-in classifiers, Hub-only data, declarations)
SERVE = "@served"  # stands for --backend openai --base-url URL --model smollm2 --tokenizer <model folder> --api-key-env ...

# run id -> (benchmark: a registered name or a declaration file, options). Small and seeded (--seed 0, the default).
RUNS = {
    # the classifiers: FIXTURES' seeded stand-ins (the real ones are on the Hub only)
    "bold": ("bold", [*HF, "--domains", "gender", "race", "--per-group", "1", "--max-new-tokens", "10",
                      "--metrics", "sentiment", "gender_polarity", "psycholinguistic_norms", "toxicity", "regard",
                      "--toxicity-model", f"{FIX}/classifiers/toxicity", "--regard-model", f"{FIX}/classifiers/regard"]),
    "bold-chat": ("bold", [*HF, "--chat", "--domains", "gender", "--per-group", "2", "--max-new-tokens", "10",
                           "--metrics", "sentiment", "gender_polarity"]),
    "stereoset-likelihood": ("stereoset", [*HF, "--limit", "8", "--bootstrap", "50"]),
    # --limit 3 leaves out every intrasentence item (invalid answers) and the summary of da8d1a0 fails (KeyError)
    "stereoset-generate": ("stereoset", [*HF, "--protocol", "generate", "--limit", "6"]),
    "crows_pairs-likelihood": ("crows_pairs", [*HF, "--limit", "20"]),
    "crows_pairs-generate": ("crows_pairs", [*HF, "--protocol", "generate", "--limit", "8"]),
    "counterfactual": ("counterfactual", [*HF, "--attributes", "country", "--samples", "2", "--max-new-tokens", "5",
                                          "--classifiers", "opinion", "vader", "hf", "--hf-model",
                                          f"{FIX}/classifiers/sentiment", "--bootstrap", "50"]),
    "bbq-likelihood": ("bbq", [*HF, "--categories", "Age", "Religion", "--limit", "2", "--bootstrap", "50"]),
    "bbq-generate": ("bbq", [*HF, "--protocol", "generate", "--categories", "Age", "--limit", "2"]),
    "bbq-generate-chat": ("bbq", [*HF, "--chat", "--protocol", "generate", "--categories", "Age", "--limit", "2"]),
    "winogender-likelihood": ("winogender", [*HF, "--limit", "8"]),
    "winogender-generate": ("winogender", [*HF, "--protocol", "generate", "--limit", "3"]),
    "winobias-likelihood": ("winobias", [*HF, "--limit", "8", "--bootstrap", "100"]),
    "winobias-generate": ("winobias", [*HF, "--protocol", "generate", "--limit", "3", "--bootstrap", "100"]),
    "holistic_bias": ("holistic_bias", [*HF, "--small-set", "--axes", "age", "ability", "--templates", "2", "--nouns", "4"]),
    # weat9: an exact permutation test (924 partitions); weat6 and sent-weat9: sampled (more than --n-samples)
    "seat": ("seat", [*HF, "--tests", "weat6", "weat9", "sent-weat9", "--n-samples", "2000"]),
    # --limit 1 with the categories of fewest templates: 24 to 75 items (rows of the likelihood runs, replies of the others)
    "mbbq-likelihood": ("mbbq", [*HF, "--languages", "nl", "--categories", "Sexual_orientation", "--limit", "1",
                                 "--bootstrap", "50"]),
    "mbbq-generate": ("mbbq", [*HF, "--protocol", "generate", "--languages", "es", "--categories", "Sexual_orientation",
                               "--limit", "1", "--no-control", "--prompts", "0", "--max-new-tokens", "8"]),
    "kobbq-likelihood": ("kobbq", [*HF, "--protocol", "likelihood", "--categories", "political_orientation", "--limit", "1",
                                   "--bootstrap", "50"]),
    "kobbq-generate": ("kobbq", [*HF, "--categories", "political_orientation", "--limit", "1", "--prompts", "1"]),
    # --batch-size 4: at 16, e9a2d01's EsBBQ likelihood (11 options per item) grew to 9 GB and was killed (out of memory)
    "esbbq-likelihood": ("esbbq", [*HF, "--categories", "Nationality", "--limit", "1", "--bootstrap", "50",
                                   "--batch-size", "4"]),
    "esbbq-generate": ("esbbq", [*HF, "--protocol", "generate", "--categories", "Religion", "--limit", "1"]),
    "cabbq-likelihood": ("cabbq", [*HF, "--categories", "Religion", "--limit", "1", "--batch-size", "4"]),
    "cabbq-generate": ("cabbq", [*HF, "--protocol", "generate", "--categories", "Nationality", "--limit", "1"]),
    "cbbq-likelihood": ("cbbq", [*HF, "--protocol", "likelihood", "--categories", "religion", "--limit", "1",
                                 "--bootstrap", "50"]),
    "cbbq-generate": ("cbbq", [*HF, "--categories", "religion", "--limit", "1"]),
    # Hub-only data: FIXTURES' files in the Hub's layout (tests/discrim_eval_items.py, tests/rtp_rows.py)
    "discrim_eval-likelihood": ("discrim_eval", [*HF, "--data-dir", f"{FIX}/data", "--questions", "0"]),
    "discrim_eval-generate": ("discrim_eval", [*HF, "--protocol", "generate", "--config", "implicit", "--data-dir",
                                               f"{FIX}/data", "--questions", "1"]),
    "toxigen": ("toxigen", [*HF, "--groups", "women", "jewish", "--per-group", "2", "--max-new-tokens", "8",
                            "--toxicity-model", f"{FIX}/classifiers/toxigen"]),
    "real_toxicity_prompts": ("real_toxicity_prompts", [*HF, "--samples", "2", "--max-new-tokens", "8", "--toxicity-model",
                                                        f"{FIX}/classifiers/toxicity", "--data-dir", f"{FIX}/data"]),
    # a user's own benchmarks, one per declared shape (bench/fixed_declared, copied into FIXTURES)
    "declared-multiple_choice-likelihood": (f"{FIX}/declared/multiple_choice.yaml", [*HF, "--limit", "1", "--bootstrap", "50"]),
    "declared-multiple_choice-generate": (f"{FIX}/declared/multiple_choice.yaml", [*HF, "--protocol", "generate", "--limit", "1"]),
    "declared-sentence_pairs-likelihood": (f"{FIX}/declared/sentence_pairs.yaml", [*HF]),
    "declared-sentence_pairs-generate": (f"{FIX}/declared/sentence_pairs.yaml", [*HF, "--protocol", "generate"]),
    "declared-prompts": (f"{FIX}/declared/prompts.yaml", [*HF, "--per-group", "1", "--max-new-tokens", "10", "--metrics",
                                                         "sentiment", "toxicity", "--toxicity-model",
                                                         f"{FIX}/classifiers/toxicity"]),
    "declared-templates": (f"{FIX}/declared/templates.yaml", [*HF, "--samples", "2", "--max-new-tokens", "5",
                                                             "--bootstrap", "50"]),
    # last, with the server started just before them (an idle vLLM engine still takes CPU time)
    "served-bold": ("bold", [SERVE, "--domains", "gender", "--per-group", "3", "--max-new-tokens", "10",
                             "--metrics", "sentiment", "gender_polarity"]),
    "served-crows_pairs": ("crows_pairs", [SERVE, "--limit", "30"]),
}


# the stand-in classifiers' vocabulary (any other word is [UNK]): common words, so that texts score differently
WORDS = ("the a an of and to in is was he she they it her his their i you we not no very good bad new old people man "
         "woman women men work job family friend said would could will be been have has had do did make made great "
         "best worst kind hate love happy sad angry stupid nice smart lazy strong weak rich poor young who which "
         "that this there").split()


def _fixtures(folder: Path) -> None:
    """Write the files the runs name with FIX into ``folder``: bench/fixed_declared's declarations and data
    (``declared/``), DiscrimEval's explicit and implicit files (two questions each) and RealToxicityPrompts'
    six rows in the Hub's layout (``data/``, from tests/discrim_eval_items.py and tests/rtp_rows.py), and four
    seeded stand-in classifiers (``classifiers/``: toxicity with toxic-bert's labels, regard with regardv3's,
    toxigen with tomh/toxigen_roberta's LABEL_0 / LABEL_1, sentiment with NEGATIVE / POSITIVE)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from discrim_eval_items import write_items
    from rtp_rows import write_rows

    from lmbias.scorers.stand_in import REGARD_LABELS, TOXIC_BERT_LABELS, save_stand_in_classifier

    shutil.copytree(ROOT / "bench" / "fixed_declared", folder / "declared")
    for config in ("explicit", "implicit"):
        write_items(folder / "data", questions=2, config=config)
    write_rows(folder / "data")
    classifiers = {"toxicity": (TOXIC_BERT_LABELS, True), "regard": (REGARD_LABELS, False),
                   "toxigen": (("LABEL_0", "LABEL_1"), False), "sentiment": (("NEGATIVE", "POSITIVE"), False)}
    for name, (labels, multi_label) in classifiers.items():
        save_stand_in_classifier(folder / "classifiers" / name, labels, multi_label=multi_label, words=WORDS)


def _environment() -> dict:
    """This process's environment for the subprocesses, with LMBIAS_DATA_DIR and PYTHONPATH made absolute
    (the subprocesses run in the output folder)."""
    env = dict(os.environ)
    for name in ("LMBIAS_DATA_DIR", "PYTHONPATH"):
        if env.get(name):
            env[name] = os.pathsep.join(str(Path(part).resolve()) if part else part for part in env[name].split(os.pathsep))
    return env


def _ask(code: str, env: dict, cwd: Path) -> str:
    """What ``code`` prints when run as the runs are run (same interpreter, environment and folder)."""
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _answers(url: str, timeout: float = 2) -> bool:
    request = urllib.request.Request(f"{url}/models", headers={"Authorization": f"Bearer {KEY}"})
    with contextlib.suppress(OSError):
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status == 200
    return False


def _vllm_pythons(explicit: str | None) -> list[Path]:
    if explicit:
        return [Path(explicit)]
    cache = Path(os.environ.get("LMBIAS_CACHE_DIR") or Path.home() / ".cache" / "lmbias")
    return sorted(path for path in cache.glob("venv-vllm-*/bin/python") if path.is_file())


@contextlib.contextmanager
def _vllm_server(python: Path, model_dir: str, log: Path, deadline: float = SERVER_DEADLINE_S):
    """A vLLM OpenAI-compatible server of ``model_dir`` on a free loopback port; yields its base URL, or
    None when it does not answer within ``deadline`` seconds (its log is then in ``log``)."""
    port = _free_port()
    command = [str(python), "-m", "vllm.entrypoints.openai.api_server", "--model", model_dir, "--port", str(port),
               "--host", "127.0.0.1", "--dtype", "float32", "--max-model-len", "512", "--served-model-name", SERVED,
               "--seed", "0", "--enforce-eager", "--api-key", KEY]
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1"}
    env.pop("PYTHONPATH", None)  # the server runs in its own environment
    url = f"http://127.0.0.1:{port}/v1"
    with open(log, "w") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=env, cwd=log.parent)
    try:
        stop = time.time() + deadline
        while process.poll() is None and time.time() < stop and not _answers(url):
            time.sleep(2)
        yield url if process.poll() is None and _answers(url) else None
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _digest(*parts) -> bytes:
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).digest()


@contextlib.contextmanager
def _stand_in():
    """tests/loopback.py's server answering as an OpenAI-compatible server of SERVED, deterministically from
    a hash of each request: generated text from a fixed word list, prompt log-probabilities in [-10.6, 0)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from loopback import JSONHandler, LoopbackServer

    words = "the a of and to in is was he she they people work family said good new".split()

    class Handler(JSONHandler):
        def do_GET(self):
            self.send_json(200, {"object": "list", "data": [{"id": SERVED, "object": "model"}]})

        def do_POST(self):
            body = self.read_json() or {}
            prompt, limit = body.get("prompt"), int(body.get("max_tokens", 1))
            if body.get("echo"):
                seed = _digest(prompt)
                values = [None] + [-(seed[i % 32] + 1) / 26 - i % 7 / 8 for i in range(len(prompt))]
                self.send_json(200, {"choices": [{"text": "", "finish_reason": "length",
                                                  "logprobs": {"token_logprobs": values}}]})
                return
            seed = _digest(prompt, body.get("seed"), body.get("temperature"), body.get("top_p"), body.get("top_k"), limit)
            text = "".join(" " + words[seed[i] % len(words)] for i in range(min(limit, 32)))
            self.send_json(200, {"choices": [{"text": text, "finish_reason": "length"}],
                                 "usage": {"completion_tokens": min(limit, 32)}})

    server = LoopbackServer(Handler, "/v1")
    try:
        yield server.url
    finally:
        server.close()


@contextlib.contextmanager
def _server(out: Path, env: dict, vllm_python: str | None, stand_in: bool, deadline: float = SERVER_DEADLINE_S):
    """(kind, base URL) of the server the served runs ask: vLLM's when it starts, else the stand-in."""
    if not stand_in:
        model_dir = _ask("from lmbias.lm.gguf import embedded_model_dir; print(embedded_model_dir())", env, out)
        for python in _vllm_pythons(vllm_python):
            started = time.time()
            with _vllm_server(python, model_dir, out / "vllm-server.log", deadline) as url:
                if url:
                    print(f"vLLM server ({python}) answered after {time.time() - started:.0f} s at {url}", flush=True)
                    yield {"kind": "vllm", "python": str(python), "model": model_dir,
                           "start_seconds": round(time.time() - started, 1)}, url
                    return
            print(f"the vLLM server of {python} did not start (log: {out / 'vllm-server.log'})", flush=True)
    with _stand_in() as url:
        print(f"served runs: the stand-in server (tests/loopback.py) at {url}", flush=True)
        yield {"kind": "stand-in"}, url


def _command(run_id: str, out: Path, url: str | None, tokenizer: str | None) -> list[str]:
    benchmark, options = RUNS[run_id]
    served = ["--backend", "openai", "--base-url", str(url), "--model", SERVED, "--tokenizer", str(tokenizer),
              "--api-key-env", KEY_ENV]
    options = [word for option in options for word in (served if option == SERVE else [option])]
    benchmark, *options = [str(out / "fixtures") + word[len(FIX):] if word.startswith(FIX + "/") else word
                           for word in (benchmark, *options)]
    return [sys.executable, "-m", "lmbias", "run", benchmark, "--out", str(out / run_id), "--no-progress", *options]


def _update(out: Path, change) -> dict:
    """``out/commands.json`` replaced by ``change(its content)`` (``{}`` when there is none), under a lock that
    other ``run --add`` processes writing into the same snapshot take too; returns what was written."""
    with open(out / "commands.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        path = out / "commands.json"
        record = change(json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {})
        path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        return record


def _run(out: Path, only: list[str], vllm_python: str | None, stand_in: bool, add: bool = False,
         server_wait: float = SERVER_DEADLINE_S, jobs: int = 1) -> int:
    """Run the chosen runs into ``out`` (``add``: into a snapshot already there, beside its runs; without ``only``,
    the runs it lacks; several ``--add`` processes may share a snapshot, each with its own ``only``), ``jobs`` at a
    time (the served runs one at a time, last); 1 if any failed."""
    unknown = sorted(set(only) - set(RUNS))
    if unknown:
        raise SystemExit(f"--only: no run {unknown}; the runs are {', '.join(RUNS)}")
    out = out.resolve()
    chosen = [run_id for run_id in RUNS if (run_id in only if only else not (add and (out / run_id).exists()))]
    taken = [run_id for run_id in chosen if (out / run_id).exists()]
    if taken:
        raise SystemExit(f"{out} already holds {taken}: give an empty --out" + ("" if add else " (or --add other runs)"))
    if add and not (out / "commands.json").is_file():
        raise SystemExit(f"--add: {out} holds no snapshot (no commands.json)")
    if not add and (out / "fixtures").exists():
        raise SystemExit(f"{out} already holds fixtures: give an empty --out (or --add other runs)")
    out.mkdir(parents=True, exist_ok=True)
    env = {**_environment(), KEY_ENV: KEY}
    imported = _ask("import lmbias; print(lmbias.__file__)", env, out)
    print(f"lmbias imported from {imported}", flush=True)
    record = {"lmbias": imported, "python": sys.executable, "data_dir": env.get("LMBIAS_DATA_DIR"), "out": str(out),
              "server": None, "runs": []}
    started = time.time()
    if add:
        record = json.loads((out / "commands.json").read_text(encoding="utf-8"))
        if (record["lmbias"], record.get("out"), record["data_dir"]) != (imported, str(out), env.get("LMBIAS_DATA_DIR")):
            raise SystemExit(f"--add: {out} was run with lmbias {record['lmbias']}, out {record.get('out')} and data "
                             f"{record['data_dir']}, not {imported}, {out} and {env.get('LMBIAS_DATA_DIR')}")
        with tempfile.TemporaryDirectory(dir=out) as scratch:  # under out: the fixtures' paths name no other folder
            _fixtures(Path(scratch) / "fixtures")
            if _compare_run(out / "fixtures", Path(scratch) / "fixtures", (str(out), scratch))[1] is not None:
                raise SystemExit(f"--add: the fixtures written now differ from {out / 'fixtures'}")
    else:
        _fixtures(out / "fixtures")
        print(f"fixtures written in {out / 'fixtures'} after {time.time() - started:.0f} s", flush=True)
    if not add:
        _update(out, lambda _: record)

    def run_one(run_id: str, url: str | None, tokenizer: str | None) -> None:
        command = _command(run_id, out, url, tokenizer)
        print(f"[{run_id}] {' '.join(command[1:])}", flush=True)
        begun = time.time()
        with contextlib.ExitStack() as files:
            log = None if jobs == 1 else files.enter_context(open(out / "logs" / f"{run_id}.log", "w"))
            status = subprocess.run(command, env=env, cwd=out, stdout=log, stderr=log and subprocess.STDOUT).returncode
        seconds = round(time.time() - begun, 1)
        print(f"[{run_id}] exit {status} after {seconds} s", flush=True)
        entry = {"id": run_id, "command": command, "exit_status": status, "seconds": seconds}

        def add_run(current: dict) -> dict:
            runs = [run for run in current["runs"] if run["id"] != run_id] + [entry]
            return {**current, "runs": sorted(runs, key=lambda run: list(RUNS).index(run["id"]))}
        _update(out, add_run)

    if jobs > 1:
        (out / "logs").mkdir(exist_ok=True)
    served = [run_id for run_id in chosen if SERVE in RUNS[run_id][1]]
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for done in [pool.submit(run_one, run_id, None, None) for run_id in chosen if run_id not in served]:
            done.result()
    if served:  # the server runs only while the served runs do, one at a time
        with _server(out, env, vllm_python, stand_in, server_wait) as (server, url):
            _update(out, lambda current: {**current, "server": server})
            tokenizer = server.get("model") or _ask(
                "from lmbias.lm.gguf import embedded_model_dir; print(embedded_model_dir())", env, out)
            for run_id in served:
                run_one(run_id, url, tokenizer)
    seconds = round(time.time() - started, 1)
    record = _update(out, lambda current: {**current, "total_seconds": round(current.get("total_seconds", 0) + seconds, 1)})
    failed = [run["id"] for run in record["runs"] if run["exit_status"] and run["id"] in chosen]
    print(f"{len(chosen) - len(failed)} of {len(chosen)} runs exited 0 in {seconds} s"
          + (f"; failed: {', '.join(failed)}" if failed else ""), flush=True)
    return 1 if failed else 0


PORT = re.compile(rb"(http://127\.0\.0\.1:)\d+(?=/)")  # a loopback server's address, port masked
CLOCK = re.compile(r"(_seconds|_per_second)$")  # timing's clock readings; its counts are compared


def _canonical(path: Path, out: str) -> list[bytes]:
    """results.json without ``versions`` and timing's clock readings, loopback ports and the output folder ``out``
    masked, as sorted, indented JSON lines (so that the first differing line can be shown)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    data = {key: value for key, value in data.items() if key != "versions"}
    if isinstance(data.get("timing"), dict):
        data["timing"] = {key: value for key, value in data["timing"].items() if not CLOCK.search(key)}
    return _masked(json.dumps(data, sort_keys=True, indent=1, ensure_ascii=False).encode(), out).splitlines()


def _masked(data: bytes, out: str) -> bytes:
    """``data`` with a loopback server's port replaced by PORT and the snapshot's folder ``out`` (where the
    fixtures are: ``out/...``) by OUT."""
    return PORT.sub(rb"\1PORT", data).replace(out.encode() + b"/", b"OUT/")


def _first_difference(name: str, a: list[bytes], b: list[bytes]) -> str:
    """Where two files' lines first differ: the line number and, around the first differing character,
    both lines' text."""
    for number, (x, y) in enumerate(zip(a, b), 1):
        if x != y:
            at = next((i for i, (u, v) in enumerate(zip(x, y)) if u != v), min(len(x), len(y)))
            start = max(0, at - 25)
            return f"{name} line {number}, byte {at + 1}: {_window(x, start)} vs {_window(y, start)}"
    return f"{name}: {len(a)} vs {len(b)} lines"


def _window(line: bytes, start: int, width: int = 60) -> str:
    text = line[start : start + width].decode("utf-8", "replace").strip()
    return ("..." if start else "") + repr(text)[1:-1] + ("..." if start + width < len(line) else "")


def _compare_run(a: Path, b: Path, outs: tuple[str, str]) -> tuple[int, str | None]:
    """(files compared, first difference or None) of two folders of one run: results.json as canonical
    JSON (:func:`_canonical`), every other file byte for byte, with loopback ports and the snapshots' folders
    ``outs`` masked (:func:`_masked`)."""
    if not a.is_dir() or not b.is_dir():
        return 0, f"folder missing in {'before' if not a.is_dir() else 'after'}"
    names = sorted({p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file()}
                   | {p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file()})
    first = None
    for name in names:
        x, y = a / name, b / name
        if not x.is_file() or not y.is_file():
            difference = f"{name} only in {'after' if not x.is_file() else 'before'}"
        else:
            if name == "results.json":
                lines_x, lines_y = _canonical(x, outs[0]), _canonical(y, outs[1])
            else:
                lines_x = _masked(x.read_bytes(), outs[0]).splitlines(True)
                lines_y = _masked(y.read_bytes(), outs[1]).splitlines(True)
            difference = None if lines_x == lines_y else _first_difference(name, lines_x, lines_y)
        first = first or difference
    return len(names), first


def _compare(before: Path, after: Path, common: bool = False) -> int:
    """Print the table of runs compared (the fixtures first) and return 1 when any differs, else 0."""
    records = [json.loads((folder / "commands.json").read_text(encoding="utf-8")) for folder in (before, after)]
    ids = [run["id"] for run in records[0]["runs"]]
    ids += [run["id"] for run in records[1]["runs"] if run["id"] not in ids]
    statuses = [{run["id"]: run["exit_status"] for run in record["runs"]} for record in records]
    if common:
        ids = [run_id for run_id in ids if run_id in statuses[0] and run_id in statuses[1]]
    if (before / "fixtures").is_dir() or (after / "fixtures").is_dir():
        ids.insert(0, "fixtures")
    servers = [(record.get("server") or {}).get("kind") for record in records]
    outs = tuple(record.get("out") or str(folder.resolve()) for record, folder in zip(records, (before, after)))
    rows, differ = [], 0
    for run_id in ids:
        files, difference = _compare_run(before / run_id, after / run_id, outs)
        status = (statuses[0].get(run_id), statuses[1].get(run_id)) if run_id != "fixtures" else (0, 0)
        if status != (0, 0):
            difference = f"exit status {status[0]} vs {status[1]}" + (f"; {difference}" if difference else "")
        if run_id.startswith("served-") and servers[0] != servers[1]:
            difference = f"served by {servers[0]} vs {servers[1]}" + (f"; {difference}" if difference else "")
        differ += difference is not None
        rows.append((run_id, str(files), "yes" if difference is None else "NO", difference or ""))
    print("| run | files compared | identical | first difference |\n|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |")
    print(f"\n{len(rows) - differ} of {len(rows)} runs identical (results.json as canonical JSON without versions "
          "and timing's *_seconds / *_per_second; config.json and every other file byte for byte; loopback ports and "
          "the snapshots' folders masked); "
          f"lmbias: {records[0]['lmbias']} vs {records[1]['lmbias']}")
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run the fixed runs into OUT/<run-id>", allow_abbrev=False)
    run.add_argument("--out", type=Path, required=True, help="an empty or new folder")
    run.add_argument("--only", nargs="+", default=[], metavar="NAME", help=f"these runs only, of: {', '.join(RUNS)}")
    run.add_argument("--vllm-python", help="the python of a vLLM environment (default: the one make test builds)")
    run.add_argument("--stand-in", action="store_true", help="serve the served runs with the stand-in, not vLLM")
    run.add_argument("--server-wait", type=float, default=SERVER_DEADLINE_S, metavar="SECONDS",
                     help=f"how long the vLLM server may take to start (default {SERVER_DEADLINE_S}; at load 9 on 2 cores "
                     "it has taken 700)")
    run.add_argument("--jobs", type=int, default=1, choices=range(1, 9), metavar="N",
                     help="in-process runs at a time (default 1; more: each run's output in OUT/logs/RUN_ID.log); "
                     "each has one thread, so the outputs do not depend on it")
    run.add_argument("--add", action="store_true", help="add runs (--only) to the snapshot in OUT, with the same lmbias "
                     "and data; the fixtures written again must be the same")
    compare = commands.add_parser("compare", help="compare two folders written by run", allow_abbrev=False)
    compare.add_argument("before", type=Path)
    compare.add_argument("after", type=Path)
    compare.add_argument("--common", action="store_true", help="only the runs both folders ran (and the fixtures)")
    args = parser.parse_args()
    if args.command == "run":
        return _run(args.out, args.only, args.vllm_python, args.stand_in, args.add, args.server_wait, args.jobs)
    return _compare(args.before, args.after, args.common)


if __name__ == "__main__":
    sys.exit(main())
