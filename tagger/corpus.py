"""Reading records: plain-text paragraphs, JSON Lines, CSV and TSV (optionally gzip'd), streamed.

Every reader is a generator of :class:`Record` (a field dict, its 1-based number and the
line it starts on), so memory stays flat however long the input.  Errors are
:class:`InputError` with one line ``FILE:LINE: what is wrong``.

Plain text (``.txt``, or anything not otherwise recognised): one abstract per paragraph,
paragraphs separated by blank lines; records get ``id`` ``<file stem>:<n>`` and ``abstract``.
**Heading rule**: the file's first paragraph is a heading, not an abstract, when it is a
single line of at most 12 words that does not end in ``.``, ``!``, ``?`` or ``:`` (the seed
files start with "ICLR 2026 Papers" and "Daily Papers"); it is skipped and not counted.
"""

from __future__ import annotations

import csv
import gzip
import json
import sys
import zlib
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from .errors import TaggerError

FORMATS = ("txt", "jsonl", "csv", "tsv")
EXTENSIONS = {".txt": "txt", ".text": "txt", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl",
              ".csv": "csv", ".tsv": "tsv", ".tab": "tsv"}
HEADING_MAX_WORDS = 12


class InputError(TaggerError):
    """Unreadable input; the message names the file and line or record."""


class FileError(InputError):
    """A file that cannot be opened at all (missing, a directory, not readable): nothing of
    it was read."""


@dataclass
class Record:
    """One input record: ``fields`` (all input fields, in input order), ``n`` (1-based
    record number in its file), ``line`` (1-based line where it starts), ``source`` (file),
    ``default_id`` (``<file stem>:<n>``, for records whose input has no id)."""

    fields: dict | None  # None: a JSON Lines line not parsed yet (``raw``; see parse_json_record)
    n: int
    line: int
    source: str
    default_id: str = ""
    error: str | None = None  # why this line is not a record (then ``fields`` is empty)
    #: JSON Lines input: the line's text, so output can keep its bytes (``output.tagged_json``)
    raw: str | None = None
    #: JSON Lines input without an ``id``: the reader added ``fields["id"]``
    id_added: bool = False

    def id(self, id_field: str = "id") -> str:
        """The record's id: its ``id_field`` value, else ``<file stem>:<n>``."""
        v = self.fields.get(id_field)
        return str(v) if v not in (None, "") else (self.default_id or str(self.n))


def detect_format(path: str, override: str | None = None, sniff: bool = False) -> str:
    """The input format of ``path``: ``override`` if given, else by extension (``.gz``
    stripped first); ``-`` and unknown extensions read as plain text, or, with ``sniff``,
    by their first character (:func:`sniff_format`)."""
    if override:
        return override
    if path == "-":
        return sniff_format(path) if sniff else "txt"
    p = Path(path)
    suffixes = [s.lower() for s in p.suffixes]
    gz = bool(suffixes) and suffixes[-1] == ".gz"
    if gz:
        suffixes = suffixes[:-1]
    fmt = EXTENSIONS.get(suffixes[-1] if suffixes else "")
    if fmt is None:
        return sniff_format(path) if sniff and not gz else "txt"
    return fmt


def sniff_format(path: str) -> str:
    """The input format of ``path`` (``-`` = stdin) when neither an option nor its extension
    tells: ``jsonl`` when its first character that is not white space is ``{``, else
    ``txt``.  Reads nothing from stdin (it only peeks at its buffer); an unreadable file is
    ``txt``, left for the reader to report."""
    if path == "-":
        peek = getattr(sys.stdin.buffer, "peek", None) if hasattr(sys.stdin, "buffer") else None
        try:
            head = peek(64) if peek else b""
        except (OSError, ValueError):
            head = b""
    else:
        try:
            with open(path, "rb") as fh:
                head = fh.read(4096)
        except OSError:
            head = b""
    return "jsonl" if head.removeprefix(b"\xef\xbb\xbf").lstrip()[:1] == b"{" else "txt"


def source_stem(path: str) -> str:
    """File name without directories and extensions (``data/day.jsonl.gz`` -> ``day``); ``stdin`` for ``-``."""
    if path == "-":
        return "stdin"
    name = Path(path).name
    for _ in range(2):
        stem, dot, ext = name.rpartition(".")
        if dot and stem and ("." + ext.lower() in EXTENSIONS or ext.lower() == "gz"):
            name = stem
    return name


def _open_binary(path: str):
    """A binary file object for ``path`` (``-`` = stdin, ``.gz`` decompressed); raises
    :class:`InputError` for a missing file, a directory or one that cannot be opened."""
    if path == "-":
        return sys.stdin.buffer
    p = Path(path)
    if p.is_dir():
        raise FileError(f"{path}: is a directory, not a file of abstracts")
    try:
        return gzip.open(p, "rb") if p.suffix.lower() == ".gz" else open(p, "rb")
    except FileNotFoundError:
        raise FileError(f"{path}: no such file") from None
    except OSError as e:
        raise FileError(f"{path}: cannot read: {e.strerror}") from None


def _not_text(path: str, line: int, data: bytes, pos: int, nul: bool) -> str:
    """The message for the NUL byte or the first byte that is not UTF-8 at ``data[pos]``,
    ``line`` being the number of the line it is on."""
    start = data.rfind(b"\n", 0, pos) + 1
    if line == 1 and data[start:start + 2] == b"\x1f\x8b":  # gzip's magic number
        return f"{path}:1: gzip-compressed data, not text; decompress it first (zcat), or name the file .gz"
    if nul:
        return f"{path}:{line}: binary data (NUL byte), not text"
    column = pos - start + 1
    return (f"{path}:{line}: not UTF-8 text (byte 0x{data[pos]:02x} at column {column}); "
            "convert it to UTF-8 first")


class _Lines:
    """The ``(line number, text)`` pairs of :func:`open_lines`, read in blocks of whole lines
    (:func:`_whole_line_blocks`); :meth:`would_wait` tells whether the next line is still to
    come through a pipe that has gone silent (so that what was read can be tagged meanwhile)."""

    def __init__(self, path: str):
        self.path, self.raw = path, _open_binary(path)
        self._blocks = _whole_line_blocks(self.raw, CHUNK_BYTES)
        self._ready: list[bytes] = []  # lines of the current block not yet taken, last first
        self._waits = False  # the current block ended where the pipe went silent

    def _next_line(self) -> bytes:
        """The next line with its line break (the last may have none); empty at the end."""
        while not self._ready:
            block = next(self._blocks, None)
            if block is None:
                return b""
            data, self._waits = block
            lines = data.split(b"\n")
            last = lines.pop()  # after the last line break: the file's last line without one, or nothing
            self._ready = ([last] if last else []) + [ln + b"\n" for ln in reversed(lines)]
        return self._ready.pop()

    def would_wait(self) -> bool:
        """True when every line read so far has been taken and the pipe had gone silent for
        :data:`PIPE_PAUSE` seconds after them (never for a file)."""
        return not self._ready and self._waits

    def __iter__(self):
        path, n = self.path, 0
        try:
            while True:
                try:
                    chunk = self._next_line()
                except _READ_ERRORS as e:  # truncated or damaged gzip
                    raise InputError(f"{path}:{n + 1}: cannot read: {e}") from None
                if not chunk:
                    break
                n += 1
                if b"\x00" in chunk:
                    raise InputError(_not_text(path, n, chunk, chunk.find(b"\x00"), True))
                try:
                    text = chunk.decode("utf-8")  # a line break never falls inside a UTF-8 sequence
                except UnicodeDecodeError as e:
                    raise InputError(_not_text(path, n, chunk, e.start, False)) from None
                if n == 1 and text.startswith("\ufeff"):
                    text = text[1:]
                yield n, text.rstrip("\r\n")
        finally:
            if path != "-":
                self.raw.close()


def open_lines(path: str) -> _Lines:
    """The ``(line_number, text)`` pairs of a UTF-8 file (``-`` = stdin, ``.gz``
    decompressed), to iterate over once; from a pipe, as the lines arrive.

    Raises :class:`FileError` for a missing file or a directory (at once), and, while
    iterating, :class:`InputError` for a binary file (NUL byte) or bytes that are not UTF-8,
    naming the line.  Line endings are kept off; a BOM is dropped.
    """
    return _Lines(path)


def is_heading(paragraph: str) -> bool:
    """The heading rule (module docstring): one line, <= 12 words, no final . ! ? :"""
    p = paragraph.strip()
    return ("\n" not in p and 0 < len(p.split()) <= HEADING_MAX_WORDS and p[-1] not in ".!?:")


def read_paragraphs(path: str, text_field: str = "abstract", lines=None):
    """Records from a plain-text file: one per paragraph, the heading rule applied.
    ``lines``: its :func:`open_lines`, if already open."""
    stem = source_stem(path)
    buf, start, n, first = [], 0, 0, True

    def flush():
        nonlocal n, first
        para = "\n".join(buf)
        was_first, first = first, False
        if was_first and is_heading(para):
            return None
        n += 1
        return Record({"id": f"{stem}:{n}", text_field: para}, n, start, path)

    for lineno, line in lines or open_lines(path):
        if line.strip():
            if not buf:
                start = lineno
            buf.append(line)
        elif buf:
            rec = flush()
            buf = []
            if rec:
                yield rec
    if buf:
        rec = flush()
        if rec:
            yield rec


def _reject_constant(name):
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text):
    v = float(text)
    if v != v or v in (float("inf"), float("-inf")):
        raise ValueError(f"{text} does not fit a double")
    return v


#: bytes read at a time from a JSON Lines file; a :class:`LineChunk` is what such a read
#: holds of whole lines (about 230 arXiv records), the unit of work of a ``--jobs`` worker
CHUNK_BYTES = 1 << 18


@dataclass
class LineChunk:
    """Consecutive whole lines of a JSON Lines file, as bytes not yet decoded: what the
    reading process hands to a ``--jobs`` worker, which decodes and parses them
    (:meth:`split`), so the reader does next to no work per record.

    ``data``: the lines' bytes, line breaks included (a BOM at the start of the file
    removed); ``source``: the file; ``line``: the 1-based number of the first line;
    ``n``: the records (non-blank lines) before this chunk in its file; ``n_records``: the
    records in it (:func:`read_jsonl_chunks` counts them without decoding but for lines
    that do not start with ``{``); ``stem``: :func:`source_stem` of the file; ``waits``: see
    :func:`read_jsonl_chunks`.
    """

    data: bytes
    source: str
    line: int
    n: int
    n_records: int
    stem: str
    #: read from a pipe that had no more input yet: the results so far should be written
    #: before reading waits for more
    waits: bool = False

    def split(self) -> tuple[list[Record], str | None]:
        """``(records, error)``: the chunk's records, unparsed (``fields`` None, ``raw`` the
        line; :func:`parse_json_record` parses them), and None; or, when a line holds a NUL
        byte or bytes that are not UTF-8, the records before that line and the
        ``FILE:LINE: what`` message for it."""
        data, error = self.data, None
        nul = data.find(b"\x00")
        try:
            text = data.decode("utf-8")  # a line break never falls inside a UTF-8 sequence
            bad = nul
        except UnicodeDecodeError as e:
            bad, end = e.start, data.find(b"\n", e.start)
            if 0 <= nul < (end if end >= 0 else len(data)):  # a NUL on that line or before: named first
                bad = nul
        if bad >= 0:
            error = _not_text(self.source, self.line + data.count(b"\n", 0, bad), data, bad, bad == nul)
            text = data[:data.rfind(b"\n", 0, bad) + 1].decode("utf-8")
        lines = text.split("\n")
        if lines[-1] == "":  # the text ends with a line break (else: the file's last line has none)
            lines.pop()
        records, n, first, path, stem = [], self.n, self.line, self.source, self.stem
        for i, line in enumerate(lines):
            if not line.strip():
                continue
            n += 1
            records.append(Record(None, n, first + i, path, f"{stem}:{n}", raw=line.rstrip("\r")))
        return records, error


def _count_records(data: bytes) -> tuple[int, int]:
    """``(lines, records)`` of ``data``: its lines, and how many of them are not blank, with
    the same test as :meth:`LineChunk.split` (``str.strip``); only lines that do not start
    with ``{`` (none, in JSON Lines written by a program) are decoded to tell."""
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    odd = [ln for ln in lines if ln[:1] != b"{"]
    return len(lines), len(lines) - sum(1 for ln in odd if not ln.decode("utf-8", "replace").strip())


def read_jsonl_chunks(path: str, size: int = CHUNK_BYTES):
    """:class:`LineChunk` s of a JSON Lines file, about ``size`` bytes each (a line longer
    than that makes a longer chunk), in order.

    From a pipe or terminal, a chunk is what has arrived (whole lines), so that records
    trickling in are tagged as they come; its ``waits`` is True when the pipe had gone
    silent.  Raises :class:`InputError` for a file that cannot be opened, and for one
    that cannot be read on (a truncated or damaged ``.gz``) after the chunks of the whole
    lines before the damage, naming the first line not read.
    """
    import codecs

    raw = _open_binary(path)
    stem, line, n, first = source_stem(path), 1, 0, True
    try:
        for data, waits in _whole_line_blocks(raw, size):
            if first:
                first = False
                data = data.removeprefix(codecs.BOM_UTF8)
            if data:
                n_lines, n_records = _count_records(data)
                yield LineChunk(data, path, line, n, n_records, stem, waits)
                line, n = line + n_lines, n + n_records
    except _READ_ERRORS as e:
        raise InputError(f"{path}:{line}: cannot read: {e}") from None
    finally:
        if path != "-":
            raw.close()


def _whole_line_blocks(raw, size: int):
    """``(data, waits)``: the bytes of ``raw`` in blocks of whole lines, about ``size`` bytes
    each (a longer line makes a longer block; the input's last line may lack its line break).

    A regular file is read ``size`` bytes at a time; a ``.gz`` in pieces of at most 64 KiB, so
    that a damaged member loses no whole line before the damage; a pipe or terminal as its
    bytes arrive (:func:`_read_available`), a block ending where it goes silent (``waits``
    True), so that records trickling in are tagged as they come.  A read error
    (``_READ_ERRORS``: a truncated or damaged ``.gz``) is raised after the whole lines
    before it."""
    streaming = False
    if isinstance(raw, gzip.GzipFile):
        def read(size):
            return raw.read1(min(size, 1 << 16))
    elif _is_regular_file(raw):
        read = raw.read
    else:
        read, streaming = partial(_read_available, raw), True
    pending, have = [], 0  # what was read since the last block, and its length
    while True:
        try:
            block = read(size)
        except _READ_ERRORS:
            data = b"".join(pending)
            if data.rfind(b"\n") >= 0:  # a line cut short by the damage is not read
                yield data[:data.rfind(b"\n") + 1], False
            raise
        if not block:
            if pending:
                yield b"".join(pending), False
            return
        pending.append(block)
        have += len(block)
        if (have < size and not streaming) or b"\n" not in block:
            continue  # fill the block; or no line has ended yet
        data = b"".join(pending)
        cut = data.rfind(b"\n") + 1
        pending, have = ([data[cut:]], len(data) - cut) if cut < len(data) else ([], 0)
        yield data[:cut], streaming and len(block) < size


def _is_regular_file(raw) -> bool:
    """Whether ``raw`` reads a regular file (or a ``.gz`` one), which never makes a read wait."""
    import os
    import stat

    try:
        return stat.S_ISREG(os.fstat(raw.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):  # io objects without a descriptor (tests)
        return False


#: what reading a damaged ``.gz`` raises: truncated (EOFError), bad CRC or trailing bytes
#: (OSError), corrupt deflate data (zlib.error)
_READ_ERRORS = (OSError, EOFError, zlib.error)

#: seconds a pipe may stay silent before what has come is tagged: longer than the gaps of a
#: producer that keeps up (``cat``, ``zcat``: a pipe refills in microseconds), short enough
#: not to be noticed by someone typing or a slow stream
PIPE_PAUSE = 0.05


def _read_available(raw, size: int) -> bytes:
    """Up to ``size`` bytes from a pipe or terminal: waits for the first bytes, then takes
    more until ``size`` or until the pipe stays silent for :data:`PIPE_PAUSE` seconds, so
    records typed or trickling in are tagged as they come, while a fast producer still
    fills whole chunks.  Empty at the end of the input."""
    import select

    parts = [raw.read1(size)]
    got = len(parts[0])
    while parts[-1] and got < size:
        try:
            if not select.select([raw], [], [], PIPE_PAUSE)[0]:
                break
        except (OSError, ValueError, TypeError):  # no select() on this stream (Windows pipes)
            break
        parts.append(raw.read1(size - got))
        got += len(parts[-1])
    return b"".join(parts)


def read_jsonl(path: str, text_field: str = "abstract", lenient: bool = False):
    """Records from JSON Lines: each non-blank line one JSON object, read in chunks
    (:func:`read_jsonl_chunks`).

    A line that is not a JSON object raises :class:`InputError`, or with ``lenient`` comes out
    as a :class:`Record` whose ``error`` says why (so ``--on-error skip`` can skip it).  A
    line with a NUL byte or bytes that are not UTF-8 raises :class:`InputError` in any case,
    after the records before it.
    """
    for chunk in read_jsonl_chunks(path):
        records, error = chunk.split()
        for rec in records:
            parse_json_record(rec)
            if rec.error and not lenient:
                raise InputError(f"{path}:{rec.line}: {rec.error}")
            yield rec
        if error:
            raise InputError(error)


def parse_json_record(rec: Record) -> Record:
    """Parse a :class:`Record` read lazily from JSON Lines (``fields`` None): set ``fields``
    (with ``id`` = ``default_id`` added when missing, then ``id_added``) or ``error``."""
    if rec.fields is not None:
        return rec
    try:
        obj = json.loads(rec.raw, parse_constant=_reject_constant, parse_float=_finite_float)
        error = None if isinstance(obj, dict) else f"expected a JSON object, found {type(obj).__name__}"
    except json.JSONDecodeError as e:
        error = f"invalid JSON ({e.msg.removesuffix(' at')} at column {e.colno})"
    except ValueError as e:
        error = f"invalid JSON ({e})"
    if error:
        rec.fields, rec.error, rec.raw = {}, error, None
        return rec
    if "id" not in obj:
        obj["id"] = rec.default_id
        rec.id_added = True
    rec.fields = obj
    return rec


def read_table(path: str, delimiter: str, lines=None):
    """Records from CSV/TSV with a header row; values stay strings, column order kept.
    ``lines``: its :func:`open_lines`, if already open."""
    stem = source_stem(path)
    lines = lines or open_lines(path)
    numbers = [0]  # the last line number read (a quoted field may span several lines)

    def text_lines():
        for lineno, line in lines:
            numbers[0] = lineno
            yield line + "\n"

    reader = csv.reader(text_lines(), delimiter=delimiter, strict=True)  # an unterminated quote is an error, not a merged row
    try:
        header = next(reader)
    except StopIteration:
        return
    except csv.Error as e:
        raise InputError(f"{path}:1: bad header row ({e})") from None
    if len(set(header)) != len(header):
        dup = sorted({h for h in header if header.count(h) > 1})
        raise InputError(f"{path}:1: duplicate column name(s) in the header: {', '.join(dup)}")
    n = 0
    while True:
        start = numbers[0] + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as e:
            raise InputError(f"{path}:{start}: malformed row starting here ({e})") from None
        if not row or all(not c.strip() for c in row):
            continue
        n += 1
        if len(row) != len(header):
            yield Record({}, n, start, path, f"{stem}:{n}", f"row has {len(row)} columns, the header has {len(header)}")
            continue
        # the table keeps exactly its own columns; a missing id is only Record.default_id
        yield Record(dict(zip(header, row)), n, start, path, f"{stem}:{n}")


def read_records(path: str, fmt: str | None = None, text_field: str = "abstract", id_field: str = "id",
                 lines=None):
    """Stream :class:`Record` s from ``path`` in format ``fmt`` (detected when None);
    ``lines``: its :func:`open_lines`, if already open (not for JSON Lines)."""
    fmt = detect_format(path, fmt)
    if fmt == "jsonl":
        return read_jsonl(path, text_field, lenient=True)
    if fmt in ("csv", "tsv"):
        return read_table(path, "," if fmt == "csv" else "\t", lines)
    if fmt == "txt":
        return read_paragraphs(path, text_field, lines)
    raise InputError(f"{path}: unknown input format {fmt!r} (known: {', '.join(FORMATS)})")


def record_text_error(rec: Record, text_field: str) -> str | None:
    """Why ``rec`` cannot be tagged (not a record, missing or non-string text field), or None.
    Parses a lazily read JSON Lines record first."""
    if rec.fields is None:
        parse_json_record(rec)
    if rec.error:
        return rec.error
    v = rec.fields.get(text_field)
    if v is None:
        if text_field in rec.fields:
            return f"record {rec.n}: {text_field!r} is null, not text"
        return f"record {rec.n} has no {text_field!r} field"
    if not isinstance(v, str):
        return f"record {rec.n}: {text_field!r} must be a string, not {type(v).__name__}"
    return None


# --- hand-tagged corpora ----------------------------------------------------------------

def load_corpus(path: str) -> list[dict]:
    """All records of a hand-tagged JSONL corpus, each with ``labels`` (list of str)."""
    out = []
    for rec in read_jsonl(path):
        labels = rec.fields.get("labels")
        if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
            raise InputError(f"{path}:{rec.line}: record {rec.fields.get('id')!r} needs 'labels', a list of label ids")
        if not isinstance(rec.fields.get("abstract"), str):
            raise InputError(f"{path}:{rec.line}: record {rec.fields.get('id')!r} has no 'abstract' text")
        out.append({**rec.fields, "_line": rec.line})
    return out


def check_corpus(path: str, taxonomy) -> list[str]:
    """Problems of a hand-tagged corpus against ``taxonomy``, one ``FILE:LINE: what`` each.

    Checks: unknown label ids, more than one label of an exclusive facet, duplicate ids,
    duplicate abstracts (after folding whitespace and case), empty abstracts, missing
    annotator.  An empty list means the corpus is fine.
    """
    import re

    known = set(taxonomy.label_ids)
    exclusive = {f.id for f in taxonomy.facets if f.kind == "exclusive"}
    problems, ids, texts = [], {}, {}
    for r in load_corpus(path):
        line, rid = r["_line"], r.get("id")
        where = f"{path}:{line}: {rid}"
        if rid in ids:
            problems.append(f"{where}: duplicate id (first at line {ids[rid]})")
        ids.setdefault(rid, line)
        body = r.get("abstract", "")
        if not body.strip():
            problems.append(f"{where}: empty abstract")
        else:
            key = re.sub(r"\s+", " ", body).strip().lower()
            if key in texts:
                problems.append(f"{where}: duplicate abstract (same text as line {texts[key]})")
            texts.setdefault(key, line)
        for lb in r["labels"]:
            if lb not in known:
                problems.append(f"{where}: unknown label {lb!r}")
        for f in exclusive:
            mine = [lb for lb in r["labels"] if lb.startswith(f + ":")]
            if len(mine) > 1:
                problems.append(f"{where}: {len(mine)} labels of exclusive facet {f!r}: {', '.join(mine)}")
        if len(set(r["labels"])) != len(r["labels"]):
            problems.append(f"{where}: a label is listed twice")
        if not r.get("annotator"):
            problems.append(f"{where}: no 'annotator' (who read and tagged it)")
    return problems
