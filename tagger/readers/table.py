"""CSV and TSV: a header row, then one record per row; values stay strings, column order kept.

CSV is read by the standard library's ``csv`` module (quoted cells may span lines; cells of
any length); its delimiter is ``,`` unless ``--delimiter`` names another or the header row
is ``;``-separated (European Excel exports; sniffed with ``csv.Sniffer``); cells are quoted
with ``"``.  Each record carries the delimiter (``Record.delimiter``), whether the file
started with a UTF-8 BOM (``Record.bom``) and its header row's line ending
(``Record.newline``), so that a CSV written from it keeps them
(:class:`tagger.writers.table.TableWriter`).  TSV is
PostgreSQL's text format: one row per line, cells separated by tabs, never quoted, with
``\\t``, ``\\n``, ``\\r`` and ``\\\\`` standing for a tab, line feed, carriage return and
backslash (the escapes ``tagger``'s TSV output writes).  Without a header row
(``header=False``), columns are named by their 1-based numbers (``"1"``, ``"2"``, ...).
A line or a cell longer than ``--max-record-size`` is a bad record (a quoted cell over many
lines that grows past it ends the reading: where its row ends cannot be told).
"""

from __future__ import annotations

import csv
import io
import re
import sys
from dataclasses import dataclass

from .base import ID_ALIASES, TABLE_ID_ALIASES, InputError, ReadOptions, Record, find_column, named, source_stem
from .fields import TEXT_ALIASES, TITLE_ALIASES
from .lines import LineRecords, open_lines
from .stream import over_limit

FORMATS = ("csv", "tsv")

#: a cell may be as long as a line of the file (the csv module's default limit is 131,072
#: characters: one long abstract or full text would stop the run)
FIELD_LIMIT = min(sys.maxsize, 2**31 - 1)

#: what an error in the header or first row of a table told by its first line adds
TEXT_HINT = "; if this is plain text, pass --input-format txt"

_TSV_ESCAPE = re.compile(r"\\([tnr\\])")
_TSV_CHARS = {"t": "\t", "n": "\n", "r": "\r", "\\": "\\"}


def tsv_unescape(cell: str) -> str:
    """A TSV cell's text: ``\\t``, ``\\n``, ``\\r``, ``\\\\`` decoded; any other backslash kept."""
    return _TSV_ESCAPE.sub(lambda m: _TSV_CHARS[m.group(1)], cell) if "\\" in cell else cell


def check_delimiter(delimiter: str) -> str:
    """``delimiter`` (``--delimiter``) if a CSV file can be read and written with it; raises
    :class:`InputError` (one line) for ``"``, the character cells are quoted with, and for a
    line break, which ends a row."""
    if delimiter == '"':
        raise InputError("--delimiter '\"': the delimiter cannot be the quote character '\"', which CSV cells are "
                         "quoted with; name another (e.g. --delimiter '|')")
    if delimiter in ("\n", "\r"):
        raise InputError(f"--delimiter {delimiter!r}: a line break ends a row, it cannot separate cells; "
                         "name another (e.g. --delimiter '|')")
    return delimiter


def sniff_delimiter(header: str, default: str = ",") -> str:
    """The delimiter of a CSV file by its header row: ``;`` or ``,`` (``csv.Sniffer``),
    ``default`` when the row does not tell (a single column)."""
    try:
        found = csv.Sniffer().sniff(header.rstrip("\r\n"), delimiters=",;").delimiter
    except csv.Error:
        return default
    return found if found in ",;" else default


#: a header cell is a column name: at most this many words (Dimensions' "Fields of Research
#: (ANZSRC 2020)") and characters (OpenAlex's dotted ``primary_location.source...`` names)
_NAME_WORDS, _NAME_CHARS = 5, 80


def header_format(head: bytes, whole: bool = False) -> str | None:
    """``csv`` or ``tsv`` when ``head``, the first bytes of an input whose name does not tell
    its format (standard input, a file without a known extension), starts with the header row
    of a table: two or more cells, separated by tabs (``tsv``), else by ``,`` or ``;`` (``csv``,
    as :func:`sniff_delimiter` tells, as the reader then reads it), each a column name (at most
    5 words and 80 characters), one of them, white space stripped, the abstract's or the
    title's column as :func:`~tagger.readers.base.find_column` finds it (``abstract``,
    ``Abstract Note``, ``AB``, ``title``, ``Document Title``, ``TI``, ...); and the first row
    after it, when ``head`` holds it whole, has as many cells.  ``whole``: ``head`` is the
    whole input (its last line is complete without a line break).  None otherwise: a line of
    prose ("Title, abstract and keywords of ..."), a heading, one name alone, a first line
    followed by text that is no row of its table."""
    text = head.removeprefix(b"\xef\xbb\xbf").decode("utf-8", "replace")
    line, _, rest = text.partition("\n")
    line = line.rstrip("\r")
    delimiter = None
    if "\t" in line:
        fmt, cells = "tsv", line.split("\t")
    else:
        delimiter = sniff_delimiter(line)
        try:
            fmt, cells = "csv", next(csv.reader([line], delimiter=delimiter, strict=True))
        except (csv.Error, StopIteration):
            return None
    names = [c.strip() for c in cells if c.strip()]
    if len(names) < 2 or any(len(c) > _NAME_CHARS or len(c.split()) > _NAME_WORDS for c in names):
        return None
    if not (find_column(names, "abstract", TEXT_ALIASES) or find_column(names, "title", TITLE_ALIASES)):
        return None
    width = _first_row_width(rest if whole else rest[:rest.rfind("\n") + 1], delimiter)
    return fmt if width is None or width == len(cells) else None


def _first_row_width(rest: str, delimiter: str | None) -> int | None:
    """The number of cells of the first row that is not blank in ``rest`` (whole lines after
    the header row; ``delimiter`` None: TSV), None when ``rest`` does not hold it whole or it
    cannot be read (the reader will say why)."""
    if delimiter is None:
        row = next((ln for ln in rest.split("\n") if ln.strip()), None)
        return None if row is None else len(row.split("\t"))
    try:
        for row in csv.reader(io.StringIO(rest), delimiter=delimiter, strict=True):
            if row and any(c.strip() for c in row):
                return len(row)
    except csv.Error:  # a quoted cell that goes on past what was read, or a malformed row
        return None
    return None


def _looks_like_data(header: list[str]) -> bool:
    """A header row that is more likely the first row of data: a cell of over 12 words or
    120 characters (a title or an abstract, not a column name)."""
    return any(len(h.split()) > 12 or len(h) > 120 for h in header)


def missing_column(path: str, name: str, header: list[str], has_header: bool, what: str = "--text-column") -> str:
    """The error message for a column ``name`` that is not in ``header``."""
    cols = ", ".join(repr(h) for h in header[:30]) + (", ..." if len(header) > 30 else "")
    if not has_header:
        return (f"{path}: no column {name!r}: without a header, columns are named by number "
                f"(1 to {len(header)}); name the abstracts' column with {what} N")
    msg = f"{path}:1: no column {name!r} (the columns are {cols}); name the abstracts' column with {what} NAME"
    if _looks_like_data(header):
        msg += ", or, if the first row is data, not a header, use --no-header and --text-column N"
    return msg


def read(path: str, opts: ReadOptions = ReadOptions(), fmt: str = "csv", lines=None):
    """Records from CSV (``fmt="csv"``) or TSV (module docstring); ``lines``: the file's
    :func:`~tagger.readers.stream.open_lines`, if already open.

    Raises :class:`InputError` for a header that cannot be read, duplicate column names, a
    missing text column (listing the columns there are), and, without ``opts.lenient``, a
    bad row; with it, a row with the wrong number of cells, or a line that is not UTF-8, is
    a record with ``error`` set.  An unterminated quote is an error, not a merged row.
    """
    stem = source_stem(path)
    lines = lines or open_lines(path, opts.encoding, opts.lenient, opts.max_record_size)
    dialect: dict = {}  # the delimiter _csv_rows read with, for a CSV output that keeps it
    rows = _csv_rows(path, lines, opts, dialect) if fmt == "csv" else _tsv_rows(lines)
    hint = TEXT_HINT if opts.sniffed else ""  # a header or first row that fails: perhaps no table at all
    try:
        start, header, end = next(rows)
    except StopIteration:
        return
    except InputError as e:
        raise InputError(f"{e}{hint}") from None
    delimiter = dialect.get("delimiter")
    # a CSV written from this one keeps its delimiter, BOM and line ending (Excel's ';', BOM and CRLF)
    style = dict(delimiter=delimiter, bom=lines.bom, newline=lines.newline) if fmt == "csv" else {}
    if opts.header:
        if len(set(header)) != len(header):
            dup = sorted({h for h in header if header.count(h) > 1})
            raise InputError(f"{path}:1: duplicate column name{'' if len(dup) == 1 else 's'} in the header: "
                             f"{', '.join(dup)}{hint}")
        first = None
    else:
        first, header = (start, header, end), [str(i) for i in range(1, len(header) + 1)]
    # names are matched without the white space around them (a header `title, abstract`); cells keep theirs
    text = opts.text_field
    text_col = named(header, text) or (find_column(header, text, TEXT_ALIASES) if text == "abstract" else None)
    if text_col is None:
        raise InputError(missing_column(path, text, header, opts.header) + hint)
    title = opts.title_field
    title_col = named(header, title) or (find_column(header, title, TITLE_ALIASES) if title == "title" else None)
    id_col = named(header, opts.id_field)
    alias = id_col if id_col != opts.id_field else None
    if id_col is None and opts.id_field == "id" and opts.header:
        alias = id_col = find_column(header, "id", TABLE_ID_ALIASES)
        if alias in ID_ALIASES:
            alias = None  # Record.id finds it anyway
    if opts.header:
        _name_columns(path, text_col, title_col, id_col)
    n = 0
    for start, row, end in _first_row_hint(_chain(first, rows), hint):
        bad = next((k for k in range(start, end + 1) if k in lines.bad), None) if lines.bad else None
        if not bad and (not row or all(not c.strip() for c in row)):
            continue
        n += 1
        if bad or len(row) != len(header):
            err, at = (lines.bad[bad], bad) if bad else (f"row has {len(row)} columns, the header has {len(header)}", start)
            if n == 1 and not bad:
                err += hint
            if not opts.lenient:
                raise InputError(f"{path}:{at}: {err}")
            yield Record({}, n, at, path, f"{stem}:{n}", err, **style)
            continue
        # the table keeps exactly its own columns; a missing id is only Record.default_id
        yield Record(dict(zip(header, row)), n, start, path, f"{stem}:{n}", id_column=alias, **style)


def _name_columns(path: str, text: str, title: str | None, rid: str | None) -> None:
    """On a terminal (standard error), one line naming the columns read: the abstract's, the
    title's and the id's (``ids <file stem>:<n>`` without one)."""
    if sys.stderr is None or not sys.stderr.isatty():
        return
    name = "standard input" if path == "-" else path
    parts = [f"abstract from {text!r}", f"title from {title!r}" if title else "no title column",
             f"id from {rid!r}" if rid else f"ids {source_stem(path)}:N"]
    print(f"tagger: {name}: {', '.join(parts)} (--text-field, --title-field, --id-field name others)",
          file=sys.stderr, flush=True)


def _first_row_hint(rows, hint: str):
    """``rows``, an error reading the first of them ending in ``hint``."""
    it = iter(rows)
    try:
        yield next(it)
    except StopIteration:
        return
    except InputError as e:
        raise InputError(f"{e}{hint}") from None
    yield from it


def _chain(first, rows):
    if first is not None:
        yield first
    yield from rows


class _Counted:
    """The lines of :func:`open_lines` as text lines for ``csv.reader``, noting the number
    of the last one given (a quoted cell may span several lines)."""

    def __init__(self, lines):
        self.lines, self.last = lines, 0

    def __iter__(self):
        for n, line in self.lines:
            self.last = n
            yield line + "\n"


def _csv_rows(path: str, lines, opts: ReadOptions, dialect: dict | None = None):
    """``(first line, cells, last line)`` of each CSV row; ``dialect["delimiter"]`` is set to
    the delimiter read with (``--delimiter``, else sniffed from the header row)."""
    limit = opts.max_record_size
    csv.field_size_limit(min(FIELD_LIMIT, limit) if limit is not None else FIELD_LIMIT)
    counted = _Counted(lines)
    it = iter(counted)
    first = next(it, None)
    if first is None:
        return
    delimiter = check_delimiter(opts.delimiter) if opts.delimiter else sniff_delimiter(first)
    if dialect is not None:
        dialect["delimiter"] = delimiter

    def text_lines():
        yield first
        yield from it

    reader = csv.reader(text_lines(), delimiter=delimiter, strict=True)  # an unterminated quote is an error, not a merged row
    done = 0  # the last line of the previous row
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            if "field larger than field limit" in str(e):  # a quoted cell over many lines: the rest cannot be read
                raise InputError(f"{path}:{done + 1}: {over_limit('cell', limit, limit, at_least=True)} "
                                 "in the row starting here") from None
            if done == 0:
                raise InputError(f"{path}:1: bad header row ({e})") from None
            raise InputError(f"{path}:{done + 1}: malformed row starting here ({e})") from None
        yield done + 1, row, counted.last
        done = counted.last


def _tsv_rows(lines):
    """``(line, cells, line)`` of each TSV row (PostgreSQL's text format)."""
    for n, line in lines:
        yield n, [tsv_unescape(c) for c in line.split("\t")], n


def reader(path: str, fmt: str = "csv", opts: ReadOptions = ReadOptions()):
    """The records of a CSV or TSV file (:func:`read`), with ``would_wait``."""
    lines = open_lines(path, opts.encoding, opts.lenient, opts.max_record_size)
    return LineRecords(lines, read(path, opts, fmt, lines))


@dataclass
class TableHead:
    """The header row of a CSV or TSV input as :func:`read` reads it: ``columns`` (numbers from
    ``"1"`` without a header row) and, for CSV, the ``delimiter``, whether the input starts
    with a UTF-8 ``bom`` and its first line's ``newline`` (as ``Record`` has them)."""

    columns: list
    delimiter: str | None = None
    bom: bool = False
    newline: str | None = None


def read_head(path: str, fmt: str = "csv", opts: ReadOptions = ReadOptions()) -> TableHead | None:
    """The :class:`TableHead` of ``path`` (``-`` = stdin), from its first bytes
    (:func:`~tagger.readers.stream.peek_head`: standard input is kept for the reader), so that
    an output can be laid out before any row is read; None for an empty input or one whose
    header cannot be read (the reader then says why)."""
    from .stream import peek_head

    size, lines, limit = 1 << 16, 1, max(opts.max_record_size or 0, 1 << 16)
    while True:
        try:
            head = peek_head(path, opts.encoding, size=size, lines=lines)
        except (OSError, EOFError, InputError, ValueError):
            return None
        whole = head.count(b"\n") < lines and len(head) < size
        bom = head.startswith(b"\xef\xbb\xbf")
        text = head.removeprefix(b"\xef\xbb\xbf").decode("utf-8", "replace")
        rows = text.split("\n")
        newline = None if len(rows) == 1 else "\r\n" if rows[0].endswith("\r") else "\n"
        if not whole:
            rows.pop()  # a line cut short
        if not rows or (len(rows) == 1 and not rows[0]):
            if whole:
                return None
        elif fmt == "tsv":
            return TableHead(_numbered([tsv_unescape(c) for c in rows[0].rstrip("\r").split("\t")], opts))
        else:
            delimiter = opts.delimiter or sniff_delimiter(rows[0])
            try:
                cells = next(csv.reader((r.rstrip("\r") + "\n" for r in rows), delimiter=delimiter, strict=True), None)
            except csv.Error:  # a quoted name over lines past what was read, or a bad header row
                cells = None
            if cells is not None:
                return TableHead(_numbered(cells, opts), delimiter, bom, newline)
            if whole:
                return None
        if size >= limit:
            return None
        size, lines = size * 4, lines * 16


def _numbered(cells: list, opts: ReadOptions) -> list:
    """The column names of a header row ``cells``: themselves, or without a header row numbers."""
    return list(cells) if opts.header else [str(i) for i in range(1, len(cells) + 1)]
