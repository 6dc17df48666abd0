import gzip
import json

import pytest
from hypothesis import given, settings, strategies as st

from tagger.corpus import check_corpus
from tagger.readers import InputError, ReadOptions, detect_format, read_records, source_stem
from tagger.readers.jsonl import read_jsonl
from tagger.readers.text import is_heading

from conftest import CORPUS, EXAMPLES, write_jsonl


def fields(path, fmt=None, **opts):
    return [r.fields for r in read_records(str(path), fmt, opts=ReadOptions(lenient=False, **opts))]


@pytest.mark.parametrize("name, count, heading", [("iclr-2026-abstracts.txt", 19, "ICLR 2026 Papers"),
                                                  ("daily-papers-abstracts.txt", 120, "Daily Papers")])
def test_seed_files_skip_their_heading(name, count, heading):
    recs = fields(EXAMPLES / name)
    assert len(recs) == count
    stem = name[:-4]
    assert [r["id"] for r in recs] == [f"{stem}:{n}" for n in range(1, count + 1)]
    assert all(r["abstract"] != heading and len(r["abstract"].split()) > 40 for r in recs)


def test_heading_rule():
    assert is_heading("ICLR 2026 Papers") and is_heading("Daily Papers")
    assert not is_heading("We propose a method.")
    assert not is_heading("A heading\nover two lines")
    assert not is_heading(" ".join(["word"] * 13))
    assert not is_heading("Abstract:")


def test_first_paragraph_that_is_an_abstract_is_kept(tmp_path):
    p = tmp_path / "a.txt"
    p.write_text("We study things in depth.\n\nSecond one here.\n")
    assert [r["abstract"] for r in fields(p)] == ["We study things in depth.", "Second one here."]


paragraph = st.lists(st.from_regex(r"[A-Za-z][A-Za-z ,]{0,30}\.", fullmatch=True), min_size=1, max_size=3).map("\n".join)


@given(st.lists(paragraph, min_size=1, max_size=8), st.sampled_from(["\n", "\r\n"]), st.integers(1, 3))
@settings(max_examples=100, deadline=None)
def test_paragraph_reader_round_trips(tmp_path_factory, paras, eol, blank):
    p = tmp_path_factory.mktemp("p") / "x.txt"
    p.write_bytes((eol * (blank + 1)).join(x.replace("\n", eol) for x in paras).encode() + eol.encode())
    assert [r["abstract"] for r in fields(p)] == paras


@given(st.lists(st.fixed_dictionaries({"abstract": st.text(min_size=1, max_size=50), "n": st.integers()}), max_size=10))
@settings(max_examples=100, deadline=None)
def test_jsonl_reader_keeps_every_field(tmp_path_factory, rows):
    p = write_jsonl(tmp_path_factory.mktemp("j") / "x.jsonl", rows)
    got = fields(p)
    assert [{k: v for k, v in g.items() if k != "id"} for g in got] == rows
    assert [g["id"] for g in got] == [f"x:{i}" for i in range(1, len(rows) + 1)]


def test_gzip_and_tables(tmp_path):
    p = tmp_path / "d.jsonl.gz"
    with gzip.open(p, "wt") as fh:
        fh.write(json.dumps({"id": "a", "abstract": "x"}) + "\n")
    assert fields(p) == [{"id": "a", "abstract": "x"}]
    t = tmp_path / "t.tsv"
    t.write_text("title\tabstract\nT\tsome text\n")
    assert fields(t) == [{"title": "T", "abstract": "some text"}]
    assert next(iter(read_records(str(t)))).id() == "t:1"
    c = tmp_path / "c.csv"
    c.write_text('abstract,x\n"a, b",1\n"two\nlines",2\n')
    assert fields(c) == [{"abstract": "a, b", "x": "1"}, {"abstract": "two\nlines", "x": "2"}]
    assert [r.line for r in read_records(str(c))] == [2, 3]


@pytest.mark.parametrize("content, fmt, message", [
    (b'{"abstract": "x"}\n{not json}\n', "jsonl", ":2: invalid JSON"),
    (b'[1, 2]\n', "jsonl", ":1: expected a JSON object, found array"),
    (b'{"abstract": "x"}\n5\n', "jsonl", ":2: expected a JSON object, found number"),
    (b'3.5\n', "jsonl", ":1: expected a JSON object, found number"),
    (b'true\n', "jsonl", ":1: expected a JSON object, found boolean"),
    (b'null\n', "jsonl", ":1: expected a JSON object, found null"),
    (b'"text"\n', "jsonl", ":1: expected a JSON object, found string"),
    (b'[1, 2, "x"]', "json", ":1: expected a JSON object, found number"),
    (b'[\n{"abstract": "x"},\n null]', "json", ":3: expected a JSON object, found null"),
    (b'[true]', "json", ":1: expected a JSON object, found boolean"),
    (b'[3.5]', "json", ":1: expected a JSON object, found number"),
    (b'[["x"]]', "json", ":1: expected a JSON object, found array"),
    (b'42', "json", ":1: expected a JSON object, found number"),
    (b'null', "json", ":1: expected a JSON object, found null"),
    (b"caf\xe9 au lait\n", "txt", ":1: not UTF-8 text (byte 0xe9 at column 4)"),
    (b"ok\n\x00\x01\x02\n", "txt", ":2: binary data"),
])
def test_bad_input_names_file_and_line(tmp_path, content, fmt, message):
    p = tmp_path / f"bad.{fmt}"
    p.write_bytes(content)
    with pytest.raises(InputError) as e:
        list(read_jsonl(str(p))) if fmt == "jsonl" else fields(p)
    assert str(e.value).startswith(str(p)) and message in str(e.value)
    if "expected a JSON object" in message:  # the whole message: nothing else on the line
        assert str(e.value) == f"{p}{message}"


def test_stream_reader_marks_lines_that_are_not_records(tmp_path):
    p = tmp_path / "m.jsonl"
    p.write_text('{"abstract": "a"}\n{oops\n"text"\n')
    recs = list(read_records(str(p)))
    assert [r.error is None for r in recs] == [True, False, False]
    assert recs[1].line == 2 and recs[1].error.startswith("invalid JSON")
    assert recs[2].error == "expected a JSON object, found string"
    c = tmp_path / "m.csv"
    c.write_text("abstract,b\n1,2,3\n4,5\n")
    recs = list(read_records(str(c)))
    assert recs[0].error == "row has 3 columns, the header has 2" and recs[0].line == 2
    assert recs[1].error is None and recs[1].fields == {"abstract": "4", "b": "5"}
    t = tmp_path / "m.txt"
    t.write_bytes(b"first paragraph\nsecond line caf\xe9\n\nthird\n")
    recs = list(read_records(str(t)))
    assert [r.error for r in recs] == ["not UTF-8 text (byte 0xe9 at column 16); convert it to UTF-8 first, "
                                       "or name its encoding with --encoding", None]
    assert recs[0].line == 2 and recs[1].fields["abstract"] == "third"
    n = tmp_path / "n.jsonl"
    n.write_text('{"abstract": NaN}\n{"x": 1e999}\n')
    assert [r.error for r in read_records(str(n))] == ["invalid JSON (NaN is not a JSON number)",
                                                       "invalid JSON (1e999 does not fit a double)"]


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        fields(tmp_path / "nope.txt")
    with pytest.raises(InputError, match="is a directory"):
        fields(tmp_path)


def test_format_detection():
    assert detect_format("a.jsonl.gz") == "jsonl" and detect_format("a.TSV") == "tsv"
    assert detect_format("-") == "txt" and detect_format("notes") == "txt"
    assert detect_format("a.txt", "jsonl") == "jsonl"
    assert source_stem("dir/day.jsonl.gz") == "day" and source_stem("-") == "stdin"


def test_shipped_corpus_is_clean(taxonomy, corpus_records):
    assert check_corpus(str(CORPUS), taxonomy) == []
    assert len(corpus_records) >= 600
    uniform = [r for r in corpus_records if r["sample"] == "uniform"]
    assert len(uniform) >= 200
    counts = {lb: 0 for lb in taxonomy.label_ids}
    for r in corpus_records:
        for lb in r["labels"]:
            counts[lb] += 1
    assert min(counts.values()) >= 15, counts
    assert all(r["annotator"].startswith("agent:") for r in corpus_records)


def test_shipped_corpus_has_its_provenance_fields(taxonomy, corpus_records):
    if not any("licence" in r for r in corpus_records):
        pytest.skip("fixtures/corpus.jsonl has no 'licence' fields yet (the second tagging round adds them)")
    assert check_corpus(str(CORPUS), taxonomy, provenance=True) == []
    assert sum(isinstance(r.get("year"), int) for r in corpus_records) > len(corpus_records) // 2


def test_corpus_check_provenance_fields(tmp_path, taxonomy):
    good = {"id": "a", "abstract": "A text.", "labels": [], "annotator": "me", "sample": "older-uniform",
            "source": "arxiv-older.jsonl.gz", "licence": "CC0-1.0", "year": 1999}
    rows = [good, {**good, "id": "b", "abstract": "B.", "year": None},  # null: year unknown
            {**good, "id": "c", "abstract": "C.", "year": 1999.0, "licence": "", "sample": "Uniform"},
            {k: v for k, v in {**good, "id": "d", "abstract": "D.", "year": True}.items() if k not in ("licence", "source")}]
    path = str(write_jsonl(tmp_path / "c.jsonl", rows))
    assert check_corpus(path, taxonomy) == []  # training's check: labels only
    assert check_corpus(path, taxonomy, provenance=True) == [
        f"{path}:3: c: 'year' must be an integer, not 1999.0",
        f"{path}:3: c: 'licence' must be a non-empty string, not ''",
        f"{path}:3: c: 'sample' is 'Uniform', not one of seed, uniform, rare-label-search, older-uniform, active, field-uniform",
        f"{path}:4: d: 'year' must be an integer, not True",
        f"{path}:4: d: no 'licence' (the text's licence)",
        f"{path}:4: d: no 'source' (where the text came from)",
    ]


def test_corpus_check_finds_each_problem(tmp_path, taxonomy):
    rows = [{"id": "a", "abstract": "Some text.", "labels": ["modality:text"], "annotator": "me"},
            {"id": "a", "abstract": "some   TEXT.", "labels": ["modality:txt"], "annotator": "me"},
            {"id": "c", "abstract": " ", "labels": [], "annotator": ""}]
    probs = check_corpus(str(write_jsonl(tmp_path / "c.jsonl", rows)), taxonomy)
    text = "\n".join(probs)
    assert ":2: a: duplicate id (first at line 1)" in text
    assert ":2: a: duplicate abstract (same text as line 1)" in text
    assert ":2: a: unknown label 'modality:txt'" in text
    assert ":3: c: empty abstract" in text and ":3: c: no 'annotator'" in text
    assert len(probs) == 5


@pytest.mark.parametrize("content, message", [
    ('"unterminated,abstract\nx,y\n', "t.csv:1: bad header row (unexpected end of data)"),
    ('id,abstract\n1,"never closed\n2,second\n', "t.csv:2: malformed row starting here (unexpected end of data)"),
])
def test_csv_with_an_unterminated_quote_is_an_error(tmp_path, content, message):
    """Python's csv module, unless strict, reads an unclosed quote silently to the end of the
    file (rows merged into one, or an empty table): here it is a one-line error."""
    (tmp_path / "t.csv").write_text(content)
    with pytest.raises(InputError) as e:
        fields(tmp_path / "t.csv")
    assert str(e.value).endswith(message)


def _expected_lines(data: bytes):
    """The numbered lines of UTF-8 ``data`` as the readers must give them, worked out here
    from the bytes alone: split at LF, the CR before it dropped, one BOM at the start dropped."""
    lines = data.decode("utf-8").split("\n")
    if lines[-1] == "":  # after the final line break
        lines.pop()
    if lines:  # a BOM belongs to the first line (a file of only a BOM has one, empty, line)
        lines[0] = lines[0].removeprefix("\ufeff")
    return [(i + 1, ln.rstrip("\r")) for i, ln in enumerate(lines)]


def _reference_records(path):
    """The records of a JSON Lines file: (n, line, raw) of each line that is not blank."""
    out, n = [], 0
    for lineno, text in _expected_lines(path.read_bytes()):
        if text.strip():
            n += 1
            out.append((n, lineno, text))
    return out


#: the pipe test's records: a CSV header of any text is its own column of abstracts
OPTS = ReadOptions(text_field="abstract", lenient=True)

_LINE = st.text(st.sampled_from(['{', '}', '"', 'a', 'é', ' ', '\t', '\r', '\x0b', '\x1c', '\x85', '\xa0', '\u2028',
                                 '\u3000', '\ufeff']), max_size=6)


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(_LINE, max_size=12), size=st.integers(1, 40), bom=st.booleans(), last_newline=st.booleans())
def test_chunked_reading_matches_line_by_line(tmp_path_factory, lines, size, bom, last_newline):
    """Reading JSON Lines in chunks of ``size`` bytes (what --jobs workers get) numbers records
    and lines, and keeps each line's text, exactly as reading line by line does: blank lines
    (Unicode whitespace included) skipped, CR before LF dropped, a BOM at the start dropped."""
    from tagger.readers.jsonl import read_jsonl_chunks

    p = tmp_path_factory.mktemp("c") / "x.jsonl"
    text = "\n".join(lines) + ("\n" if last_newline and lines else "")
    p.write_bytes(("\ufeff" if bom else "").encode() + text.encode("utf-8"))
    chunks = list(read_jsonl_chunks(str(p), size=size))
    got = []
    for c in chunks:
        recs, error = c.split()
        assert error is None and len(recs) == c.n_records
        got += [(r.n, r.line, r.raw) for r in recs]
        assert all(r.default_id == f"x:{r.n}" and r.fields is None for r in recs)
    assert got == _reference_records(p)
    assert b"".join(c.data for c in chunks) == text.encode("utf-8").removeprefix(b"" if bom else "\ufeff".encode())


@pytest.mark.parametrize("size", [7, 1 << 18])
@pytest.mark.parametrize("bad, message", [
    (b'{"a": "caf\xe9"}', ':3: not UTF-8 text (byte 0xe9 at column 11)'),
    (b'{"a": "x\x00"}', ':3: binary data (NUL byte), not text'),
    (b'{"a": "\xff x\x00"}', ':3: binary data (NUL byte), not text'),  # the NUL is named, as line by line
])
def test_chunked_reading_stops_at_a_line_that_is_not_text(tmp_path, size, bad, message):
    """The records before the bad line come out first, then the error names its line."""
    p = tmp_path / "b.jsonl"
    p.write_bytes(b'{"abstract": "one"}\n\n' + bad + b'\n{"abstract": "two"}\n')
    got = []
    with pytest.raises(InputError) as e:
        for r in read_jsonl(str(p)):
            got.append(r.fields["abstract"])
    assert got == ["one"] and str(e.value) == str(p) + message + (
        "; convert it to UTF-8 first, or name its encoding with --encoding" if "UTF-8" in message else "")


def test_truncated_gzip_names_the_line(tmp_path):
    p = tmp_path / "t.jsonl.gz"
    whole = gzip.compress(b"".join(b'{"abstract": "x%d"}\n' % i for i in range(50000)))
    p.write_bytes(whole[: len(whole) // 2])
    got = []
    with pytest.raises(InputError) as e:
        for r in read_jsonl(str(p)):
            got.append(r)
    assert str(e.value).startswith(f"{p}:{len(got) + 1}: cannot read: ")
    assert got and [r.n for r in got] == list(range(1, len(got) + 1))


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(_LINE, max_size=10), cuts=st.lists(st.integers(0, 80), max_size=8), bom=st.booleans(),
       last_newline=st.booleans(), fmt=st.sampled_from(["txt", "csv"]))
def test_lines_from_a_pipe_match_lines_from_a_file(tmp_path_factory, lines, cuts, bom, last_newline, fmt):
    """Reading a pipe as its bytes arrive, in pieces cut anywhere, gives the same numbered
    lines, and the same records, as reading the same bytes from a file."""
    from tagger import readers as corpus
    from tagger.readers import lines as lines_mod, stream

    p = tmp_path_factory.mktemp("p") / f"x.{fmt}"
    data = ("\ufeff" if bom else "").encode() + ("\n".join(lines) + ("\n" if last_newline else "")).encode()
    p.write_bytes(data)
    from_file = list(lines_mod.open_lines(str(p)))
    assert from_file == _expected_lines(data)
    try:
        want = [(r.n, r.line, r.fields, r.error) for r in corpus.read_records(str(p), fmt, opts=OPTS)]
    except InputError as e:
        want = str(e)
    pieces = [data[a:b] for a, b in zip([0, *sorted(cuts)], [*sorted(cuts), len(data)]) if data[a:b]]
    with pytest.MonkeyPatch.context() as m:
        m.setattr(stream, "_is_regular_file", lambda raw: False)
        for _ in range(2):
            left = list(pieces)
            m.setattr(stream, "_read_available", lambda raw, size: left.pop(0) if left else b"")
            if _ == 0:
                reader = lines_mod.open_lines(str(p))
                assert list(reader) == from_file and not left  # every piece came through the pipe reader
            else:
                try:
                    got = [(r.n, r.line, r.fields, r.error) for r in corpus.read_records(str(p), fmt, opts=OPTS)]
                except InputError as e:
                    got = str(e)
                assert got == want
