"""The API key never leaks, however a server spells it (issue 37): a real HTTP server on 127.0.0.1
echoes the key as it is, JSON-escaped (``sk-A\\/B``, ``\\u002f``) and URL-encoded (``quote``,
``quote_plus``, lower-case hex, encoded twice) in its error bodies, model list and continuations;
none of these appears in an error message, the logs or any file of the run folder."""

import json
import logging
import re
import urllib.parse

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
