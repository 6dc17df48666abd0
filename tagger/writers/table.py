"""CSV and TSV output.

For CSV/TSV input, the input table with every column kept plus ``tags`` (joined with ``;``)
and ``scores`` (JSON); for other inputs, ``tsv`` is one header-less row ``id<TAB>tags`` per
record and ``csv`` has the columns ``id,tags,scores``.  CSV is written by the ``csv``
module (cells quoted with ``"`` where needed), with the delimiter of the CSV input it comes
from (``;`` stays ``;``: ``Record.delimiter`` of the first record written), else ``,``, and
its UTF-8 BOM and CRLF line endings, if it had them (``Record.bom``, ``Record.newline``:
Excel's "CSV UTF-8" round-trips).  TSV is PostgreSQL's text format: never quoted; a tab,
line feed, carriage return or backslash in a value is written ``\\t``, ``\\n``, ``\\r``,
``\\\\`` (what the TSV reader decodes).
"""

from __future__ import annotations

import json

FORMATS = ("csv", "tsv")

_TSV_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def tsv_escape(v) -> str:
    """``v`` as a TSV cell (module docstring)."""
    s = str(v)
    return s.translate(_TSV_ESCAPES) if ("\\" in s or "\t" in s or "\n" in s or "\r" in s) else s


def _flat(v) -> str:
    """A cell: objects and lists as JSON (NaN as null), null as an empty cell."""
    if isinstance(v, (dict, list)):
        from .jsonl import dumps

        return dumps(v)
    return "" if v is None else str(v)


def render_row(rec, pred, renderer) -> str:
    """The header-less ``id<TAB>tags`` row of a record that was not read from a table."""
    return f"{tsv_escape(rec.id(renderer.id_field))}\t{';'.join(pred.tags)}\n"


class TableWriter:
    """Writes the rows of ``csv`` or ``tsv`` output with a header row (module docstring).

    ``head``: the :class:`~tagger.readers.table.TableHead` of the (first) table input, whose
    columns make the header row of an output without rows (an empty table, a filter that
    keeps nothing); None when unknown (then such an output of a table is empty)."""

    def __init__(self, fh, fmt: str, table_input: bool, id_field: str = "id", head=None):
        self.fh, self.fmt, self.table_input, self.id_field, self.head = fh, fmt, table_input, id_field, head
        self._header = None
        self._csv = None

    def write(self, rec, pred) -> None:
        """Write one tagged record (the header row before the first)."""
        row = dict(rec.fields) if self.table_input else {"id": rec.id(self.id_field)}
        row["tags"] = ";".join(pred.tags)
        row["scores"] = json.dumps(pred.scores, ensure_ascii=False)
        if self._header is None:
            self._start(list(row), rec)
        self._row([_flat(row.get(k, "")) for k in self._header])

    def close(self) -> None:
        """The header row of an output without rows: the input table's columns plus ``tags``
        and ``scores`` (``id,tags,scores`` for CSV of other input; header-less TSV has none)."""
        if self._header is not None:
            return
        if not self.table_input:
            if self.fmt == "csv":
                self._start(["id", "tags", "scores"], None)
        elif self.head is not None:
            cols = list(self.head.columns)
            self._start(cols + [c for c in ("tags", "scores") if c not in cols], self.head)

    def _start(self, header: list, style) -> None:
        """Write the header row; ``style``: the first record (or the input's TableHead), whose
        delimiter, BOM and line ending a CSV of CSV keeps."""
        self._header = header
        if self.fmt == "csv":
            import csv

            if getattr(style, "bom", False):
                self.fh.write("\ufeff")
            self._csv = csv.writer(self.fh, delimiter=getattr(style, "delimiter", None) or ",", quotechar='"',
                                   lineterminator="\r\n" if getattr(style, "newline", None) == "\r\n" else "\n")
        self._row(header)

    def _row(self, cells) -> None:
        if self._csv is not None:
            self._csv.writerow(cells)
        else:
            self.fh.write("\t".join(map(tsv_escape, cells)) + "\n")
