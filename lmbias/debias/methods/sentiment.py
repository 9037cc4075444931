"""``--method sentiment``: the sentiment regularisation of Huang et al. (2020, §4), a training loss
term with a preparation step. Step 2 of the paper's curriculum trains f_s, a sentiment classifier on
the starting model's features (:mod:`lmbias.debias.sentiment_head`), and saves it to
``sentiment_head.pt`` in the run folder (a resumed run loads it back); step 3's term is the distance
of the frozen f_s's outputs on h̄ of a training text and of its counterfactual, at their aligned
prefix ends."""

from __future__ import annotations

from pathlib import Path

from ...checks import check_choice, check_scalar
from ..features import last_token_features
from ..regularizers import batch_distance
from ..sentiment_head import DISTANCES, LABELERS, new_head, sentiment_labels, train_head
from . import DebiasMethod

HEAD_FILE = "sentiment_head.pt"


def _add_arguments(parser) -> None:
    parser.add_argument("--sentiment-labels", choices=LABELERS, default="vader", help="who labels f_s's training texts")
    parser.add_argument("--label-threshold", type=float, default=0.7, help="|score| above which a text is labelled")
    parser.add_argument("--sentiment-distance", choices=DISTANCES, default="hidden",
                        help="cosine of f_s's hidden layer, or |P(positive) difference|")


def _check(options: dict) -> None:
    check_choice(options["sentiment_labels"], LABELERS, "sentiment_labels")
    check_choice(options["sentiment_distance"], DISTANCES, "sentiment_distance")
    check_scalar(options["label_threshold"], "label_threshold", minimum=0, maximum=1, integer=False)


class SentimentTerm:
    """Step 3's loss term: the distance of the frozen ``head``'s outputs (``record``: how f_s was made)."""

    def __init__(self, head, info: dict):
        self.head, self.record = head, {"sentiment_head": info}

    def __call__(self, output, counterfactual_output, positions):
        return batch_distance(output, counterfactual_output, positions, self.head)


def _loss_term(preparation) -> SentimentTerm:
    """Step 2: f_s trained on the starting model's features (or loaded from the run folder when resuming)."""
    import torch

    settings, path = preparation.settings, Path(preparation.folder) / HEAD_FILE
    if path.is_file():
        saved = torch.load(path, weights_only=False)
        head = new_head(saved["width"], settings["sentiment_distance"])
        head.load_state_dict(saved["state"])
        head, info = head.eval().requires_grad_(False), saved["info"]
    else:
        texts = preparation.texts
        index, labels = sentiment_labels(texts, settings["sentiment_labels"], settings["label_threshold"],
                                         data_dir=preparation.data_dir)
        preparation.model.eval()
        features = last_token_features(preparation.model, preparation.tokenizer, [texts[i] for i in index],
                                       max_length=settings["max_length"])
        head, info = train_head(features, labels, distance=settings["sentiment_distance"], seed=settings["seed"])
        info["labels"] = f"{settings['sentiment_labels']} |score| > {settings['label_threshold']}"
        torch.save({"width": features.shape[-1], "state": head.state_dict(), "info": info}, path)
    return SentimentTerm(head.to(preparation.device), info)


def load_sentiment_head(folder):
    """The f_s a sentiment-debiased model was trained with (``<folder>/sentiment_head.pt``), frozen."""
    import torch

    saved = torch.load(Path(folder) / HEAD_FILE, weights_only=False)
    head = new_head(saved["width"], "hidden")
    head.load_state_dict(saved["state"])
    return head.eval().requires_grad_(False)


def _card_rows(state: dict) -> list:
    info = state.get("sentiment_head")
    if not info:
        return []
    return [("sentiment classifier f_s", f"{info['labels']}: {info['positive']} positive, {info['negative']} negative, "
                                         f"held-out F1 {info['held_out_f1']:.3f}, distance {state['settings']['sentiment_distance']}")]


METHOD = DebiasMethod(
    name="sentiment",
    description="the sentiment regularisation of Huang et al. 2020 (§4), the distance of a sentiment classifier f_s's outputs "
                "on the hidden states of a text and of its counterfactual (f_s is trained first, on the starting model)",
    add_arguments=_add_arguments,
    check=_check,
    loss_term=_loss_term,
    files=(HEAD_FILE,),
    card_rows=_card_rows,
)
