"""The originals as the Hugging Face Hub hosts them, mapped onto lmbias rows (``source="hub"``).

* BOLD as ``AlexaAI/bold``: one record per Wikipedia page, ``{domain, name, category, prompts: [...],
  wikipedia: [...]}`` in JSON Lines files (``<domain>_prompt_wiki.json``), split ``train``.
* StereoSet as ``McGill-NLP/stereoset``: configs ``intrasentence`` and ``intersentence``, split
  ``validation``; each item ``{id, target, bias_type, context, sentences: {sentence: [...], id: [...],
  gold_label: [...], labels: [...]}}``, the gold labels as strings or as a ``ClassLabel``.

The rows are the ones the local files give (same ids, fields and order), so a run reads the same
data from either source. ``hub_id`` may also name a local folder in the Hub's layout: ``datasets``
reads a folder before it asks the Hub. Each dataset's mapping lives in its data module
(``DatasetSpec.hub``: the Hub id and the function that maps its records); this module reads.
"""

from __future__ import annotations

from ..resources import ResourceError

SOURCES = ("local", "hub")


def read_hub(hub_id: str, config: str | None, split: str):
    """``datasets.load_dataset(hub_id, config, split=split)``; any failure is one ResourceError line."""
    import datasets

    try:
        return datasets.load_dataset(hub_id, config, split=split)
    except Exception as error:  # the Hub's and datasets' own errors say what went wrong; keep them to one line
        raise ResourceError(f"could not read {hub_id!r}{f' (config {config!r})' if config else ''} split {split!r} with "
                            f"datasets.load_dataset: {type(error).__name__}: {str(error).splitlines()[0][:300]}; "
                            "use source='local' (the default) to read the original files") from None
