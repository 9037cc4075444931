"""``--method cda``: counterfactual data augmentation as bias-bench runs it (Meade et al. 2022,
after Zmigrod et al. 2019 and Webster et al. 2020): continued language-model training on the
corpus's texts that hold an attribute word of ``--bias-type`` and on their two-sided swapped versions
(:func:`lmbias.debias.attribute_words.swap`: "he" -> "she" and "she" -> "he" in one text).

In the training loop the term is the LM loss on the swapped texts, so with ``--lambda 1`` each step
weighs the original and the swapped half equally (bias-bench trains on both); ``--lambda 0`` is the
control, LM training on the same original texts alone.
"""

from __future__ import annotations

import hashlib
import random

from ..attribute_words import BIAS_TYPES, attribute_words, swap
from ..pairs import is_held_out
from . import DebiasMethod


def cda_pairs(texts, settings: dict, data_dir=None) -> list[dict]:
    """Each text with an attribute word of ``settings["bias_type"]`` and its swapped version (a
    triple's replacements drawn per text from a generator seeded by the text and the seed)."""
    bias_type = settings["bias_type"]
    words = attribute_words(bias_type, data_dir)
    pairs = []
    for text in texts:
        digest = hashlib.sha256(f"{settings['seed']}:{text}".encode()).digest()
        swapped = swap(text, words, random.Random(int.from_bytes(digest[:8], "little")))
        if swapped is not None:
            pairs.append({"text": text, "counterfactual": swapped, "attribute": bias_type, "held_out": is_held_out(text)})
    return pairs


def _counterfactual_lm_loss(output, counterfactual_output, positions):
    return counterfactual_output.loss


def _loss_term(preparation):
    return _counterfactual_lm_loss


METHOD = DebiasMethod(
    name="cda",
    description="counterfactual data augmentation (bias-bench's two-sided word swaps): LM training on texts and their "
                "swapped versions, the swapped half weighted by lambda",
    loss_term=_loss_term,
    pairs=cda_pairs,
    bias_types=BIAS_TYPES,
)
