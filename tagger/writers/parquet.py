"""Parquet output, with pyarrow (``pip install pyarrow``, or ``pip install '.[parquet]'`` in a checkout).

- :func:`tag_parquet`: Parquet to Parquet, the fast path.  The input is read
  :data:`~tagger.readers.parquet.BATCH_ROWS` rows at a time; only the text and title columns
  become Python values (for the model); every input column goes to the output as Arrow data,
  types and all, with ``tags`` (``list<string>``), ``scores`` (``map<string, double>``) and
  ``reason`` (nullable ``string``) appended (or replacing columns of those names).  Output
  row groups hold up to :data:`ROW_GROUP_ROWS` rows, so memory holds about one row group
  whatever the file's size.  Several inputs make one output: the first one's schema fixes it.
- :class:`RecordWriter`: tagged records of any other input (JSON Lines, CSV...) to Parquet.
  The schema is fixed by the first batch of :data:`ROW_GROUP_ROWS` records (types inferred by
  pyarrow); a field that appears later, or a value that does not fit its column's type, is an
  error naming the record and the field.

A null (or NaN) text is no abstract: the row is kept, untagged, with the reason "no
abstract".
"""

from __future__ import annotations

from ..errors import TaggerError
from ..readers.fields import INVERTED_INDEX
from ..readers.parquet import batches, inverted_index_value, open_parquet, pyarrow_modules

#: rows per output row group (and records that fix the schema of record input)
ROW_GROUP_ROWS = 32768
#: the columns tagging adds
OWN_COLUMNS = ("tags", "scores", "reason")


def own_fields():
    """The Arrow fields of ``tags``, ``scores`` and ``reason``."""
    pa, _ = pyarrow_modules()
    return [pa.field("tags", pa.list_(pa.string())), pa.field("scores", pa.map_(pa.string(), pa.float64())),
            pa.field("reason", pa.string())]


def own_arrays(preds):
    """Arrow arrays of ``tags``, ``scores``, ``reason`` for a list of Predictions."""
    pa, _ = pyarrow_modules()
    tags_f, scores_f, reason_f = own_fields()
    return [pa.array([p.tags for p in preds], type=tags_f.type),
            pa.array([list(p.scores.items()) for p in preds], type=scores_f.type),
            pa.array([p.reason for p in preds], type=reason_f.type)]


def _schema_difference(first, schema) -> str | None:
    """What makes ``schema`` (a later input's columns) other than ``first``, or None."""
    have = {f.name: f for f in schema}
    for f in first:
        if f.name not in have:
            return f"has no column {f.name!r}"
        if not have[f.name].type.equals(f.type):
            return f"has column {f.name!r} as {have[f.name].type}, not {f.type}"
    known = {f.name for f in first}
    new = [f.name for f in schema if f.name not in known]
    return f"has a column {new[0]!r} that the first input has not" if new else None


def tag_parquet(tagger, sources, dst_fh, *, text="abstract", title="title", facets=None, thresholds=None,
                min_words=None, keep=None) -> int:
    """Tag the Parquet file(s) ``sources`` (a path or a list) into ``dst_fh`` (a binary file
    object or a path) as one Parquet file (module docstring); returns the number of rows
    written.  ``keep(prediction) -> bool``, if given, keeps only the rows it accepts
    (``tagger filter``).  Raises InputError when the text column is missing (naming the
    columns there), a text is not a string, or a later input's columns differ from the
    first's (naming the column)."""
    from ..readers import InputError

    pa, pq = pyarrow_modules()
    sources = [sources] if isinstance(sources, str) else list(sources)
    writer, first, out_schema, n_out, group = None, None, None, 0, []

    def flush():
        writer.write_table(pa.Table.from_batches(group, out_schema), row_group_size=ROW_GROUP_ROWS)
        group.clear()

    try:
        for src in sources:
            pf = open_parquet(src)
            schema = pf.schema_arrow
            index = None  # OpenAlex: the abstract as an inverted index, rebuilt when there is no text column
            if text not in schema.names:
                if text == "abstract" and INVERTED_INDEX in schema.names:
                    index = INVERTED_INDEX
                else:
                    have = ", ".join(repr(c) for c in schema.names[:20]) or "none"
                    raise InputError(f"{src}: no column {text!r} (its columns: {have}); name it with --text-field")
            cols = [f for f in schema if f.name not in OWN_COLUMNS]
            if first is None:
                first = cols
                out_schema = pa.schema(first + own_fields(), metadata=schema.metadata)
                writer = pq.ParquetWriter(dst_fh, out_schema)
            else:
                diff = _schema_difference(first, pa.schema(cols))
                if diff:
                    raise InputError(f"{src}: {diff} (the schema of the output is fixed by {sources[0]})")
            names = [index or text] + ([title] if title in schema.names and title != text else [])
            n = 0
            for batch in batches(pf, src):
                rows = (dict(zip(names, vals)) for vals in zip(*(batch.column(c).to_pylist() for c in names)))
                if index:
                    rows = ({**r, index: inverted_index_value(r[index])} for r in rows)
                preds = [p for _, p in tagger._predict(rows, text, title, facets, thresholds, min_words,
                                                       source=src, start=n + 1)]
                n += batch.num_rows
                out = pa.RecordBatch.from_arrays([batch.column(f.name) for f in first] + own_arrays(preds),
                                                 schema=out_schema)
                if keep is not None:
                    out = out.filter(pa.array([bool(keep(p)) for p in preds], pa.bool_()))
                group.append(out)
                n_out += out.num_rows
                if sum(b.num_rows for b in group) >= ROW_GROUP_ROWS:
                    flush()
        if group or not n_out:
            flush()
    finally:
        if writer is not None:
            writer.close()
    return n_out


class RecordWriter:
    """Tagged records to Parquet, :data:`ROW_GROUP_ROWS` a row group (module docstring).

    ``fh``: a binary file object or a path.  :meth:`write` takes ``(Record, Prediction)``;
    :meth:`close` writes what is left (an empty file of the three columns when no record
    came).  Raises TaggerError naming the record and field whose value does not fit the
    schema, or a field the first batch did not have."""

    def __init__(self, fh, rows_per_group: int | None = None):
        self.fh, self.rows_per_group = fh, rows_per_group or ROW_GROUP_ROWS
        self.schema, self._writer, self._rows, self._recs = None, None, [], []
        self.count = 0

    def write(self, rec, pred) -> None:
        row = {k: v for k, v in rec.fields.items() if k not in OWN_COLUMNS}
        row["tags"], row["scores"], row["reason"] = pred.tags, list(pred.scores.items()), pred.reason
        self._rows.append(row)
        self._recs.append(rec)
        self.count += 1
        if len(self._rows) >= self.rows_per_group:
            self._flush()

    def _flush(self) -> None:
        pa, pq = pyarrow_modules()
        rows, recs = self._rows, self._recs
        self._rows, self._recs = [], []
        if self.schema is None:
            names = list(dict.fromkeys(k for r in rows for k in r if k not in OWN_COLUMNS))
            try:
                inferred = pa.Table.from_pylist([{k: r.get(k) for k in names} for r in rows]).schema if names \
                    else pa.schema([])
            except (pa.ArrowException, TypeError, ValueError, OverflowError) as e:
                raise TaggerError(f"{_where(recs[0])}: the first {len(rows):,} records do not make one Parquet "
                                  f"schema: {str(e).splitlines()[0]}") from None
            self.schema = pa.schema(list(inferred) + own_fields())
            self._writer = pq.ParquetWriter(self.fh, self.schema)
        known = set(self.schema.names)
        for r, rec in zip(rows, recs):
            extra = [k for k in r if k not in known]
            if extra:
                raise TaggerError(f"{_where(rec)}: field {extra[0]!r} is not in the Parquet schema, which the first "
                                  f"{min(self.count, self.rows_per_group):,} records fixed "
                                  f"({', '.join(self.schema.names[:12])})")
        arrays = []
        for f in self.schema:
            vals = [r.get(f.name) for r in rows]
            try:
                arrays.append(pa.array(vals, type=f.type))
            except (pa.ArrowException, TypeError, ValueError, OverflowError):
                for v, rec in zip(vals, recs):
                    try:
                        pa.array([v], type=f.type)
                    except (pa.ArrowException, TypeError, ValueError, OverflowError):
                        why = ("null in all of the first records" if pa.types.is_null(f.type)
                               else "fixed by the first records")
                        raise TaggerError(f"{_where(rec)}: field {f.name!r} holds {v!r:.60}, which does not fit "
                                          f"its Parquet type {f.type} ({why})") from None
                raise
        self._writer.write_table(pa.Table.from_arrays(arrays, schema=self.schema), row_group_size=self.rows_per_group)

    def close(self) -> None:
        """Write the last row group and the file's footer; does not close ``fh``."""
        if self._rows or self._writer is None:
            if self._rows:
                self._flush()
            else:
                pa, pq = pyarrow_modules()
                self.schema = pa.schema(own_fields())
                self._writer = pq.ParquetWriter(self.fh, self.schema)
        self._writer.close()


def _where(rec) -> str:
    return f"{rec.source}:{rec.line}" if rec.source else f"record {rec.n}"
