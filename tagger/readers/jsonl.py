"""JSON Lines: one JSON object per line, read in chunks of whole lines.

The fast path of ``tagger label``: the reading process hands undecoded chunks of lines
(:class:`LineChunk`) to the ``--jobs`` workers, which decode and parse them, so the reader
does next to no work per record.  Pretty-printed objects and arrays are ``tagger.readers.json``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from .base import InputError, ReadOptions, Record, source_stem
from .stream import _READ_ERRORS, CHUNK_BYTES, MAX_RECORD_SIZE, Oversized, not_text, open_source, over_limit

FORMAT = "jsonl"
#: arrays and objects a record may nest (as :data:`tagger.readers.json.MAX_DEPTH`)
MAX_DEPTH = 100


def _reject_constant(name):
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text):
    v = float(text)
    if v != v or v in (float("inf"), float("-inf")):
        raise ValueError(f"{text} does not fit a double")
    return v


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
    #: > 0: the chunk is one line of this many bytes, over ``limit``, that was not read
    too_long: int = 0
    limit: int | None = None

    def split(self, lenient: bool = False) -> tuple[list[Record], str | None]:
        """``(records, error)``: the chunk's records, unparsed (``fields`` None, ``raw`` the
        line; :func:`parse_json_record` parses them), and None.  When a line holds a NUL
        byte or bytes that are not UTF-8: without ``lenient``, the records before that line
        and the ``FILE:LINE: what`` message for it; with ``lenient``, that line is a record
        with ``error`` set, and the lines after it are records too."""
        if self.too_long:
            err = over_limit("record", self.too_long, self.limit)
            if lenient:
                return [Record({}, self.n + 1, self.line, self.source, f"{self.stem}:{self.n + 1}", err)], None
            return [], f"{self.source}:{self.line}: {err}"
        data, error = self.data, None
        try:
            text = data.decode("utf-8")  # a line break never falls inside a UTF-8 sequence
            bad = data.find(b"\x00")
        except UnicodeDecodeError as e:
            bad = e.start
            nul = data.find(b"\x00")
            end = data.find(b"\n", bad)
            if 0 <= nul < (end if end >= 0 else len(data)):  # a NUL on that line or before: named first
                bad = nul
        if bad >= 0:
            if lenient:
                return self._split_lines(), None
            error = not_text(self.source, self.line + data.count(b"\n", 0, bad), data, bad, data[bad] == 0)
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

    def _split_lines(self) -> list[Record]:
        """The records of a chunk with a line that is not text, decoded line by line."""
        lines = self.data.split(b"\n")
        if lines[-1] == b"":
            lines.pop()
        records, n, path, stem = [], self.n, self.source, self.stem
        for i, raw in enumerate(lines):
            line = self.line + i
            nul = raw.find(b"\x00")
            try:
                text = raw.decode("utf-8")
                bad = None if nul < 0 else not_text(path, line, raw, nul, True)
            except UnicodeDecodeError as e:
                text = raw.decode("utf-8", "replace")
                bad = not_text(path, line, raw, nul if 0 <= nul < e.start else e.start, 0 <= nul < e.start)
            if not text.strip():
                continue
            n += 1
            if bad:
                records.append(Record({}, n, line, path, f"{stem}:{n}", bad.split(": ", 1)[1]))
            else:
                records.append(Record(None, n, line, path, f"{stem}:{n}", raw=text.rstrip("\r")))
        return records


def _count_records(data: bytes) -> tuple[int, int]:
    """``(lines, records)`` of ``data``: its lines, and how many of them are not blank, with
    the same test as :meth:`LineChunk.split` (``str.strip``); only lines that do not start
    with ``{`` (none, in JSON Lines written by a program) are decoded to tell."""
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    odd = [ln for ln in lines if ln[:1] != b"{"]
    return len(lines), len(lines) - sum(1 for ln in odd if not ln.decode("utf-8", "replace").strip())


def read_jsonl_chunks(path: str, size: int = CHUNK_BYTES, encoding: str | None = None,
                      limit: int | None = MAX_RECORD_SIZE):
    """:class:`LineChunk` s of a JSON Lines file, about ``size`` bytes each (a line longer
    than that makes a longer chunk), in order; ``encoding`` as for
    :class:`~tagger.readers.stream.ByteSource`.

    From a pipe or terminal, a chunk is what has arrived (whole lines), so that records
    trickling in are tagged as they come; its ``waits`` is True when the pipe had gone
    silent.  Raises :class:`InputError` for a file that cannot be opened, and for one
    that cannot be read on (a truncated or damaged gzip stream, bytes not in its encoding)
    after the chunks of the whole lines before the damage, naming the first line not read.
    A line longer than ``limit`` bytes (``--max-record-size``) is not read: it is a chunk
    of its own with ``too_long`` set, which :meth:`LineChunk.split` makes a bad record.
    """
    import codecs

    src = open_source(path, encoding)
    stem, line, n, first = source_stem(path), 1, 0, True
    try:
        for data, waits in src.blocks(size, limit):
            if isinstance(data, Oversized):
                first = False
                yield LineChunk(b"\n", path, line, n, 1, stem, waits, data.size, limit)
                line, n = line + 1, n + 1
                continue
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
        src.close()


def read(path: str, opts: ReadOptions = ReadOptions()):
    """Records from JSON Lines: each non-blank line one JSON object, read in chunks
    (:func:`read_jsonl_chunks`), parsed (:func:`parse_json_record`).

    A line that is not a JSON object, or (with ``opts.lenient``) not UTF-8 text, comes
    out as a :class:`Record` whose ``error`` says why, with ``opts.lenient`` (so that
    ``--on-error skip`` can skip it); without, it raises :class:`InputError`, after the
    records before it.
    """
    for chunk in read_jsonl_chunks(path, encoding=opts.encoding, limit=opts.max_record_size):
        records, error = chunk.split(opts.lenient)
        for rec in records:
            parse_json_record(rec, opts.id_field)
            if rec.error and not opts.lenient:
                raise InputError(f"{path}:{rec.line}: {rec.error}")
            yield rec
        if error:
            raise InputError(error)


def read_jsonl(path: str, text_field: str = "abstract", lenient: bool = False):
    """:func:`read` with only ``lenient`` to choose (the hand-tagged corpus reader's use)."""
    return read(path, ReadOptions(text_field=text_field, lenient=lenient))


def _too_deep(obj, limit: int) -> bool:
    """Whether ``obj`` nests lists and dicts more than ``limit`` deep (a number, string,
    boolean or null nests nothing)."""
    if not isinstance(obj, (dict, list)):
        return False
    stack = [(obj, 1)]
    while stack:
        o, d = stack.pop()
        if d > limit:
            return True
        items = o.values() if isinstance(o, dict) else o
        stack.extend((v, d + 1) for v in items if isinstance(v, (dict, list)))
    return False


def json_kind(obj) -> str:
    """What JSON calls the value ``obj`` was decoded from: object, array, string, number,
    boolean or null."""
    if obj is None:
        return "null"
    if isinstance(obj, bool):
        return "boolean"
    if isinstance(obj, (int, float)):
        return "number"
    if isinstance(obj, str):
        return "string"
    if isinstance(obj, list):
        return "array"
    if isinstance(obj, dict):
        return "object"
    return type(obj).__name__


def not_an_object(obj) -> str:
    """The bad-record message for a JSON value that is not an object."""
    return f"expected a JSON object, found {json_kind(obj)}"


def parse_json_record(rec: Record, id_field: str = "id") -> Record:
    """Parse a :class:`Record` read lazily from JSON Lines (``fields`` None): set ``fields``
    or ``error``.  A record with neither ``id_field`` nor ``id`` gets ``id`` =
    ``default_id`` (then ``id_added``), so that output names it."""
    if rec.fields is not None:
        return rec
    try:
        obj = json.loads(rec.raw, parse_constant=_reject_constant, parse_float=_finite_float)
        error = None if isinstance(obj, dict) else not_an_object(obj)
    except RecursionError:
        error = f"JSON nested more than {MAX_DEPTH} levels deep"
    except json.JSONDecodeError as e:
        error = f"invalid JSON ({e.msg.removesuffix(' at')} at column {e.colno})"
        if e.pos >= len(rec.raw.rstrip()):  # the object goes on in the next line
            error += "; pretty-printed JSON over several lines? read it with --input-format json"
    except ValueError as e:
        error = f"invalid JSON ({e})"
    if error is None and _too_deep(obj, MAX_DEPTH):
        error = f"JSON nested more than {MAX_DEPTH} levels deep"
    if error:
        rec.fields, rec.error, rec.raw = {}, error, None
        return rec
    if "id" not in obj and id_field not in obj:
        obj["id"] = rec.default_id
        rec.id_added = True
    rec.fields = obj
    return rec


def reader(path: str, fmt: str = FORMAT, opts: ReadOptions = ReadOptions()):
    """The records of a JSON Lines file (:func:`read`)."""
    return read(path, opts)
