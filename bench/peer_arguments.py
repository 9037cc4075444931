"""The command line the lm-eval peer scripts share (they run in lm-eval's environment, without lmbias)."""

import argparse


def peer_arguments(description: str, *, device: bool = False) -> argparse.Namespace:
    """``MODEL_DIR ITEMS [--threads N] [--batch-size N] [--device D]`` parsed; torch set to ``--threads``."""
    parser = argparse.ArgumentParser(allow_abbrev=False, description=description)
    parser.add_argument("model_dir")
    parser.add_argument("items")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    if device:
        parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    return args
