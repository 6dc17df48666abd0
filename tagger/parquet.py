"""Parquet in and out, with pyarrow, a batch of rows at a time (``pip install 'tagger[parquet]'``).

- :func:`tag_parquet`: Parquet to Parquet, the fast path.  The file is read
  :data:`BATCH_ROWS` rows at a time; only the text and title columns become Python values
  (for the model); every input column goes to the output as Arrow data, types and all, with
  ``tags`` (``list<string>``), ``scores`` (``map<string, double>``) and ``reason`` (nullable
  ``string``) appended (or replacing columns of those names).  Output row groups hold up to
  :data:`ROW_GROUP_ROWS` rows, so memory holds about one row group whatever the file's size.
- :func:`reader`: the rows of a Parquet file as :class:`~tagger.corpus.Record` s, for output
  in another format (JSON Lines, CSV...); values JSON has no type for (dates, times,
  decimals, bytes) are written as text (ISO 8601, the decimal's digits, base64).
- :class:`RecordWriter`: tagged records (from JSON Lines, CSV...) to Parquet.  The schema is
  fixed by the first batch of :data:`ROW_GROUP_ROWS` records (types inferred by pyarrow); a
  field that appears later, or a value that does not fit its column's type, is an error
  naming the record and the field.

A null (or NaN) text is no abstract: the record is kept, untagged, with the reason "no
abstract", as :mod:`tagger.api` does.
"""

from __future__ import annotations

import os

from .errors import TaggerError

#: rows read and tagged at a time
BATCH_ROWS = 4096
#: rows per output row group (and records that fix the schema of record input)
ROW_GROUP_ROWS = 32768
#: the columns tagging adds
OWN_COLUMNS = ("tags", "scores", "reason")


def _pa():
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise TaggerError("Parquet needs pyarrow: pip install 'tagger[parquet]'") from None
    return pa, pq


def own_fields():
    """The Arrow fields of ``tags``, ``scores`` and ``reason``."""
    pa, _ = _pa()
    return [pa.field("tags", pa.list_(pa.string())), pa.field("scores", pa.map_(pa.string(), pa.float64())),
            pa.field("reason", pa.string())]


def own_arrays(preds):
    """Arrow arrays of ``tags``, ``scores``, ``reason`` for a list of Predictions."""
    pa, _ = _pa()
    tags_f, scores_f, reason_f = own_fields()
    return [pa.array([p.tags for p in preds], type=tags_f.type),
            pa.array([list(p.scores.items()) for p in preds], type=scores_f.type),
            pa.array([p.reason for p in preds], type=reason_f.type)]


def open_parquet(path: str):
    """A ``pyarrow.parquet.ParquetFile``; InputError (one line) when it is not one."""
    from .corpus import FileError, InputError

    pa, pq = _pa()
    if not os.path.exists(path):
        raise FileError(f"{path}: no such file")
    try:
        return pq.ParquetFile(path)
    except (OSError, pa.ArrowException) as e:
        raise InputError(f"{path}: not a Parquet file ({str(e).splitlines()[0]})") from None


def _batches(pf, path, columns=None):
    """The file's record batches, an unreadable part an InputError naming the file."""
    from .corpus import InputError

    pa, _ = _pa()
    it = pf.iter_batches(batch_size=BATCH_ROWS, columns=columns)
    while True:
        try:
            batch = next(it)
        except StopIteration:
            return
        except (OSError, pa.ArrowException) as e:
            raise InputError(f"{path}: cannot read: {str(e).splitlines()[0]}") from None
        yield batch


def tag_parquet(tagger, src: str, dst_fh, *, text="abstract", title="title", facets=None, thresholds=None,
                min_words=None) -> int:
    """Tag the Parquet file ``src`` into ``dst_fh`` (a binary file object or a path) as
    Parquet (module docstring); returns the number of rows.  Raises InputError when the
    text column is missing (naming the columns there) or a text is not a string."""
    pa, pq = _pa()
    pf = open_parquet(src)
    schema = pf.schema_arrow
    if text not in schema.names:
        have = ", ".join(repr(c) for c in schema.names[:20]) or "none"
        from .corpus import InputError

        raise InputError(f"{src}: no column {text!r} (its columns: {have}); name it with --text-field")
    keep = [f for f in schema if f.name not in OWN_COLUMNS]
    out_schema = pa.schema(keep + own_fields(), metadata=schema.metadata)
    cols = [text] + ([title] if title in schema.names and title != text else [])
    writer = pq.ParquetWriter(dst_fh, out_schema)
    n, group = 0, []
    try:
        for batch in _batches(pf, src):
            rows = (dict(zip(cols, vals)) for vals in zip(*(batch.column(c).to_pylist() for c in cols)))
            preds = [p for _, p in tagger._predict(rows, text, title, facets, thresholds, min_words,
                                                   source=src, start=n + 1)]
            arrays = [batch.column(f.name) for f in keep] + own_arrays(preds)
            group.append(pa.RecordBatch.from_arrays(arrays, schema=out_schema))
            n += batch.num_rows
            if sum(b.num_rows for b in group) >= ROW_GROUP_ROWS:
                writer.write_table(pa.Table.from_batches(group, out_schema), row_group_size=ROW_GROUP_ROWS)
                group = []
        if group or not n:
            writer.write_table(pa.Table.from_batches(group, out_schema), row_group_size=ROW_GROUP_ROWS)
    finally:
        writer.close()
    return n


# --- Parquet rows as records ------------------------------------------------------------

def _plain(v):
    """A value of ``to_pylist()`` as JSON can hold it."""
    import base64
    import datetime
    import decimal

    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        if v and all(isinstance(x, tuple) and len(x) == 2 for x in v):  # a map: [(key, value)]
            return {str(k): _plain(x) for k, x in v}
        return [_plain(x) for x in v]
    if isinstance(v, (datetime.date, datetime.time)):
        return v.isoformat()
    if isinstance(v, datetime.timedelta):
        return v.total_seconds()
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, bytes):
        return base64.b64encode(v).decode("ascii")
    return v


def _native(t) -> bool:
    """True when every value of Arrow type ``t`` is a JSON value as ``to_pylist`` gives it."""
    import pyarrow.types as T

    if T.is_struct(t):
        return all(_native(t.field(i).type) for i in range(t.num_fields))
    if T.is_list(t) or T.is_large_list(t):
        return _native(t.value_type)
    return T.is_string(t) or T.is_large_string(t) or T.is_integer(t) or T.is_floating(t) or T.is_boolean(t) \
        or T.is_null(t)


def reader(path: str, fmt: str = "parquet", opts=None):
    """The rows of the Parquet file ``path`` as :class:`~tagger.corpus.Record` s (number and
    line: the 1-based row; default id ``<file stem>:<row>``), read a batch at a time."""
    from .corpus import Record, source_stem

    pf = open_parquet(path)
    plain = {f.name for f in pf.schema_arrow if not _native(f.type)}
    name = os.path.basename(path)
    stem, n = (name[:-len(".parquet")] if name.lower().endswith(".parquet") else source_stem(path)), 0
    for batch in _batches(pf, path):
        for row in batch.to_pylist():
            n += 1
            if plain:
                row = {k: _plain(v) if k in plain else v for k, v in row.items()}
            yield Record(row, n, n, path, f"{stem}:{n}")


class RecordWriter:
    """Tagged records to Parquet, :data:`ROW_GROUP_ROWS` a row group (module docstring).

    ``fh``: a binary file object or a path.  :meth:`write` takes ``(Record, Prediction)``;
    :meth:`close` writes what is left (an empty file of the three columns when no record
    came).  Raises TaggerError naming the record and field whose value does not fit the
    schema, or a field the first batch did not have."""

    def __init__(self, fh, rows_per_group: int = ROW_GROUP_ROWS):
        self.fh, self.rows_per_group = fh, rows_per_group
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
        pa, pq = _pa()
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
                pa, pq = _pa()
                self.schema = pa.schema(own_fields())
                self._writer = pq.ParquetWriter(self.fh, self.schema)
        self._writer.close()


def _where(rec) -> str:
    return f"{rec.source}:{rec.line}" if rec.source else f"record {rec.n}"
