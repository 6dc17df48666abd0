"""JSON that is not JSON Lines: an array of records, or objects one after another.

A ``.json`` file holding an array of records (CSL-JSON exported by Zotero or Better BibTeX,
a page of API results) and pretty-printed objects one after another (``jq .`` output) are
read record by record with the standard library's streaming ``JSONDecoder.raw_decode``,
never by loading the whole file: from a pipe, each record is tagged as soon as it has
arrived, before the array is closed.  Several arrays one after another (pages of results
concatenated) are read as one sequence.

Limits: a value (a record) longer than ``--max-record-size`` is never held in memory whole,
and one nested more than :data:`MAX_DEPTH` arrays or objects deep is not parsed; either is
a bad record named by the line it starts on, read past to its end (so that the records after
it are read).  The input is read in pieces of :data:`CHUNK_BYTES`, not lines, so a whole
array on one line (minified) is read record by record too.
"""

from __future__ import annotations

import json
import re

from .base import InputError, ReadOptions, Record, source_stem
from .jsonl import _finite_float, _reject_constant, _too_deep, not_an_object
from .stream import _READ_ERRORS, CHUNK_BYTES, not_text, open_source, over_limit

FORMAT = "json"
#: arrays and objects a record may nest (a record's fields hold lists or objects; 100 is
#: far beyond any real record, and far below Python's recursion limit)
MAX_DEPTH = 100

_WS = " \t\r\n"
#: what may follow a number decoded from a piece of the input, to the piece's end, when the
#: number goes on in the next piece ("1." of "1.5", "2e" of "2e-3")
_NUMBER_TAIL = re.compile(r"[0-9.eE+-]*")


class JsonReader:
    """The records of one JSON input (module docstring), to iterate over once.

    Each element of a top-level array, and each top-level object, is a :class:`Record`
    (``line``: where it starts); an element that is not an object is a record with
    ``error`` set (or, without ``opts.lenient``, :class:`InputError`).  Text that is not JSON
    raises :class:`InputError` naming line and column, after the records before it (the
    rest cannot be read reliably).  :meth:`would_wait` says whether the next record is
    still to come through a pipe that has gone silent.
    """

    def __init__(self, path: str, opts: ReadOptions = ReadOptions()):
        self.path, self.opts = path, opts
        self.source = open_source(path, opts.encoding)
        self._waits = False  # the last block read ended where the pipe went silent
        self._buf, self._pos = "", 0

    def would_wait(self) -> bool:
        """True when no whole record is left in what has been read and the pipe had gone
        silent after it."""
        return self._waits and _SEPARATORS.fullmatch(self._buf, self._pos) is not None

    def _blocks(self):
        """Decoded pieces of the input, about :data:`CHUNK_BYTES` each, cut between UTF-8
        sequences (not at lines: a long line is read piece by piece); bytes that are not
        UTF-8 raise InputError naming their line."""
        line, carry = 1, b""
        src = self.source
        try:
            while True:
                data = src.read(CHUNK_BYTES)
                waits = src.streaming and len(data) < CHUNK_BYTES
                data, end = carry + data, not data
                cut = len(data) if end else _utf8_cut(data)
                data, carry = data[:cut], data[cut:]
                if not data:
                    if end:
                        return
                    continue
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise InputError(not_text(self.path, line + data.count(b"\n", 0, e.start), data, e.start,
                                              False)) from None
                self._waits = waits
                yield text
                line += data.count(b"\n")
        except _READ_ERRORS as e:
            raise InputError(f"{self.path}:{line}: cannot read: {e}") from None
        finally:
            self.source.close()

    def __iter__(self):
        decode = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float).raw_decode
        path, opts, stem = self.path, self.opts, source_stem(self.path)
        blocks = self._blocks()
        buf, pos, line = "", 0, 1  # text not yet consumed, where reading is in it, its line there
        n, depth, expect = 0, 0, "value"  # depth: 1 inside a top-level array
        limit = opts.max_record_size

        def more() -> bool:
            """Append the next block to ``buf``; False at the end of the input."""
            nonlocal buf, pos
            block = next(blocks, None)
            if block is None:
                return False
            buf, pos = buf[pos:] + block, 0
            self._buf, self._pos = buf, pos
            return True

        def error(msg: str, at: int) -> InputError:
            col = at - buf.rfind("\n", 0, at)
            return InputError(f"{path}:{line + buf.count(chr(10), pos, at)}: invalid JSON ({msg} at column {col})")

        while True:
            m = _SPACE.match(buf, pos)
            line += buf.count("\n", pos, m.end())
            pos = m.end()
            if pos >= len(buf):
                if more():
                    continue
                if depth:
                    raise InputError(f"{path}:{line}: invalid JSON (the array is not closed: no ']' at the end)")
                return
            c = buf[pos]
            if c == "\ufeff" and n == 0 and line == 1:  # a BOM
                pos += 1
            elif depth and expect == "sep":
                if c not in ",]":
                    raise error("expected ',' or ']' after an array element", pos)
                pos, depth, expect = pos + 1, (0 if c == "]" else 1), "value"
            elif not depth and c == "[":
                pos, depth, expect = pos + 1, 1, "first"
            elif depth and expect == "first" and c == "]":
                pos, depth, expect = pos + 1, 0, "value"
            else:
                problem = None
                try:
                    obj, end = decode(buf, pos)
                    if (isinstance(obj, (int, float)) and not isinstance(obj, bool) and _NUMBER_TAIL.fullmatch(buf, end)
                            and (limit is None or len(buf) - pos <= limit) and more()):
                        continue  # a number cut where what was read ends ("1.", "-1.5e") goes on in the next piece
                    if _too_deep(obj, opts.max_depth):
                        problem = f"JSON nested more than {opts.max_depth} levels deep"
                except json.JSONDecodeError as e:
                    # a value that goes on in what is not read yet fails at the end of what was read
                    # (or inside a number or a literal cut there)
                    if (e.pos >= len(buf.rstrip(_WS)) - 24 or e.msg.startswith("Unterminated string")) and (limit is None or len(buf) - pos <= limit) and more():
                        continue
                    if limit is not None and len(buf) - pos > limit:
                        problem = over_limit("value", len(buf) - pos, limit, at_least=True)
                    else:
                        raise error(e.msg, e.pos) from None
                except RecursionError:
                    problem = f"JSON nested more than {opts.max_depth} levels deep"
                except ValueError as e:  # NaN, Infinity, 1e999
                    raise InputError(f"{path}:{line}: invalid JSON ({e})") from None
                if problem:  # a bad record: read past its end
                    n += 1
                    if not opts.lenient:
                        raise InputError(f"{path}:{line}: record {n}: {problem}")
                    problem = f"record {n}: {problem}"
                    at, skip = line, _Skip()
                    while True:
                        end = skip.scan(buf, pos)
                        if end >= 0:
                            break
                        line += buf.count("\n", pos)
                        buf, pos = "", 0
                        if not more():
                            raise InputError(f"{path}:{line}: invalid JSON (record {n}, from line {at}, "
                                             f"is not closed at the end of the input)")
                    line += buf.count("\n", pos, end)
                    pos = end
                    if depth:
                        expect = "sep"
                    self._buf, self._pos = buf, pos
                    yield Record({}, n, at, path, f"{stem}:{n}", problem)
                    continue
                values = [obj]
                if not depth and isinstance(obj, str) and obj.lstrip()[:1] in ("[", "{"):
                    values = _double_encoded(obj)  # a JSON text inside a JSON string
                at = line
                line += buf.count("\n", pos, end)
                pos = end
                if depth:
                    expect = "sep"
                if pos > CHUNK_BYTES:  # drop what is done
                    buf, pos = buf[pos:], 0
                self._buf, self._pos = buf, pos
                for obj in values:
                    n += 1
                    rec = Record({}, n, at, path, f"{stem}:{n}")
                    if isinstance(obj, dict):
                        if "id" not in obj and opts.id_field not in obj:
                            obj["id"] = rec.default_id
                            rec.id_added = True
                        rec.fields = obj
                    else:
                        rec.error = not_an_object(obj)
                        if not opts.lenient:
                            raise InputError(f"{path}:{at}: {rec.error}")
                    yield rec


def _double_encoded(text: str) -> list:
    """The records of a JSON text held in a JSON string (``json.dumps`` of JSON, as
    ``json.dump(df.to_json(), fh)`` writes): the elements of an array, or one object; the
    string itself when it is not JSON."""
    try:
        inner = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except (ValueError, RecursionError):
        return [text]
    if isinstance(inner, list):
        return inner
    return [inner] if isinstance(inner, dict) else [text]


def _utf8_cut(data: bytes) -> int:
    """Where to cut ``data`` so that no UTF-8 sequence is split: before a lead byte whose
    sequence is not complete (the rest is read with the next piece)."""
    i = len(data)
    for k in range(1, min(4, i) + 1):
        b = data[i - k]
        if b < 0x80:
            return i
        if b >= 0xC0:  # a lead byte: its sequence is 2, 3 or 4 bytes
            need = 2 if b < 0xE0 else 3 if b < 0xF0 else 4
            return i if k >= need else i - k
    return i


class _Skip:
    """Reads past one JSON value (a bad record) piece by piece, holding nothing of it: the
    nesting and whether it is inside a string."""

    _IN_STRING = re.compile(r'["\\]')
    _OUTSIDE = re.compile(r'[\[\]{}"]')

    def __init__(self):
        self.depth, self.in_string, self.escape = 0, False, False

    def scan(self, buf: str, pos: int) -> int:
        """The end of the value in ``buf`` from ``pos``, or -1 when it goes on after ``buf``."""
        n = len(buf)
        while pos < n:
            if self.escape:
                pos, self.escape = pos + 1, False
                continue
            if self.in_string:
                m = self._IN_STRING.search(buf, pos)
                if m is None:
                    return -1
                pos = m.end()
                if m.group() == "\\":
                    self.escape = True
                else:
                    self.in_string = False
                    if self.depth == 0:
                        return pos
                continue
            m = self._OUTSIDE.search(buf, pos)
            if m is None:
                return -1
            pos, c = m.end(), m.group()
            if c == '"':
                self.in_string = True
            elif c in "[{":
                self.depth += 1
            else:
                self.depth -= 1
                if self.depth <= 0:
                    return pos
        return -1


_SPACE = re.compile(r"[ \t\r\n]*")
#: what may stand between records: white space, commas, the end of an array
_SEPARATORS = re.compile(r"[ \t\r\n,\]]*")


def reader(path: str, fmt: str = FORMAT, opts: ReadOptions = ReadOptions()) -> JsonReader:
    """The records of a JSON input (:class:`JsonReader`), with ``would_wait``."""
    return JsonReader(path, opts)
