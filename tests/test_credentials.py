"""Credentials are never recorded or shown (issue 47): the one rule that takes them out of URLs and
echoed command lines, the checks that refuse a key where a URL or a variable's name belongs, and
every command-line parser refusing abbreviations (``--api-key KEY`` was read as ``--api-key-env``).
The expected values are written out by hand."""

from __future__ import annotations

import argparse
import ast
import subprocess
from pathlib import Path

import pytest

from lmbias.credentials import check_env_name, looks_secret, shown_arguments, strip_credentials, without_credentials
from lmbias.errors import InputError
from lmbias.lm.backends.openai import check_base_url
from lmbias.lm.spec import ModelSpec
from lmbias.run_result import default_run_dir

REPO = Path(__file__).resolve().parents[1]
KEY = "sk-A1b2C3d4"


@pytest.mark.parametrize("url, expected", [
    (f"http://user:{KEY}@127.0.0.1:8000/v1", "http://***@127.0.0.1:8000/v1"),
    (f"https://{KEY}@host/v1", "https://***@host/v1"),
    (f"http://host/v1?api-key={KEY}", "http://host/v1?api-key=***"),
    (f"http://host/v1?api_key={KEY}&api-version=2024-02-01", "http://host/v1?api_key=***&api-version=2024-02-01"),
    (f"http://host/v1?API-KEY={KEY}", "http://host/v1?API-KEY=***"),
    (f"http://host/v1?Api%2DKey={KEY}", "http://host/v1?Api%2DKey=***"),  # the name percent-encoded
    (f"http://host/v1?key={KEY}", "http://host/v1?key=***"),
    (f"http://host/v1?token={KEY}", "http://host/v1?token=***"),
    (f"http://host/v1?x=1&access_token={KEY}", "http://host/v1?x=1&access_token=***"),
    (f"http://host/v1?auth={KEY}", "http://host/v1?auth=***"),
    (f"http://host/v1?password={KEY}", "http://host/v1?password=***"),
    (f"http://host/v1?client_secret={KEY}", "http://host/v1?client_secret=***"),
    (f"https://bucket.s3/x?X-Amz-Signature={KEY}&sig={KEY}", "https://bucket.s3/x?X-Amz-Signature=***&sig=***"),
    (f"https://host/fn?code={KEY}", "https://host/fn?code=***"),  # Azure Functions' key
    (f"http://host/cb#access_token={KEY}&state=3", "http://host/cb#access_token=***&state=3"),
    (f"https://host?token={KEY}", "https://host?token=***"),
    # no credentials: kept as they are ("@" after the host is a revision, not user information)
    ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
    ("http://host/v1?api-version=2024-02-01&model=gpt2", "http://host/v1?api-version=2024-02-01&model=gpt2"),
    ("hf://datasets/Anthropic/discrim-eval@abc123/explicit.jsonl", "hf://datasets/Anthropic/discrim-eval@abc123/explicit.jsonl"),
    ("git+https://github.com/ORG/lmbias@COMMIT", "git+https://github.com/ORG/lmbias@COMMIT"),
])
def test_strip_credentials_of_one_url(url, expected):
    assert strip_credentials(url) == expected


def test_strip_credentials_in_a_text_and_in_json_data():
    text = f'{{"source": "http://u:{KEY}@h:1/v1", "url": "https://h/v1?token={KEY}"}} and http://h/v1?key={KEY}.'
    assert strip_credentials(text) == '{"source": "http://***@h:1/v1", "url": "https://h/v1?token=***"} and http://h/v1?key=***.'
    assert strip_credentials(f"a key {KEY} outside a URL is not a URL's") == f"a key {KEY} outside a URL is not a URL's"
    data = {"model": {"source": f"http://u:{KEY}@h/v1", "n": 3, "list": [f"http://h?key={KEY}", None]},
            f"http://u:{KEY}@h": ("x",)}
    assert without_credentials(data) == {"model": {"source": "http://***@h/v1", "n": 3, "list": ["http://h?key=***", None]},
                                         f"http://u:{KEY}@h": ("x",)}  # keys are kept (lmbias writes none that is a URL)


def test_looks_secret_names():
    secret = ["api-key", "api_key", "apikey", "X-Api-Key", "key", "token", "access_token", "id_token", "auth", "oauth",
              "Authorization", "password", "passwd", "secret", "client_secret", "sig", "signature", "X-Amz-Signature",
              "subscription-key", "--api-key", "--hf-token", "code"]
    kept = ["api-version", "model", "--api-key-env", "--max-new-tokens", "--tokenizer", "keyword", "limit", "base_url"]
    assert [name for name in secret if not looks_secret(name)] == []
    assert [name for name in kept if looks_secret(name)] == []


def test_shown_arguments_hide_the_value_of_a_secret_option():
    assert shown_arguments(["--api-key", KEY]) == "--api-key ***"
    assert shown_arguments([f"--api-key={KEY}", "--limit", "3"]) == "--api-key=*** --limit 3"
    assert shown_arguments(["--token", "--limit", "3"]) == "--token --limit 3"  # an option after it is not a value
    assert shown_arguments(["--base-url", f"http://u:{KEY}@h/v1", "extra"]) == "--base-url http://***@h/v1 extra"


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "_K", "MY_KEY_2"])
def test_an_environment_variable_name_is_taken(name):
    assert check_env_name(name, "--api-key-env") == name


@pytest.mark.parametrize("value", [KEY, "sk-proj-abc", "1KEY", "", "MY KEY", "A=B", "key/with/slash", None, 3])
def test_a_value_that_cannot_name_a_variable_is_refused_without_repeating_it(value):
    with pytest.raises(InputError) as refused:
        check_env_name(value, "--api-key-env")
    message = str(refused.value)
    assert message.startswith("--api-key-env takes the name of an environment variable")
    assert "\n" not in message and (not isinstance(value, str) or len(value) < 2 or value not in message)


@pytest.mark.parametrize("url", [f"http://user:{KEY}@10.1.2.3:8000/v1", f"http://{KEY}@10.1.2.3:8000/v1",
                                 f"http://10.1.2.3:8000/v1?api-key={KEY}", f"http://10.1.2.3:8000/v1?key={KEY}",
                                 f"http://10.1.2.3:8000/v1?x=1&access_token={KEY}",
                                 "http://user:sk-proj/Ab9Cd@10.1.2.3:8000/v1"])  # a '/' in the key: "@" after the host
def test_a_base_url_with_credentials_is_refused_without_repeating_it(url):
    with pytest.raises(InputError) as refused:
        check_base_url(url)
    message = str(refused.value)
    assert message.startswith("--base-url holds credentials") and "OPENAI_API_KEY" in message
    assert KEY not in message and "Ab9Cd" not in message and "10.1.2.3" not in message


@pytest.mark.parametrize("url, expected", [
    ("ftp://127.0.0.1/v1", "is not an http:// or https:// URL with a host"),
    ("localhost:8000/v1", "is not an http:// or https:// URL with a host"),
    ("http:///v1", "is not an http:// or https:// URL with a host"),
    ("http://127.0.0.1:80x/v1", "is not a valid URL"),
    ("http://127.0.0.1:8000/v1?api-version=2024-02-01", "'http://127.0.0.1:8000/v1' is followed by a query string or fragment"),
    ("http://127.0.0.1:8000/v1#x", "'http://127.0.0.1:8000/v1' is followed by a query string or fragment"),
])
def test_a_base_url_requests_cannot_be_built_on_is_refused(url, expected):
    with pytest.raises(InputError, match=expected):
        check_base_url(url)
    assert check_base_url("https://api.example.com/v1") == "https://api.example.com/v1"
    with pytest.raises(InputError) as refused:  # a key under a name that does not look like one: not repeated either
        check_base_url(f"http://127.0.0.1:8000/v1?k={KEY}")
    assert KEY not in str(refused.value)


def test_a_url_key_names_no_folder_and_no_identity():
    assert default_run_dir("bold", "served", {"--base-url": f"http://u:{KEY}@h/v1"}) == "runs/bold-served-base-url-http-h-v1"
    long = {"--base-url": f"http://u:{KEY}@some-host.example.com:8000/v1", "--per-group": 5, "--metrics": ["sentiment"]}
    other = {**long, "--base-url": "http://u:sk-other-key@some-host.example.com:8000/v1"}
    assert default_run_dir("bold", "served", long) == default_run_dir("bold", "served", other)  # a digest of no key
    spec = ModelSpec("served", backend="openai", options={"base_url": f"http://h/v1?api-key={KEY}", "api_key_env": "K"})
    assert spec.identity() == {"backend": "openai", "base_url": "http://h/v1?api-key=***"}
    assert spec.recorded() == {"backend": "openai", "base_url": "http://h/v1?api-key=***", "api_key_env": "K"}


# --- no parser takes an abbreviation -------------------------------------------------------------------

def test_every_parser_lmbias_builds_refuses_abbreviations(monkeypatch, capsys):
    """Every parser built on the way: the CLI's tree (subcommands and their subcommands), the parser of
    several benchmarks, each benchmark's own options, the shared ones, the debias methods' options and
    ``python -m lmbias.docs_options``."""
    from lmbias import docs_options
    from lmbias.benchmarks import benchmarks, names
    from lmbias.cli import build_parser, main
    from lmbias.debias.methods import methods
    from lmbias.suite import own_options, shared_option_names

    built = []
    original = argparse.ArgumentParser.__init__

    def recording(self, *args, **kwargs):
        original(self, *args, **kwargs)
        built.append(self)

    monkeypatch.setattr(argparse.ArgumentParser, "__init__", recording)
    parser = build_parser()
    with pytest.raises(SystemExit):
        main(["run", *names()[:3], "--help"])  # the parser of several benchmarks
    for benchmark in benchmarks():
        own_options(benchmark)
    shared_option_names()
    for method in methods():
        method.defaults()
    with pytest.raises(SystemExit):
        docs_options.main(["--help"])
    capsys.readouterr()

    def walk(parser):
        yield parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for child in action.choices.values():
                    yield from walk(child)

    tree = list(walk(parser))
    assert len(tree) > len(names()) + 10 and all(any(p is q for q in built) for p in tree)  # the walk saw what was built
    assert [p.prog for p in built if p.allow_abbrev is not False] == []
    # and what that means: a prefix of --api-key-env is no longer read as it
    run_bold = next(p for p in tree if p.prog == "lmbias run bold")
    assert run_bold.parse_known_args(["--api-key", KEY])[1] == ["--api-key", KEY]


def _parser_calls(path: Path) -> list:
    """The ``ArgumentParser(...)`` and ``add_parser(...)`` calls of a Python file, with whether each passes
    ``allow_abbrev=False``."""
    calls = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if name in ("ArgumentParser", "add_parser"):
                refused = any(k.arg == "allow_abbrev" and isinstance(k.value, ast.Constant) and k.value.value is False
                              for k in node.keywords)
                calls.append((f"{path.relative_to(REPO)}:{node.lineno}", name, refused))
    return calls


def test_every_parser_in_the_repository_refuses_abbreviations():
    """The scripts' parsers (bench/, tests/ ...) are built inside their main(), after heavy imports: each
    ``ArgumentParser(`` call passes allow_abbrev=False, and so does each ``add_parser(`` outside the
    package (inside it, subcommands are :class:`lmbias.cli.Parser`, whose default it is: checked above)."""
    files = subprocess.run(["git", "ls-files", "*.py"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    calls = [call for file in files for call in _parser_calls(REPO / file)]
    constructors = [call for call in calls if call[1] == "ArgumentParser"]
    assert len(constructors) >= 31, constructors  # the 31 of issue 47, at least
    assert [where for where, name, refused in calls
            if not refused and (name == "ArgumentParser" or not where.startswith("lmbias/"))] == []
