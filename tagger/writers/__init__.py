"""Writing tagged records, one module per output format.

========  ==============================  ===============================================
format    module                          what
========  ==============================  ===============================================
text      :mod:`tagger.writers.text`      a block per record: id, tags by facet, scores
jsonl     :mod:`tagger.writers.jsonl`     the input record plus ``tags`` and ``scores``
json      :mod:`tagger.writers.jsonl`     one array of those objects
csv, tsv  :mod:`tagger.writers.table`     the input table plus ``tags`` and ``scores``
pairs     :mod:`tagger.writers.pairs`     ``id<TAB>label<TAB>score`` per tag (Annif)
bib       :mod:`tagger.writers.bib`       the input's BibTeX entries, as they were
parquet   :mod:`tagger.writers.parquet`   every input column plus ``tags``, ``scores``,
                                          ``reason`` (pyarrow; a binary file object)
========  ==============================  ===============================================

A :class:`Writer` takes ``(Record, Prediction)`` pairs one at a time, so output can start
before the input ends; a :class:`Renderer` makes the text of one record for the formats
where it depends on that record alone, and is plain data, so ``--jobs`` workers render too.
:mod:`tagger.writers.target` opens where the output goes (``-o``), and :func:`default_format`
chooses the format when ``--format`` is not given.  A new format is one new
module here with a ``render(rec, pred, renderer)``, named in :data:`RENDERERS`.
"""

from __future__ import annotations

import importlib

from ..errors import TaggerError

OUTPUT_FORMATS = ("text", "jsonl", "json", "tsv", "csv", "pairs", "bib", "parquet")

#: formats whose text for a record depends on that record alone (see :class:`Renderer`):
#: format -> module
RENDERERS = {"jsonl": "jsonl", "json": "jsonl", "pairs": "pairs", "tsv": "table", "text": "text", "bib": "bib"}
PER_RECORD_FORMATS = tuple(RENDERERS)

#: output formats by the extension of ``-o`` (after ``.gz``, which compresses)
OUTPUT_EXTENSIONS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv", ".tsv": "tsv",
                     ".txt": "text", ".bib": "bib", ".parquet": "parquet",
                     ".ris": "bib", ".nbib": "bib", ".medline": "bib"}


class Renderer:
    """The output text of one tagged record, for the formats where it depends on that record
    alone: ``jsonl`` (a line), ``json`` (one array element, without separator), ``pairs``,
    header-less ``tsv``, ``text`` and ``bib``.  Plain data, so worker processes can render too.

    ``facets`` is the model's ``[(facet id, kind, labels)]`` (to group ``text`` output);
    ``id_field``, ``text_field``, ``title_field`` name the record's fields; ``titles``: ``text``
    output shows each record's title (or first words) beside its id.  Raises ValueError for
    another format.
    """

    def __init__(self, fmt: str, facets=(), id_field: str = "id", *, text_field: str = "abstract",
                 title_field: str = "title", titles: bool = False):
        if fmt not in RENDERERS:
            raise ValueError(f"format {fmt!r} is not rendered record by record")
        self.fmt, self.facets, self.id_field = fmt, list(facets), id_field
        self.text_field, self.title_field, self.titles = text_field, title_field, titles
        module = importlib.import_module(f".{RENDERERS[fmt]}", __name__)
        self._render = module.render_row if fmt == "tsv" else module.render

    def __call__(self, rec, pred) -> str:
        return self._render(rec, pred, self)


class Writer:
    """Streams tagged records to ``fh`` (a text file object) in format ``fmt``.

    ``facets`` is the model's ``[(facet id, kind, labels)]`` (for grouping ``text`` output);
    ``table_format`` is ``"csv"``/``"tsv"`` when the input was a table (then ``csv``/``tsv``
    output keeps every column; ``table_head``, its
    :class:`~tagger.readers.table.TableHead`, gives an output without rows its header row);
    ``id_field`` names the id field; ``renderer_kw`` go to the :class:`Renderer`.  ``count`` is the number of records written so far.  Raises
    ValueError for an unknown format.
    """

    def __init__(self, fh, fmt: str, facets=(), table_format: str | None = None, id_field: str = "id",
                 table_head=None, **renderer_kw):
        if fmt not in OUTPUT_FORMATS:
            raise ValueError(f"unknown output format {fmt!r}")
        self.fh, self.fmt, self.facets = fh, fmt, list(facets)
        self.table_format, self.id_field = table_format, id_field
        self.count = 0
        self._sources: set = set()  # bib: the files whose @string and @preamble are written
        table = fmt == "csv" or (fmt == "tsv" and table_format)
        self._table = None
        if fmt == "parquet":  # fh takes bytes (writers.target.Target(path, binary=True))
            from .parquet import RecordWriter

            self._table, table = RecordWriter(fh), True
        elif table:
            from .table import TableWriter

            self._table = TableWriter(fh, fmt, bool(table_format), id_field, table_head)
        #: the per-record renderer, or None for table output (csv, and tsv of a table)
        self.renderer = None if table else Renderer(fmt, facets, id_field, **renderer_kw)

    def write(self, rec, pred) -> None:
        """Write one tagged record."""
        if self.fmt == "bib" and rec.source not in self._sources:
            from .bib import prelude

            self._sources.add(rec.source)
            self.fh.write(prelude(rec.source))
        if self.renderer is None:
            self._table.write(rec, pred)
            self.count += 1
        else:
            self.write_rendered(self.renderer(rec, pred), 1)

    def write_rendered(self, text: str, n: int) -> None:
        """Write ``n`` records already rendered by :attr:`renderer` (for ``json``, their
        elements joined with ``",\\n"``)."""
        if not n:
            return
        if self.fmt == "json":
            text = ("[\n" if self.count == 0 else ",\n") + text
        self.count += n  # first: a Ctrl-C while a long write is under way counts them as tagged
        self.fh.write(text)

    def close(self) -> None:
        """Finish the output (closes the JSON array; a table without rows gets its header
        row); does not close ``fh``."""
        if self.fmt == "json":
            self.fh.write("[]\n" if self.count == 0 else "\n]\n")
        elif self._table is not None:
            self._table.close()


def format_for_path(path: str) -> str | None:
    """The output format named by the extension of ``path`` (``.gz`` stripped first), or
    None when the extension names none."""
    import os

    name = path.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    return OUTPUT_EXTENSIONS.get(os.path.splitext(name)[1])


#: inputs whose records ``tagger filter`` writes back as they were (``-f bib``): one format at a time
PASS_THROUGH = ({"bib"}, {"ris"}, {"medline"})


def default_format(out_format, inputs, target, bib: bool = False):
    """The output format: ``--format``; else, for a file, by its extension (an extension that
    names no format is an error); else (standard output, a device) csv/tsv for a table, with
    ``bib`` (``tagger filter``) bib for BibTeX input, text on a terminal, jsonl otherwise."""
    if out_format:
        return out_format
    if not target.streams:
        fmt = format_for_path(target.path)
        if fmt is None or (fmt == "bib" and not bib):
            exts = " ".join(e for e in OUTPUT_EXTENSIONS if e not in (".ndjson", ".bib", ".parquet", ".ris", ".nbib", ".medline"))
            more = ", .parquet" + (", .bib" if bib else "")
            raise TaggerError(f"{target.path}: cannot tell the output format from the file name (known: {exts}, "
                              f"each also with .gz{more}); name it with --format")
        if fmt in ("parquet", "bib") and target.path.lower().endswith(".gz"):
            raise TaggerError(f"{target.path}: {'Parquet is compressed within' if fmt == 'parquet' else '.bib files are not gzipped'}; "
                              f"name the output {target.path[:-3]}")
        return fmt
    if inputs.table_format:
        return inputs.table_format
    if bib and set(inputs.formats) in PASS_THROUGH:
        return "bib"
    return "text" if target.is_terminal() else "jsonl"
