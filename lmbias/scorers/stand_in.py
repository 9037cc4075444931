"""A tiny randomly initialised text classifier that stands in for a real one offline.

The toxicity and regard measurements need a classifier from the Hugging Face Hub (toxic-bert,
regardv3). Where the Hub cannot be reached, :func:`save_stand_in_classifier` saves a 2-layer,
16-wide BERT with the real classifier's labels, so that the measurement, its options and its output
can be tried (the metric cards' examples use it). Its weights are random: **its predictions mean
nothing** about the texts. It marks itself in its ``config.json`` (``lmbias_stand_in``), and every
result scored with it carries :data:`STAND_IN` (:attr:`lmbias.scorers.classifier.TextClassifier.stand_in`),
which the report, the leaderboard and ``lmbias push`` show beside each number.
"""

from __future__ import annotations

import os

# Real classifiers' label sets, in their output order.
TOXIC_BERT_LABELS = ("toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate")  # unitary/toxic-bert
REGARD_LABELS = ("negative", "neutral", "other", "positive")  # sasha/regardv3
_SPECIAL = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
# The config key that marks a stand-in, and what every result computed with one says.
CONFIG_KEY = "lmbias_stand_in"
STAND_IN = "stand-in, random weights, meaningless"


def save_stand_in_classifier(folder: str | os.PathLike, labels, *, multi_label: bool = False,
                             words=("xyz", "person", "he", "she", "was", "is", "a", "the"), seed: int = 0) -> str:
    """Save a random BERT sequence classifier with ``labels`` (and a word-level vocabulary of
    ``words``; any other word is ``[UNK]``) in ``folder``; returns the folder as a string, ready for
    ``config_name=`` or ``--toxicity-model`` / ``--regard-model``. ``multi_label``: independent labels
    (sigmoid, like toxic-bert) instead of one of them (softmax). Seeded: the same call gives the same model.

    >>> import tempfile
    >>> path = save_stand_in_classifier(tempfile.mkdtemp(), REGARD_LABELS)
    >>> from lmbias.scorers.classifier import load_classifier
    >>> classifier = load_classifier(path, device="cpu")
    >>> classifier.labels, classifier.stand_in
    (['negative', 'neutral', 'other', 'positive'], 'stand-in, random weights, meaningless')
    """
    import torch
    import transformers

    from ..checks import check_texts

    labels = check_texts(labels, "labels")
    os.makedirs(folder, exist_ok=True)
    vocab = os.path.join(folder, "vocab.txt")
    with open(vocab, "w", encoding="utf-8") as out:
        out.write("\n".join([*_SPECIAL, *dict.fromkeys(str(word).lower() for word in words)]))
    tokenizer = transformers.BertTokenizer(vocab=vocab)
    config = transformers.BertConfig(
        vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
        max_position_embeddings=512, initializer_range=0.5, id2label=dict(enumerate(labels)),
        label2id={label: i for i, label in enumerate(labels)},
        problem_type="multi_label_classification" if multi_label else "single_label_classification",
        **{CONFIG_KEY: STAND_IN},
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = transformers.BertForSequenceClassification(config).eval()
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)
