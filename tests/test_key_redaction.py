"""The API key never leaks, however a server spells it (issue 37): a real HTTP server on 127.0.0.1
echoes the key as it is, JSON-escaped (``sk-A\\/B``, ``\\u002f``) and URL-encoded (``quote``,
``quote_plus``, lower-case hex, encoded twice) in its error bodies, model list and continuations;
none of these appears in an error message, the logs or any file of the run folder. And a key given
where it does not belong (issue 47), in ``--base-url`` (``user:KEY@``, ``?api-key=KEY``, ``?key=KEY``),
as ``--api-key KEY`` or as ``--api-key-env``'s value, is refused before anything is sent or written,
without being shown; a run recorded with one before shows none in a report, a push, a leaderboard
or when it resumes."""

import json
import logging
import re
import shutil
import urllib.parse
from pathlib import Path

import pytest
from test_server_faults import BOLD, GOOD_MODELS, HostileServer

from lmbias.cli import main
from lmbias.lm.backends.openai import redact

KEY = "sk-proj/Ab+Cd=Ef_Qz9Xw7Lk"  # "/", "+" and "=" are what the encodings change
TAIL = "Qz9Xw7Lk"  # in every spelling of the key: it must appear nowhere
SPELLINGS = {
    "raw": KEY,
    "JSON-escaped slash": KEY.replace("/", "\\/"),
    "JSON unicode escapes": "".join(f"\\u{ord(c):04x}" if c in "/+=" else c for c in KEY),
    "quote": urllib.parse.quote(KEY),
    "quote, nothing safe": urllib.parse.quote(KEY, safe=""),
    "quote_plus": urllib.parse.quote_plus(KEY),
    "lower-case hex": re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), urllib.parse.quote(KEY, safe="")),
    "encoded twice": urllib.parse.quote(urllib.parse.quote(KEY, safe=""), safe=""),
}
LISTED = ", ".join(SPELLINGS.values())  # as a server's JSON text holds them (every one is valid inside a JSON string)


def test_the_spellings_are_the_encodings_and_each_is_redacted():
    assert SPELLINGS["quote"] == "sk-proj/Ab%2BCd%3DEf_Qz9Xw7Lk"
    assert SPELLINGS["quote_plus"] == SPELLINGS["quote, nothing safe"] == "sk-proj%2FAb%2BCd%3DEf_Qz9Xw7Lk"
    assert SPELLINGS["lower-case hex"] == "sk-proj%2fAb%2bCd%3dEf_Qz9Xw7Lk"
    assert json.loads(f'"{SPELLINGS["JSON-escaped slash"]}"') == json.loads(f'"{SPELLINGS["JSON unicode escapes"]}"') == KEY
    for name, spelled in SPELLINGS.items():
        assert redact(f"key={spelled};", KEY) == "key=[API key];", name
    assert redact(f"a {KEY[:-1]} and {TAIL}", KEY) == f"a {KEY[:-1]} and {TAIL}"  # not the key: kept
    assert redact(" sk key ", "sk key") == redact(" sk+key ", "sk key") == redact(" sk%20key ", "sk key") == " [API key] "


@pytest.fixture
def server(monkeypatch, caplog):
    """A :class:`HostileServer` (closed after the test), the key in OPENAI_API_KEY, every log record kept."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    caplog.set_level(logging.DEBUG)
    servers = []

    def start(**answers):
        servers.append(HostileServer(**answers))
        return servers[-1]

    yield start
    for started in servers:
        started.close()


def _shown(capsys, caplog, *folders) -> str:
    """Everything the command printed and logged, and every file it wrote in ``folders``, after checking
    that no spelling of the key is in any of it."""
    captured = capsys.readouterr()
    texts = {"stdout": captured.out, "stderr": captured.err, "logs": caplog.text}
    texts.update({str(path): path.read_text(errors="replace") for folder in folders if folder.exists()
                  for path in folder.rglob("*") if path.is_file()})
    for where, text in texts.items():
        assert TAIL not in text, (where, text[-2000:])
    return captured.err


def test_an_error_body_with_the_key_in_every_encoding_shows_none(server, tmp_path, capsys, caplog):
    hostile = server(completions=(400, '{"error": {"message": "invalid key ' + LISTED + '"}}'))
    out = tmp_path / "r"
    assert main([*BOLD, "--base-url", hostile.url, "--out", str(out)]) == 2
    err = _shown(capsys, caplog, tmp_path)
    assert (out / "config.json").is_file()  # claimed before the failing request: its files are searched too
    blanked = ", ".join(["[API key]"] * len(SPELLINGS))
    assert f"lmbias: error: --base-url {hostile.url}: /completions answered 400: " \
           f'{{"error": {{"message": "invalid key {blanked}"}}}}' in err

    hostile = server(models=(503, '{"error": "upstream refused ' + LISTED + '"}'))
    assert main([*BOLD, "--base-url", hostile.url, "--out", str(tmp_path / "r2")]) == 2
    assert f"upstream refused {blanked}" in _shown(capsys, caplog, tmp_path)

    hostile = server(models=(200, '{"data": [' + ", ".join(f'{{"id": "{s}"}}' for s in SPELLINGS.values()) + "]}"))
    assert main([*BOLD, "--base-url", hostile.url, "--out", str(tmp_path / "r3")]) == 2
    assert f"it serves {['[API key]'] * len(SPELLINGS)}" in _shown(capsys, caplog, tmp_path)

    # an answer lmbias cannot read is shown re-encoded (json.dumps): still without the key
    hostile = server(completions=(200, '{"choices": [{"text": 5}], "note": "' + LISTED + '"}'))
    assert main([*BOLD, "--base-url", hostile.url, "--out", str(tmp_path / "r4")]) == 2
    assert "choices[0].text missing or of the wrong type" in _shown(capsys, caplog, tmp_path)


@pytest.mark.parametrize("backend, path, answer", [
    ("openai", "/v1/completions", lambda text: {"choices": [{"text": text, "finish_reason": "length"}]}),
    ("openai-chat", "/v1/chat/completions",
     lambda text: {"choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "length"}]}),
])
def test_a_continuation_with_the_key_in_every_encoding_stores_none(server, tmp_path, capsys, caplog, backend, path, answer):
    hostile = server(models=(200, GOOD_MODELS))
    # the body's text as the server writes it: JSON escapes left in place (json.dumps would re-escape the backslashes)
    hostile.answers[path] = (200, json.dumps(answer("@")).replace("@", f" the header was {LISTED}"))
    out = tmp_path / "r"
    command = [*BOLD, "--base-url", hostile.url, "--out", str(out)]
    command[command.index("openai")] = backend
    assert main(command) == 0
    _shown(capsys, caplog, tmp_path)
    generations = [json.loads(line) for line in (out / "generations.jsonl").read_text().splitlines()]
    blanked = ", ".join(["[API key]"] * len(SPELLINGS))
    assert [g["continuation"] for g in generations] == [f" the header was {blanked}"] * 2


# --- a key where it does not belong (issue 47) -----------------------------------------------------------

URL_KEY = "sk-url-Hq4Jm8Rt2"


def _url_spellings(url: str) -> dict:
    """``url`` (``http://127.0.0.1:PORT/v1``) with :data:`URL_KEY` in it, each way a user may put it there."""
    host = url.split("//", 1)[1]
    return {"user-key": f"http://user:{URL_KEY}@{host}", "key-only": f"http://{URL_KEY}@{host}",
            "api-key": f"{url}?api-key={URL_KEY}", "key": f"{url}?key={URL_KEY}",
            "access-token": f"{url}?api-version=2024-02-01&access_token={URL_KEY}"}


def _files(root) -> list:
    """The files under ``root`` (an empty ``runs/`` may be left by a run refused before it started)."""
    return [path for path in root.rglob("*") if not path.is_dir()]


def _nothing_shows(capsys, caplog, root) -> str:
    """What the commands printed on stderr, after checking that :data:`URL_KEY` is nowhere: not printed,
    logged, in a file under ``root`` or in a file's or folder's name."""
    captured = capsys.readouterr()
    texts = {"stdout": captured.out, "stderr": captured.err, "logs": caplog.text,
             "names": "\n".join(str(path) for path in root.rglob("*")),
             **{str(path): path.read_text(errors="replace") for path in root.rglob("*") if path.is_file()}}
    for where, text in texts.items():
        assert URL_KEY not in text, (where, text[-2000:])
    return captured.err


@pytest.mark.parametrize("spelling", ["user-key", "key-only", "api-key", "key", "access-token"])
def test_a_base_url_with_a_key_is_refused_before_anything_is_sent_or_written(server, tmp_path, monkeypatch, capsys, caplog,
                                                                             spelling):
    served = server()
    monkeypatch.chdir(tmp_path)  # where the default run folder would go
    url = _url_spellings(served.url)[spelling]
    assert main([*BOLD, "--base-url", url]) == 2
    assert main(["run", "bold", "counterfactual", "--backend", "openai", "--model", "served", "--base-url", url,
                 "--no-progress"]) == 2  # several benchmarks
    err = _nothing_shows(capsys, caplog, tmp_path)
    assert err.count("--base-url holds credentials (user:KEY@ or a key in its query string; not repeated here)") == 3, err
    assert _files(tmp_path) == [] and served.requests == {"/v1/models": 0, "/v1/completions": 0}


@pytest.mark.parametrize("given", [["--api-key", URL_KEY], [f"--api-key={URL_KEY}"], ["--openai_api_key", URL_KEY]])
def test_a_key_on_the_command_line_is_refused_and_not_shown(server, tmp_path, monkeypatch, capsys, caplog, given):
    served = server()
    monkeypatch.chdir(tmp_path)
    for command in ([*BOLD, "--base-url", served.url],
                    ["run", "bold", "counterfactual", "--backend", "openai", "--model", "served", "--base-url", served.url]):
        with pytest.raises(SystemExit) as stopped:  # before: read as --api-key-env, and the run went on without a key
            main([*command, *given])
        assert stopped.value.code == 2
        err = _nothing_shows(capsys, caplog, tmp_path)
        assert f"error: unrecognized arguments: {given[0].split('=')[0]}" in err and "***" in err, err
    assert _files(tmp_path) == [] and served.requests == {"/v1/models": 0, "/v1/completions": 0}


def test_a_key_given_as_the_variable_name_is_refused_and_not_shown(server, tmp_path, monkeypatch, capsys, caplog):
    served = server()
    monkeypatch.chdir(tmp_path)
    assert main([*BOLD, "--base-url", served.url, "--api-key-env", URL_KEY]) == 2
    err = _nothing_shows(capsys, caplog, tmp_path)
    assert err.startswith("lmbias: error: --api-key-env takes the name of an environment variable"), err
    assert _files(tmp_path) == [] and served.requests == {"/v1/models": 0, "/v1/completions": 0}


def test_a_run_recorded_with_a_key_in_its_url_shows_none(server, tmp_path, capsys, caplog):
    """Runs as lmbias wrote them before issue 47 (the key in results.json and config.json): the report,
    a push's dry run (with the results dataset, which uploads results.json itself), a leaderboard and
    the refusal to resume one with another URL show none of it."""
    answer = json.dumps({"choices": [{"text": " fine", "finish_reason": "length"}], "usage": {"completion_tokens": 1}})
    served = server(completions=(200, answer))
    clean = tmp_path / "clean"
    assert main([*BOLD, "--base-url", served.url, "--out", str(clean)]) == 0
    runs, out = tmp_path / "runs", tmp_path / "out"
    for name, url in _url_spellings(served.url).items():
        shutil.copytree(clean, runs / name)
        for file in ("results.json", "config.json"):
            text = (runs / name / file).read_text()
            assert text.count(served.url) == (2 if file == "results.json" else 1)  # model.source, options.base_url
            (runs / name / file).write_text(text.replace(served.url, url))
    capsys.readouterr()
    folders = sorted(str(run) for run in runs.iterdir())
    assert main(["report", *folders, "--out", str(out / "report")]) == 0
    for folder in folders:
        assert main(["push", folder, "--repo-id", "me/model", "--dry-run", "--out", str(out / "push" / Path(folder).name),
                     "--results-dataset", "me/results", "--allow-partial"]) == 0
        assert main(["leaderboard", folder, "--out", str(out / "site" / Path(folder).name)]) == 0
    _nothing_shows(capsys, caplog, out)
    report = (out / "report" / "report.html").read_text()
    host = served.url.split("//", 1)[1]
    assert f"served, served at http://***@{host}<" in report and f"served at {served.url}?api-key=***<" in report
    pushed = json.loads((out / "push" / "api-key" / "results-dataset" / "runs" / "me__model" / "bold" / "results.json").read_text())
    original = json.loads((clean / "results.json").read_text())
    assert pushed["model"]["source"] == f"{served.url}?api-key=***" and pushed["results"] == original["results"]

    # resumed with the address alone: another configuration (the recorded URL differs), said without the key
    assert main([*BOLD, "--base-url", served.url, "--out", str(runs / "user-key")]) == 2
    err = _nothing_shows(capsys, caplog, out)
    assert f"holds a run with another configuration (base_url: recorded 'http://***@{host}', now '{served.url}')" in err, err
