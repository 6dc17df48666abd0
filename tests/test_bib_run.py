"""run(): the contract of `tagger bib` and the hooks: exit statuses, what is printed, bytes
and encodings, atomic writes."""

from __future__ import annotations

import io
import os
import stat

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tagger.bib import BibReport, run, update_bib_text
from tagger.bib.run import MAX_LINE

from bibtools import CASES, CASES2, FACETS, SHARED, FakePredictor, call, nothing, problem_lines, read_case, summary_of


@pytest.fixture
def bibfile(tmp_path):
    def make(name="refs.bib", content=None, data=None):
        p = tmp_path / name
        if data is None:
            data = (content if content is not None else read_case("01-month-macro.bib")).encode("utf-8")
        p.write_bytes(data)
        return p

    return make


def test_run_fixes_then_passes(bibfile):
    f = bibfile()
    before = f.read_bytes()
    pred = FakePredictor()
    rc, out, err = call([f], predict=pred)
    assert (rc, out) == (1, f"Fixing {f}\n")
    assert err == (f"{f}: 2 entries: 2 tagged, 0 updated, 0 unchanged, 0 without abstract, 0 abstained, "
                   f"0 unreadable, 0 warnings\n")
    assert len(pred.calls) == 1 and len(pred.calls[0]) == 2  # one batch with both entries
    after = f.read_bytes()
    assert after != before and b"keywords = {modality:text}," in after
    rc, out, err = call([f])
    assert (rc, out) == (0, "") and summary_of(err).startswith("2 entries: 0 tagged, 0 updated, 2 unchanged, ")
    assert f.read_bytes() == after
    assert call([f], check=True)[:2] == (0, "")


def test_run_nothing_to_do_exits_0(bibfile):
    f = bibfile(content=read_case("38-empty-values.bib"))
    rc, out, err = call([f])
    assert (rc, out, problem_lines(err)) == (0, "", [])
    assert summary_of(err).endswith(" 0 tagged, 0 updated, 0 unchanged, 2 without abstract, 0 abstained, "
                                    "0 unreadable, 0 warnings")
    assert call([f], check=True)[:2] == (0, "")


def test_run_summary_counts_every_status(bibfile):
    f = bibfile(content="@misc{new, abstract = {An entry.}}\n@misc{upd, abstract = {An entry.}, keywords = {method:old}}\n"
                        "@misc{same, abstract = {An entry.}, keywords = {modality:text, task:entry}}\n"
                        "@misc{noabs, title = {T}}\n@misc{abs, abstract = {abstain}}\n"
                        "@misc{bad, title = {a}} b}, abstract = {An entry.}}\n"
                        "@misc{dup, abstract = {x}}\n@misc{dup, abstract = {y}}\n")
    rc, out, err = call([f], check=True)
    assert rc == 2
    assert summary_of(err) == ("8 entries: 1 tagged, 1 updated, 1 unchanged, 1 without abstract, 1 abstained, "
                               "1 unreadable, 2 warnings")
    assert out == (f"{f}:1: new: tags missing: +modality:text +task:entry\n{f}:2: upd: tags out of date: +modality:text +task:entry -method:old"
                   "; to keep them off: tagger = {-modality:text, -task:entry}\n")


def test_run_check_lists_stale_and_writes_nothing(bibfile):
    f = bibfile(content="@misc{a,\n  abstract = {An entry.},\n}\n\n@misc{b,\n  abstract = {Other.},\n  keywords = {u, method:gone},\n}\n"
                        "@misc{c, abstract = {abstain}, keywords = {method:gone}}\n")
    before = f.read_bytes()
    rc, out, err = call([f], check=True)
    assert rc == 1 and problem_lines(err) == []
    assert out == (f"{f}:1: a: tags missing: +modality:text +task:entry\n"
                   f"{f}:5: b: tags out of date: +modality:text -method:gone; to keep it off: tagger = {{-modality:text}}\n"
                   f"{f}:9: c: tags out of date: -method:gone\n")
    assert f.read_bytes() == before
    assert call([f])[0] == 1
    assert call([f], check=True)[:2] == (0, "")


def test_run_diff(bibfile):
    f = bibfile()
    before = f.read_bytes()
    rc, out, err = call([f], check=True, diff=True)
    assert rc == 1 and f.read_bytes() == before
    assert f"--- {f}\n+++ {f}\n" in out  # an absolute path as diff -u writes it (not a//tmp/...)
    plus = [ln for ln in out.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    assert plus == ["+  keywords = {modality:text},", "+  keywords = {modality:text, modality:example, method:abstract},"]
    rc, out2, _ = call([f], diff=True)
    assert rc == 1 and out2.startswith(f"Fixing {f}\n--- {f}\n")
    assert call([f], diff=True)[:2] == (0, "")


def test_run_diff_of_a_relative_path_has_git_prefixes(bibfile, monkeypatch):
    f = bibfile()
    monkeypatch.chdir(f.parent)
    rc, out, _ = call(["refs.bib"], check=True, diff=True)
    assert rc == 1 and "\n--- a/refs.bib\n+++ b/refs.bib\n@@ " in out


def test_run_diff_no_final_newline(bibfile):
    f = bibfile(content=read_case("32-no-final-newline.bib"))
    rc, out, _ = call([f], check=True, diff=True)
    assert rc == 1 and out.endswith("+  keywords = {modality:text},\n }\n\\ No newline at end of file\n")


def test_run_warnings_and_strict(bibfile):
    f = bibfile(content=read_case("04-percent-comment-inside-entry.bib"))
    before = f.read_bytes()
    rc, out, err = call([f])
    assert (rc, out) == (0, "")
    assert problem_lines(err) == [f"{f}:1: roe2021pct: warning: `%` line inside the entry (BibTeX has no comments "
                                  f"there); left untouched"]
    assert summary_of(err).endswith(" 1 warnings")
    assert call([f], check=True)[0] == 0
    assert call([f], strict=True)[0] == 2
    assert call([f], check=True, strict=True)[0] == 2
    assert f.read_bytes() == before


def test_run_unreadable_fails_after_doing_the_rest(bibfile):
    f = bibfile(content=read_case("30-unbalanced-braces.bib"))
    rc, out, err = call([f])
    assert rc == 2 and out == f"Fixing {f}\n"
    assert problem_lines(err)[0].startswith(f"{f}:1: unbal1996: unreadable: ")
    assert b"{Should still be parsed.},\n  keywords = {modality:text},\n}" in f.read_bytes()
    assert call([f], check=True)[0] == 2
    rc, out, err = call([f], check=True, allow_unreadable=True)
    assert rc == 0 and problem_lines(err)[0].startswith(f"{f}:1: unbal1996: warning: unreadable: ")
    assert summary_of(err).endswith(", 0 unreadable, 1 warnings")
    assert call([f], check=True, allow_unreadable=True, strict=True)[0] == 2


def test_problem_lines_are_bounded(bibfile):
    key = "k" * 300
    f = bibfile("r.bib", content="@misc{%s, title = {a} b}, abstract = {x}}\n" % key + "".join(
        "@misc{dup, abstract = {x}}\n" for _ in range(100)))
    rc, out, err = call([f])
    lines = problem_lines(err)
    assert rc == 2 and len(lines) == 101 and max(map(len, lines)) <= max(MAX_LINE, len(str(f)) + MAX_LINE - 80)
    assert lines[0].startswith(f"{f}:1: kkkkkkkkkkkkkkkkk") and "...: unreadable: " in lines[0]
    assert lines[0].endswith("(stray `}`?) (in `title`, line 1)")  # the reason is never cut


LATIN1 = "@article{caf\xe9,\n  title = {Caf\xe9 entry},\n  abstract = {R\xe9sum\xe9 of an entry.},\n}\n".encode("latin-1")


def test_run_non_utf8_without_encoding(bibfile):
    f = bibfile("latin.bib", data=LATIN1)
    pred = FakePredictor()
    rc, out, err = call([f], predict=pred)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and str(f) in err and "UTF-8" in err and "--encoding" in err
    assert "Traceback" not in err
    assert f.read_bytes() == LATIN1 and pred.calls == []
    assert call([f], check=True)[0] == 2


def test_run_latin1_with_encoding(bibfile):
    f = bibfile("latin.bib", data=LATIN1)
    pred = FakePredictor()
    rc, out, err = call([f], predict=pred, encoding="latin-1")
    assert (rc, out, problem_lines(err)) == (1, f"Fixing {f}\n", [])
    assert pred.items[0]["abstract"] == "Résumé of an entry." and pred.items[0]["key"] == "café"
    assert f.read_bytes() == LATIN1.replace(b"entry.},\n}", b"entry.},\n  keywords = {modality:text, task:entry},\n}")
    with pytest.raises(UnicodeDecodeError):
        f.read_bytes().decode("utf-8")
    assert call([f], encoding="latin-1")[:2] == (0, "")


@pytest.mark.parametrize("codec,bom", [("utf-16-le", "\ufeff"), ("utf-16-be", "\ufeff"), ("utf-32-le", "\ufeff"),
                                       ("utf-8", "\ufeff")])
def test_run_bom_names_the_encoding_and_is_written_back(bibfile, codec, bom):
    text = bom + "% Encoding: x\r\n@misc{a,\r\n  abstract = {An entry.},\r\n}\r\n"
    f = bibfile("u.bib", data=text.encode(codec))
    rc, out, err = call([f])
    assert (rc, out, problem_lines(err)) == (1, f"Fixing {f}\n", [])
    want = text.replace("entry.},\r\n}", "entry.},\r\n  keywords = {modality:text, task:entry},\r\n}")
    assert f.read_bytes() == want.encode(codec)
    assert call([f], check=True)[:2] == (0, "")
    assert call([f], encoding="utf-16" if "16" in codec else None)[:2] == (0, "")


def test_run_case_09_utf16le_file(bibfile):
    data = (CASES2 / "09-utf16le-bib-latin1-hint.bib").read_bytes()
    f = bibfile("09.bib", data=data)
    pred = FakePredictor()
    rc, out, err = call([f], predict=pred)
    assert rc == 1 and [x["key"] for x in pred.items] == ["cnn2012"] and "--encoding" not in err
    new = f.read_bytes()
    assert new.startswith(b"\xff\xfe%\x00") and new.decode("utf-16-le") == data.decode("utf-16-le").replace(
        "methods.},\r\n}", "methods.},\r\n  keywords = {modality:text},\r\n}")


def test_run_real_utf16_file_round_trips(bibfile):
    path = SHARED / "bib" / "real-2" / "jabref__tiny-LE-withBOM.bib"
    if not path.exists():
        pytest.skip(f"needs {path}")
    f = bibfile("tiny.bib", data=path.read_bytes())
    rc, out, err = call([f], check=True)
    assert rc == 0 and "error" not in err and summary_of(err).startswith("1 entries: ")  # the exact form, also for 1


@pytest.mark.parametrize("data", [b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", b"@misc{a, abstract = {x\x00y}}\n",
                                  "@misc{a}\n".encode("utf-16-le")])
def test_run_binary_input_is_called_binary(bibfile, data):
    f = bibfile("b.bib", data=data)
    rc, out, err = call([f])
    assert rc == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"tagger: error: {f}: binary data (NUL byte at offset ") and "--encoding" not in err
    assert f.read_bytes() == data


@pytest.mark.parametrize("data", [b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n",
                                  b"%PDF-1.4\n1 0 obj\n@misc{a, abstract = {x}}\n", b"\n  %PDF-1.3\x00\x01"])
def test_run_pdf_is_called_a_pdf(bibfile, data):
    f = bibfile("paper.bib", data=data)
    for kw in ({}, {"check": True}):
        rc, out, err = call([f], **kw)
        assert (rc, out) == (2, "")
        assert err == (f"tagger: error: {f}: a PDF, not a .bib file: tagger bib edits BibTeX files (export the "
                       f"references from your reference manager as BibTeX); left untouched\n")
    assert f.read_bytes() == data


@pytest.mark.parametrize("content", ["Reading list\n\nAttention is all you need, 2017.\n",
                                     "\ufeffno entries here\n", "% header\nsome words\n"])
def test_run_text_without_entries_is_an_error(bibfile, content):
    f = bibfile("notes.bib", content=content)
    pred = FakePredictor()
    for kw in ({}, {"check": True}, {"remove": True}):
        rc, out, err = call([f], predict=pred, **kw)
        assert (rc, out) == (2, "")
        assert err == (f"tagger: error: {f}: holds no BibTeX entries (no @type{{key, ...}} block), so it is not a "
                       f".bib file; left untouched\n")
    assert f.read_text(encoding="utf-8") == content and pred.calls == []


@pytest.mark.parametrize("content", ["@string{jmlr = {Journal of Machine Learning Research}}\n",
                                     "@comment{jabref-meta: databaseType:bibtex;}\n",
                                     "@preamble{\"\\newcommand{\\noop}[1]{}\"}\n",
                                     "Exported by a reference manager\n@string{a = {b}}\n"])
def test_run_blocks_without_entries_are_a_bib_file(bibfile, content):
    f = bibfile(content=content)
    rc, out, err = call([f])
    assert (rc, out, problem_lines(err)) == (0, "", [])
    assert summary_of(err) == ("0 entries: 0 tagged, 0 updated, 0 unchanged, 0 without abstract, 0 abstained, "
                               "0 unreadable, 0 warnings")


_BLANK = st.from_regex(r"[ \t]*", fullmatch=True)
# no NUL: a file with one is binary data, not a .bib of comments (test_run_binary_input_is_called_binary)
_COMMENT = st.builds(lambda ws, t: ws + "%" + t, _BLANK, st.text(st.characters(blacklist_categories=("Cs",),
                                                                                blacklist_characters="\r\n\x00")))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.one_of(_BLANK, _COMMENT), max_size=6), nl=st.sampled_from(["\n", "\r\n"]),
       bom=st.booleans())
def test_run_empty_or_comments_only_is_a_bib_file(bibfile, lines, nl, bom):
    f = bibfile(content=("\ufeff" if bom else "") + nl.join(lines))
    rc, out, err = call([f])
    assert (rc, out, problem_lines(err)) == (0, "", [])
    assert summary_of(err).startswith("0 entries: 0 tagged")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(st.from_regex(r"[A-Za-z0-9.,;:()'-]{1,12}", fullmatch=True), min_size=1, max_size=8),
       before=st.lists(st.one_of(_BLANK, _COMMENT), max_size=3))
def test_run_any_text_without_blocks_is_an_error(bibfile, words, before):
    f = bibfile(content="\n".join(before + [" ".join(words)]) + "\n")
    rc, out, err = call([f])
    assert (rc, out) == (2, "") and err.count("\n") == 1 and ": holds no BibTeX entries " in err


def _stdin(data: bytes, **kw):
    """run() on ``-`` with ``data`` as standard input: ``(rc, stdout text, stderr, BibTeX bytes written)``."""
    bib_out = io.BytesIO()
    rc, out, err = call(["-"], stdin=io.BytesIO(data), bib_out=bib_out, **kw)
    return rc, out, err, bib_out.getvalue()


@pytest.mark.parametrize("case", sorted(p.name for p in CASES.glob("*.bib")))
def test_run_stdin_writes_what_the_file_would_hold(bibfile, case):
    data = (CASES / case).read_bytes()
    f = bibfile(data=data)
    file_rc, file_out, file_err = call([f])
    rc, out, err, written = _stdin(data)
    assert written == f.read_bytes()  # the whole text, tagged as the file is (or as it was)
    assert out == "" and rc == (0 if file_rc == 1 else file_rc)  # a filter: being changed is not status 1
    assert err == file_err.replace(f"{f}:", "-:")
    g = bibfile("again.bib", data=data)
    check_rc, check_out, check_err = call([g], check=True)
    assert _stdin(data, check=True) == (check_rc, check_out.replace(f"{g}:", "-:"), check_err.replace(f"{g}:", "-:"), b"")


def test_run_stdin_filter_check_and_errors():
    data = read_case("01-month-macro.bib").encode("utf-8")
    rc, out, err, written = _stdin(data)
    assert (rc, out) == (0, "")
    assert err == "-: 2 entries: 2 tagged, 0 updated, 0 unchanged, 0 without abstract, 0 abstained, 0 unreadable, 0 warnings\n"
    assert written == data.replace(b"sample data.},\n}", b"sample data.},\n  keywords = {modality:text},\n}").replace(
        b"workshops.},\n}", b"workshops.},\n  keywords = {modality:text, modality:example, method:abstract},\n}")
    assert _stdin(written)[::3] == (0, written)  # tagged already: the same bytes again
    rc, out, err, written = _stdin(data, check=True, diff=True)
    assert rc == 1 and written == b"" and out.startswith("-:") and "\n--- a/-\n+++ b/-\n" in out
    utf16 = data.decode("utf-8").replace("\n", "\r\n").encode("utf-16")
    rc, _, _, written = _stdin(utf16)
    assert rc == 0 and written[:2] == utf16[:2] and "  keywords = {modality:text},\r\n}" in written.decode("utf-16")
    for bad, why in [(b"not bibtex\n", "holds no BibTeX entries"), (b"%PDF-1.5\n", "a PDF, not a .bib file"),
                     (b"@misc{a, abstract = {x\xffy}}\n", "not valid UTF-8")]:
        rc, out, err, written = _stdin(bad)
        assert (rc, out, written) == (2, "", b"") and err.startswith(f"tagger: error: -: {why}") and err.count("\n") == 1


def test_run_stdin_unreadable_entry_writes_the_rest_and_exits_2():
    data = b"@misc{bad, title = {a}} b}, abstract = {An entry.}}\n@misc{ok, abstract = {An entry.}}\n"
    rc, out, err, written = _stdin(data)
    assert (rc, out) == (2, "") and problem_lines(err)[0].startswith("-:1: bad: unreadable: ")
    assert written == data.replace(b"{An entry.}}\n@misc{ok, abstract = {An entry.}}",
                                   b"{An entry.}}\n@misc{ok, abstract = {An entry.}, keywords = {modality:text, task:entry}}")


def test_run_unreadable_file_and_unknown_encoding(bibfile, tmp_path):
    missing = tmp_path / "missing.bib"
    rc, out, err = call([missing])
    assert rc == 2 and out == "" and err.startswith(f"tagger: error: {missing}: cannot read file") and err.count("\n") == 1
    d = tmp_path / "dir.bib"
    d.mkdir()
    assert call([d])[0] == 2
    f = bibfile()
    rc, out, err = call([f], encoding="no-such-codec")
    assert rc == 2 and "unknown encoding" in err and err.count("\n") == 1


def test_run_multiple_files_continue_after_error(bibfile):
    bad = bibfile("bad.bib", data=LATIN1)
    good = bibfile("good.bib")
    pred = FakePredictor()
    rc, out, err = call([bad, good], predict=pred)
    assert rc == 2 and out == f"Fixing {good}\n" and str(bad) in err
    assert len(pred.calls) == 1  # once per file that has entries to tag
    assert b"keywords" in good.read_bytes() and summary_of(err).startswith("2 entries")


def test_run_predict_called_once_per_file(bibfile):
    a = bibfile("a.bib")
    b = bibfile("b.bib", content=read_case("36-biblatex-unknown-types.bib"))
    pred = FakePredictor()
    assert call([a, b], predict=pred)[0] == 1
    assert [len(c) for c in pred.calls] == [2, 3]


def test_run_atomic_write_keeps_mode_and_leaves_no_temp(bibfile, tmp_path):
    f = bibfile()
    os.chmod(f, 0o640)
    assert call([f])[0] == 1
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["refs.bib"]


def test_run_leaves_a_read_only_file_alone(bibfile):
    f = bibfile()
    before = f.read_bytes()
    os.chmod(f, 0o444)  # as root os.replace would still replace it
    rc, out, err = call([f])
    assert (rc, out) == (2, "")
    assert err == (f"tagger: error: {f}: cannot write file: read-only (its mode has no write bit); file left as it "
                   f"is: chmod u+w it to let tagger write, or run with --check\n")
    assert f.read_bytes() == before and stat.S_IMODE(os.stat(f).st_mode) == 0o444
    assert call([f], check=True)[0] == 1  # --check still reads it


def test_run_never_replaces_a_fifo(tmp_path):
    import threading

    fifo = tmp_path / "refs.bib"
    os.mkfifo(fifo)
    text = read_case("01-month-macro.bib").encode("utf-8")

    def feed():
        with open(fifo, "wb") as fh:
            fh.write(text)

    t = threading.Thread(target=feed)
    t.start()
    rc, out, err = call([fifo])
    t.join(timeout=10)
    assert (rc, out) == (2, "")
    assert err == f"tagger: error: {fifo}: cannot write file: not a regular file, so not replaced; file left as it is\n"
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and sorted(p.name for p in tmp_path.iterdir()) == ["refs.bib"]


def test_run_write_through_symlink(bibfile, tmp_path):
    target = bibfile("real.bib")
    link = tmp_path / "link.bib"
    link.symlink_to(target)
    assert call([link])[0] == 1
    assert link.is_symlink() and b"keywords" in target.read_bytes()


def test_run_field_option(bibfile):
    f = bibfile(content=read_case("31-existing-keywords-separators.bib"))
    before = f.read_bytes()
    assert call([f], field="tags")[0] == 1
    after = f.read_bytes()
    assert b"Keywords = {Apple; Fruit; {Trees, Deciduous}}," in after  # user keywords untouched
    assert after.count(b"tags = {") == 2
    assert call([f], field="tags")[:2] == (0, "")
    assert call([f], field="tags", predict=nothing)[0] == 1
    assert f.read_bytes() == before
    with pytest.raises(ValueError, match="corrections"):
        call([f], field="tagger")


def test_run_default_streams_are_looked_up_at_call_time(bibfile, monkeypatch):
    f = bibfile()
    fake_out, fake_err = io.StringIO(), io.StringIO()
    monkeypatch.setattr("sys.stdout", fake_out)
    monkeypatch.setattr("sys.stderr", fake_err)
    assert run([str(f)], predict=FakePredictor(), facets=FACETS) == 1
    assert fake_out.getvalue() == f"Fixing {f}\n" and fake_err.getvalue().startswith(f"{f}: 2 entries: 2 tagged")


def test_report_dataclass_shape():
    r = update_bib_text("", FakePredictor(), facets=FACETS)
    assert r == BibReport("", [], []) and r.counts()["tagged"] == 0 and r.changed_keys == []
