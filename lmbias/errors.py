"""The errors lmbias raises on purpose, all under :class:`LmbiasError`.

The command line prints an ``LmbiasError`` as one line (``lmbias: error: ...``) and exits with
status 2; anything else is a bug and keeps its traceback. Each class also derives from the builtin
error a caller would expect (``ValueError`` for a bad value, ``TypeError`` for a wrong type ...),
so ``except ValueError`` keeps working.
"""

from __future__ import annotations


class LmbiasError(Exception):
    """Base class of every error lmbias raises on purpose: a user mistake or a missing resource."""


class InputError(LmbiasError, ValueError):
    """An argument, option or data row whose value cannot mean what the caller intends."""


class InputTypeError(LmbiasError, TypeError):
    """An argument of the wrong type (e.g. a single string where a list of texts is expected)."""


class RequirementError(LmbiasError, RuntimeError):
    """A run asked for everything (``--require-all``) and something had to be skipped."""


class NotFoundError(LmbiasError, FileNotFoundError):
    """A file, folder or model that is not where it was looked for; the message names where, and how to supply it."""


class UnknownNameError(LmbiasError, KeyError, ValueError):
    """A name that is not registered (a benchmark, a resource ...); the message lists the known ones.
    A failed lookup (KeyError) and a bad value given by the user (ValueError) both."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""  # KeyError's own str() would quote the message


class MissingDependencyError(LmbiasError, ImportError):
    """An optional package a feature needs is not installed; the message says what to install."""
