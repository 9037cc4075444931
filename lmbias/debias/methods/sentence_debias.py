"""``--method sentence_debias``: SentenceDebias (Liang et al. 2020) as bias-bench applies it: the
bias direction is the first principal component of the normalised sentence representations of
counterfactual sets (each set: one sentence in each group's version, centred on the set's mean;
:func:`lmbias.debias.projection_data.counterfactual_sets`), and every final hidden state loses its
component along it: ``h - (h . v) v / (v . v)``."""

from __future__ import annotations

import numpy as np

from ...lm.representations import mean_hidden_states
from ..attribute_words import BIAS_TYPES
from ..projection_data import counterfactual_sets
from . import DebiasMethod, Projection


def bias_direction(sets: np.ndarray) -> np.ndarray:
    """The first principal component of ``sets`` (n sets x versions x dim) centred on each set's mean."""
    centred = (sets - sets.mean(axis=1, keepdims=True)).reshape(-1, sets.shape[-1])
    centred = centred - centred.mean(axis=0)  # what PCA subtracts (about 0 already)
    return np.linalg.svd(centred, full_matrices=False)[2][0]


def _transform(preparation) -> Projection:
    import torch

    settings = preparation.settings
    sets = counterfactual_sets(preparation.texts, settings["bias_type"], data_dir=preparation.data_dir)[: settings["fit_sentences"]]
    flat = [text for versions in sets for text in versions]
    vectors = mean_hidden_states(preparation.model, preparation.tokenizer, flat, batch_size=settings["batch_size"], normalize=True,
                                 max_length=settings["max_length"], label=f"debias: encoding {len(flat):,} sentences")
    direction = bias_direction(vectors.astype(np.float64).reshape(len(sets), len(sets[0]), -1))
    matrix = np.eye(len(direction)) - np.outer(direction, direction) / direction.dot(direction)
    return Projection(torch.tensor(matrix, dtype=torch.float32), torch.zeros(len(direction)),
                      {"counterfactual_sets": len(sets), "versions_per_set": len(sets[0])})


METHOD = DebiasMethod(
    name="sentence_debias",
    description="SentenceDebias (Liang et al. 2020; bias-bench's settings): the final hidden states lose their component "
                "along the bias direction, the first principal component of counterfactual sentence sets",
    transform=_transform,
    bias_types=BIAS_TYPES,
)
