"""The pool: the records to annotate, read from anything ``tagger label`` reads, as plain
dicts with the corpus field names.

Each pool row is ``{"id", "title", "abstract", ...the record's other fields}`` (the text,
title and id taken from the fields the options name), plus ``source`` (the pool file,
unless the record has its own) and ``year`` when the record has one (a ``year`` field, else
the first four digits of ``listing_date``, ``published``, ``date`` or ``update_date``).
Fields a model wrote (``tags``, ``scores``, ``reason``, ``explanations``) and hand labels
(``labels``, ``annotator``) are dropped, so that annotators stay blind to them.

Rows are known by :func:`text_key` as well as by id: the same abstract under two ids is
one record for the queue and for resuming.
"""

from __future__ import annotations

import hashlib
import re

#: fields never passed on from the pool to an annotator
HIDDEN = ("tags", "scores", "reason", "explanations", "labels", "annotator", "suggested", "tagged_at")
DATE_FIELDS = ("listing_date", "published", "date", "update_date")


def text_key(abstract: str) -> str:
    """A hash of an abstract with white space folded and case ignored (the test of
    ``tagger corpus check`` for a duplicate abstract): 16 hex digits."""
    folded = re.sub(r"\s+", " ", abstract or "").strip().lower()
    return hashlib.sha256(folded.encode("utf-8")).hexdigest()[:16]


def record_year(fields: dict) -> int | None:
    """The year of a record (see the module docstring), or None."""
    v = fields.get("year")
    if isinstance(v, int) and not isinstance(v, bool) and 1000 <= v <= 9999:
        return v
    if isinstance(v, str) and re.fullmatch(r"\s*\d{4}\s*", v):
        return int(v)
    for k in DATE_FIELDS:
        d = fields.get(k)
        if isinstance(d, str) and re.match(r"\d{4}(?:\D|$)", d):
            return int(d[:4])
    return None


def pool_rows(files, input_format=None, text_field="abstract", title_field="title", id_field="id", warn=None):
    """The pool rows of ``files`` read one after another (a generator).

    A record that cannot be annotated (not a record, no text, empty text) is passed to
    ``warn(msg)`` with its file and line and left out.  Raises
    :class:`tagger.corpus.InputError` for a file that cannot be read.
    """
    from ..readers import detect_format, read_records, record_text_error
    from ..readers.fields import document

    for path in files:
        fmt = detect_format(path, input_format, sniff=True)
        for rec in read_records(path, fmt, text_field, id_field):
            err = record_text_error(rec, text_field, title_field)
            doc = None if err else document(rec.fields, text_field, title_field)
            if doc is not None and doc.reason:
                err = (f"record {rec.n}: {text_field!r} is empty" if doc.has_field
                       else f"record {rec.n} has no {text_field!r} field")
            if err:
                if warn:
                    warn(f"{path}:{rec.line}: {err}; left out")
                continue
            f = rec.fields
            row = {"id": rec.id(id_field), "title": doc.title, "abstract": doc.text}
            for k, v in f.items():
                if k not in (text_field, title_field, id_field) and k not in row and k not in HIDDEN:
                    row[k] = v
            row.setdefault("source", path)
            year = record_year(f)
            if year is not None:
                row["year"] = year
            yield row


def exclusions(paths) -> tuple[set, set]:
    """``(ids, text keys)`` of the records in the JSON Lines files ``paths`` (corpora or
    tagged batches: rows with an ``id`` and, where known, an ``abstract``).  Raises
    :class:`tagger.corpus.InputError` for a file that cannot be read or a line that is not
    a JSON object."""
    from ..corpus import read_jsonl

    ids, keys = set(), set()
    for p in paths:
        for rec in read_jsonl(p):
            if not rec.id_added and rec.fields.get("id") not in (None, ""):
                ids.add(str(rec.fields["id"]))
            a = rec.fields.get("abstract")
            if isinstance(a, str) and a.strip():
                keys.add(text_key(a))
    return ids, keys


def public_row(row: dict) -> dict:
    """A pool row as written for annotators: every field but the bookkeeping ones (``_``)."""
    return {k: v for k, v in row.items() if not k.startswith("_")}
