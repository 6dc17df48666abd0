"""Parquet input, with pyarrow, a batch of rows at a time (``pip install pyarrow``, or ``pip install '.[parquet]'`` in a checkout).

The rows of a ``.parquet`` file as :class:`~tagger.readers.Record` s (number and line: the
1-based row; default id ``<file stem>:<row>``), for output in any format; values JSON has no
type for (dates, times, decimals, bytes) are given as text (ISO 8601, the decimal's digits,
base64), maps as objects.  Parquet to Parquet keeps the columns as Arrow data instead
(:func:`tagger.writers.parquet.tag_parquet`).  A Parquet file is read from a file, not
from standard input (the format needs to seek).
"""

from __future__ import annotations

import os

from ..errors import TaggerError
from .base import FileError, InputError, ReadOptions, Record
from .fields import INVERTED_INDEX

FORMAT = "parquet"
#: rows read (and tagged) at a time
BATCH_ROWS = 4096


def pyarrow_modules():
    """``(pyarrow, pyarrow.parquet)``; TaggerError saying what to install when absent."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise TaggerError("Parquet needs pyarrow: pip install pyarrow (in a checkout of tagger: pip install '.[parquet]')") from None
    return pa, pq


def open_parquet(path: str):
    """A ``pyarrow.parquet.ParquetFile``; InputError (one line) when it is not one."""
    pa, pq = pyarrow_modules()
    if path == "-":
        raise InputError("-: Parquet is not read from standard input (it needs a file); name the file")
    if not os.path.exists(path):
        raise FileError(f"{path}: no such file")
    try:
        # pre_buffer off: with it, pyarrow keeps what it has read of the file until the end
        # (memory grew with the file: 150 MB for 200,000 abstracts against 14 MB without)
        return pq.ParquetFile(path, pre_buffer=False, buffer_size=1 << 20)
    except (OSError, pa.ArrowException) as e:
        raise InputError(f"{path}: not a Parquet file ({str(e).splitlines()[0]})") from None


def batches(pf, path, columns=None):
    """The file's record batches, an unreadable part an InputError naming the file."""
    pa, _ = pyarrow_modules()
    it = pf.iter_batches(batch_size=BATCH_ROWS, columns=columns)
    while True:
        try:
            batch = next(it)
        except StopIteration:
            return
        except (OSError, pa.ArrowException) as e:
            raise InputError(f"{path}: cannot read: {str(e).splitlines()[0]}") from None
        yield batch


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


def inverted_index_value(v):
    """An ``abstract_inverted_index`` cell as the ``{word: [positions]}`` dict OpenAlex means:
    an Arrow map (``[(word, positions)]``) as a dict, a struct (one field per word of the whole
    column, null where the row lacks it) without its nulls, a JSON text parsed; other values
    as they are (then reported by :func:`tagger.readers.fields.document`)."""
    import json

    if isinstance(v, list) and all(isinstance(x, tuple) and len(x) == 2 for x in v):
        return {str(k): x for k, x in v}
    if isinstance(v, dict):
        return {k: x for k, x in v.items() if x is not None}
    if isinstance(v, str) and v.lstrip().startswith("{"):
        try:
            return json.loads(v)
        except ValueError:
            return v
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


def reader(path: str, fmt: str = FORMAT, opts: ReadOptions = ReadOptions()):
    """The rows of the Parquet file ``path`` as :class:`Record` s (module docstring), read a
    batch at a time.  A row with a text or bytes cell longer than ``--max-record-size`` is a
    bad record (pyarrow reads a batch of rows whole, so the limit bounds what is kept, not
    what pyarrow reads)."""
    pf = open_parquet(path)
    plain = {f.name for f in pf.schema_arrow if not _native(f.type)}
    name = os.path.basename(path)
    stem, n = (name[:-len(".parquet")] if name.lower().endswith(".parquet") else name), 0
    limit = opts.max_record_size
    for batch in batches(pf, path):
        for row in batch.to_pylist():
            n += 1
            big = next(((k, len(v)) for k, v in row.items() if isinstance(v, (str, bytes)) and limit is not None
                        and len(v) > limit), None) if limit is not None else None
            if big:  # a cell over --max-record-size: a bad record (pyarrow has read it; the model never sees it)
                from .stream import over_limit

                yield Record({}, n, n, path, f"{stem}:{n}", f"column {big[0]!r}: {over_limit('cell', big[1], limit)}")
                continue
            if plain:
                row = {k: _plain(v) if k in plain else v for k, v in row.items()}
            if INVERTED_INDEX in row and row[INVERTED_INDEX] is not None:
                row[INVERTED_INDEX] = inverted_index_value(row[INVERTED_INDEX])
            yield Record(row, n, n, path, f"{stem}:{n}")
