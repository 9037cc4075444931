"""Where a named model comes from: a local folder, the Hugging Face Hub cache, or the Hub.

Every model lmbias loads by name (the LM under test, the toxicity / regard / sentiment classifiers,
the sentence encoder) is looked up here first, once per name and process. A Hub id that is not in
the cache costs one metadata request without retries (``huggingface_hub.model_info``): a name the
Hub does not have, or a Hub that cannot be reached, is known in well under a second, instead of
after transformers' five retries (about 30 s) for each file. Once one request has failed to reach
the Hub, no other name is tried against it in the same process; a model already in the Hub cache
then loads from the cache (``local_files_only``).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

from .resources import is_offline

PROBE_TIMEOUT = 10.0  # seconds for the one metadata request of a name
_hub_unreachable: list[str] = []  # why the Hub could not be reached, once it could not in this process


@dataclass(frozen=True)
class ModelSource:
    """Where a model name resolves to.

    Attributes:
        name: the name as given (Hub id or path).
        kind: "local" (a folder or file), "cache" (the Hub cache, Hub not needed), "hub" (the Hub
            has it and is reachable) or "missing".
        reason: for "missing", why, in one line (no such path, not on the Hub, the Hub unreachable ...).
    """

    name: str
    kind: str
    reason: str = ""
    revision: str | None = None

    @property
    def available(self) -> bool:
        """Whether the model can be loaded."""
        return self.kind != "missing"

    def load_kwargs(self) -> dict:
        """Extra ``from_pretrained`` keywords: ``local_files_only`` when the Hub is not to be asked, and
        the ``revision``."""
        return {**({"local_files_only": True} if self.kind == "cache" else {}),
                **({"revision": self.revision} if self.revision else {})}


def looks_like_path(model: str) -> bool:
    """Whether ``model`` is meant as a local path (``./x``, ``/x``, ``~/x``, ``a/b/c``, a ``.gguf`` file)
    rather than a Hub id (``name`` or ``org/name``)."""
    return model.startswith((".", "/", "~")) or model.count("/") > 1 or model.endswith(".gguf") or os.sep in model.replace("/", "")


def _in_hub_cache(name: str, revision: str | None = None) -> bool:
    from huggingface_hub import try_to_load_from_cache

    try:
        return isinstance(try_to_load_from_cache(name, "config.json", revision=revision), str) or isinstance(
            try_to_load_from_cache(name, "modules.json", revision=revision), str)
    except ValueError:  # not a valid repo id
        return False


def _probe_hub(name: str, revision: str | None = None) -> ModelSource:
    """One request for ``name``'s metadata on the Hub at ``revision`` (no retries)."""
    from huggingface_hub import model_info
    from huggingface_hub.errors import GatedRepoError, HFValidationError, RepositoryNotFoundError, RevisionNotFoundError

    try:
        model_info(name, revision=revision, timeout=PROBE_TIMEOUT)
    except RevisionNotFoundError:
        return ModelSource(name, "missing", f"the Hub's {name!r} has no revision {revision!r} (--revision)")
    except GatedRepoError:
        return ModelSource(name, "missing", f"{name!r} is a gated model on the Hub: accept its terms on its page and log in "
                                            "with `hf auth login` (or set HF_TOKEN)")
    except RepositoryNotFoundError:
        return ModelSource(name, "missing", f"the Hub has no model {name!r} (check the spelling; a private model needs "
                                            "`hf auth login` or HF_TOKEN)")
    except HFValidationError:
        return ModelSource(name, "missing", f"{name!r} is neither an existing local path nor a valid Hub id")
    except Exception as error:  # connection refused, DNS, timeout, proxy, 5xx: the Hub cannot be used now
        _hub_unreachable.append(f"the Hugging Face Hub cannot be reached ({network_cause(error)})")
        return ModelSource(name, "missing", f"{name!r} is not in the Hub cache and {_hub_unreachable[0]}")
    return ModelSource(name, "hub", revision=revision)


# What a failed connection's error says, in words: the resolver's and the socket's texts
# ("[Errno -2] Name or service not known") mean nothing to most readers.
_CAUSES = ((("Name or service not known", "Temporary failure in name resolution", "nodename nor servname",
             "getaddrinfo failed"), "no network: the Hub's host name does not resolve"),
           (("Connection refused",), "the connection was refused"),
           (("timed out", "Timeout"), f"no answer within {PROBE_TIMEOUT:g} s"))


def network_cause(error: BaseException) -> str:
    """Why a request could not reach its server, in one short line of words (for the messages that
    say a model is not available); the error's own first line when it is none of the known causes."""
    texts, seen = [], error
    while seen is not None and len(texts) < 8:  # the error and the errors it was raised from
        texts.append(f"{type(seen).__name__}: {seen}")
        seen = seen.__cause__ or seen.__context__
    for needles, words in _CAUSES:
        if any(needle in text for text in texts for needle in needles):
            return words
    return str(error).strip().splitlines()[0][:120] if str(error).strip() else type(error).__name__


@functools.lru_cache(maxsize=256)
def model_source(name: str, revision: str | None = None) -> ModelSource:
    """Where the model ``name`` (a Hub id, a folder or a ``.gguf`` file) at ``revision`` (a Hub id's
    commit, branch or tag; None: its default branch) comes from; asked once per name, revision and
    process (see the module docstring). Never raises for a missing model: check ``available``."""
    path = Path(name).expanduser()
    if path.exists():
        return ModelSource(name, "local")
    if looks_like_path(name):
        return ModelSource(name, "missing", f"there is no folder or file {path}")
    cached = _in_hub_cache(name, revision)
    at = f" at revision {revision!r}" if revision else ""
    if is_offline():
        return (ModelSource(name, "cache", revision=revision) if cached else
                ModelSource(name, "missing", f"{name!r}{at} is not a local folder and not in the Hub cache, and the Hub is off "
                                             "(HF_HUB_OFFLINE or LMBIAS_OFFLINE is set)"))
    if _hub_unreachable:
        return ModelSource(name, "cache", revision=revision) if cached else ModelSource(
            name, "missing", f"{name!r}{at} is not in the Hub cache and {_hub_unreachable[0]}")
    probed = _probe_hub(name, revision)
    if cached and not probed.available:
        return ModelSource(name, "cache", revision=revision)
    return probed


def hub_commit(name: str, revision: str | None = None) -> str | None:
    """The Hub commit that ``name`` at ``revision`` resolved to, read from the Hub cache once the model
    is loaded (transformers 5 no longer records it on the config); None for a local folder or file,
    or a model not in the cache."""
    from huggingface_hub import try_to_load_from_cache

    if Path(name).expanduser().exists() or looks_like_path(name):
        return None
    try:
        found = try_to_load_from_cache(name, "config.json", revision=revision)
    except ValueError:
        return None
    return Path(found).parent.name if isinstance(found, str) else None
