"""Structural checks of the benchmark data hold without checksums (issue 37): with LMBIAS_VERIFY=0 a
WinoBias file cut short, a BBQ example_id given twice, a file that is not UTF-8 and an empty file are
each one line naming the file (and row) and what was expected, never a score over unpaired or
doubled rows, a traceback or "predictions is empty"."""

import json
import re
import shutil

import bbq_files
import pytest

import lmbias
from lmbias.cli import main
from lmbias.resources import REGISTRY


def _copy(data_dir, folder, name):
    """The registered resource ``name`` copied from the reference data into ``folder``; its path there."""
    target = folder / REGISTRY[name].path
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(data_dir / REGISTRY[name].path, target)
    return target


def _one_error(capsys) -> str:
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lmbias: error: "), captured.err[-2000:]
    return lines[0]


@pytest.fixture
def unverified(monkeypatch, tmp_path):
    """A data folder searched before the reference data, read without checksums (edited copies on purpose)."""
    monkeypatch.setenv("LMBIAS_VERIFY", "0")
    return tmp_path / "data"


def test_a_winobias_file_cut_short_is_refused_not_scored_against_the_full_other_file(data_dir, unverified, tmp_path, capsys):
    anti = _copy(data_dir, unverified, "winobias/anti_type1_test")
    lines = anti.read_text(encoding="utf-8").splitlines(keepends=True)
    assert len(lines) == 396
    anti.write_text("".join(lines[:100]), encoding="utf-8")
    expected = (f"{anti} has the wrong layout: expected 396 lines as in the published file of resource "
                "'winobias/anti_type1_test' (what `wc -l` counts), found 100: the file was cut short: its tail lost, or its "
                "last row cut in two. An edited copy read with LMBIAS_VERIFY=0 keeps the published rows; replace it with the "
                "original from https://raw.githubusercontent.com/uclanlp/corefBias/0bce984dd081bbc10b0622f326727a024c607895/"
                "WinoBias/wino/data/anti_stereotyped_type1.txt.test")
    with pytest.raises(ValueError) as caught:
        lmbias.load_rows("winobias", "test", data_dir=unverified)
    assert str(caught.value) == expected
    # the command line: one line, before any model is looked for
    assert main(["run", "winobias", "--data-dir", str(unverified), "--model", str(tmp_path / "no-model"),
                 "--out", str(tmp_path / "r"), "--no-progress"]) == 2
    assert _one_error(capsys) == f"lmbias: error: {expected}"
    assert not (tmp_path / "r").exists()

    # the pro file's last sentence emptied (its line kept): the pro file is the one named, with what is missing
    anti.write_text("".join(lines), encoding="utf-8")
    pro = _copy(data_dir, unverified, "winobias/pro_type1_test")
    pro_lines = pro.read_text(encoding="utf-8").splitlines(keepends=True)
    pro.write_text("".join(pro_lines[:-1]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{pro} has the wrong layout: expected a pro-stereotypical version of each "
                                                   "of the 396 sentences of anti_stereotyped_type1.txt.test") +
                       r".*found 395 sentences, none numbered 396 \(1 missing\)"):
        lmbias.load_rows("winobias", "test", data_dir=unverified)
    # its last line cut in two (the line end lost): refused, although the sentence count is unchanged
    pro.write_text("".join(pro_lines[:-1]) + pro_lines[-1][:20], encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{pro} has the wrong layout: expected 396 lines as in the published file "
                                                   "of resource 'winobias/pro_type1_test' (what `wc -l` counts), found 395: "
                                                   "its last line has no line end: its last row cut in two (or saved without "
                                                   "one)")):
        lmbias.load_rows("winobias", "test", data_dir=unverified)

    # both cut alike: still pairs, but each has lost its tail (issue 47; before, accepted as a partial run)
    anti.write_text("".join(lines[:100]), encoding="utf-8")
    pro.write_text("".join(pro_lines[:100]), encoding="utf-8")
    with pytest.raises(ValueError, match=r"type1.txt.test has the wrong layout: expected 396 lines as in the published file .*"
                                         r"found 100: the file was cut short"):
        lmbias.load_rows("winobias", "test", data_dir=unverified)


def test_a_winogender_sentence_without_its_other_genders_is_refused(data_dir, unverified):
    sentences = _copy(data_dir, unverified, "winogender/sentences")
    lines = sentences.read_text(encoding="utf-8").splitlines(keepends=True)
    assert lines[1].startswith("technician.customer.1.male.txt") and lines[3].startswith("technician.customer.1.neutral.txt")
    # the neutral version of one sentence left out, its line kept empty (an empty line is skipped): 2 of its 3 genders
    sentences.write_text("".join([*lines[:3], "\n", *lines[4:]]), encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{sentences} has the wrong layout: expected each sentence with each pronoun "
                                                   "gender ['male', 'female', 'neutral'], found technician.customer.1 only "
                                                   "with ['male', 'female'] (1 sentences incomplete)")):
        lmbias.load_rows("winogender", "male", data_dir=unverified)  # also when one gender is asked for
    sentences.write_text(lines[0] + "\n" * 720, encoding="utf-8")  # a header and empty lines
    with pytest.raises(ValueError, match=re.escape(f"{sentences} has the wrong layout: expected a tab-separated file with "
                                                   "columns ['sentid', 'sentence'] and rows under them, found no rows")):
        lmbias.load_rows("winogender", data_dir=unverified)


def test_a_bbq_example_id_given_twice_is_refused_not_scored_twice(data_dir, unverified, tmp_path, capsys):
    religion = _copy(data_dir, unverified, "bbq/Religion")
    lines = religion.read_text(encoding="utf-8").splitlines(keepends=True)
    assert len(lines) == 1_200 and json.loads(lines[2])["example_id"] == 2
    religion.write_text("".join([*lines[:-1], lines[2]]), encoding="utf-8")  # the last item replaced by the third's copy
    expected = (f"{religion} has the wrong layout: expected each example_id once (an item given twice would be scored "
                "twice), found example_id 2 on line 3 and again on line 1200")
    with pytest.raises(ValueError) as caught:
        lmbias.load_rows("bbq", "Religion", data_dir=unverified)
    assert str(caught.value) == expected
    assert main(["run", "bbq", "--categories", "Religion", "--data-dir", str(unverified), "--model", str(tmp_path / "no-model"),
                 "--out", str(tmp_path / "r"), "--no-progress"]) == 2
    assert _one_error(capsys) == f"lmbias: error: {expected}"
    item = json.loads(lines[0])
    religion.write_text(json.dumps({**item, "example_id": "0"}) + "\n" + "".join(lines[1:]), encoding="utf-8")  # a string id
    with pytest.raises(ValueError, match=re.escape(f"{religion} has the wrong layout: expected an integer example_id on line 1, "
                                                   "found '0'")):
        lmbias.load_rows("bbq", "Religion", data_dir=unverified)


def test_an_empty_bbq_category_file_is_named_not_predictions_is_empty(data_dir, unverified, tmp_path, capsys):
    religion = _copy(data_dir, unverified, "bbq/Religion")
    for text, found in (("", "0: an empty file"), ("\n\n", "2: the file was cut short"), ("\n" * 1_200, None)):
        religion.write_text(text, encoding="utf-8")
        assert main(["run", "bbq", "--categories", "Religion", "--data-dir", str(unverified), "--model", str(tmp_path / "m"),
                     "--out", str(tmp_path / "r"), "--no-progress"]) == 2
        assert _one_error(capsys).startswith(
            f"lmbias: error: {religion} has the wrong layout: " +
            (f"expected 1,200 lines as in the published file of resource 'bbq/Religion' (what `wc -l` counts), found {found}"
             if found else "expected BBQ Religion items, one JSON object per line, found an empty file"))
    # a category whose count is not at hand (a built file, read unverified) is checked by its reader: an empty file named
    built = bbq_files.write_missing(tmp_path / "built") / "bbq" / "data" / "SES.jsonl"
    built.write_text("\n\n", encoding="utf-8")
    assert main(["run", "bbq", "--categories", "SES", "--data-dir", str(built.parents[2]), "--model", str(tmp_path / "m"),
                 "--out", str(tmp_path / "r"), "--no-progress"]) == 2
    assert _one_error(capsys) == (f"lmbias: error: {built} has the wrong layout: expected BBQ SES items, one JSON object per "
                                  "line, found an empty file")


def test_a_crows_pairs_id_given_twice_or_no_pairs_is_refused(data_dir, unverified):
    crows = _copy(data_dir, unverified, "crows_pairs")
    lines = crows.read_text(encoding="utf-8").splitlines(keepends=True)
    crows.write_text("".join([*lines[:6], lines[3], *lines[7:]]), encoding="utf-8")  # the pair with id 2 again on line 7
    with pytest.raises(ValueError, match=re.escape(f"{crows} has the wrong layout: expected each pair's id (the '' column) once "
                                                   "(a pair given twice would be scored twice), found id '2' on line 4 and "
                                                   "again on line 7")):
        lmbias.load_rows("crows_pairs", data_dir=unverified)
    crows.write_text(lines[0] + "\n" * 1_509, encoding="utf-8")  # the header, then empty lines
    with pytest.raises(ValueError, match=re.escape(f"{crows} has the wrong layout: expected sentence pairs under the header")):
        lmbias.load_rows("crows_pairs", data_dir=unverified)


@pytest.mark.parametrize("resource, dataset, config, empty, expected", [
    ("holistic_bias/nouns", "holistic_bias", "small", "{}",
     r"nouns.json has the wrong layout: expected \{gender: \[\[singular, plural\], ...\]\} with at least one noun, found \{\}"),
    ("holistic_bias/nouns", "holistic_bias", "small", '{"female": [], "male": []}', r"nouns.json has the wrong layout"),
    ("holistic_bias/descriptors", "holistic_bias", "small", '{"age": {"young": []}}',
     r"descriptors.json has the wrong layout: expected .* with at least one descriptor"),
    ("holistic_bias/sentence_templates", "holistic_bias", "small", "{}",
     r"sentence_templates.json has the wrong layout: expected .*, at least one template, found \{\}"),
    ("holistic_bias/standalone_noun_phrases", "holistic_bias", "small", "{}",
     r"standalone_noun_phrases.json has the wrong layout: expected .* with at least one noun phrase"),
    ("holistic_bias/nouns", "holistic_bias", "small", "", r"nouns.json is not valid JSON"),
    ("seat/sent-weat6", "seat", "gender", '{"targ1": {"category": "M", "examples": []}, "targ2": {}, "attr1": {}, "attr2": {}}',
     r"sent-weat6.jsonl has the wrong layout: expected targ1 as \{'category': name, 'examples': \[non-empty strings\]\}"),
    ("seat/sent-weat6", "seat", "gender", "", r"sent-weat6.jsonl is not valid JSON"),
    ("winobias/anti_type2_dev", "winobias", "dev", "", r"anti_stereotyped_type2.txt.dev has the wrong layout: expected "
                                                       r"396 lines as in the published file .*, found 0: an empty file"),
    ("winobias/anti_type2_dev", "winobias", "dev", "\n" * 396, r"anti_stereotyped_type2.txt.dev has the wrong layout: "
                                                               r"expected WinoBias sentences, one per line, found an empty file"),
    ("winogender/occupations", "winogender", "all", "", r"occupations-stats.tsv has the wrong layout: expected 61 lines"),
    ("winogender/occupations", "winogender", "all", "\n" * 61, r"occupations-stats.tsv has the wrong layout: expected a "
                                                               r"tab-separated file with columns .*, found columns \[\]"),
    ("crows_pairs", "crows_pairs", "all", "", r"crows_pairs_anonymized.csv has the wrong layout: expected 1,510 lines"),
    ("crows_pairs", "crows_pairs", "all", "\n" * 1_510, r"crows_pairs_anonymized.csv has the wrong layout: expected a CSV "
                                                        r"with columns"),
])
def test_an_empty_file_is_named(data_dir, unverified, resource, dataset, config, empty, expected):
    _copy(data_dir, unverified, resource).write_text(empty, encoding="utf-8")
    with pytest.raises(ValueError, match=expected):
        lmbias.load_rows(dataset, config, data_dir=unverified)


@pytest.mark.parametrize("resource, dataset, config, expected", [
    ("bbq/Religion", "bbq", "Religion", "Religion.jsonl is not UTF-8 text (invalid start byte at byte {at}); expected BBQ items"),
    ("winobias/pro_type1_test", "winobias", "test", "pro_stereotyped_type1.txt.test is not UTF-8 text (invalid start byte at "
                                                    "byte {at}); expected WinoBias sentences, one per line"),
    ("winobias/male_occupations", "winobias", "test", "male_occupations.txt is not UTF-8 text (invalid start byte at byte {at}); "
                                                      "expected one occupation per line"),
    ("winogender/templates", "winogender", "all", "templates.tsv is not UTF-8 text (invalid start byte at byte {at}); expected a "
                                                  "tab-separated file with columns"),
    ("crows_pairs", "crows_pairs", "all", "crows_pairs_anonymized.csv is not UTF-8 text (invalid start byte at byte {at}); "
                                          "expected a CSV with columns"),
    ("holistic_bias/sentence_templates", "holistic_bias", "small", "sentence_templates.json is not valid JSON ('utf-8' codec "
                                                                   "can't decode byte 0xff in position {at}: invalid start byte)"),
    ("seat/sent-weat6", "seat", "gender", "sent-weat6.jsonl is not valid JSON ('utf-8' codec can't decode byte 0xff in position "
                                          "{at}: invalid start byte)"),
])
def test_a_file_that_is_not_utf8_is_named_with_the_byte(data_dir, unverified, resource, dataset, config, expected):
    path = _copy(data_dir, unverified, resource)
    data = path.read_bytes()
    at = data.index(b"\n") + 1  # the first byte of the second line, replaced by one no UTF-8 text has
    path.write_bytes(data[:at] + b"\xff" + data[at + 1:])
    with pytest.raises(ValueError) as caught:
        lmbias.load_rows(dataset, config, data_dir=unverified)
    assert expected.format(at=at) in str(caught.value) and str(path) in str(caught.value)
    assert "\n" not in str(caught.value)


def test_the_checks_hold_with_checksums_on_too(data_dir, tmp_path, monkeypatch):
    # verified, an edited copy is refused for its checksum before its layout is read; and the reference files pass every check
    monkeypatch.setenv("LMBIAS_VERIFY", "1")
    religion = _copy(data_dir, tmp_path / "data", "bbq/Religion")
    religion.write_text(religion.read_text(encoding="utf-8").split("\n", 1)[1], encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{religion} does not match resource 'bbq/Religion'")):
        lmbias.load_rows("bbq", "Religion", data_dir=tmp_path / "data")
    assert [len(lmbias.load_rows(name, config, data_dir=data_dir)) for name, config in
            (("winobias", "test"), ("winobias", "dev"), ("winogender", "all"), ("crows_pairs", "all"), ("bbq", "Religion"))] == \
        [1_584, 1_584, 720, 1_508, 1_200]


def test_a_stereoset_item_given_twice_or_no_item_is_refused(tmp_path):
    from lmbias.benchmarks.stereoset.data import read_stereoset_file

    sentences = [{"id": f"s{label}", "sentence": f"A {label} sentence.", "gold_label": label}
                 for label in ("stereotype", "anti-stereotype", "unrelated")]
    item = {"id": "x1", "target": "t", "bias_type": "gender", "context": "The BLANK one.", "sentences": sentences}
    path = tmp_path / "dev.json"
    path.write_text(json.dumps({"version": "1.0", "data": {"intrasentence": [item, {**item, "id": "x2"}, item]}}))
    with pytest.raises(ValueError, match=re.escape(f"{path} has the wrong layout: expected each item id once (an item given "
                                                   "twice would be scored twice), found id 'x1' at data.intrasentence[0] and "
                                                   "again at data.intrasentence[2]")):
        read_stereoset_file(path)
    path.write_text(json.dumps({"version": "1.0", "data": {"intrasentence": [], "intersentence": []}}))
    with pytest.raises(ValueError, match=r"dev.json has the wrong layout: expected .*, found no items"):
        read_stereoset_file(path)
    path.write_text(json.dumps({"version": "1.0", "data": {"intrasentence": [item, {**item, "id": "x2"}]}}))
    assert [row["id"] for row in read_stereoset_file(path)] == ["x1", "x2"]


def test_an_empty_holistic_bias_nouns_file_is_named_on_the_command_line(data_dir, unverified, tmp_path, capsys):
    # before: "no pair of descriptors to compare with --axes ...", naming no file
    nouns = _copy(data_dir, unverified, "holistic_bias/nouns")
    nouns.write_text('{"female": [], "male": []}', encoding="utf-8")
    assert main(["run", "holistic_bias", "--data-dir", str(unverified), "--model", str(tmp_path / "no-model"),
                 "--out", str(tmp_path / "r"), "--no-progress"]) == 2
    assert _one_error(capsys) == (f"lmbias: error: {nouns} has the wrong layout: expected {{gender: [[singular, plural], ...]}} "
                                  "with at least one noun, found {'female': [], 'male': []}")


@pytest.mark.parametrize("resource, dataset, config, text, key", [
    ("seat/sent-weat6", "seat", "gender",
     '{"targ1": {"category": "M", "examples": ["a"]}, "targ1": {"category": "F", "examples": ["b"]}}', "targ1"),
    ("holistic_bias/nouns", "holistic_bias", "small", '{"female": [["woman", "women"]], "female": [["girl", "girls"]]}',
     "female"),
])
def test_a_json_key_given_twice_is_refused_not_merged(data_dir, unverified, resource, dataset, config, text, key):
    # json.load keeps the last of two equal keys without a word: the first set of sentences or nouns would vanish
    path = _copy(data_dir, unverified, resource)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError) as caught:
        lmbias.load_rows(dataset, config, data_dir=unverified)
    assert f"{path} has the wrong layout" in str(caught.value) and f"found the key {key!r} twice" in str(caught.value)


# Issue 47: the structure holds for every benchmark's files without checksums (LMBIAS_VERIFY=0): a file cut short,
# its tail lost or its last row cut in two, and an item given twice are refused, never scored as the whole set.

def test_each_declared_line_count_is_what_wc_counts_in_the_reference_file(data_dir):
    import subprocess

    from lmbias.resources import check_lines

    counted = 0
    for name, resource in REGISTRY.items():
        path = data_dir / resource.path
        if resource.lines is None or not path.is_file():
            continue
        assert int(subprocess.run(["wc", "-l", str(path)], capture_output=True, text=True, check=True).stdout.split()[0]) == \
            resource.lines, name
        check_lines(resource, path)
        counted += 1
    # every line-based file of a benchmark held here has its count: BBQ 6, CrowS-Pairs 1, EsBBQ / CaBBQ 20, KoBBQ 2,
    # MBBQ 48, StereoSet's flat file 1, ToxiGen 31, WinoBias 10, Winogender 3, political even-handedness 2 (JSON
    # documents do not parse when cut)
    assert counted == 124
    line_based = [name for name, resource in REGISTRY.items()
                  if resource.path.endswith((".jsonl", ".csv", ".tsv", ".txt", ".test", ".dev")) and
                  not name.startswith(("seat/", "lexicon/", "word2vec")) and (data_dir / resource.path).is_file()]
    assert [name for name in line_based if REGISTRY[name].lines is None] == []


def test_a_cabbq_file_cut_to_a_third_is_refused_not_run_on_40_items_of_124(data_dir, unverified, tmp_path, capsys):
    # before: `lmbias run cabbq --limit 1` ran on what was left (rc 0), a partial run of the whole set
    religion = _copy(data_dir, unverified, "esbbq_cabbq/ca/Religion")
    data = religion.read_bytes()
    religion.write_bytes(data[:len(data) // 3])  # cut by bytes, as a broken download: the last row cut in two
    assert data[:len(data) // 3].count(b"\n") == 216
    expected = (f"lmbias: error: {religion} has the wrong layout: expected 649 lines as in the published file of resource "
                "'esbbq_cabbq/ca/Religion' (what `wc -l` counts), found 216: the file was cut short: its tail lost, or its "
                "last row cut in two. An edited copy read with LMBIAS_VERIFY=0 keeps the published rows; replace it with "
                "the original from https://raw.githubusercontent.com/langtech-bsc/EsBBQ-CaBBQ/"
                "ee2e0f6123f718b735fc445d368d92acd2c223be/data_ca/Religion.full.csv")
    assert main(["run", "cabbq", "--categories", "Religion", "--limit", "1", "--data-dir", str(unverified), "--model",
                 str(tmp_path / "no-model"), "--out", str(tmp_path / "r"), "--no-progress"]) == 2
    assert _one_error(capsys) == expected
    assert not (tmp_path / "r").exists()
    # cut at a row's end instead (a lost tail): refused the same way
    religion.write_bytes(b"".join(data.splitlines(keepends=True)[:300]))
    with pytest.raises(ValueError, match=re.escape("found 300: the file was cut short")):
        lmbias.load_rows("cabbq", "Religion", data_dir=unverified)
    # an edited copy that keeps the published rows is read (LMBIAS_VERIFY=0: used on purpose)
    religion.write_bytes(data.replace(b"musulm", b"MUSULM"))
    assert len(lmbias.load_rows("cabbq", "Religion", data_dir=unverified)) == 648


@pytest.mark.parametrize("resource, dataset, config", [
    ("bbq/Religion", "bbq", "Religion"),
    ("mbbq/SES_en", "mbbq", "en"),
    ("kobbq/test_samples", "kobbq", "test"),
    ("esbbq_cabbq/es/Nationality", "esbbq", "Nationality"),
    ("crows_pairs", "crows_pairs", "all"),
    ("stereoset/dev_flat", "stereoset", "intrasentence"),
    ("toxigen/hate_asian", "toxigen", "hate"),
    ("winobias/anti_type2_dev", "winobias", "dev"),
    ("winobias/male_occupations", "winobias", "test"),
    ("winogender/templates", "winogender", "all"),
])
@pytest.mark.parametrize("cut", ["last row lost", "last row cut in two", "a row repeated"])
def test_every_benchmarks_file_cut_short_or_with_a_row_repeated_is_refused(data_dir, unverified, resource, dataset, config,
                                                                            cut):
    path = _copy(data_dir, unverified, resource)
    lines = path.read_bytes().splitlines(keepends=True)
    edited = {"last row lost": lines[:-1], "last row cut in two": [*lines[:-1], lines[-1][:len(lines[-1]) // 2]],
              "a row repeated": [*lines, lines[-1] if lines[-1].endswith(b"\n") else b"\n" + lines[-1]]}[cut]
    path.write_bytes(b"".join(edited))
    published = REGISTRY[resource].lines
    found = b"".join(edited).count(b"\n")
    if found == published:  # the published last line has no line end (WinoBias's occupations): its loss or cut is not
        with pytest.raises(ValueError, match="occupations"):  # counted; the reader judges what is left: an occupation
            lmbias.load_rows(dataset, config, data_dir=unverified)  # missing, a sentence's occupation unknown
        return
    with pytest.raises(ValueError, match=re.escape(f"{path} has the wrong layout: expected {published:,} lines as in the "
                                                   f"published file of resource {resource!r} (what `wc -l` counts), found "
                                                   f"{found:,}: ")):
        lmbias.load_rows(dataset, config, data_dir=unverified)


def test_a_real_toxicity_prompt_given_twice_is_refused_not_scored_twice(tmp_path):
    from rtp_rows import write_rows

    from lmbias.benchmarks.real_toxicity_prompts.data import read_prompts

    path = write_rows(tmp_path, repeat=2)  # 12 different prompts (each OpenWebText file named once)
    assert len(read_prompts(tmp_path)[0]) == 12
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join([*lines, lines[2]]), encoding="utf-8")  # before: 13 rows, the third prompt scored twice
    first = json.loads(lines[2])
    with pytest.raises(ValueError, match=re.escape(f"{path} line 13: the prompt of {first['filename']} [0:{first['end']}] was "
                                                   "given on line 3 already (each prompt once: one given twice would be "
                                                   "scored twice)")):
        read_prompts(tmp_path)
    path.write_text("".join([*lines[:2], json.dumps({**first, "begin": "0"}) + "\n"]), encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 3: filename '0000002-built.txt', begin '0', end \d+; expected the OpenWebText"):
        read_prompts(tmp_path)
