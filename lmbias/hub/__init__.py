"""Publishing runs to the Hugging Face Hub: model-index results in the model card, ``.eval_results/``
files, and a results dataset (``lmbias push``; docs/hub.md)."""

from .push import HubError, check_repo_id, plan, push, slug

__all__ = ["HubError", "check_repo_id", "plan", "push", "slug"]
