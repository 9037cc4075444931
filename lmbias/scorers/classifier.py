"""Batched text classification with any Hugging Face sequence-classification model.

Toxicity and regard are both "a classifier over texts"; this module is the one implementation:
load a model that really has a classification head, then score texts in length-sorted batches
(less padding), on any device, in fp16 on GPU, truncated to ``max_length`` tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .. import progress
from ..checks import check_choice, check_scalar, check_texts
from ..errors import InputError, NotFoundError
from .stand_in import CONFIG_KEY as STAND_IN_KEY

ACTIVATIONS = ("auto", "sigmoid", "softmax")


class ClassifierError(InputError):
    """The model cannot be used as a text classifier (no classification head, bad labels)."""


@dataclass
class TextClassifier:
    """A sequence-classification model with its tokenizer, ready to score texts.

    Build one with :func:`load_classifier`.
    """

    model: object
    tokenizer: object
    device: str
    name: str

    @property
    def labels(self) -> list[str]:
        """The model's label names, lowercased, in output order."""
        id2label = self.model.config.id2label
        return [str(id2label[i]).lower() for i in range(len(id2label))]

    @property
    def stand_in(self) -> str | None:
        """:data:`lmbias.scorers.stand_in.STAND_IN` when the model is a random stand-in (its config
        says so), else None; results scored with it record this as their ``stand_in``."""
        return getattr(self.model.config, STAND_IN_KEY, None) or None

    @property
    def multi_label(self) -> bool:
        """True when the config says the labels are independent (sigmoid), else softmax."""
        return self.model.config.problem_type == "multi_label_classification"

    def probabilities(
        self,
        texts: Sequence[str],
        *,
        batch_size: int = 32,
        max_length: int = 256,
        activation: str = "auto",
    ) -> np.ndarray:
        """Label probabilities, shape (len(texts), n_labels), float32, in input order.

        Texts are sorted by length and cut into batches of ``batch_size`` so that a batch pads to
        similar lengths; each is truncated to ``max_length`` tokens. ``activation="auto"`` uses a
        sigmoid for multi-label models and a softmax otherwise.
        """
        import torch

        texts = check_texts(texts, "texts")
        check_choice(activation, ACTIVATIONS, "activation")
        check_scalar(batch_size, "batch_size", minimum=1)
        check_scalar(max_length, "max_length", minimum=2)
        use_sigmoid = activation == "sigmoid" or (activation == "auto" and self.multi_label)
        # Never longer than the model's position embeddings allow.
        max_length = min(max_length, getattr(self.model.config, "max_position_embeddings", max_length) or max_length)
        order = np.argsort([len(text) for text in texts], kind="stable")
        out = np.empty((len(texts), len(self.labels)), dtype=np.float32)
        with torch.inference_mode(), progress.bar(len(texts), f"classifier {self.name}") as shown:
            for start in range(0, len(texts), batch_size):
                index = order[start : start + batch_size]
                encoded = self.tokenizer(
                    [texts[i] for i in index], padding=True, truncation=True, max_length=max_length, return_tensors="pt"
                ).to(self.device)
                logits = self.model(**encoded).logits.float()
                probs = torch.sigmoid(logits) if use_sigmoid else torch.softmax(logits, dim=-1)
                out[index] = probs.cpu().numpy()
                shown.update(len(index))
        return out


def default_device() -> str:
    """``"cuda"`` when a GPU is available, else ``"cpu"``."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def check_classifier_path(name_or_path: str | None, option: str) -> None:
    """An InputError naming ``option`` when ``name_or_path`` is meant as a local path
    (:func:`lmbias.model_source.looks_like_path`) and nothing is there: a typo is not skipped like a
    Hub id that cannot be reached offline."""
    from pathlib import Path

    from ..model_source import looks_like_path

    if name_or_path and looks_like_path(str(name_or_path)) and not Path(str(name_or_path)).expanduser().exists():
        raise InputError(f"{option} {name_or_path}: there is no such folder; give a classifier folder saved with "
                         "save_pretrained, or a Hub id")


def load_classifier(
    name_or_path: str,
    *,
    device: str | None = None,
    dtype: str | None = None,
    trust_remote_code: bool = False,
    option: str | None = None,
) -> TextClassifier:
    """Load a Hugging Face sequence-classification model by Hub id or local directory.

    Args:
        name_or_path: e.g. ``"unitary/toxic-bert"`` or a folder saved with ``save_pretrained``.
        device: ``"cpu"``, ``"cuda"``, ``"cuda:1"``... (default: a GPU if there is one).
        dtype: ``"float16"``, ``"bfloat16"`` or ``"float32"``; default fp16 on GPU, fp32 on CPU.
        trust_remote_code: passed to transformers (off by default).
        option: the command-line option that names the classifier (``--toxicity-model``), said in the error's fix.

    Raises:
        ClassifierError: the checkpoint has no trained classification head (transformers would
            otherwise add a random one with only a warning).
        NotFoundError (an OSError): the model cannot be found (offline and not cached, or a wrong path).
    """
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from ..model_source import model_source
    from ..progress import quiet_loading

    device = device or default_device()
    dtype = dtype or ("float16" if device.startswith("cuda") else "float32")
    source = model_source(str(name_or_path))
    fix = (f"pass {option} DIR (a classifier folder saved with save_pretrained)" if option else
           "pass a folder saved with save_pretrained") + ", or a Hub id the Hub can serve"
    if not source.available:  # known in one request, not after transformers' retries
        error = NotFoundError(f"cannot load the classifier {name_or_path!r}: {source.reason}; {fix}")
        error.summary = f"classifier {name_or_path!r} cannot be loaded: {source.reason}"  # a skip notice adds its own fix
        raise error
    try:
        with quiet_loading():
            model, info = AutoModelForSequenceClassification.from_pretrained(
                name_or_path, dtype=getattr(torch, dtype), trust_remote_code=trust_remote_code, output_loading_info=True,
                **source.load_kwargs()
            )
    except OSError as error:
        raise NotFoundError(f"cannot load the classifier {name_or_path!r}: {str(error).splitlines()[0]}; {fix}") from error
    missing = sorted(info.get("missing_keys", []))
    if missing:
        raise ClassifierError(
            f"{name_or_path!r} has no trained sequence-classification head: the checkpoint lacks "
            f"{missing[:4]} (transformers would initialise them at random); give a fine-tuned "
            "classifier such as 'unitary/toxic-bert'"
        )
    tokenizer = AutoTokenizer.from_pretrained(name_or_path, trust_remote_code=trust_remote_code, **source.load_kwargs())
    model.to(device).eval()
    return TextClassifier(model=model, tokenizer=tokenizer, device=device, name=str(name_or_path))
