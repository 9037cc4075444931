"""``--method embedding``: the embedding regularisation of Huang et al. (2020, §4), a training loss
term: the cosine distance of h̄ (the mean of the last two layers' hidden states) of a training text
and of its counterfactual, at their aligned prefix ends (:mod:`lmbias.debias.regularizers`)."""

from __future__ import annotations

from ..regularizers import batch_distance
from . import DebiasMethod


def _loss_term(preparation):
    return batch_distance  # no preparation: the distance of the model's own hidden states


METHOD = DebiasMethod(
    name="embedding",
    description="the embedding regularisation of Huang et al. 2020 (§4), the cosine distance of the hidden states (the mean "
                "of the last two layers) of a text and of its counterfactual",
    loss_term=_loss_term,
)
