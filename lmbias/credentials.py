"""Credentials are never recorded or shown: one rule for what looks like a secret, and the functions
that take secrets out of URLs, recorded run files and echoed command lines.

A URL's credentials are its user information (``user:password@`` before the host) and the values of
its query or fragment parameters whose name looks like a secret (:func:`looks_secret`: ``api-key``,
``key``, ``token``, ``access_token``, ``password``, ``sig`` ...); :func:`strip_credentials` replaces
them by ``***`` in every URL of a text. lmbias applies it where a URL is recorded (``config.json``,
``results.json``, the default run folder's name) and where recorded runs are read for a report, a
leaderboard, a comparison or a push (so a run written before this rule shows no key either).

>>> strip_credentials("GET http://user:sk-1@host:8000/v1?api-key=sk-1&api-version=2024 failed")
'GET http://***@host:8000/v1?api-key=***&api-version=2024 failed'
>>> shown_arguments(["--api-key", "sk-1", "--limit=3", "--token=sk-2"])
'--api-key *** --limit=3 --token=***'
"""

from __future__ import annotations

import re
import urllib.parse
from typing import Any

from .errors import InputError

# a parameter or option name (lower case, only letters and digits kept) that ends with one of these holds a secret
SECRET_ENDINGS = ("key", "token", "secret", "password", "passwd", "pwd", "pass", "auth", "authorization", "sig", "signature",
                  "credential", "credentials", "session", "sessionid", "jwt", "bearer", "code")

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s\"'<>`]*[^\s\"'<>`.,:;!?)\]]")  # not the sentence's full stop
_PARAMETER = re.compile(r"([?#&;])([^=&;#?]+)=([^&;#]*)")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def looks_secret(name: str) -> bool:
    """Whether a query parameter or command-line option named ``name`` holds a secret: its name, in
    lower case with everything but letters and digits dropped, ends with one of :data:`SECRET_ENDINGS`
    (``api-key``, ``X-Api-Key``, ``access_token``, ``client_secret``, ``X-Amz-Signature`` ...).

    >>> [looks_secret(name) for name in ("api-key", "API_KEY", "access_token", "sig", "--api-key", "api-version", "model")]
    [True, True, True, True, True, False, False]
    """
    compact = re.sub(r"[^a-z0-9]", "", urllib.parse.unquote_plus(str(name)).lower())
    return compact.endswith(SECRET_ENDINGS)


def _strip_url(url: str) -> str:
    scheme, rest = url.split("://", 1)
    end = min([i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i >= 0], default=len(rest))
    authority, tail = rest[:end], rest[end:]
    if "@" in authority:
        authority = "***@" + authority.rsplit("@", 1)[1]
    start = min([i for i in (tail.find("?"), tail.find("#")) if i >= 0], default=len(tail))
    params = _PARAMETER.sub(lambda m: f"{m[1]}{m[2]}=***" if looks_secret(m[2]) else m[0], tail[start:])
    return f"{scheme}://{authority}{tail[:start]}{params}"


def strip_credentials(text: str) -> str:
    """``text`` with the credentials of every URL in it (``scheme://...``) replaced by ``***``: the
    user information before the host, and the value of each query or fragment parameter whose name
    :func:`looks_secret`. Everything else is kept as it is.

    >>> strip_credentials("https://u@h/v1#access_token=abc&x=1"), strip_credentials("hf://datasets/org/x@abc/f.json")
    ('https://***@h/v1#access_token=***&x=1', 'hf://datasets/org/x@abc/f.json')
    """
    return _URL.sub(lambda match: _strip_url(match.group()), text) if "://" in text else text


def without_credentials(value: Any) -> Any:
    """``value`` (JSON data: dicts, lists or tuples, strings, numbers) with :func:`strip_credentials` applied to
    every string in it; dict keys and everything that is not a string are kept."""
    if isinstance(value, str):
        return strip_credentials(value)
    if isinstance(value, dict):
        return {key: without_credentials(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(without_credentials(item) for item in value)
    return value


def shown_arguments(arguments: list) -> str:
    """Command-line ``arguments`` as an error message shows them: the value of an option whose name
    :func:`looks_secret` (``--api-key KEY``, ``--token=KEY``) as ``***``, and URLs without their
    credentials."""
    shown, hide_next = [], False
    for argument in map(str, arguments):
        flag, equals, _ = argument.partition("=")
        if hide_next and not argument.startswith("-"):
            shown.append("***")
        elif argument.startswith("-") and looks_secret(flag):
            shown.append(f"{flag}=***" if equals else argument)
        else:
            shown.append(strip_credentials(argument))
        hide_next = argument.startswith("-") and not equals and looks_secret(flag)
    return " ".join(shown)


def check_env_name(name: Any, option: str) -> str:
    """``name`` if it can name an environment variable (letters, digits and ``_``, not starting with a
    digit), else an InputError naming ``option`` that does not repeat the value (it may be a key)."""
    if not isinstance(name, str) or not _ENV_NAME.fullmatch(name):
        raise InputError(f"{option} takes the name of an environment variable (letters, digits and '_', not starting with a "
                         "digit), and the value given is not one (not shown: it may be a key); put the key itself in an "
                         f"environment variable (e.g. export OPENAI_API_KEY=...) and pass that variable's name: a key is "
                         "never given on the command line")
    return name
