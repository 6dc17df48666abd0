"""The input files of a command, read one after another as one stream of records
(:class:`Inputs`), or in batches for the pipeline."""

from __future__ import annotations

from ..errors import TaggerError


class Inputs:
    """The input files of a command (``opts``: its options, a dict with ``text_field``,
    ``title_field``, ``id_field``, ``input_format`` and optionally ``encoding``, ``no_header``,
    ``delimiter``), read one after another as one stream of records.

    ``warn(message)`` reports a problem that does not stop the run; ``given``: the options
    among ``--text-field``, ``--title-field`` and ``--id-field`` that were named on the
    command line (for the check that they apply)."""

    def __init__(self, files, opts: dict, *, warn=None, given=()):
        from dataclasses import replace

        from ..readers import ReadOptions, detect_format, format_by_name
        from ..readers.stream import check_encoding
        from ..readers.table import check_delimiter

        if opts.get("encoding"):
            check_encoding(opts["encoding"])
        if opts.get("delimiter"):
            check_delimiter(opts["delimiter"])
        self.files = list(files) or ["-"]
        self.warn = warn or (lambda msg: None)
        self.read_opts = ReadOptions(text_field=opts["text_field"], title_field=opts["title_field"],
                                     id_field=opts["id_field"], encoding=opts.get("encoding"),
                                     header=not opts.get("no_header"), delimiter=opts.get("delimiter"),
                                     warn=self.warn, **({"max_record_size": opts["max_record_size"]}
                                                        if opts.get("max_record_size") else {}))
        self.formats = [detect_format(f, opts["input_format"], sniff=True, encoding=opts.get("encoding"),
                                      delimiter=opts.get("delimiter")) for f in self.files]
        #: each file's ReadOptions: a table told by its first line (``sniffed``) says, on an
        #: error in its header or first row, how to read it as text
        self.file_opts = [replace(self.read_opts, sniffed=True)
                          if not (opts["input_format"] or opts.get("delimiter")) and fmt in ("csv", "tsv")
                          and format_by_name(f) is None
                          else self.read_opts for f, fmt in zip(self.files, self.formats)]
        self.text_field, self.id_field = opts["text_field"], opts["id_field"]
        self._check_fields_apply(list(given))
        tables = {f for f in self.formats if f in ("csv", "tsv")}
        self.table_format = tables.pop() if len(tables) == 1 and len(set(self.formats)) == 1 else None

    def names(self) -> str:
        """The inputs as a message names them: ``FILE``, ``standard input``, ``a.csv, b.csv``."""
        return ", ".join("standard input" if f == "-" else f for f in self.files)

    def _check_fields_apply(self, given: list) -> None:
        """--text-field, --title-field and --id-field name fields of records; a text input
        (.txt: one abstract per paragraph; lines) has none.  Named on the command line with
        only such inputs: an error (the option would do nothing); with some: a warning."""
        plain = [(f, fmt) for f, fmt in zip(self.files, self.formats) if fmt in ("txt", "lines")]
        if not given or not plain:
            return
        f, fmt = plain[0]
        name = "standard input" if f == "-" else f
        what = "one abstract per paragraph" if fmt == "txt" else "one abstract per line"
        msg = (f"{given[0]} does not apply to {name}: it is read as text ({what}), which has no fields; "
               f"name its format with --input-format jsonl, json or csv if it has them")
        if len(plain) == len(self.files):
            raise TaggerError(msg)
        self.warn(msg)

    def table_head(self):
        """The :class:`~tagger.readers.table.TableHead` of the first input, for a table output
        of table inputs (``table_format``), which keeps every column: raises TaggerError,
        before anything is read or written, naming the first other input whose columns are
        not the same (in any order; the output has the first one's order), as Parquet inputs
        must be.  None when the first input's header cannot be read (its reader will say why)."""
        from ..readers.table import read_head

        if not self.table_format:
            return None
        heads = [read_head(f, self.table_format, ro) for f, ro in zip(self.files, self.file_opts)]
        for f, head in zip(self.files[1:], heads[1:]):
            if heads[0] is None or head is None:
                continue
            diff = _columns_difference(heads[0].columns, head.columns)
            if diff:
                raise TaggerError(f"{f}: {diff} (the columns of the output are fixed by {self.files[0]}, the first "
                                  "input; tables in one output must have the same columns)")
        return heads[0]

    def records(self):
        from ..readers import open_reader

        for f, fmt, ro in zip(self.files, self.formats, self.file_opts):
            yield from open_reader(f, fmt, ro)

    def batches(self):
        """The records in batches for :func:`~tagger.pipeline.labeling.render_stream`: JSON
        Lines as undecoded chunks of lines, other formats as lists of records; no batch spans
        two files."""
        from .batches import read_batches

        for f, fmt, ro in zip(self.files, self.formats, self.file_opts):
            yield from read_batches(f, fmt, ro)


def _columns_difference(first: list, columns: list) -> str | None:
    """What makes ``columns`` (a later table's) other than ``first``, or None when they are
    the same names in any order."""
    missing = next((c for c in first if c not in columns), None)
    if missing is not None:
        return f"has no column {missing!r}"
    new = next((c for c in columns if c not in first), None)
    return f"has a column {new!r} that the first input has not" if new is not None else None
