"""--on-error skip: lines skipped as bad are not records without the text field, so a file of
nothing but bad lines ends with the 'no record written' error (exit 2), not with a wrong
advice to name the field of abstracts."""

import pytest
from click.testing import CliRunner

from tagger.cli import cli

GOOD = ('{"id": "1", "abstract": "We train a deep convolutional network on the images of a large benchmark '
        'and report state of the art error rates on it."}\n')


@pytest.mark.parametrize("command", [["label", "-f", "pairs"], ["label", "-f", "pairs", "--jobs", "2"],
                                     ["filter", "method:cnn"]])
@pytest.mark.parametrize("n_bad", [1, 3])
def test_only_bad_lines_skipped_is_no_record_written(tmp_path, command, n_bad):
    f = tmp_path / "nan.jsonl"
    f.write_text('{"id": "a", "abstract": NaN}\n' * n_bad)
    r = CliRunner().invoke(cli, command + [str(f), "--on-error", "skip"])
    assert r.exit_code == 2
    lines = r.stderr.splitlines()
    assert lines[:n_bad] == [f"tagger: warning: {f}:{i}: invalid JSON (NaN is not a JSON number); skipped"
                             for i in range(1, n_bad + 1)]
    what = "the one record read was" if n_bad == 1 else f"all {n_bad} records read were"
    assert lines[n_bad:] == [f"tagger: error: no record written: {what} bad and skipped"]
    assert r.stdout == ""


def test_bad_lines_do_not_hide_a_wrong_text_field(tmp_path):
    f = tmp_path / "summary.jsonl"
    f.write_text('{"id": "1", "summary": "x"}\nNaN\n')
    r = CliRunner().invoke(cli, ["label", str(f), "--on-error", "skip", "-f", "pairs"])
    assert r.exit_code == 2
    assert r.stderr.splitlines()[-1] == (f"tagger: error: {f}: the field 'abstract' is not in its one record (the "
                                         "fields there: 'id', 'summary'); name the field of abstracts with "
                                         "--text-field (0 records were written before it)")


def test_a_good_record_and_a_bad_line(tmp_path):
    f = tmp_path / "mixed.jsonl"
    f.write_text(GOOD + "NaN\n")
    r = CliRunner().invoke(cli, ["label", str(f), "--on-error", "skip", "-f", "pairs"])
    assert r.exit_code == 0
    assert [ln.split("\t")[:2] for ln in r.stdout.splitlines()][:2] == [["1", "modality:image"], ["1", "method:cnn"]]
    assert r.stderr.splitlines()[-1] == "tagger: 1 bad record skipped, 1 written"
